"""CPU affine warps (``rotate``, ``warp_affine``) on OpenCV's ``warpAffine``.

Plans come from :mod:`headrace.ops._warp_params`; the matrix maps output points to input points
with pixel corners at integer coordinates (DALI's convention), so the kernel shifts it by half a
pixel for OpenCV, whose integers are pixel centres. Against DALI 2.4 (CPU), uint8: linear
differs by at most 1 on ~0.1% of the pixels (OpenCV quantises source positions to 1/32 pixel);
float32: max abs diff ~6e-3 on 0..255 data.

Nearest neighbour follows the reference's rule exactly (:mod:`headrace.backends.shared.warp_nn`):
the pixel read is ``floor`` of the float32 source point, the points of a row are float32 running
sums, and ``rotate`` rebuilds the reference's float32 matrix; ``cv2.remap`` then reads those
pixels (``cv2.INTER_NEAREST`` of ``warpAffine`` rounds half-pixel ties differently).

Examples
--------
>>> import numpy as np
>>> from headrace.ops._warp_params import rotate_params
>>> img = np.arange(6, dtype=np.uint8).reshape(2, 3, 1)
>>> plan = rotate_params(img.shape, "HWC", img.dtype, angle=180.0)
>>> rotate(img, "HWC", **plan.kwargs)[..., 0].tolist()
[[5, 4, 3], [2, 1, 0]]
"""

from __future__ import annotations

import cv2
import numpy as np

from headrace._core.saturate import saturate
from headrace.backends.shared.warp_nn import nn_source_pixels, rotating

_CV_DEPTHS = (np.uint8, np.uint16, np.int16, np.float32, np.float64)


def opencv_matrix(matrix: np.ndarray) -> np.ndarray:
    """Turn a corner-convention dst->src 2x3 matrix into OpenCV's centre convention.

    Examples
    --------
    >>> opencv_matrix(np.array([[2.0, 0, 0], [0, 2.0, 0]])).tolist()
    [[2.0, 0.0, 0.5], [0.0, 2.0, 0.5]]
    """
    m = np.array(matrix, dtype=np.float64)
    m[:, 2] = m[:, :2] @ np.array([0.5, 0.5]) + m[:, 2] - 0.5
    return m


def _channel_groups(c: int) -> list[tuple[int, int]]:
    """Split ``c`` channels into OpenCV calls of 4, 3 or 1 channels (its 2-channel linear path
    is less accurate: off by up to 3 on uint8)."""
    groups, i = [], 0
    while c - i > 4:
        groups.append((i, i + 4))
        i += 4
    rest = c - i
    if rest == 2:
        return [*groups, (i, i + 1), (i + 1, i + 2)]
    return [*groups, (i, c)]


def _warp_image(img, m, out_hw, fill_value, flags, maps=None) -> np.ndarray:
    """Warp one HWC (or HW) image: OpenCV's ``warpAffine`` with the matrix ``m``, or, given the
    source pixel ``maps`` (x, y) of nearest neighbour, ``remap``."""
    h, w = out_hw
    if fill_value is None:
        border, value = cv2.BORDER_REPLICATE, 0
    else:
        border, value = cv2.BORDER_CONSTANT, (fill_value,) * 4

    def one(a: np.ndarray) -> np.ndarray:
        if maps is not None:
            return cv2.remap(
                a, maps[0], maps[1], cv2.INTER_NEAREST, borderMode=border, borderValue=value
            )
        return cv2.warpAffine(a, m, (w, h), flags=flags, borderMode=border, borderValue=value)

    if img.ndim == 2:
        return one(img)
    parts = [
        one(np.ascontiguousarray(img[..., lo:hi])).reshape(h, w, hi - lo)
        for lo, hi in _channel_groups(img.shape[2])
    ]
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=2)


def warp_affine(
    x: np.ndarray,
    layout: str | None,
    *,
    matrix: np.ndarray,
    out_hw: tuple[int, int],
    fill_value: float | None,
    interp: str,
    dtype: np.dtype,
) -> np.ndarray:
    """Sample ``x`` at ``matrix @ (x + 0.5, y + 0.5, 1)`` for every output pixel.

    Linear interpolation is OpenCV's; nearest neighbour reads pixel ``(floor(sx), floor(sy))``
    of the reference's float32 source points (``nn_source_pixels``), so exact half-pixel ties
    go to the pixel whose corner they are, as in the reference.

    Examples
    --------
    >>> x = np.arange(4, dtype=np.float32).reshape(1, 4, 1)
    >>> warp_affine(x, "HWC", matrix=np.array([[1.0, 0, 1], [0, 1, 0]]), out_hw=(1, 4),
    ...             fill_value=None, interp="nn", dtype=np.dtype("float32"))[0, :, 0].tolist()
    [1.0, 2.0, 3.0, 3.0]
    """
    dtype = np.dtype(dtype)
    flags = (cv2.INTER_NEAREST if interp == "nn" else cv2.INTER_LINEAR) | cv2.WARP_INVERSE_MAP
    h, w = out_hw
    nn = interp == "nn" and h > 0 and w > 0
    m = None if nn else opencv_matrix(matrix)
    maps = nn_source_pixels(matrix, out_hw) if nn else None
    direct = x.dtype == dtype and x.dtype.type in _CV_DEPTHS
    # (float32 data stays float32, as the reference: float64 rounds differently)
    wide = x.dtype.itemsize > 2 and x.dtype != np.float32
    src = x if direct else x.astype(np.float64 if wide else np.float32)
    frames = layout is not None and layout.startswith("F")
    if h == 0 or w == 0 or x.size == 0:
        out = np.zeros((*((x.shape[0],) if frames else ()), h, w, *x.shape[3 if frames else 2 :]))
    elif frames:
        out = np.stack([_warp_image(f, m, out_hw, fill_value, flags, maps) for f in src])
    else:
        out = _warp_image(src, m, out_hw, fill_value, flags, maps)
    return out.astype(dtype, copy=False) if direct else saturate(out, dtype, overwrite=True)


rotate = rotating(warp_affine)
