"""Capture mode vs eager on the classification pipeline with a loop body that also works.

The body runs the input pipeline (random-crop decode → resize → mirror → normalize) and then a
numpy "training step" of about ``--step-ms`` milliseconds. Captured, the pipeline for the next
steps runs in the background while the body trains, so it hides behind the body. Also prints the
cost of one captured call's lookup in the body.

With ``--workers N`` a third row runs the captured loop's steps in N worker processes
(``next_epoch(..., capture=True, num_workers=N)``; the other rows use ``num_workers=0``).

Run: ``python bench/capture.py [DIR] [--batch-size 32] [--steps 30] [--step-ms 20] [--workers N]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import headrace as ndd

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def _train_step(x: Any, ms: float) -> None:
    a = x.torch().numpy()
    end = time.perf_counter() + ms / 1000
    acc = 0.0
    while time.perf_counter() < end:
        acc += float(a[:, :, ::8, ::8].mean())


def run(
    root: str, capture: bool, bs: int, steps: int, ms: float, workers: int = 0
) -> tuple[float, float]:
    reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=0)
    rng = ndd.random.RNG(seed=0)
    n = 0
    lookup = []
    t0 = time.perf_counter()
    kw = {"num_workers": workers} if capture else {}
    while n < steps:
        for jpegs, _labels in reader.next_epoch(batch_size=bs, capture=capture, **kw):
            imgs = ndd.decoders.image_random_crop(jpegs, rng=rng)
            t = time.perf_counter()
            imgs = ndd.resize(imgs, size=[224, 224])
            lookup.append(time.perf_counter() - t)
            mirror = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
            out = ndd.crop_mirror_normalize(imgs, mirror=mirror, mean=MEAN, std=STD)
            _train_step(out, ms)
            n += 1
            if n >= steps:
                break
    dt = time.perf_counter() - t0
    return n * bs / dt, float(np.median(lookup[2:])) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--step-ms", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=0, help="also run captured in N processes")
    args = ap.parse_args()
    root = args.dir
    if root is None:
        from headrace import sample_data

        root = str(sample_data.image_folder())
    eager, eager_call = run(root, False, args.batch_size, args.steps, args.step_ms)
    cap, cap_call = run(root, True, args.batch_size, args.steps, args.step_ms, 0)
    print(f"{'mode':10s} {'img/s':>8s} {'resize call µs':>15s}")
    print(f"{'eager':10s} {eager:8.1f} {eager_call:15.1f}")
    print(f"{'captured':10s} {cap:8.1f} {cap_call:15.1f}")
    if args.workers:
        w, w_call = run(root, True, args.batch_size, args.steps, args.step_ms, args.workers)
        print(f"{f'{args.workers} workers':10s} {w:8.1f} {w_call:15.1f}")
    print(f"captured / eager: {cap / eager:.2f}x (body {args.step_ms:g} ms per step)")
    if args.workers:
        print(f"{args.workers} workers / captured in one process: {w / cap:.2f}x")


if __name__ == "__main__":
    main()
