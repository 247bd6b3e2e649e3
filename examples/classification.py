"""Train a small image classifier with a headrace input pipeline.

The loop is what a PyTorch user writes with ``torch.utils.data.DataLoader``, with headrace doing
the loading: a ``readers.File`` reader (created once, one exact epoch per pass), the ResNet-50
style train and eval pipelines from ``headrace.pipelines``, and ``headrace.pytorch.Loader``
turning each batch into float32 NCHW torch tensors while the next batch is being prepared on the
worker threads.

Run it on the built-in sample data (generated on first use) or on any folder with one
sub-folder per class::

    python examples/classification.py --epochs 2
    python examples/classification.py --data /path/to/imagenet/train --size 160

``--limit N`` uses a generated sample data set of N images instead (quick runs, tests).
"""

from __future__ import annotations

import argparse
import math
import time
from functools import partial
from pathlib import Path

import torch
from torch import nn

import headrace as ndd
from headrace import pipelines, sample_data
from headrace.pytorch import Loader


class TinyNet(nn.Module):
    """Three strided convolutions, global average pooling, one linear layer."""

    def __init__(self, num_classes: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 5, stride=4, padding=2), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )  # fmt: skip
        self.head = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def evaluate(model: nn.Module, loader: Loader) -> float:
    """Top-1 accuracy over one epoch of ``loader``."""
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            labels = labels.squeeze(1).long()
            correct += int((model(images).argmax(1) == labels).sum())
            total += len(labels)
    return correct / max(total, 1)


def main(argv: list[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: built-in sample data)")
    parser.add_argument("--limit", type=int, help="use a sample data set of N images")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--size", type=int, default=224, help="side of the training crops")
    parser.add_argument("--threads", type=int, help="headrace worker threads")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    if args.threads:
        ndd.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    root = args.data or sample_data.image_folder(num_images=args.limit or 512)
    classes = sorted(p.name for p in Path(root).iterdir() if p.is_dir())
    pipe_device = "gpu" if args.device.startswith("cuda") else "cpu"

    # Readers are stateful: create them once, each pass over a Loader is one epoch.
    train_reader = ndd.readers.File(file_root=str(root), random_shuffle=True, seed=args.seed)
    rng = ndd.random.RNG(seed=args.seed)  # crop windows and flips, reproducible
    train = Loader(
        train_reader,
        partial(pipelines.train_pipeline, size=args.size, rng=rng, device=pipe_device),
        batch_size=args.batch_size,
        device=args.device,
    )
    val = Loader(
        ndd.readers.File(file_root=str(root)),
        partial(
            pipelines.eval_pipeline,
            size=args.size,
            resize_shorter=math.ceil(args.size * 8 / 7),
            device=pipe_device,
        ),
        batch_size=args.batch_size,
        device=args.device,
    )

    model = TinyNet(len(classes)).to(args.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    acc = 0.0
    for epoch in range(args.epochs):
        model.train()
        start, seen, losses = time.perf_counter(), 0, []
        for images, labels in train:
            loss = nn.functional.cross_entropy(model(images), labels.squeeze(1).long())
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(labels)
            losses.append(loss.item())
        rate = seen / (time.perf_counter() - start)
        acc = evaluate(model, val)
        print(
            f"epoch {epoch + 1}/{args.epochs}: {len(losses)} batches, {seen} images, "
            f"first loss {losses[0]:.3f}, mean loss {sum(losses) / len(losses):.3f}, "
            f"val accuracy {acc:.3f}, {rate:.0f} img/s"
        )
    return acc


if __name__ == "__main__":
    main()
