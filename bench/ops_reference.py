"""Per-operator throughput against the reference: the same dynamic-mode call on both libraries.

Each operator runs on one batch of ``--batch`` samples — natural-looking ~500x375 uint8 HWC
images (or their JPEG encodings, for the decoders), 2 s signals, 10 boxes, 100 points or noisy
300x400 masks — with ``set_num_threads(--threads)`` on both sides; the table shows the median
samples/s of ``--reps`` evaluated calls and the ratio headrace / reference. An operator the
reference cannot run here (GPU-only, or missing) shows its error. Nothing is asserted: it is a
map of where to look (a ratio well below 1 is a lead).

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

Op = Callable[[Any, Any, Any], Any]
#: name -> (input kind, call(module, its types module, batch)); inputs: see ``inputs()``
OPS: dict[str, tuple[str, Op]] = {
    "decoders.image": ("jpeg", lambda nd, T, b: nd.decoders.image(b)),
    "decoders.image_crop": ("jpeg", lambda nd, T, b: nd.decoders.image_crop(b, crop=(224, 224))),
    "decoders.image_random_crop": ("jpeg", lambda nd, T, b: nd.decoders.image_random_crop(b)),
    "resize (shorter 256)": ("image", lambda nd, T, b: nd.resize(b, resize_shorter=256)),
    "resize (224x224)": ("image", lambda nd, T, b: nd.resize(b, size=(224, 224))),
    "resize (no antialias)": (
        "image", lambda nd, T, b: nd.resize(b, size=(224, 224), antialias=False)
    ),
    "resize_crop_mirror": (
        "image", lambda nd, T, b: nd.resize_crop_mirror(b, crop=(224, 224), resize_shorter=256)
    ),
    "crop_mirror_normalize": ("image", lambda nd, T, b: nd.crop_mirror_normalize(
        b, crop=(224, 224), mean=MEAN, std=STD, dtype=nd.float32)),
    "crop": ("image", lambda nd, T, b: nd.crop(b, crop=(224, 224))),
    "crop (pad)": ("image", lambda nd, T, b: nd.crop(
        b, crop=(600, 600), out_of_bounds_policy="pad")),
    "slice": ("image", lambda nd, T, b: nd.slice(
        b, rel_start=[0.1, 0.1], rel_shape=[0.5, 0.5], axis_names="HW")),
    "flip": ("image", lambda nd, T, b: nd.flip(b, horizontal=1)),
    "rotate": ("image", lambda nd, T, b: nd.rotate(b, angle=30.0, keep_size=True)),
    "warp_affine": ("image", lambda nd, T, b: nd.warp_affine(
        b, matrix=[0.9, 0.1, 5, -0.1, 0.9, 3])),
    "experimental.warp_perspective": ("image", lambda nd, T, b: nd.experimental.warp_perspective(
        b, matrix=[1, 0.05, 0, 0.02, 1, 0, 0.0001, 0, 1])),
    "paste": ("image", lambda nd, T, b: nd.paste(b, ratio=1.5, fill_value=0)),
    "pad": ("image", lambda nd, T, b: nd.pad(b, axes=[0, 1], shape=[600, 600])),
    "erase": ("image", lambda nd, T, b: nd.erase(
        b, anchor=[10, 10], shape=[50, 50], axis_names="HW")),
    "transpose (HWC->WHC)": ("image", lambda nd, T, b: nd.transpose(b, perm=[1, 0, 2])),
    "transpose (HWC->CHW)": ("image", lambda nd, T, b: nd.transpose(b, perm=[2, 0, 1])),
    "cast (float32)": ("image", lambda nd, T, b: nd.cast(b, dtype=nd.float32)),
    "copy": ("image", lambda nd, T, b: nd.copy(b)),
    "cat (channels)": ("image", lambda nd, T, b: nd.cat(b, b, axis=2)),
    "stack": ("image", lambda nd, T, b: nd.stack(b, b, axis=0)),
    "brightness_contrast": ("image", lambda nd, T, b: nd.brightness_contrast(
        b, brightness=1.1, contrast=0.9)),
    "color_twist": ("image", lambda nd, T, b: nd.color_twist(
        b, brightness=1.1, contrast=0.9, saturation=1.2, hue=10.0)),
    "hsv": ("image", lambda nd, T, b: nd.hsv(b, hue=10.0, saturation=1.2, value=0.9)),
    "lookup_table": ("image", lambda nd, T, b: nd.lookup_table(
        b, keys=[0, 1, 2], values=[5.0, 6.0, 7.0])),
    "gaussian_blur": ("image", lambda nd, T, b: nd.gaussian_blur(b, sigma=1.5)),
    "laplacian": ("image", lambda nd, T, b: nd.laplacian(b)),
    "water": ("image", lambda nd, T, b: nd.water(b)),
    "sphere": ("image", lambda nd, T, b: nd.sphere(b)),
    "grid_mask": ("image", lambda nd, T, b: nd.grid_mask(b)),
    "jpeg_compression_distortion": ("image", lambda nd, T, b: nd.jpeg_compression_distortion(
        b, quality=50)),
    "noise.gaussian": ("image", lambda nd, T, b: nd.noise.gaussian(b, stddev=10.0)),
    "normalize (axes 0 and 1)": ("image", lambda nd, T, b: nd.normalize(b, axes=[0, 1])),
    "normalize (given mean and std)": ("image", lambda nd, T, b: nd.normalize(
        b, mean=100.0, stddev=50.0, dtype=nd.float32)),
    "reductions.mean": ("image", lambda nd, T, b: nd.reductions.mean(b, axes=[0, 1])),
    "reductions.max": ("image", lambda nd, T, b: nd.reductions.max(b, axes=[0, 1])),
    "reductions.std_dev": ("image", lambda nd, T, b: nd.reductions.std_dev(
        b, nd.reductions.mean(b, axes=[0, 1]), axes=[0, 1])),
    "arithmetic (x * 0.5)": ("image", lambda nd, T, b: b * 0.5),
    "math.clamp": ("image", lambda nd, T, b: nd.math.clamp(b, 10, 200)),
    "cast (float16)": ("image", lambda nd, T, b: nd.cast(b, dtype=nd.float16)),
    "color_space_conversion RGB->GRAY": ("image", lambda nd, T, b: nd.color_space_conversion(
        b, image_type=T.RGB, output_type=T.GRAY)),
    "color_space_conversion RGB->BGR": ("image", lambda nd, T, b: nd.color_space_conversion(
        b, image_type=T.RGB, output_type=T.BGR)),
    "color_space_conversion RGB->YCbCr": ("image", lambda nd, T, b: nd.color_space_conversion(
        b, image_type=T.RGB, output_type=T.YCbCr)),
    "resize (nearest)": ("image", lambda nd, T, b: nd.resize(
        b, size=(224, 224), interp_type=T.INTERP_NN)),
    "resize (cubic)": ("image", lambda nd, T, b: nd.resize(
        b, size=(224, 224), interp_type=T.INTERP_CUBIC)),
    "resize (upscale 600x800)": ("image", lambda nd, T, b: nd.resize(b, size=(600, 800))),
    "spectrogram": ("audio", lambda nd, T, b: nd.spectrogram(
        b, nfft=512, window_length=400, window_step=160)),
    "nonsilent_region": ("audio", lambda nd, T, b: nd.nonsilent_region(b)[0]),
    "audio_resample": ("audio", lambda nd, T, b: nd.audio_resample(b, scale=0.5)),
    "box_encoder (100 anchors)": ("boxes", lambda nd, T, b: nd.box_encoder(
        b, nd.batch(LABELS), anchors=ANCHORS)[0]),
    "random_bbox_crop": ("boxes", lambda nd, T, b: nd.random_bbox_crop(
        b, nd.batch(LABELS), aspect_ratio=[0.5, 2.0], thresholds=[0.1, 0.3, 0.5],
        scaling=[0.3, 1.0], bbox_layout="xyXY")[0]),
    "coord_flip": ("points", lambda nd, T, b: nd.coord_flip(b, flip_x=1)),
    "segmentation.random_object_bbox": ("masks", lambda nd, T, b: nd.segmentation.
                                        random_object_bbox(b)[0]),
}
_RNG = np.random.default_rng(0)
LABELS = [_RNG.integers(1, 80, (10,)).astype(np.int32) for _ in range(64)]
ANCHORS = [v / 10 for x in range(10) for y in range(10) for v in (x, y, x + 1, y + 1)]


def jpegs(images: list[np.ndarray]) -> list[np.ndarray]:
    """Quality-90 JPEG encodings of the images."""
    out = []
    for im in images:
        ok, buf = cv2.imencode(".jpg", cv2.cvtColor(im, cv2.COLOR_RGB2BGR),
                               [cv2.IMWRITE_JPEG_QUALITY, 90])  # fmt: skip
        assert ok
        out.append(buf.ravel())
    return out


def inputs(n: int) -> dict[str, tuple[list[np.ndarray], str | None]]:
    """The batches by kind: images, their JPEGs, 2 s signals, boxes, points, noisy masks."""
    rng = np.random.default_rng(1)
    images = make_images(n)
    corners = [rng.random((10, 2)).astype(np.float32) * 0.6 for _ in range(n)]
    return {
        "image": (images, "HWC"),
        "jpeg": (jpegs(images), None),
        "audio": ([rng.normal(0, 0.1, 32000).astype(np.float32) for _ in range(n)], None),
        "boxes": ([np.concatenate([c, c + 0.3], 1) for c in corners], None),
        "points": ([rng.random((100, 2)).astype(np.float32) for _ in range(n)], None),
        "masks": ([(rng.random((300, 400)) > 0.7).astype(np.uint8) for _ in range(n // 4)], "HW"),
    }


def rate(nd: Any, types: Any, op: Op, data: list[np.ndarray], layout: str | None,
         reps: int) -> float:  # fmt: skip
    """Median samples/s of ``reps`` evaluated calls (after one warm-up call)."""
    b = nd.batch(data, layout=layout)
    op(nd, types, b).evaluate()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        op(nd, types, b).evaluate()
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
    types = {"headrace": importlib.import_module("headrace.types")}
    try:
        modules["reference"] = importlib.import_module("nvidia.dali.experimental.dynamic")
        types["reference"] = importlib.import_module("nvidia.dali.types")
    except ImportError:
        print("reference (nvidia-dali) not installed: headrace only")
    for nd in modules.values():
        nd.set_num_threads(args.threads)
    data_of = inputs(args.batch)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    print(f"batch of {args.batch} ~500x375 images, {args.threads} threads, median of {args.reps}")
    print(f"{'operator':36s} {'headrace':>10s} {'reference':>10s}  ratio  (samples/s)")
    for name, (kind, op) in OPS.items():
        if only and not any(part in name for part in only):
            continue
        data, layout = data_of[kind]
        cells: dict[str, float | str] = {}
        for side, nd in modules.items():
            try:
                cells[side] = rate(nd, types[side], op, data, layout, args.reps)
            except Exception as e:  # e.g. a GPU-only operator of the reference
                cells[side] = str(e).splitlines()[0][:60] if str(e) else type(e).__name__
        h, r = cells.get("headrace"), cells.get("reference")
        if isinstance(h, float) and isinstance(r, float):
            print(f"{name:36s} {h:10.0f} {r:10.0f}  {h / r:5.2f}", flush=True)
        else:
            print(f"{name:36s} {h!s:>10.10} {r!s:>10.10}  ({h if isinstance(r, float) else r})",
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
