"""SSD input-pipeline throughput: headrace vs the reference running the same script.

Both loaders run ``headrace.pipelines.detection_pipeline`` (COCO reader -> decode ->
random_bbox_crop -> slice -> resize -> flip with bb_flip -> normalize -> box_encoder against
SSD300's 8732 anchors) through the dynamic-mode module given to it: ``headrace`` or the
reference's ``nvidia.dali.experimental.dynamic``, with the same number of threads, each in its
own subprocess, on a generated COCO-format data set (or ``--file-root``/``--annotations``). The
first epoch is warm-up; the table shows the median of the others, and ``--rounds`` repeats the
pair in alternating order (the medians over rounds are compared).

    python bench/detection.py                        # 2 threads, batch 32, 192 images
    python bench/detection.py --rounds 3 --epochs 4 --threads 2
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

LOADERS = {"headrace": "headrace", "dali": "nvidia.dali.experimental.dynamic"}


def _worker(args: argparse.Namespace) -> dict[str, Any]:
    from headrace import pipelines

    ndd = importlib.import_module(LOADERS[args.worker])
    ndd.set_num_threads(args.threads)
    reader = ndd.readers.COCO(
        file_root=args.file_root, annotations_file=args.annotations, ltrb=True, ratio=True,
        skip_empty=True, random_shuffle=True, seed=0,
    )  # fmt: skip
    rng = ndd.random.RNG(seed=0)
    anchors = pipelines.ssd_anchors()
    epochs = []
    for _ in range(args.epochs):
        t0, c0, n = time.perf_counter(), time.process_time(), 0
        for jpegs, boxes, labels in reader.next_epoch(batch_size=args.batch_size):
            images, offsets, anchor_labels = pipelines.detection_pipeline(
                jpegs, boxes, labels, anchors=anchors, rng=rng, api=ndd
            )
            images.torch(), offsets.torch(), anchor_labels.torch()
            n += jpegs.batch_size
        epochs.append([n, time.perf_counter() - t0, time.process_time() - c0])
    return {"loader": args.worker, "epochs": epochs}


def _run_one(name: str, args: argparse.Namespace) -> dict[str, Any] | None:
    cmd = [
        sys.executable, __file__, "--worker", name, "--file-root", str(args.file_root),
        "--annotations", str(args.annotations), "--epochs", str(args.epochs),
        "--batch-size", str(args.batch_size), "--threads", str(args.threads),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {name} failed: {tail}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rate(res: dict[str, Any]) -> tuple[float, float]:
    """Median images/s and CPU cores used over the timed epochs (all but the first)."""
    timed = res["epochs"][1:] or res["epochs"]
    return (
        statistics.median(n / s for n, s, _ in timed),
        statistics.median(c / s for _, s, c in timed),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file-root", help="COCO image folder (default: generated data)")
    parser.add_argument("--annotations", help="COCO annotations JSON")
    parser.add_argument("--images", type=int, default=192, help="size of the generated data")
    parser.add_argument("--loaders", default=",".join(LOADERS))
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1, help="repeat, alternating the order")
    parser.add_argument("--worker", choices=tuple(LOADERS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(args)))
        return 0
    if args.file_root is None:
        from headrace import sample_data

        folder = sample_data.coco_folder(num_images=args.images)
        args.file_root, args.annotations = folder / "images", folder / "annotations.json"
    names = [n for n in args.loaders.split(",") if n in LOADERS]
    if "dali" in names and importlib.util.find_spec("nvidia.dali") is None:
        print("the reference (nvidia-dali) is not installed: skipping it", file=sys.stderr)
        names.remove("dali")
    rates: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for r in range(args.rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            res = _run_one(name, args)
            if res is not None:
                rates[name].append(_rate(res))
    print(f"SSD pipeline, batch {args.batch_size}, {args.threads} threads, {args.rounds} "
          f"round(s) of {args.epochs} epochs (median of epochs 2-{args.epochs})")  # fmt: skip
    print(f"{'loader':<10} {'img/s':>8} {'cores':>6}")
    med = {}
    for name, rs in rates.items():
        if rs:
            med[name] = statistics.median(x for x, _ in rs)
            print(f"{name:<10} {med[name]:8.1f} {statistics.median(c for _, c in rs):6.2f}")
    if "headrace" in med and "dali" in med:
        print(f"headrace / reference: {med['headrace'] / med['dali']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
