"""A program written for the reference's dynamic mode, run unchanged with headrace.

It uses what such programs rely on: ``pathlib`` paths, a reader called directly
(``encoded, label = reader()``), reader batches paired with ``ndd.random.uniform(batch_size=...)``
(the last batch is topped up from the next epoch, so every batch is full), and ``ndd.pytorch``
reached as an attribute (its ``Loader`` is headrace's own). The last part shows headrace's exact
epochs, one keyword away.

    python examples/reference_program.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import cv2
import numpy as np

import headrace as ndd

BATCH_SIZE = 4


def write_images(root: Path, per_class: int = 5) -> None:
    """Two class folders of small PNG images (10 images: 2.5 batches of 4)."""
    rng = np.random.default_rng(0)
    for cls in ("cats", "dogs"):
        (root / cls).mkdir(parents=True)
        for i in range(per_class):
            image = rng.integers(0, 255, (24, 32, 3), dtype=np.uint8)
            cv2.imwrite(str(root / cls / f"{i}.png"), image)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "images"
        write_images(root)

        # --- the reference's program, unchanged ----------------------------------------------
        image = ndd.imread(root / "cats" / "0.png")  # a pathlib path, as in the reference's docs
        print(f"imread: {image.shape} {image.layout}")

        reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
        encoded, label = reader()  # one sample
        print(f"reader(): {encoded.shape[0]} bytes, label {int(label.item())}")

        reader = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
        for epoch in range(2):
            sizes = []
            for jpegs, _labels in reader.next_epoch(batch_size=BATCH_SIZE):
                images = ndd.decoders.image(jpegs)
                angles = ndd.random.uniform(batch_size=BATCH_SIZE, range=(-10, 10))
                images = ndd.rotate(images, angle=angles, fill_value=0)
                sizes.append(images.batch_size)
            print(f"epoch {epoch}: batches of {sizes} (every batch full)")

        loader_cls = ndd.pytorch.Loader  # sub-packages are attributes, no explicit import
        print(f"ndd.pytorch.{loader_cls.__name__} reachable")

        # --- headrace's exact epochs: one keyword away ----------------------------------------
        exact = ndd.readers.File(file_root=root, random_shuffle=True, seed=1)
        for epoch in range(2):
            epoch_batches = exact.next_epoch(batch_size=BATCH_SIZE, last_batch="partial")
            sizes = [lab.batch_size for _, lab in epoch_batches]
            print(f"exact epoch {epoch}: batches of {sizes} (one pass over the data)")


if __name__ == "__main__":
    main()
