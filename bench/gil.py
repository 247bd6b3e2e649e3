"""GIL-held time per image of the ResNet-50 eval and train pipelines, measured with py-spy.

The pipelines are the dynamic-mode script of ``bench/loaders.py`` (eval: decode -> resize
shorter 256 -> crop_mirror_normalize 224; train: random-crop decode -> 224x224 -> random mirror ->
normalize). Each runs in a child process: one warm-up epoch, then ``py-spy record --gil`` attaches
to it and samples only the thread that holds the GIL while the measured epochs run. GIL-held
time per image = GIL samples / sampling rate / images. The table lists the functions that hold
the GIL the most (``self``: the leaf frame; ``total``: anywhere on the stack).

Needs ``py-spy`` (``pip install py-spy``) and permission to attach to a child process.

    python bench/gil.py                                 # both pipelines, 2 threads
    python bench/gil.py --pipeline eval --threads 4 --epochs 3 --top 25
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loaders import dynamic_epochs

_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _child(args: argparse.Namespace) -> None:
    epoch = dynamic_epochs("headrace", args.dir, args.pipeline, args.batch_size, args.threads)
    for _ in epoch():  # warm-up: imports, thread pool, caches
        pass
    print("READY", flush=True)
    sys.stdin.readline()  # blocks without the GIL while py-spy attaches
    images, t0 = 0, time.perf_counter()
    for _ in range(args.epochs):
        for _, labels in epoch():
            images += len(labels)
    print(json.dumps({"images": images, "seconds": time.perf_counter() - t0}), flush=True)
    sys.stdin.readline()  # py-spy stops before the interpreter's exit (not measured)


def _parse(raw: str) -> tuple[int, collections.Counter, collections.Counter]:
    """Total samples, and samples by leaf function and by any function on the stack."""
    total, leaf, incl = 0, collections.Counter(), collections.Counter()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        names = []
        for frame in stack.split(";"):
            m = _FRAME.match(frame)
            names.append(f"{m['func']} ({m['file']})" if m else frame)
        if names:
            leaf[names[-1]] += n
        for name in set(names):
            incl[name] += n
    return total, leaf, incl


def measure(args: argparse.Namespace, pipeline: str) -> dict:
    py_spy = shutil.which("py-spy")
    if py_spy is None:
        raise SystemExit("py-spy not found: pip install py-spy")
    cmd = [sys.executable, __file__, args.dir, "--child", "--pipeline", pipeline,
           "--epochs", str(args.epochs), "--batch-size", str(args.batch_size),
           "--threads", str(args.threads)]  # fmt: skip
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    try:
        if child.stdout.readline().strip() != "READY":
            raise SystemExit(f"{pipeline}: the child failed during warm-up")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "gil.txt")
            spy = subprocess.Popen(
                [py_spy, "record", "--gil", "--nonblocking", "--format", "raw", "-r",
                 str(args.rate), "-o", out, "--pid", str(child.pid)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(1.0)  # let py-spy attach before the measured epochs start
            child.stdin.write("go\n")
            child.stdin.flush()
            result = json.loads(child.stdout.readline())
            spy.send_signal(signal.SIGINT)  # py-spy writes its samples and stops
            spy.wait(timeout=60)
            child.stdin.write("exit\n")
            child.stdin.flush()
            child.wait(timeout=60)
            raw = Path(out).read_text() if os.path.exists(out) else ""
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    total, leaf, incl = _parse(raw)
    images = result["images"]
    per = 1e6 / args.rate / max(images, 1)
    return {
        "pipeline": pipeline,
        "images": images,
        "img_per_s": images / result["seconds"],
        "gil_us_per_image": total * per,
        "gil_fraction": total / args.rate / result["seconds"],
        "self": [(name, n * per) for name, n in leaf.most_common(args.top)],
        "total": [(name, n * per) for name, n in incl.most_common(args.top)],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", help="image folder (default: built-in sample data)")
    parser.add_argument("--pipeline", choices=("eval", "train", "both"), default="both")
    parser.add_argument("--epochs", type=int, default=2, help="measured epochs (after warm-up)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rate", type=int, default=1000, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dir is None:
        from headrace import sample_data

        args.dir = str(sample_data.image_folder())
    if args.child:
        _child(args)
        return 0
    pipelines = ("eval", "train") if args.pipeline == "both" else (args.pipeline,)
    print(f"{args.dir}: batch {args.batch_size}, {args.threads} threads, {args.epochs} measured "
          f"epochs, py-spy at {args.rate} Hz")  # fmt: skip
    for pipeline in pipelines:
        r = measure(args, pipeline)
        print(f"\n[{pipeline}] {r['images']} images, {r['img_per_s']:.0f} img/s; GIL held "
              f"{r['gil_us_per_image']:.0f} us/image ({100 * r['gil_fraction']:.0f}% of the "
              f"wall time)")  # fmt: skip
        for title in ("self", "total"):
            print(f"  top GIL holders ({title}, us/image):")
            for name, us in r[title]:
                print(f"    {us:8.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
