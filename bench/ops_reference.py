"""Per-operator throughput against the reference: the same dynamic-mode call on both libraries.

Each operator runs on one batch of ``--batch`` natural-looking ~500x375 uint8 HWC images (or
their JPEG encodings, for the decoders), with ``set_num_threads(--threads)`` on both sides;
the table shows the median img/s of ``--reps`` evaluated calls and the ratio headrace /
reference. An operator the reference cannot run here (GPU-only, or missing) shows its error.
Nothing is asserted: it is a map of where to look (a ratio well below 1 is a lead).

    python bench/ops_reference.py                  # every operator below, batch 64, 2 threads
    python bench/ops_reference.py --only normalize,reductions --reps 9
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from ops import make_images

MEAN, STD = [0.485 * 255, 0.456 * 255, 0.406 * 255], [0.229 * 255, 0.224 * 255, 0.225 * 255]

Op = Callable[[Any, Any], Any]
#: name -> (input: "image" or "jpeg", call(module, batch))
OPS: dict[str, tuple[str, Op]] = {
    "decoders.image": ("jpeg", lambda nd, b: nd.decoders.image(b)),
    "decoders.image_crop": ("jpeg", lambda nd, b: nd.decoders.image_crop(b, crop=(224, 224))),
    "decoders.image_random_crop": ("jpeg", lambda nd, b: nd.decoders.image_random_crop(b)),
    "resize (shorter 256)": ("image", lambda nd, b: nd.resize(b, resize_shorter=256)),
    "resize (224x224)": ("image", lambda nd, b: nd.resize(b, size=(224, 224))),
    "resize (no antialias)": (
        "image", lambda nd, b: nd.resize(b, size=(224, 224), antialias=False)
    ),
    "resize_crop_mirror": (
        "image", lambda nd, b: nd.resize_crop_mirror(b, crop=(224, 224), resize_shorter=256)
    ),
    "crop_mirror_normalize": ("image", lambda nd, b: nd.crop_mirror_normalize(
        b, crop=(224, 224), mean=MEAN, std=STD, dtype=nd.float32)),
    "crop": ("image", lambda nd, b: nd.crop(b, crop=(224, 224))),
    "crop (pad)": ("image", lambda nd, b: nd.crop(b, crop=(600, 600), out_of_bounds_policy="pad")),
    "slice": ("image", lambda nd, b: nd.slice(
        b, rel_start=[0.1, 0.1], rel_shape=[0.5, 0.5], axis_names="HW")),
    "flip": ("image", lambda nd, b: nd.flip(b, horizontal=1)),
    "rotate": ("image", lambda nd, b: nd.rotate(b, angle=30.0, keep_size=True)),
    "warp_affine": ("image", lambda nd, b: nd.warp_affine(b, matrix=[0.9, 0.1, 5, -0.1, 0.9, 3])),
    "experimental.warp_perspective": ("image", lambda nd, b: nd.experimental.warp_perspective(
        b, matrix=[1, 0.05, 0, 0.02, 1, 0, 0.0001, 0, 1])),
    "paste": ("image", lambda nd, b: nd.paste(b, ratio=1.5, fill_value=0)),
    "pad": ("image", lambda nd, b: nd.pad(b, axes=[0, 1], shape=[600, 600])),
    "erase": ("image", lambda nd, b: nd.erase(b, anchor=[10, 10], shape=[50, 50], axis_names="HW")),
    "transpose (HWC->WHC)": ("image", lambda nd, b: nd.transpose(b, perm=[1, 0, 2])),
    "transpose (HWC->CHW)": ("image", lambda nd, b: nd.transpose(b, perm=[2, 0, 1])),
    "cast (float32)": ("image", lambda nd, b: nd.cast(b, dtype=nd.float32)),
    "copy": ("image", lambda nd, b: nd.copy(b)),
    "cat (channels)": ("image", lambda nd, b: nd.cat(b, b, axis=2)),
    "stack": ("image", lambda nd, b: nd.stack(b, b, axis=0)),
    "brightness_contrast": ("image", lambda nd, b: nd.brightness_contrast(
        b, brightness=1.1, contrast=0.9)),
    "color_twist": ("image", lambda nd, b: nd.color_twist(
        b, brightness=1.1, contrast=0.9, saturation=1.2, hue=10.0)),
    "hsv": ("image", lambda nd, b: nd.hsv(b, hue=10.0, saturation=1.2, value=0.9)),
    "lookup_table": ("image", lambda nd, b: nd.lookup_table(
        b, keys=[0, 1, 2], values=[5.0, 6.0, 7.0])),
    "gaussian_blur": ("image", lambda nd, b: nd.gaussian_blur(b, sigma=1.5)),
    "laplacian": ("image", lambda nd, b: nd.laplacian(b)),
    "water": ("image", lambda nd, b: nd.water(b)),
    "sphere": ("image", lambda nd, b: nd.sphere(b)),
    "grid_mask": ("image", lambda nd, b: nd.grid_mask(b)),
    "jpeg_compression_distortion": ("image", lambda nd, b: nd.jpeg_compression_distortion(
        b, quality=50)),
    "noise.gaussian": ("image", lambda nd, b: nd.noise.gaussian(b, stddev=10.0)),
    "normalize (axes 0 and 1)": ("image", lambda nd, b: nd.normalize(b, axes=[0, 1])),
    "normalize (given mean and std)": ("image", lambda nd, b: nd.normalize(
        b, mean=100.0, stddev=50.0, dtype=nd.float32)),
    "reductions.mean": ("image", lambda nd, b: nd.reductions.mean(b, axes=[0, 1])),
    "reductions.max": ("image", lambda nd, b: nd.reductions.max(b, axes=[0, 1])),
    "reductions.std_dev": ("image", lambda nd, b: nd.reductions.std_dev(
        b, nd.reductions.mean(b, axes=[0, 1]), axes=[0, 1])),
    "arithmetic (x * 0.5)": ("image", lambda nd, b: b * 0.5),
    "math.clamp": ("image", lambda nd, b: nd.math.clamp(b, 10, 200)),
}


def jpegs(images: list[np.ndarray]) -> list[np.ndarray]:
    """Quality-90 JPEG encodings of the images."""
    out = []
    for im in images:
        ok, buf = cv2.imencode(".jpg", cv2.cvtColor(im, cv2.COLOR_RGB2BGR),
                               [cv2.IMWRITE_JPEG_QUALITY, 90])  # fmt: skip
        assert ok
        out.append(buf.ravel())
    return out


def rate(nd: Any, op: Op, data: list[np.ndarray], layout: str | None, reps: int) -> float:
    """Median img/s of ``reps`` evaluated calls (after one warm-up call)."""
    b = nd.batch(data, layout=layout)
    op(nd, b).evaluate()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        op(nd, b).evaluate()
        times.append(time.perf_counter() - t)
    return len(data) / statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--only", default="", help="comma-separated parts of operator names")
    args = p.parse_args()
    warnings.simplefilter("ignore")
    modules = {"headrace": importlib.import_module("headrace")}
    try:
        modules["reference"] = importlib.import_module("nvidia.dali.experimental.dynamic")
    except ImportError:
        print("reference (nvidia-dali) not installed: headrace only")
    for nd in modules.values():
        nd.set_num_threads(args.threads)
    images = make_images(args.batch)
    inputs = {"image": (images, "HWC"), "jpeg": (jpegs(images), None)}
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    print(f"batch of {args.batch} ~500x375 images, {args.threads} threads, median of {args.reps}")
    print(f"{'operator':32s} {'headrace':>10s} {'reference':>10s}  ratio  (img/s)")
    for name, (kind, op) in OPS.items():
        if only and not any(part in name for part in only):
            continue
        data, layout = inputs[kind]
        cells: dict[str, float | str] = {}
        for side, nd in modules.items():
            try:
                cells[side] = rate(nd, op, data, layout, args.reps)
            except Exception as e:  # e.g. a GPU-only operator of the reference
                cells[side] = str(e).splitlines()[0][:60] if str(e) else type(e).__name__
        h, r = cells.get("headrace"), cells.get("reference")
        if isinstance(h, float) and isinstance(r, float):
            print(f"{name:32s} {h:10.0f} {r:10.0f}  {h / r:5.2f}", flush=True)
        else:
            print(f"{name:32s} {h!s:>10.10} {r!s:>10.10}  ({h if isinstance(r, float) else r})",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
