"""Whole-loader benchmark: headrace vs PyTorch DataLoader + Pillow vs the reference.

Every loader reads the same folder (default: the built-in sample data), batch 64, float32 NCHW
torch output, with the same number of threads / worker processes, and runs in its own
subprocess so that memory figures are per loader:

* ``headrace``: the dynamic-mode script below, with ``import headrace as ndd``;
* ``headrace-loader``: the same pipeline through ``headrace.pytorch.Loader`` (one batch of
  prefetch, so the next batch is prepared while the current one is consumed);
* ``dali``: the same dynamic-mode script with ``import nvidia.dali.experimental.dynamic as ndd``
  (skipped when the reference is not installed);
* ``dataloader``: ``torch.utils.data.DataLoader`` + Pillow (torchvision's transforms by hand).

The first epoch is warm-up; the table shows the median of the others. Peak memory is the
process's peak resident set (for the DataLoader: main process + its largest worker).

    python bench/loaders.py                       # eval and train, all loaders, 3 epochs
    python bench/loaders.py DIR --pipeline eval --epochs 4 --loaders headrace,dali
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

LOADERS = ("headrace", "headrace-loader", "dali", "dataloader")
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def dynamic_epochs(module: str, root: str, pipeline: str, batch_size: int, threads: int,
                   seed: int = 0) -> Any:  # fmt: skip
    """The dynamic-mode script, identical for headrace and the reference."""
    ndd = importlib.import_module(module)
    ndd.set_num_threads(threads)
    train = pipeline == "train"
    reader = ndd.readers.File(file_root=root, random_shuffle=train, seed=seed)
    rng = ndd.random.RNG(seed=seed)

    def epoch() -> Iterator[tuple[Any, Any]]:
        for jpegs, labels in reader.next_epoch(batch_size=batch_size):
            if train:
                images = ndd.decoders.image_random_crop(jpegs, rng=rng)
                images = ndd.resize(images, size=(224, 224))
                mirror = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=rng)
                images = ndd.crop_mirror_normalize(
                    images, mirror=mirror, mean=MEAN, std=STD, dtype=ndd.float32
                )
            else:
                images = ndd.decoders.image(jpegs)
                images = ndd.resize(images, resize_shorter=256)
                images = ndd.crop_mirror_normalize(
                    images, crop=(224, 224), mean=MEAN, std=STD, dtype=ndd.float32
                )
            yield images.torch(), labels.torch()

    return epoch


def _worker(args: argparse.Namespace) -> dict[str, Any]:
    from headrace import _benchmark as bm

    t_start = time.perf_counter()
    children = False
    if args.worker in ("headrace", "dali"):
        module = "headrace" if args.worker == "headrace" else "nvidia.dali.experimental.dynamic"
        epoch = dynamic_epochs(module, args.dir, args.pipeline, args.batch_size, args.threads)
    elif args.worker == "headrace-loader":
        import headrace as ndd

        ndd.set_num_threads(args.threads)
        loader = bm.headrace_loader(
            bm.list_images(args.dir), args.pipeline, batch_size=args.batch_size
        )
        epoch = lambda: loader  # noqa: E731
    else:
        loader = bm.baseline_loader(
            bm.list_images(args.dir), args.pipeline, batch_size=args.batch_size,
            workers=args.threads,
        )  # fmt: skip
        epoch = lambda: loader  # noqa: E731
        children = True
    setup = time.perf_counter() - t_start
    res = bm.run_epochs(epoch, args.epochs, count=lambda b: len(b[1]), progress=False,
                        children=children)  # fmt: skip
    peak = bm.peak_rss_mib() + (bm.peak_rss_mib(children=True) if children else 0.0)
    return {
        "loader": args.worker,
        "pipeline": args.pipeline,
        "setup_s": setup,
        "epochs": [[r.images, r.batches, r.seconds, r.cpu_seconds] for r in res],
        "peak_mib": peak,
    }


def _run_one(name: str, args: argparse.Namespace, pipeline: str) -> dict[str, Any] | None:
    cmd = [
        sys.executable, __file__, args.dir, "--worker", name, "--pipeline", pipeline,
        "--epochs", str(args.epochs), "--batch-size", str(args.batch_size),
        "--threads", str(args.threads),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {name} ({pipeline}) failed: {tail}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _available(name: str) -> bool:
    if name != "dali":
        return True
    try:
        importlib.import_module("nvidia.dali")
        return True
    except ImportError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", help="image folder (default: built-in sample data)")
    parser.add_argument("--pipeline", choices=("eval", "train", "both"), default="both")
    parser.add_argument("--loaders", default=",".join(LOADERS))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="repeat, alternating the order")
    parser.add_argument("--worker", choices=LOADERS, help=argparse.SUPPRESS)
    parser.add_argument("--json", help="also write the raw results to this file")
    args = parser.parse_args(argv)
    if args.dir is None:
        from headrace import sample_data

        args.dir = str(sample_data.image_folder())
    if args.worker:
        print(json.dumps(_worker(args)))
        return 0

    from headrace import _benchmark as bm

    names = [n for n in args.loaders.split(",") if n]
    if bad := [n for n in names if n not in LOADERS]:
        parser.error(f"unknown loaders {bad}; choose from {LOADERS}")
    names = [n for n in names if _available(n) or print(f"({n} not installed: skipped)")]
    pipelines = ("eval", "train") if args.pipeline == "both" else (args.pipeline,)
    print(f"{args.dir}: batch {args.batch_size}, {args.threads} threads/workers, "
          f"{args.epochs} epochs (first = warm-up), {args.rounds} round(s)")  # fmt: skip
    raw = []
    for pipeline in pipelines:
        runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
        for r in range(args.rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                out = _run_one(name, args, pipeline)
                if out is not None:
                    runs[name].append(out)
                    raw.append(out)
        rows = []
        for name, outs in runs.items():
            if not outs:
                continue
            epochs = [bm.EpochResult(*e) for o in outs for e in o["epochs"][1:] or o["epochs"]]
            peak = max(o["peak_mib"] for o in outs)
            rows.append((name, bm.summarize(epochs, warmup=False), peak))
        print(f"\n[{pipeline}]\n{bm.format_table(rows)}")
        by = {name: (r, peak) for name, r, peak in rows}
        for a, b in (("headrace", "dali"), ("headrace-loader", "dali"),
                     ("headrace", "dataloader"), ("headrace-loader", "dataloader")):  # fmt: skip
            if a in by and b in by:
                speed = by[a][0].img_per_s / by[b][0].img_per_s
                mem = by[a][1] / by[b][1]
                print(f"  {a} / {b}: {speed:.2f}x img/s, {mem:.2f}x peak memory")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(raw, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
