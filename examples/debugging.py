"""Find the line that broke: ``EvalMode.sync_cpu``.

By default (``EvalMode.eager``) an operator call returns at once and runs in the background, so
a bad argument is only reported when the result is used, e.g. at ``.torch()``. headrace then
names the call that failed ("The call at debugging.py:NN failed"), but the exception itself is
raised at the line that consumed the result. Under ``with ndd.EvalMode.sync_cpu:`` every call
runs before it returns, so the exception is raised at the failing line itself: run the block
that misbehaves that way while debugging, and drop the ``with`` again for speed.

The bug here: a 96x96 crop of images whose shorter side was resized to 64.

    python examples/debugging.py
    python examples/debugging.py --limit 16      # a small generated sample data set
"""

from __future__ import annotations

import argparse
import traceback

import headrace as ndd
from headrace import sample_data

CROP = 96


def augment(jpegs: ndd.Batch, shorter: int) -> ndd.Batch:
    images = ndd.decoders.image(jpegs)
    images = ndd.resize(images, resize_shorter=shorter)
    images = ndd.crop(images, crop=(CROP, CROP))  # fails when shorter < CROP
    return images


def where(exc: BaseException) -> int:
    """The line of this file where ``exc`` was raised (innermost frame in this file)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == __file__]
    return frames[-1].lineno or 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="image folder (default: built-in sample data)")
    parser.add_argument("--limit", type=int, help="use a sample data set of N images")
    args = parser.parse_args(argv)
    root = args.data or sample_data.image_folder(num_images=args.limit or 512)
    reader = ndd.readers.File(file_root=str(root))
    jpegs, _ = next(iter(reader.next_epoch(batch_size=8)))

    # 1. Default (eager) mode: the call returns; the error appears when the result is used.
    try:
        images = augment(jpegs, shorter=64)
        images.torch()
    except ValueError as e:
        note = next((n for n in getattr(e, "__notes__", []) if "The call at" in n), "")
        call = note.split("The call at ", 1)[-1].split(" failed", 1)[0]
        print(
            f"eager:    {type(e).__name__} raised at line {where(e)} (.torch()); "
            f"headrace names the call at {call.rsplit('/', 1)[-1]}"
        )

    # 2. sync_cpu: the same error, raised by the line that is wrong.
    try:
        with ndd.EvalMode.sync_cpu:
            images = augment(jpegs, shorter=64)
    except ValueError as e:
        print(f"sync_cpu: {type(e).__name__} raised at line {where(e)}: {e}")

    # 3. Fixed: resize so that the crop fits.
    images = augment(jpegs, shorter=CROP)
    print(f"fixed:    batch of shape {tuple(images.torch().shape)}")


if __name__ == "__main__":
    main()
