"""Video clip throughput (clips/s): headrace's video readers against the reference's CPU path.

The reference (NVIDIA DALI 2.4) decodes video on the CPU only in
``experimental.readers.Video``, and there only VP8, VP9 and MJPEG (``readers.Video`` and
``readers.VideoResize`` are GPU-only, NVDEC). So two comparisons:

1. MJPEG AVI files: ``experimental.readers.Video`` of headrace against the reference's, both on
   the CPU with ``set_num_threads(--threads)``.
2. H.264 MP4 files (no CPU path in the reference): ``readers.Video`` of headrace against plain
   PyAV decoding of the same clips (open, seek to the key frame, decode, convert to RGB) in one
   Python thread.

Each side runs in its own process (DALI and PyAV both bundle FFmpeg); each process reads one
untimed warm-up epoch, then ``--reps`` timed epochs, and reports the median clips/s. The sides
take turns, ``--rounds`` processes each; the median over the rounds is reported.

    python bench/video.py                         # 8 files of 96 frames, 320x240, 2 threads
    python bench/video.py --files 16 --frames 200 --rounds 5
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

CLIP = {"sequence_length": 8, "stride": 2, "step": 16}


def write(folder: Path, files: int, frames: int, w: int, h: int) -> None:
    import av

    rng = np.random.default_rng(0)
    for codec, ext, pix, opts in (
        ("mjpeg", "avi", "yuvj420p", {"q:v": "3"}),
        ("libx264", "mp4", "yuv420p", {"crf": "20", "g": "32"}),
    ):
        for i in range(files):
            with av.open(str(folder / f"{codec}_{i:03d}.{ext}"), "w") as c:
                s = c.add_stream(codec, rate=25, options=opts)
                s.width, s.height, s.pix_fmt = w, h, pix
                base = rng.integers(0, 255, (h // 8, w // 8, 3), dtype=np.uint8)
                for k in range(frames):
                    img = np.kron(np.roll(base, k, axis=1), np.ones((8, 8, 1), np.uint8))
                    for p in s.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                        c.mux(p)
                for p in s.encode():
                    c.mux(p)


def files_of(folder: Path, codec: str) -> list[str]:
    return sorted(str(p) for p in folder.iterdir() if p.name.startswith(codec))


def reader_epoch(module: str, reader: str, files: list[str], threads: int, batch: int) -> Any:
    ndd = importlib.import_module(module)
    ndd.set_num_threads(threads)
    cls: Any = ndd
    for part in reader.split("."):
        cls = getattr(cls, part)
    r = cls(filenames=files, **CLIP)

    def run() -> int:
        n = 0
        for (b,) in r.next_epoch(batch_size=batch):
            if hasattr(b, "evaluate"):
                b.evaluate()
            n += len(b.tensors)
        return n

    return run


def pyav_epoch(files: list[str]) -> Any:
    """Plain PyAV: every clip of every file (as ``CLIP`` cuts them), decoded from its key frame."""
    import av

    clips: list[tuple[str, list[int]]] = []
    for f in files:
        with av.open(f) as c:
            n = sum(1 for p in c.demux(video=0) if p.size)
        span = (CLIP["sequence_length"] - 1) * CLIP["stride"] + 1
        for s in range(0, n - span + 1, CLIP["step"]):
            clips.append((f, list(range(s, s + span, CLIP["stride"]))))

    def run() -> int:
        for f, want in clips:
            with av.open(f) as c:
                st = c.streams.video[0]
                st.thread_type = "AUTO"
                tb, rate = st.time_base, st.average_rate
                c.seek(int(want[0] / rate / tb), stream=st, backward=True)
                got = []
                for fr in c.decode(st):
                    k = round(fr.pts * tb * rate)
                    if k in want:
                        got.append(fr.to_ndarray(format="rgb24"))
                    if k >= want[-1]:
                        break
                np.stack(got)
        return len(clips)

    return run


def measure(side: str, folder: Path, threads: int, batch: int, reps: int) -> float:
    if side == "dali":
        run = reader_epoch("nvidia.dali.experimental.dynamic", "experimental.readers.Video",
                           files_of(folder, "mjpeg"), threads, batch)  # fmt: skip
    elif side == "headrace-mjpeg":
        run = reader_epoch("headrace", "experimental.readers.Video", files_of(folder, "mjpeg"),
                           threads, batch)  # fmt: skip
    elif side == "headrace-h264":
        run = reader_epoch("headrace", "readers.Video", files_of(folder, "libx264"), threads, batch)
    else:
        run = pyav_epoch(files_of(folder, "libx264"))
    run()  # warm-up: page cache, indexes
    rates = []
    for _ in range(reps):
        t = time.perf_counter()
        n = run()
        rates.append(n / (time.perf_counter() - t))
    return statistics.median(rates)


def in_process(side: str, args: argparse.Namespace, folder: Path) -> float:
    cmd = [sys.executable, __file__, "--side", side, "--folder", str(folder),
           "--threads", str(args.threads), "--batch-size", str(args.batch_size),
           "--reps", str(args.reps)]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        print(f"  {side}: failed ({out.stderr.strip().splitlines()[-1:]})")
        return float("nan")
    return float(json.loads(out.stdout.strip().splitlines()[-1])["clips_per_s"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=8)
    p.add_argument("--frames", type=int, default=96)
    p.add_argument("--width", type=int, default=320)
    p.add_argument("--height", type=int, default=240)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=3, help="timed epochs per process")
    p.add_argument("--rounds", type=int, default=3, help="processes per side, interleaved")
    p.add_argument("--side", help=argparse.SUPPRESS)
    p.add_argument("--folder", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.side:
        rate = measure(args.side, Path(args.folder), args.threads, args.batch_size, args.reps)
        print(json.dumps({"clips_per_s": rate}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write(folder, args.files, args.frames, args.width, args.height)
        print(f"{args.files} files x {args.frames} frames {args.width}x{args.height}, clips of "
              f"{CLIP}, {args.threads} threads, batches of {args.batch_size}")  # fmt: skip
        sides = ("headrace-mjpeg", "dali", "headrace-h264", "pyav")
        rates: dict[str, list[float]] = {s: [] for s in sides}
        for _ in range(args.rounds):  # rounds interleave the sides: load changes hit all alike
            for s in sides:
                rates[s].append(in_process(s, args, folder))
        r = {s: statistics.median(v) for s, v in rates.items()}
    print(
        f"MJPEG  experimental.readers.Video: headrace {r['headrace-mjpeg']:8.1f} clips/s, "
        f"reference (CPU) {r['dali']:8.1f} clips/s, ratio {r['headrace-mjpeg'] / r['dali']:.2f}"
    )
    print(f"H.264  readers.Video:              headrace {r['headrace-h264']:8.1f} clips/s, "
          f"plain PyAV      {r['pyav']:8.1f} clips/s, ratio {r['headrace-h264'] / r['pyav']:.2f} "
          "(the reference has no CPU H.264 path)")  # fmt: skip


if __name__ == "__main__":
    main()
