"""A capture-mode training loop: the input pipeline runs ahead of the loop body.

The first step is traced while it runs; from the second step on, a background pipeline
decodes, augments and normalises the next batches while the body "trains" (a numpy busy loop
standing in for a model step). The script prints the throughput of the same loop in eager and
capture mode, what capture did (``ndd.capture.stats``), and checks that both produce identical
batches.

Run: ``python examples/capture_loop.py [--data DIR] [--limit N] [--step-ms 20]``.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import headrace as ndd
from headrace import pipelines


def train_step(images: object, ms: float) -> str:
    """Pretend to train for ``ms`` milliseconds; return a digest of the batch."""
    x = images.torch()  # type: ignore[attr-defined]
    digest = hashlib.sha1(x.numpy().tobytes()).hexdigest()[:12]
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass
    return digest


def run(root: str, capture: bool, batch_size: int, ms: float) -> tuple[list[str], float]:
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=7)
    rng = ndd.random.RNG(seed=7)
    digests = []
    start = time.perf_counter()
    for jpegs, _labels in reader.next_epoch(batch_size=batch_size, capture=capture):
        images = ndd.decoders.image_random_crop(jpegs, rng=rng)
        images = ndd.resize(images, size=[224, 224])
        mirror = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
        images = ndd.crop_mirror_normalize(  # a value read from elsewhere needs the marker
            images,
            mirror=mirror,
            mean=ndd.capture.invariant(list(pipelines.MEAN)),
            std=ndd.capture.invariant(list(pipelines.STD)),
        )
        digests.append(train_step(images, ms))
    elapsed = time.perf_counter() - start
    if capture:
        print(ndd.capture.stats(reader))  # replayed steps, and any calls that ran eagerly
    return digests, elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", help="image folder (default: built-in sample data)")
    ap.add_argument("--limit", type=int, default=None, help="use a sample set of N images")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--step-ms", type=float, default=20.0)
    args = ap.parse_args()
    if args.data:
        root = args.data
    else:
        from headrace import sample_data

        n = args.limit or 512
        root = str(sample_data.image_folder(num_images=n, num_classes=4, progress=False))
    eager, t_eager = run(root, False, args.batch_size, args.step_ms)
    captured, t_cap = run(root, True, args.batch_size, args.step_ms)
    same = eager == captured
    print(f"eager:    {len(eager)} batches in {t_eager:.2f} s")
    print(f"captured: {len(captured)} batches in {t_cap:.2f} s ({t_eager / t_cap:.2f}x)")
    print(f"captured batches identical to eager: {same}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
