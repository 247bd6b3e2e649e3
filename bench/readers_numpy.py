"""``readers.Numpy`` throughput (records/s) against the reference's reader on the same files.

Writes ``--num`` ``.npy`` files (float32 ``--shape``; every 4th Fortran-ordered if
``--fortran``) to a temporary folder, then reads full epochs with headrace and with the
reference (NVIDIA DALI dynamic mode, when installed), both with ``set_num_threads(--threads)``
and batches of ``--batch-size``; whole arrays, then a centred half-size ROI. Files are in the
page cache after the first epoch (a warm-up epoch is not timed). Repetitions are interleaved;
the median is reported with the ratio headrace / reference.

    python bench/readers_numpy.py                      # 2048 files of 64x64x4, 2 threads
    python bench/readers_numpy.py --num 500 --shape 128 128 32 --reps 5
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def write(folder: Path, num: int, shape: list[int], fortran: bool) -> None:
    rng = np.random.default_rng(0)
    for i in range(num):
        a = rng.random(shape, dtype=np.float32)
        np.save(folder / f"{i:06d}.npy", np.asfortranarray(a) if fortran and i % 4 == 0 else a)


def epoch_fn(
    module: str, folder: Path, threads: int, batch: int, roi: dict[str, Any]
) -> Callable[[], int]:
    ndd = importlib.import_module(module)
    ndd.set_num_threads(threads)
    reader = ndd.readers.Numpy(file_root=str(folder), **roi)

    def run() -> int:
        n = 0
        for (b,) in reader.next_epoch(batch_size=batch):
            if hasattr(b, "evaluate"):
                b.evaluate()
            n += b.batch_size
        return n

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num", type=int, default=2048)
    p.add_argument("--shape", type=int, nargs="+", default=[64, 64, 4])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--fortran", action="store_true")
    args = p.parse_args()
    try:
        importlib.import_module("nvidia.dali.experimental.dynamic")
        modules = ["headrace", "nvidia.dali.experimental.dynamic"]
    except ImportError:
        modules = ["headrace"]
        print("reference (nvidia-dali) not installed: headrace only")
    half = [s // 2 for s in args.shape]
    rois = {
        "whole": {},
        "roi": {"roi_start": [s // 4 for s in args.shape], "roi_shape": half},
    }
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        write(folder, args.num, args.shape, args.fortran)
        mb = args.num * int(np.prod(args.shape)) * 4 / 2**20
        print(f"{args.num} files of {args.shape} float32 ({mb:.0f} MiB), batch {args.batch_size}, "
              f"{args.threads} threads, median of {args.reps}")  # fmt: skip
        for name, roi in rois.items():
            fns = {m: epoch_fn(m, folder, args.threads, args.batch_size, roi) for m in modules}
            times: dict[str, list[float]] = {m: [] for m in modules}
            counts: dict[str, int] = {}
            for fn in fns.values():
                fn()  # warm-up: page cache, thread pools
            for _ in range(args.reps):
                for m, fn in fns.items():
                    t = time.perf_counter()
                    counts[m] = (
                        fn()
                    )  # records actually returned (the reference fills the last batch)
                    times[m].append(time.perf_counter() - t)
            rates = {m: counts[m] / statistics.median(ts) for m, ts in times.items()}
            line = f"{name:>6}: headrace {rates['headrace']:>9,.0f} records/s"
            if len(modules) > 1:
                ref = rates[modules[1]]
                line += (
                    f" | reference {ref:>9,.0f} records/s | ratio {rates['headrace'] / ref:.2f}x"
                )
            print(line)


if __name__ == "__main__":
    main()
