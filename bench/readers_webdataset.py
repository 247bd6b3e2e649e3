"""Tar-shard reading throughput: headrace vs the reference (DALI) vs the ``webdataset`` library.

All three read the same shards (generated in a temporary folder unless ``--dir`` names a folder
of ``*.tar``), two outputs per sample (``jpg`` bytes, ``cls`` bytes), batches of 64, with
``set_num_threads(2)`` for the dynamic-mode readers; the ``webdataset`` library iterates in
the main process (``WebDataset(...).to_tuple("jpg", "cls").batched(64)``). The first epoch is
warm-up (page cache, index); the median of the other epochs is reported in records/s, with the
ratios of headrace to the others.

    python bench/readers_webdataset.py                      # 20k samples of ~8 KiB, 4 shards
    python bench/readers_webdataset.py --samples 50000 --size 2000 --epochs 5
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def make_shards(folder: Path, samples: int, shards: int, size: int) -> list[str]:
    rng = __import__("random").Random(0)
    paths = []
    per = -(-samples // shards)
    for s in range(shards):
        path = folder / f"shard-{s:04d}.tar"
        with tarfile.open(path, "w") as tf:
            for i in range(s * per, min(samples, (s + 1) * per)):
                n = max(1, int(size * rng.uniform(0.5, 1.5)))
                for ext, blob in (("jpg", os.urandom(n)), ("cls", i.to_bytes(4, "little"))):
                    info = tarfile.TarInfo(f"{i:08d}.{ext}")
                    info.size = len(blob)
                    tf.addfile(info, io.BytesIO(blob))
        paths.append(str(path))
    return paths


def dynamic(module: str, paths: list[str], batch: int) -> tuple[float, Callable[[], int]]:
    ndd: Any = __import__(module, fromlist=["readers"])
    ndd.set_num_threads(2)
    t0 = time.perf_counter()
    reader = ndd.readers.Webdataset(paths=paths, ext=["jpg", "cls"], max_batch_size=batch)
    build = time.perf_counter() - t0

    def epoch() -> int:
        n = 0
        for jpg, _cls in reader.next_epoch(batch_size=batch):
            n += jpg.batch_size if hasattr(jpg, "batch_size") else len(jpg.tensors)
        return n

    return build, epoch


def library(paths: list[str], batch: int) -> tuple[float, Callable[[], int]]:
    import webdataset as wds

    ds = wds.WebDataset(paths, shardshuffle=False, empty_check=False).to_tuple("jpg", "cls")
    ds = ds.batched(batch, partial=True)

    def epoch() -> int:
        return sum(len(b[0]) for b in ds)

    return 0.0, epoch


def measure(
    setup: Callable[[], tuple[float, Callable[[], int]]], epochs: int
) -> tuple[float, float]:
    build, epoch = setup()
    rates = []
    for _ in range(epochs + 1):
        t0 = time.perf_counter()
        n = epoch()
        rates.append(n / (time.perf_counter() - t0))
    return build, statistics.median(rates[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", help="a folder of *.tar shards (default: generate them)")
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--size", type=int, default=8192, help="mean jpg member size (bytes)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    if args.dir:
        paths = sorted(str(p) for p in Path(args.dir).glob("*.tar"))
    else:
        folder = Path(tempfile.mkdtemp(prefix="headrace-bench-wds-"))
        paths = make_shards(folder, args.samples, args.shards, args.size)
    bs = args.batch_size
    runs: dict[str, Callable[[], tuple[float, Callable[[], int]]]] = {
        "headrace": lambda: dynamic("headrace", paths, bs),
        "dali": lambda: dynamic("nvidia.dali.experimental.dynamic", paths, bs),
        "webdataset": lambda: library(paths, bs),
    }
    results = {}
    print(f"{len(paths)} shards, batch {bs}, 2 threads, median of {args.epochs} epochs")
    for name, setup in runs.items():
        try:
            build, rate = measure(setup, args.epochs)
        except ImportError as e:
            print(f"{name:>11}: skipped ({e})")
            continue
        results[name] = rate
        print(f"{name:>11}: {rate:12,.0f} records/s   (construction {build:.2f} s)")
    for other in ("dali", "webdataset"):
        if "headrace" in results and other in results:
            print(f"headrace / {other}: {results['headrace'] / results[other]:.2f}x")


if __name__ == "__main__":
    main()
