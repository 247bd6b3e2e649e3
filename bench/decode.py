"""Decode throughput: ``ndd.decoders.image`` against raw simplejpeg, on 1 and 2 threads.

The JPEG files are read into memory first, so only decoding is timed. The raw baseline splits
the list into one contiguous chunk per thread and calls ``simplejpeg.decode_jpeg`` in a loop;
headrace decodes batches of ``--batch-size`` with ``ndd.set_num_threads(n)`` under
``EvalMode.sync_cpu``. With ``--dali`` the reference's dynamic mode runs the same batches.
Repetitions are interleaved and the median is reported.

    python bench/decode.py                  # 256 sample images, 1 and 2 threads, 5 reps
    python bench/decode.py DIR --num 400 --reps 7 --dali
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np


def raw_simplejpeg(blobs: list[bytes], threads: int) -> Callable[[], None]:
    import simplejpeg

    chunks = [blobs[i::threads] for i in range(threads)]
    pool = ThreadPoolExecutor(threads)

    def work(chunk: list[bytes]) -> None:
        for b in chunk:
            simplejpeg.decode_jpeg(b, colorspace="RGB")

    return lambda: list(pool.map(work, chunks))


def dynamic(module: str, blobs: list[bytes], threads: int, batch: int) -> Callable[[], None]:
    import importlib

    ndd = importlib.import_module(module)
    arrays = [np.frombuffer(b, np.uint8) for b in blobs]
    batches = [ndd.batch(arrays[i : i + batch]) for i in range(0, len(arrays), batch)]

    def run() -> None:
        if ndd.get_num_threads() != threads:  # re-setting rebuilds the worker pool
            ndd.set_num_threads(threads)
        with ndd.EvalMode.sync_cpu:
            for b in batches:
                ndd.decoders.image(b).evaluate()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", help="image folder (default: built-in sample data)")
    parser.add_argument("--num", type=int, default=256, help="images to decode")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--dali", action="store_true", help="also time the reference")
    args = parser.parse_args(argv)
    if args.dir is None:
        from headrace import sample_data

        args.dir = str(sample_data.image_folder())
    paths = sorted(Path(args.dir).glob("*/*.jp*g"))[: args.num]
    if not paths:
        parser.error(f"no JPEG files in the sub-folders of {args.dir}")
    blobs = [p.read_bytes() for p in paths]
    import simplejpeg

    mpix = sum(h * w for h, w, *_ in (simplejpeg.decode_jpeg_header(b) for b in blobs)) / 1e6
    print(f"{len(blobs)} JPEGs from {args.dir}: {mpix / len(blobs):.3f} MP and "
          f"{sum(map(len, blobs)) / len(blobs) / 1024:.0f} KiB per image")  # fmt: skip

    threads = [int(t) for t in args.threads.split(",")]
    impls: dict[tuple[str, int], Callable[[], None]] = {}
    for t in threads:
        impls["simplejpeg (raw)", t] = raw_simplejpeg(blobs, t)
        impls["headrace", t] = dynamic("headrace", blobs, t, args.batch_size)
        if args.dali:
            impls["dali", t] = dynamic(
                "nvidia.dali.experimental.dynamic", blobs, t, args.batch_size
            )
    for fn in impls.values():  # warm-up: thread pools, imports, page cache
        fn()
    times: dict[tuple[str, int], list[float]] = {k: [] for k in impls}
    for _ in range(args.reps):
        for key, fn in impls.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)

    print(f"\n{'decoder':<18} threads   img/s    MP/s  vs raw  speedup vs 1 thread")
    for (name, t), ts in times.items():
        sec = statistics.median(ts)
        rate = len(blobs) / sec
        raw = len(blobs) / statistics.median(times["simplejpeg (raw)", t])
        one = times.get((name, threads[0]))
        speedup = statistics.median(one) / sec if one and t != threads[0] else 1.0
        print(f"{name:<18} {t:>7} {rate:7.0f} {mpix / sec:7.1f} {rate / raw:7.2f} {speedup:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
