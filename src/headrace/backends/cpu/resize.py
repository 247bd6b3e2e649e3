"""CPU resize kernels (numpy, OpenCV): ``resize`` (also the kernel of
``resize_crop_mirror`` and ``random_resized_crop``) and ``tensor_resize``.

``resize(x, layout, *, out_size, roi_lo, roi_hi, filters, dtype=None)`` resamples the spatial
axes of one sample. The plan comes from :func:`headrace.ops._resize_params.resize_params` (or
the plan functions of the other resize-based ops).

Four paths, chosen per call (in this order):

* **nearest neighbour**: an index gather with DALI's exact source indices (bit-exact).
* **OpenCV** for plain (non-antialiased or upscaling) linear resizing of uint8/float32 HWC data:
  ``cv2.resize`` on an integral ROI (max abs diff 1, 11-bit weights), else ``cv2.warpAffine``
  with edge replication (5-bit sub-pixel positions: max abs diff 1-2 on noisy images).
  float32 agrees to ~1e-2 absolute on 0..255 data.
* **banded matrix products** (:mod:`._band_resample`) for uint8 ``HWC``/``FHWC`` images
  with 1-4 channels and any other filter (DALI's antialiased triangle, cubic, Lanczos-3,
  Gaussian; any ROI, mirrored or reaching outside the image): DALI's own float32 coefficients,
  applied by a gather and a stacked ``sgemm`` per axis, all with the GIL released. Measured on
  the 500x375 sample images (eval resize to shorter side 256, same run): ~3x faster than
  Pillow's antialiased resampler (used before, and holding the GIL ~60-75 us per image for its
  coefficients and buffers); against DALI 2.4 max abs diff 1, mean abs diff <= 3e-5 on uint8.
  Why not another resampler: torch's antialiased uint8 ``interpolate`` has no sub-pixel input
  window, so DALI's fractional ROIs (``resize_shorter`` keeps the exact aspect ratio) come out
  shifted (max diff 20 levels, mean 0.65) and it renormalizes the filter at the borders where
  DALI clamps (max 6-7 there); ``cv2.resize`` ``INTER_AREA`` is a box filter, not DALI's
  triangle (mean 1.1-3.3, max 15-29). Whole-pixel regions (the random-crop training pipeline)
  were tried through torch with DALI's borders restored (the bottom/right padded with edge
  copies, the first row and column corrected from probe blocks resampled in the same call:
  max diff 1, mean 0.16-0.17 on noise): its kernel is ~2x faster per image, but the train
  pipeline did not speed up (2 threads 930 vs 929 img/s, 1 thread 559-599 vs 563-566,
  alternating runs), as the tensor wrapping, interleave and border corrections held the GIL
  about as long as this path's calls do.
* otherwise (float data, other layouts and types, volumes, mixed nearest/linear axes) a
  separable numpy resampler with DALI's own float32 coefficients
  (:func:`~headrace.backends.shared.common.axis_weights`): max abs diff 1 for uint8 (float
  summation order), ~1e-5 relative for float32.

Examples
--------
>>> import numpy as np
>>> from headrace.ops._resize_params import AxisFilter
>>> img = np.zeros((40, 60, 3), np.uint8)
>>> lin = AxisFilter("triangular", 4.0)
>>> resize(img, "HWC", out_size=(20, 30), roi_lo=(0, 0), roi_hi=(40, 60),
...        filters=(lin, lin)).shape
(20, 30, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from headrace._core.layout import spatial_axes
from headrace._core.saturate import saturate
from headrace.backends.cpu._band_resample import band_ok, band_resize
from headrace.backends.cpu.misc import CV_DEPTHS
from headrace.backends.shared.common import Filter, axis_weights, nn_indices


def _band(x: np.ndarray, layout: str, out_size, lo, hi, filters, out_dtype) -> np.ndarray:
    if layout == "HWC":
        return band_resize(x, out_size, lo, hi, filters, out_dtype)
    return np.stack([band_resize(f, out_size, lo, hi, filters, out_dtype) for f in x])


def _integral_roi(lo, hi) -> bool:
    return all(float(a).is_integer() and float(b).is_integer() and a < b for a, b in zip(lo, hi))


def _cv2_linear(x: np.ndarray, layout: str, out_size, lo, hi) -> np.ndarray:
    sp = spatial_axes(layout)
    size = (int(out_size[1]), int(out_size[0]))
    if _integral_roi(lo, hi):
        index = [slice(None)] * x.ndim
        for d, a in enumerate(sp):
            index[a] = slice(int(lo[d]), int(hi[d]))
        src = x[tuple(index)]

        def one(img: np.ndarray) -> np.ndarray:
            return cv2.resize(img, size, interpolation=cv2.INTER_LINEAR)

    else:
        src = x
        sy = (hi[0] - lo[0]) / out_size[0]
        sx = (hi[1] - lo[1]) / out_size[1]
        mat = np.array(
            [[sx, 0, lo[1] + 0.5 * sx - 0.5], [0, sy, lo[0] + 0.5 * sy - 0.5]], np.float64
        )
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP

        def one(img: np.ndarray) -> np.ndarray:
            return cv2.warpAffine(img, mat, size, flags=flags, borderMode=cv2.BORDER_REPLICATE)

    def fix(img: np.ndarray) -> np.ndarray:
        return one(img).reshape(size[1], size[0], img.shape[-1])

    return np.stack([fix(f) for f in src]) if layout[0] == "F" else fix(src)


def _cv2_ok(x: np.ndarray, layout: str, filters) -> bool:
    if x.dtype not in (np.uint8, np.float32) or layout not in ("HWC", "FHWC"):
        return False
    if x.shape[-1] > 512:
        return False
    return all(f.kind == "triangular" and f.support == 2.0 for f in filters)


def _nn_remap_ok(x: np.ndarray, out_size: Sequence[int]) -> bool:
    return (
        x.ndim == 3
        and 1 <= x.shape[2] <= 4
        and x.dtype in CV_DEPTHS
        and max(*x.shape[:2], *out_size) < 32768  # OpenCV's int16 maps
    )


def _nn_remap(x: np.ndarray, out_size: Sequence[int], lo, hi) -> np.ndarray:
    """Nearest-neighbour resampling of an HWC image: the same source rows and columns as
    :func:`_generic` (``nn_indices``), gathered by one ``cv2.remap`` with integer maps."""
    ho, wo = int(out_size[0]), int(out_size[1])
    key = (x.shape[0], x.shape[1], ho, wo, *(float(v) for v in (*lo, *hi)))
    maps = _NN_MAPS.get(key)
    if maps is None:
        rows = nn_indices(x.shape[0], ho, lo[0], hi[0], True)
        cols = nn_indices(x.shape[1], wo, lo[1], hi[1], False)
        maps = np.empty((ho, wo, 2), np.int16)
        maps[..., 0] = np.asarray(cols)[None, :]
        maps[..., 1] = np.asarray(rows)[:, None]
        if len(_NN_MAPS) >= 16:
            _NN_MAPS.clear()
        _NN_MAPS[key] = maps
    out = cv2.remap(np.ascontiguousarray(x), maps, None, cv2.INTER_NEAREST)
    return out.reshape(ho, wo, x.shape[2])  # type: ignore[no-any-return]


_NN_MAPS: dict[tuple, np.ndarray] = {}


def _resample_axis(
    arr: np.ndarray, axis: int, in_len: int, out_len: int, lo: float, hi: float, f: Filter
) -> np.ndarray:
    idx, coeffs = axis_weights(in_len, out_len, lo, hi, f)
    bshape = [1] * arr.ndim
    bshape[axis] = out_len
    out: np.ndarray | None = None
    for k in range(coeffs.shape[1]):
        w = coeffs[:, k]
        if not w.any():
            continue
        taken = np.take(arr, np.clip(idx + k, 0, in_len - 1), axis=axis)
        taken = np.multiply(taken, w.reshape(bshape), dtype=np.float32)
        if out is None:
            out = taken
        else:
            out += taken
    if out is None:
        shape = list(arr.shape)
        shape[axis] = out_len
        out = np.zeros(shape, np.float32)
    return out


def _generic(x: np.ndarray, layout: str, out_size, lo, hi, filters) -> np.ndarray:
    sp = spatial_axes(layout)
    # Shrinking axes first: later passes then work on less data.
    order = sorted(range(len(sp)), key=lambda d: out_size[d] / max(x.shape[sp[d]], 1))
    arr = x
    for d in order:
        a = sp[d]
        if filters[d].kind == "nn":
            outer = d < len(sp) - 1
            arr = np.take(arr, nn_indices(arr.shape[a], out_size[d], lo[d], hi[d], outer), axis=a)
        else:
            arr = _resample_axis(arr, a, arr.shape[a], out_size[d], lo[d], hi[d], filters[d])
    return arr


def resize(
    x: np.ndarray,
    layout: str,
    *,
    out_size: Sequence[int],
    roi_lo: Sequence[float],
    roi_hi: Sequence[float],
    filters: Sequence[Filter],
    dtype: np.dtype | None = None,
    window: Sequence[int] | None = None,
) -> np.ndarray:
    """Resample the spatial axes of one sample (see the module docstring for accuracy).

    Parameters
    ----------
    x : numpy.ndarray
        Input sample (not modified).
    layout : str
        Its layout, e.g. ``"HWC"``, ``"CHW"``, ``"FHWC"``, ``"DHWC"``.
    out_size, roi_lo, roi_hi, filters, dtype
        From :func:`headrace.ops._resize_params.resize_params`.
    window : (y, x, height, width), optional
        Only this window of the ``HWC`` output (a chain whose next operator reads just that
        part, see :mod:`headrace._dispatch.chain`): the same values as resizing, then cropping.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from headrace.ops._resize_params import AxisFilter
    >>> x = np.arange(4, dtype=np.float32).reshape(1, 4, 1)
    >>> lin = AxisFilter("triangular", 2.0)
    >>> resize(x, "HWC", out_size=(1, 2), roi_lo=(0, 0), roi_hi=(1, 4),
    ...        filters=(lin, lin)).ravel().tolist()
    [0.5, 2.5]
    """
    out_dtype = x.dtype if dtype is None else np.dtype(dtype)
    out_size = tuple(int(v) for v in out_size)
    path = _path(x, layout, out_size, roi_lo, roi_hi, filters, out_dtype)
    if window is not None:
        if path == "band" and layout == "HWC":  # rows and columns independent: only the window's
            return band_resize(x, out_size, roi_lo, roi_hi, filters, out_dtype, window)
        y, x0, h, w = (int(v) for v in window)
        full = resize(x, layout, out_size=out_size, roi_lo=roi_lo, roi_hi=roi_hi,
                      filters=filters, dtype=dtype)  # fmt: skip
        return np.ascontiguousarray(full[y : y + h, x0 : x0 + w])
    if path == "empty":
        shape = list(x.shape)
        for d, a in enumerate(spatial_axes(layout)):
            shape[a] = out_size[d]
        return np.zeros(shape, out_dtype)
    if path == "nn":
        if layout == "HWC" and _nn_remap_ok(x, out_size):
            res = _nn_remap(x, out_size, roi_lo, roi_hi)
        else:
            res = _generic(x, layout, out_size, roi_lo, roi_hi, filters)
        return res.astype(out_dtype, copy=False)
    if path == "cv2":
        return _cv2_linear(x, layout, out_size, roi_lo, roi_hi)
    if path == "band":
        return _band(x, layout, out_size, roi_lo, roi_hi, filters, out_dtype)
    res = _generic(x, layout, out_size, roi_lo, roi_hi, filters)
    return saturate(res, out_dtype)


def _path(x: np.ndarray, layout: str, out_size: tuple[int, ...], roi_lo, roi_hi,
          filters: Sequence[Filter], out_dtype: np.dtype) -> str:  # fmt: skip
    """Which resampler ``resize`` uses: "empty", "nn", "cv2", "band" or "generic"."""
    if any(v == 0 for v in out_size) or x.size == 0:
        return "empty"
    if all(f.kind == "nn" for f in filters):
        return "nn"
    if (
        out_dtype == x.dtype
        and _cv2_ok(x, layout, filters)
        # OpenCV's warp places fractional-ROI samples on a 1/32-pixel grid: fine for uint8
        # (within 1-2 levels), too coarse for float data, which takes the exact path
        and (x.dtype == np.uint8 or _integral_roi(roi_lo, roi_hi))
    ):
        return "cv2"
    if layout in ("HWC", "FHWC") and band_ok(x[0] if layout[0] == "F" else x, filters):
        return "band"
    return "generic"


def tensor_resize(
    x: np.ndarray, layout: str | None, *, kernel_layout: str, **plan: Any
) -> np.ndarray:
    """``tensor_resize``: :func:`resize` on the plan's stand-in layout ``kernel_layout``, whose
    ``D``/``H``/``W`` axes are the resampled ones (plan from ``tensor_resize_params``).

    Examples
    --------
    >>> from headrace.ops._resize_params import AxisFilter
    >>> nn = AxisFilter("nn", 1.0)
    >>> tensor_resize(np.arange(4).reshape(4, 1), None, kernel_layout="WC", out_size=(2,),
    ...               roi_lo=(0.0,), roi_hi=(4.0,), filters=(nn,)).ravel().tolist()
    [1, 3]
    """
    return resize(x, kernel_layout, **plan)
