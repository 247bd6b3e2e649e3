"""The ceiling row of ``headrace bench --scaling``: the same libraries called directly on a thread
pool, with no framework in between.

Each image is read, decoded by simplejpeg (libjpeg-turbo), resized by OpenCV (``INTER_AREA`` when
shrinking, else bilinear), cropped, flipped (train) and normalised to float32 CHW with numpy, one
task per image on a ``ThreadPoolExecutor`` of T threads — the "ideal thread design" the scaling
issue measured. It is not bit-identical to either loader (different resampler); it shows how fast
these libraries go on this machine, so a goal above it can be recognised as such.

Examples
--------
>>> import tempfile
>>> from headrace import sample_data
>>> from headrace._benchmark import list_images
>>> d = sample_data.image_folder(tempfile.mkdtemp(), num_images=3, num_classes=1,
...                              progress=False)
>>> x, y = next(iter(CeilingLoader(list_images(d), "train", batch_size=2, threads=2)))
>>> x.shape, x.dtype.name, y.tolist()
((2, 3, 224, 224), 'float32', [0, 0])
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cv2
import numpy as np

from headrace.pipelines import CROP, MEAN, RESIZE_SHORTER, STD

_MEAN = np.asarray(MEAN, np.float32)
_INV_STD = (1 / np.asarray(STD, np.float64)).astype(np.float32)


def _decode(path: str) -> np.ndarray:
    import simplejpeg

    with open(path, "rb") as f:
        data = f.read()
    try:
        return simplejpeg.decode_jpeg(data, colorspace="RGB")
    except ValueError:  # not a JPEG: OpenCV reads the other formats
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        return cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def _resize(img: np.ndarray, w: int, h: int) -> np.ndarray:
    shrink = w * h < img.shape[0] * img.shape[1]
    return cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)


def _normalize(img: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(((img.astype(np.float32) - _MEAN) * _INV_STD).transpose(2, 0, 1))


def eval_image(path: str) -> np.ndarray:
    """Decode, resize the shorter side to 256, centre-crop 224, normalise (CHW float32)."""
    img = _decode(path)
    h, w = img.shape[:2]
    s = RESIZE_SHORTER / min(h, w)
    img = _resize(img, max(CROP, round(w * s)), max(CROP, round(h * s)))
    top, left = (img.shape[0] - CROP) // 2, (img.shape[1] - CROP) // 2
    return _normalize(img[top : top + CROP, left : left + CROP])


def train_image(path: str, rnd: random.Random) -> np.ndarray:
    """Decode, random-resized-crop 224 (area 0.08-1, ratio 3/4-4/3), random mirror, normalise."""
    from headrace._benchmark import rrc_window

    img = _decode(path)
    x, y, cw, ch = rrc_window(img.shape[1], img.shape[0], rnd)
    img = _resize(img[y : y + ch, x : x + cw], CROP, CROP)
    if rnd.random() < 0.5:
        img = img[:, ::-1]
    return _normalize(img)


class CeilingLoader:
    """Batches ``(images NCHW float32, labels)`` made by plain library calls on a thread pool."""

    def __init__(self, images: Any, pipeline: str, *, batch_size: int, threads: int,
                 seed: int = 0) -> None:  # fmt: skip
        self.images, self.train = images, pipeline == "train"
        self.batch_size, self.seed, self.epoch = batch_size, seed, 0
        self.pool = ThreadPoolExecutor(max(1, threads), thread_name_prefix="ceiling")

    def __len__(self) -> int:
        return -(-len(self.images.paths) // self.batch_size)

    def _one(self, i: int) -> np.ndarray:
        path = self.images.paths[i]
        if self.train:
            return train_image(path, random.Random(hash((self.seed, self.epoch, i))))
        return eval_image(path)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        order = list(range(len(self.images.paths)))
        if self.train:
            random.Random(hash((self.seed, self.epoch))).shuffle(order)
        self.epoch += 1
        for s in range(0, len(order), self.batch_size):
            idx = order[s : s + self.batch_size]
            batch = np.stack(list(self.pool.map(self._one, idx)))
            yield batch, np.asarray([self.images.labels[i] for i in idx])


__all__ = ["CeilingLoader", "eval_image", "train_image"]
