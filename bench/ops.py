"""Per-operator throughput on a batch of ImageNet-sized images, next to the raw library call.

For each operator: headrace on the whole batch (``--threads`` worker threads) and the plain
OpenCV/Pillow/numpy call doing the same work in a ThreadPoolExecutor with the same number of
threads, in the same run. Prints img/s and the ratio; nothing is asserted.

Run: ``python bench/ops.py [--batch 64] [--threads 2] [--reps 3]``.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import cv2
import numpy as np
from PIL import Image

import headrace as ndd

MEAN = np.array([0.485, 0.456, 0.406], np.float32) * 255
STD = np.array([0.229, 0.224, 0.225], np.float32) * 255


def make_images(n: int, seed: int = 0) -> list[np.ndarray]:
    """Natural-looking uint8 HWC images of ImageNet-like sizes (about 500x375)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        h, w = (375, 500) if i % 3 else (500, 375)
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        base = np.stack([x / w * 255, y / h * 255, (x + y) % 255], -1)
        img = base + rng.normal(0, 12, (h, w, 3))
        out.append(np.clip(img, 0, 255).astype(np.uint8))
    return out


def _shorter(img: np.ndarray, s: int = 256) -> tuple[int, int]:
    h, w = img.shape[:2]
    k = s / min(h, w)
    return round(w * k), round(h * k)


def _raw_cmn(img: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    y, x = (h - 224) // 2, (w - 224) // 2
    crop = img[y : y + 224, x : x + 224]
    return ((crop.astype(np.float32) - MEAN) / STD).transpose(2, 0, 1).copy()


def _raw_rotate(img: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), 30, 1.0)
    return cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR)


def _raw_twist(img: np.ndarray) -> np.ndarray:
    hsv = cv2.cvtColor(img, cv2.COLOR_RGB2HSV)
    hsv[..., 1] = cv2.convertScaleAbs(hsv[..., 1], alpha=1.2)
    return cv2.convertScaleAbs(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB), alpha=1.1, beta=5)


CASES: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], Any]]] = {
    "resize (antialiased)": (
        lambda b: ndd.resize(b, resize_shorter=256),
        lambda im: np.asarray(Image.fromarray(im).resize(_shorter(im), Image.BILINEAR)),
    ),
    "resize (antialias=False)": (
        lambda b: ndd.resize(b, resize_shorter=256, antialias=False),
        lambda im: cv2.resize(im, _shorter(im), interpolation=cv2.INTER_LINEAR),
    ),
    "crop_mirror_normalize": (
        lambda b: ndd.crop_mirror_normalize(b, crop=(224, 224), mean=MEAN, std=STD),
        _raw_cmn,
    ),
    "random_resized_crop": (
        lambda b: ndd.random_resized_crop(b, size=(224, 224), rng=ndd.random.RNG(seed=0)),
        lambda im: np.asarray(
            Image.fromarray(im[40:300, 60:400]).resize((224, 224), Image.BILINEAR)
        ),
    ),
    "rotate (30°, keep_size)": (lambda b: ndd.rotate(b, angle=30.0, keep_size=True), _raw_rotate),
    "color_twist": (
        lambda b: ndd.color_twist(b, brightness=1.1, contrast=1.1, saturation=1.2, hue=10.0),
        _raw_twist,
    ),
    "gaussian_blur (sigma 1.5)": (
        lambda b: ndd.gaussian_blur(b, sigma=1.5),
        lambda im: cv2.GaussianBlur(im, (0, 0), 1.5),
    ),
}


def _best(fn: Callable[[], Any], reps: int) -> float:
    fn()
    best = math.inf
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    ndd.set_num_threads(args.threads)
    images = make_images(args.batch)
    batch = ndd.batch(images, layout="HWC")
    pool = ThreadPoolExecutor(args.threads)
    print(f"batch of {args.batch} ~500x375 uint8 images, {args.threads} threads")
    print(f"{'operator':28s} {'headrace img/s':>15s} {'raw img/s':>10s} {'ratio':>6s}")
    for name, (ours, raw) in CASES.items():
        t_ours = _best(lambda ours=ours: ours(batch).evaluate(), args.reps)
        t_raw = _best(lambda raw=raw: list(pool.map(raw, images)), args.reps)
        n = args.batch
        print(f"{name:28s} {n / t_ours:15.1f} {n / t_raw:10.1f} {t_raw / t_ours:6.2f}")
    pool.shutdown()


if __name__ == "__main__":
    main()
