"""Save, kill, resume: an input pipeline that survives pre-emption exactly.

What it does
------------
1. A training process reads a folder of images (``readers.File`` with shuffling), decodes a
   random crop of each image and flips it on a coin toss (two seeded ``RNG``\\ s), and saves a
   checkpoint every few steps. It is killed (SIGKILL) in the middle of an epoch, a few steps
   after its last checkpoint.
2. A second process builds *fresh* reader and generators, loads the newest checkpoint and
   finishes the run. The steps done after the last checkpoint are simply redone.
3. This script then runs the same job without interruption and checks that every batch of the
   resumed process (file bytes, labels and augmented pixels) equals the batch of the
   uninterrupted run at the same step.

Run it
------
``python examples/resume_training.py`` (a tiny dataset is generated in a temporary folder), or
``python examples/resume_training.py --data /path/to/class_folders --workdir /tmp/run``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np

import headrace as ndd

BATCH = 4
CHECKPOINT_EVERY = 4  # steps
PATTERN = os.path.join("checkpoints", "step_{seq:05d}.json")


class Progress:
    """The training loop's own state (the step counter): anything with ``get_state`` and
    ``set_state`` can live in the same checkpoint as the readers and generators."""

    def __init__(self) -> None:
        self.step = 0

    def get_state(self, *, cuda_stream: Any = None) -> str:
        return json.dumps({"step": self.step})

    def set_state(self, state: str) -> None:
        self.step = int(json.loads(state)["step"])


def make_dataset(root: str, classes: int = 3, per_class: int = 8) -> str:
    """Write small random JPEGs into ``root/<class>/`` folders."""
    import cv2

    gen = np.random.default_rng(0)
    for c in range(classes):
        folder = os.path.join(root, f"class_{c}")
        os.makedirs(folder, exist_ok=True)
        for i in range(per_class):
            h, w = (int(v) for v in gen.integers(24, 64, 2))
            img = gen.integers(0, 256, (h, w, 3), dtype=np.uint8)
            img[:, : w // 2] //= c + 2  # left/right differ, so flips show
            ok, jpeg = cv2.imencode(".jpg", img)
            assert ok
            with open(os.path.join(folder, f"{i:03d}.jpg"), "wb") as f:
                f.write(jpeg.tobytes())
    return root


def default_data(workdir: str) -> str:
    """A small set of the package's sample images (generated once, then cached), or tiny
    generated JPEGs where ``headrace.sample_data`` is not available."""
    try:
        from headrace import sample_data
    except ImportError:
        return make_dataset(os.path.join(workdir, "data"))
    return str(sample_data.image_folder(num_images=48, num_classes=4, progress=False))


def batches(data: str, ckpt: ndd.checkpoint.Checkpoint, progress: Progress) -> Iterator[str]:
    """The augmentation pipeline: one fingerprint per batch, epoch after epoch."""
    reader = ndd.readers.File(file_root=data, random_shuffle=True, seed=2024)
    crop_rng, flip_rng = ndd.random.RNG(seed=1), ndd.random.RNG(seed=2)
    # Registration applies the loaded states (if any): do it before the first next_epoch.
    ckpt.register(reader, "reader")
    ckpt.register(crop_rng, "crop_rng")
    ckpt.register(flip_rng, "flip_rng")
    ckpt.register(progress, "progress")
    while True:  # after a resume, the first epoch is the rest of the interrupted one
        for jpegs, labels in reader.next_epoch(batch_size=BATCH):
            images = ndd.decoders.image_random_crop(jpegs, rng=crop_rng)
            flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, rng=flip_rng)
            h = hashlib.sha256()
            for raw, label, image, flip in zip(jpegs, labels, images, flips):
                pixels = np.asarray(image)
                if int(flip.item()):
                    pixels = pixels[:, ::-1]
                h.update(bytes(np.asarray(raw)) + np.asarray(label).tobytes())
                h.update(repr(pixels.shape).encode() + np.ascontiguousarray(pixels).tobytes())
            yield h.hexdigest()[:16]


def train(data: str, workdir: str, steps: int, kill_at: int | None, resume: bool) -> None:
    """Run the job to ``steps``, checkpointing; log ``step digest`` lines; maybe get killed."""
    ckpt = ndd.checkpoint.Checkpoint()
    pattern = os.path.join(workdir, PATTERN)
    progress = Progress()
    if resume:
        path = ckpt.load(pattern)
        print(f"  loaded {os.path.relpath(path, workdir)}", flush=True)
    log_name = "resumed.log" if resume else "first.log"
    with open(os.path.join(workdir, log_name), "a", encoding="utf-8") as log:
        for digest in batches(data, ckpt, progress):
            progress.step += 1
            log.write(f"{progress.step} {digest}\n")
            log.flush()
            if progress.step % CHECKPOINT_EVERY == 0:
                ckpt.collect()
                ckpt.save(pattern)
            if progress.step == kill_at:
                print(f"  step {progress.step}: simulating pre-emption (SIGKILL)", flush=True)
                os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
            if progress.step >= steps:
                return


def read_log(path: str) -> dict[int, str]:
    with open(path, encoding="utf-8") as f:
        return {int(s): d for s, d in (line.split() for line in f if line.strip())}


def child(args: argparse.Namespace, *extra: str) -> int:
    cmd = [sys.executable, os.path.abspath(__file__), "--data", args.data, "--workdir"]
    cmd += [args.workdir, "--steps", str(args.steps), *extra]
    return subprocess.run(cmd, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", help="folder of class sub-folders with images (default: generated)")
    p.add_argument("--workdir", help="checkpoints and logs go here (default: a temp folder)")
    p.add_argument("--steps", type=int, default=20, help="training steps (batches)")
    p.add_argument("--kill-at", type=int, default=10, help="step after which to kill the job")
    p.add_argument("--phase", choices=["first", "resume"], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.phase:  # a child process
        resume = args.phase == "resume"
        train(args.data, args.workdir, args.steps, None if resume else args.kill_at, resume)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.abspath(args.workdir or tmp)
        os.makedirs(base, exist_ok=True)
        args.data = os.path.abspath(args.data or default_data(base))
        args.workdir = tempfile.mkdtemp(prefix="run_", dir=base)  # fresh logs and checkpoints
        print(f"data: {args.data}\nworkdir: {args.workdir}")
        print("1) training until pre-emption")
        rc = child(args, "--phase", "first", "--kill-at", str(args.kill_at))
        print(f"   training process killed (exit status {rc})")
        print("2) resuming from the newest checkpoint in a fresh process")
        if child(args, "--phase", "resume") != 0:
            print("resumed process failed")
            return 1
        print("3) the same job without interruption")
        reference: dict[int, str] = {}
        progress = Progress()
        for step, digest in enumerate(batches(args.data, ndd.checkpoint.Checkpoint(), progress)):
            reference[step + 1] = digest
            if step + 1 == args.steps:
                break
        first = read_log(os.path.join(args.workdir, "first.log"))
        resumed = read_log(os.path.join(args.workdir, "resumed.log"))
        before = sum(first[s] == reference[s] for s in first)
        same = sum(resumed[s] == reference.get(s) for s in resumed)
        start = min(resumed, default=0)
        print(f"   killed run: {before}/{len(first)} batches match; resumed at step {start}")
        print(f"resumed batches match the uninterrupted run: {same}/{len(resumed)}")
        ok = same == len(resumed) > 0 and max(resumed) == args.steps and before == len(first)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
