"""Scaling study of headrace's loader over thread and worker-process counts (issue 12).

Runs ``headrace bench --scaling``: for each configuration (one process with T threads, N worker
processes x T threads, and the PyTorch DataLoader + Pillow with as many workers as CPUs), eval
and train pipelines, each in its own process, and prints one parseable line per run::

    RESULT <configuration> <pipeline> <img/s> <cores used>
    PEAK <configuration> <pipeline> <peak MiB, main process + workers>

then a table with the ratio of each configuration to the DataLoader. On a 16-core machine with
``--images 1024`` it takes about 2-3 minutes.

    python bench/scaling.py --data DIR --images 1024
    python bench/scaling.py                      # the built-in sample data (512 images)
"""

from __future__ import annotations

import argparse
import sys

from headrace.cli import main

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="image folder, one sub-folder per class (default: samples)")
    ap.add_argument("--images", type=int, help="use at most N images")
    ap.add_argument("--epochs", type=int, default=2, help="the first one is warm-up")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--pipeline", choices=("eval", "train"), help="default: both")
    a = ap.parse_args()
    argv = ["bench", "--scaling", "--epochs", str(a.epochs), "--batch-size", str(a.batch_size)]
    argv += [a.data] if a.data else []
    argv += ["--limit", str(a.images)] if a.images else []
    argv += ["--pipeline", a.pipeline] if a.pipeline else []
    sys.exit(main(argv))
