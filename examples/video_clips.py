"""Clips of video files for an action-recognition model: sequences of frames, labels, resizing.

What it does
------------
1. Uses the class folders given with ``--root`` (one sub-folder per class of video files), or
   writes a small data set of H.264 MP4 files with PyAV (two classes, moving squares).
2. Reads 8-frame clips (every 2nd frame) with ``readers.VideoResize`` (shorter side 64),
   shuffled, in batches, with labels and first frame numbers; turns each batch into the
   ``(N, C, F, H, W)`` float tensor 3-D CNNs take.
3. Samples one clip per file evenly over the whole video with
   ``experimental.readers.Video(uniform_sample=True)``.
4. Decodes chosen frames of in-memory files with ``decoders.video`` (files read by
   ``readers.File``).

Run it
------
``python examples/video_clips.py`` (or ``--root FOLDER``; needs ``pip install headrace[video]``
and torch). Prints one line per step.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import headrace as ndd
from headrace.sample_data import write_video


def write_dataset(folder: str, per_class: int, frames: int) -> None:
    """Two classes of small H.264 videos: a square moving right (0) or down (1)."""

    def frame(label: int, k: int) -> np.ndarray:
        img = np.full((96, 128, 3), 30, np.uint8)
        x, y = (4 + 3 * k, 40) if label == 0 else (60, 4 + 2 * k)
        img[y % 80 : y % 80 + 16, x % 112 : x % 112 + 16] = (250, 200, 40)
        return img

    for label, name in enumerate(("right", "down")):
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        for i in range(per_class):
            write_video(
                os.path.join(folder, name, f"clip_{i}.mp4"),
                (frame(label, k) for k in range(frames + 4 * i)),
                codec="libx264", options={"crf": "18", "g": "12"},
            )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", help="class folders of video files (default: generated)")
    parser.add_argument("--per-class", type=int, default=3)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.root
        if root is None:
            root = tmp
            write_dataset(root, args.per_class, args.frames)

        # 2. clips of 8 frames (stride 2), resized, shuffled, with labels and frame numbers
        reader = ndd.readers.VideoResize(
            file_root=root, sequence_length=8, stride=2, step=16, resize_shorter=64,
            random_shuffle=True, seed=7, enable_frame_num=True, last_batch="partial",
        )  # fmt: skip
        clips = 0
        for video, labels, first in reader.next_epoch(batch_size=args.batch_size):
            x = video.torch(pad=True).float().div_(255).permute(0, 4, 1, 2, 3)  # N C F H W
            clips += x.shape[0]
            shape = tuple(x.shape[1:])
            seen = list(zip(labels.torch().flatten().tolist(), first.torch().flatten().tolist()))
        print(f"clips: {clips} in batches, each (C, F, H, W) = {shape}, float32 in [0, 1]")
        print(f"last batch (label, first frame): {seen}")

        # 3. one clip per file, frames spread evenly over the whole video
        uniform = ndd.experimental.readers.Video(
            file_root=root, sequence_length=6, uniform_sample=True, enable_frame_num="sequence"
        )
        spans = [np.asarray(n).tolist() for _, _, n in uniform.next_epoch()]
        print(f"uniform sampling: {len(spans)} clips, frame numbers of the first {spans[0]}")

        # 4. chosen frames of files held in memory
        files = ndd.readers.File(file_root=root, file_filters=["*"])
        (encoded, _) = next(iter(files.next_epoch(batch_size=2)))
        picked = ndd.decoders.video(encoded, frames=[0, 10, 20])
        print(f"decoders.video: shapes {[tuple(t.shape) for t in picked.tensors]}, "
              f"layout {picked.layout}")  # fmt: skip


if __name__ == "__main__":
    main()
