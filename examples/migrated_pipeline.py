"""A graph-style (pipeline mode) training pipeline, migrated to dynamic mode with headrace.

The original, written for the reference's pipeline mode::

    @pipeline_def(batch_size=64, num_threads=2, device_id=0, seed=42)
    def train_pipeline(file_root):
        jpegs, labels = fn.readers.file(file_root=file_root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed")
        images = fn.rotate(images, angle=fn.random.uniform(range=(-15, 15)), fill_value=0)
        images = fn.resize(images, resize_shorter=256)
        images = fn.crop_mirror_normalize(
            images, crop=(224, 224), mirror=fn.random.coin_flip(),
            mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
            std=[0.229 * 255, 0.224 * 255, 0.225 * 255], dtype=types.FLOAT)
        return images, labels

    pipe = train_pipeline(file_root)
    pipe.build()
    for _ in range(steps):
        images, labels = pipe.run()

What changes (see ``main`` below):

* ``num_threads`` -> ``ndd.set_num_threads(2)`` once at start-up.
* ``seed`` -> an explicit ``ndd.random.RNG(seed=42)`` passed to every random op (or
  ``ndd.random.set_seed(42)``); the reader gets its own ``seed``.
* ``fn.readers.file`` -> ``ndd.readers.File``, created once; ``next_epoch(batch_size=64)``
  gives one epoch per call with full batches, the last one topped up from the next epoch as
  pipeline mode does (``last_batch="partial"`` makes each call exactly one pass).
* ``device="mixed"`` -> ``device="gpu"``; ``fn.x`` -> ``ndd.x``; random ops need
  ``batch_size`` because there is no pipeline-level batch size.
* ``pipe.run()`` -> plain calls in the loop; ``.torch()`` hands the batch to PyTorch.

    python examples/migrated_pipeline.py --epochs 1
    python examples/migrated_pipeline.py --limit 32   # a small generated sample data set
"""

from __future__ import annotations

import argparse
import time

import headrace as ndd
from headrace import sample_data

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def augment(jpegs: ndd.Batch, rng: ndd.random.RNG, device: str = "cpu") -> ndd.Batch:
    """The body of the old pipeline, one batch at a time."""
    n = jpegs.batch_size
    images = ndd.decoders.image(jpegs, device=device)
    angle = ndd.random.uniform(batch_size=n, range=(-15, 15), rng=rng)
    images = ndd.rotate(images, angle=angle, fill_value=0)
    images = ndd.resize(images, resize_shorter=256)
    mirror = ndd.random.coin_flip(batch_size=n, rng=rng)
    return ndd.crop_mirror_normalize(
        images, crop=(224, 224), mirror=mirror, mean=MEAN, std=STD, dtype=ndd.float32
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: built-in sample data)")
    parser.add_argument("--limit", type=int, help="use a sample data set of N images")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)

    ndd.set_num_threads(args.threads)  # was: num_threads=2
    rng = ndd.random.RNG(seed=args.seed)  # was: seed=42
    root = args.data or sample_data.image_folder(num_images=args.limit or 512)
    reader = ndd.readers.File(file_root=str(root), random_shuffle=True, seed=args.seed)

    for epoch in range(args.epochs):
        start, seen, checksum = time.perf_counter(), 0, 0.0
        for jpegs, labels in reader.next_epoch(batch_size=args.batch_size):
            images = augment(jpegs, rng, args.device).torch()  # float32, N x 3 x 224 x 224
            targets = labels.torch().squeeze(1).long()
            # ... model(images), loss(targets), backward, step ...
            seen += len(targets)
            checksum += float(images.double().sum())
        rate = seen / (time.perf_counter() - start)
        print(
            f"epoch {epoch + 1}: {seen} images, last batch {tuple(images.shape)} "
            f"{images.dtype}, checksum {checksum:.6e}, {rate:.0f} img/s"
        )


if __name__ == "__main__":
    main()
