"""CPU blur, Laplacian, noise, mask and displacement kernels (numpy/OpenCV).

Plans and samplers come from :mod:`headrace.ops._filter_params`. Against DALI 2.4 (CPU):

* ``gaussian_blur``: uint8 max abs diff 1 (rare rounding ties), float32 within 5e-5 on 0..255.
* ``laplacian``: exact on uint8/int16 (integer taps, the scale applied after each partial
  derivative, as DALI); float32 within 1e-6 of the largest magnitude (summation order).
* ``grid_mask``: exact. ``water``/``sphere`` with NN: exact up to float ties; linear: max abs
  diff 1 on uint8 (OpenCV's 1/32-pixel positions).
* noise ops and ``jitter``: same distributions as DALI, not the same draws; the noise is a
  deterministic function of the plan's ``seed`` (numpy PCG64); the fields, offsets, masks and
  sampling points come from :mod:`headrace.backends.shared.common`, shared with the torch kernels.

Examples
--------
>>> import numpy as np
>>> from headrace.ops._filter_params import gaussian_blur_params
>>> img = np.full((8, 8, 3), 50, np.uint8)
>>> plan = gaussian_blur_params(img.shape, "HWC", img.dtype, sigma=1.5)
>>> bool(np.all(gaussian_blur(img, "HWC", **plan.kwargs) == 50))
True
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import cv2
import numpy as np

from headrace._core.saturate import saturate
from headrace.backends.shared.common import (
    gaussian_field,
    grid_keep_mask,
    jitter_indices,
    reflect101_indices,
    salt_pepper_masks,
    shot_field,
    sphere_points,
    water_points,
)

_F32 = np.float32

# ------------------------------------------------------------------------ gaussian blur, laplacian


def _conv_axis(v: np.ndarray, w: np.ndarray, axis: int) -> np.ndarray:
    """Correlate float32 ``v`` with ``w`` along ``axis`` (reflect-101 borders)."""
    r = (w.size - 1) // 2
    if r == 0:
        return v * w[0]
    n = v.shape[axis]
    p = np.take(v, reflect101_indices(n, r), axis=axis)
    out = np.take(p, range(0, n), axis=axis) * w[0]
    for k in range(1, w.size):
        out += np.take(p, range(k, k + n), axis=axis) * w[k]
    return out


def _cv2_hw_ok(shape: Sequence[int], axes: tuple[int, ...], layout: str | None, windows) -> bool:
    """Whether the last two blurred axes are H, W followed by at most a channel axis."""
    if len(axes) < 2:
        return False
    h, w = axes[-2], axes[-1]
    trailing = len(shape) - 1 - w
    if w != h + 1 or trailing > 1 or (trailing == 1 and shape[-1] > 512):
        return False
    if trailing == 1 and layout and layout[-1] != "C":
        return False
    return windows[-2].size // 2 < shape[h] and windows[-1].size // 2 < shape[w]


_CV_FILTER_INPUTS = {np.dtype(t) for t in (np.uint8, np.uint16, np.int16, np.float32)}


def _separable(
    x: np.ndarray, layout: str | None, windows: Sequence[np.ndarray], axes: tuple[int, ...]
) -> np.ndarray:
    """Float32 ``x`` correlated with one 1-D window per axis of ``axes`` (reflect-101)."""
    done = set()
    if x.size and _cv2_hw_ok(x.shape, axes, layout, windows):
        h_ax, w_ax = axes[-2], axes[-1]
        kx, ky = windows[-1], windows[-2]
        # OpenCV reads uint8/uint16/int16/float32 directly and filters in float32: no
        # separate conversion pass
        src = x if x.dtype in _CV_FILTER_INPUTS else x.astype(_F32)
        lead = x.shape[:h_ax]
        imgs = src.reshape(-1, *x.shape[h_ax:])
        out = np.empty(imgs.shape, _F32)
        for i in range(imgs.shape[0]):
            out[i] = cv2.sepFilter2D(
                imgs[i], cv2.CV_32F, kx, ky, borderType=cv2.BORDER_REFLECT_101
            ).reshape(imgs[i].shape)
        v = out.reshape(*lead, *x.shape[h_ax:])
        done = {h_ax, w_ax}
    else:
        v = x.astype(_F32)
    for ax, w in zip(axes, windows):
        if ax not in done and x.size:
            v = _conv_axis(v, w, ax)
    return v


def gaussian_blur(
    x: np.ndarray,
    layout: str | None,
    *,
    windows: Sequence[np.ndarray],
    axes: tuple[int, ...],
    dtype: np.dtype,
) -> np.ndarray:
    """Separable Gaussian blur along ``axes`` with one 1-D window per axis.

    Examples
    --------
    >>> x = np.zeros((1, 5), np.float32); x[0, 2] = 1
    >>> w = np.array([0.25, 0.5, 0.25], np.float32)
    >>> gaussian_blur(x, "HW", windows=[np.ones(1, np.float32), w], axes=(0, 1),
    ...               dtype=np.dtype("float32"))[0].tolist()
    [0.0, 0.25, 0.5, 0.25, 0.0]
    """
    return saturate(_separable(x, layout, windows, axes), dtype, overwrite=True)


def laplacian(
    x: np.ndarray,
    layout: str | None,
    *,
    partials: Sequence[Sequence[np.ndarray]],
    scales: Sequence[float],
    axes: tuple[int, ...],
    dtype: np.dtype,
) -> np.ndarray:
    """``sum(scales[i] * partial_i)``; partial ``i`` is a separable convolution with the windows
    ``partials[i]``, one per axis of ``axes`` (reflect-101 borders).

    Examples
    --------
    >>> x = np.zeros((5, 5), np.float32); x[2, 2] = 1
    >>> d, s = np.array([1, -2, 1], np.float32), np.ones(1, np.float32)
    >>> laplacian(x, "HW", partials=[(d, s), (s, d)], scales=(1.0, 1.0),
    ...           axes=(0, 1), dtype=np.dtype("float32"))[1:4, 1:4]
    array([[ 0.,  1.,  0.],
           [ 1., -4.,  1.],
           [ 0.,  1.,  0.]], dtype=float32)
    """
    v = _separable(x, layout, partials[0], axes)
    v *= _F32(scales[0])
    for windows, s in zip(partials[1:], scales[1:]):
        p = _separable(x, layout, windows, axes)
        p *= _F32(s)
        v += p
    return saturate(v, dtype, overwrite=True)


# ------------------------------------------------------------------------------- noise


def noise_gaussian(
    x: np.ndarray, layout: str | None, *, seed: int, mean: float, stddev: float
) -> np.ndarray:
    """``x + N(mean, stddev)``, rounded and saturated to ``x.dtype``.

    Examples
    --------
    >>> x = np.full(4, 10, np.uint8)
    >>> noise_gaussian(x, None, seed=0, mean=2.0, stddev=0.0).tolist()
    [12, 12, 12, 12]
    """
    v = gaussian_field(seed, x.shape, mean, stddev)
    v += x
    return saturate(v, x.dtype, overwrite=True)


def noise_salt_and_pepper(
    x: np.ndarray,
    layout: str | None,
    *,
    seed: int,
    prob: float,
    salt_vs_pepper: float,
    salt,
    pepper,
    channel_axis: int | None,
) -> np.ndarray:
    """Replace a ``prob`` fraction of pixels (or values) with ``salt`` or ``pepper``.

    Examples
    --------
    >>> x = np.full((2, 2, 3), 9, np.uint8)
    >>> noise_salt_and_pepper(x, "HWC", seed=0, prob=1.0, salt_vs_pepper=1.0, salt=255,
    ...                       pepper=0, channel_axis=2).max()
    np.uint8(255)
    """
    s, p = salt_pepper_masks(seed, x.shape, prob, salt_vs_pepper, channel_axis)
    out = x.copy()
    np.copyto(out, np.asarray(salt, x.dtype), where=s)
    np.copyto(out, np.asarray(pepper, x.dtype), where=p)
    return out


def noise_shot(x: np.ndarray, layout: str | None, *, seed: int, factor: float) -> np.ndarray:
    """Shot (Poisson) noise: each event adds ``factor``; ``x`` holds the expected values.

    Examples
    --------
    >>> noise_shot(np.full(3, 7, np.uint8), None, seed=1, factor=0.0).tolist()
    [7, 7, 7]
    """
    return saturate(shot_field(seed, x, factor), x.dtype, overwrite=True)


def jitter(x: np.ndarray, layout: str | None, *, seed: int, n_degree: int) -> np.ndarray:
    """Move every pixel component by a random integer offset (clamped to the image).

    Examples
    --------
    >>> x = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    >>> bool(np.array_equal(jitter(x, "HWC", seed=0, n_degree=0), x))
    True
    """
    idx = jitter_indices(seed, x.shape, n_degree)
    return np.ascontiguousarray(x).ravel()[idx].reshape(x.shape)


# ------------------------------------------------------------------------------ grid mask


def grid_mask(x: np.ndarray, layout: str | None, **params) -> np.ndarray:
    """Zero the grid squares of ``grid_mask`` in an HWC or HW image.

    Examples
    --------
    >>> x = np.ones((1, 4, 1), np.uint8)
    >>> grid_mask(x, "HWC", tile=2, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0)[0, :, 0]
    array([0, 1, 0, 1], dtype=uint8)
    """
    keep = _grid_keep(x.shape[0], x.shape[1], **params)
    if x.dtype.itemsize <= 8 and (x.ndim == 2 or x.shape[2] <= 512) and x.size:
        src = np.ascontiguousarray(x)
        return cv2.bitwise_and(src, src, mask=keep).reshape(x.shape)  # bits copied or zeroed
    keep_b = keep.astype(bool)
    return np.where(keep_b[..., None] if x.ndim == 3 else keep_b, x, np.zeros((), x.dtype))


@functools.lru_cache(maxsize=16)
def _grid_keep(h: int, w: int, **params: float) -> np.ndarray:
    """:func:`grid_keep_mask` as a uint8 mask (1: kept), cached per size and parameters."""
    keep = grid_keep_mask(h, w, **params).astype(np.uint8)  # type: ignore[arg-type]
    keep.flags.writeable = False
    return keep


# ----------------------------------------------------------------------- displacement


def remap(
    x: np.ndarray, px: np.ndarray, py: np.ndarray, fill_value: float, interp: str
) -> np.ndarray:
    """Sample HWC ``x`` at corner-convention points; outside points take ``fill_value``.

    Examples
    --------
    >>> x = np.arange(4, dtype=np.uint8).reshape(1, 4, 1)
    >>> px = np.array([[0.5, 3.9, 4.0, -0.1]], np.float32); py = np.full_like(px, 0.5)
    >>> remap(x, px, py, 9.0, "nn")[0, :, 0].tolist()
    [0, 3, 9, 9]
    """
    if interp == "nn":
        return _take_nn(x, *_flat_index(px, py, *x.shape[:2]), fill_value)
    return _remap_linear(x, *_centre_maps(px, py), fill_value)


def _flat_index(px: np.ndarray, py: np.ndarray, h: int, w: int) -> tuple[np.ndarray, bool]:
    """The flat source pixel of each point (nearest neighbour: ``floor`` of the
    corner-convention point), ``h * w`` for points outside; and whether any is outside."""
    ix = np.floor(px).astype(np.int64)
    iy = np.floor(py).astype(np.int64)
    ok = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    idx = np.where(ok, iy * w + ix, h * w).astype(np.int32 if h * w < 2**31 else np.intp)
    return idx, not bool(ok.all())


def _take_nn(x: np.ndarray, idx: np.ndarray, outside: bool, fill_value: float) -> np.ndarray:
    """The pixels of HW(C) ``x`` at the flat indices ``idx`` (``h * w``: ``fill_value``)."""
    h, w = x.shape[:2]
    src = x.reshape(h * w, -1)
    if outside:
        fill = saturate(np.full((1, src.shape[1]), fill_value, _F32), x.dtype, overwrite=True)
        src = np.concatenate((src, fill))
    return np.take(src, idx.ravel(), axis=0).reshape(*idx.shape, *x.shape[2:])


def _centre_maps(px: np.ndarray, py: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's (pixel-centre) float32 maps of corner-convention points."""
    mx = np.ascontiguousarray(px - _F32(0.5), dtype=_F32)
    my = np.ascontiguousarray(py - _F32(0.5), dtype=_F32)
    return mx, my


def _remap_linear(x: np.ndarray, mx: np.ndarray, my: np.ndarray, fill_value: float) -> np.ndarray:
    """Bilinear sampling of HWC ``x`` at OpenCV's (pixel-centre) maps ``mx``, ``my``."""
    fill = (float(fill_value),) * 4
    parts = []
    for lo in range(0, x.shape[2], 4):
        part = np.ascontiguousarray(x[..., lo : lo + 4])
        if part.shape[2] == 2:  # OpenCV's 2-channel path is less precise; split it
            parts += [_remap1(part[..., i : i + 1], mx, my, fill) for i in range(2)]
            continue
        parts.append(_remap1(part, mx, my, fill))
    return np.concatenate(parts, axis=2)


def _remap1(part, mx, my, fill) -> np.ndarray:
    h, w = mx.shape
    out = cv2.remap(
        part, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=fill
    )
    return out.reshape(h, w, part.shape[2])


def water(
    x: np.ndarray, layout: str | None, *, wave: Sequence[float], fill_value: float, interp: str
) -> np.ndarray:
    """The ``water`` displacement of an HWC image.

    Examples
    --------
    >>> x = np.arange(6, dtype=np.uint8).reshape(2, 3, 1)
    >>> water(x, "HWC", wave=(0, 0, 0, 0, 0, 0), fill_value=0.0, interp="nn")[..., 0].tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    h, w = x.shape[:2]
    return _remap_cached(x, ("water", h, w, tuple(float(v) for v in wave)), fill_value, interp)


def sphere(x: np.ndarray, layout: str | None, *, fill_value: float, interp: str) -> np.ndarray:
    """The ``sphere`` displacement of an HWC image.

    Examples
    --------
    >>> sphere(np.full((4, 4, 1), 5, np.uint8), "HWC", fill_value=0.0, interp="nn")[2, 2, 0]
    np.uint8(5)
    """
    h, w = x.shape[:2]
    return _remap_cached(x, ("sphere", h, w, ()), fill_value, interp)


def _points(key: tuple) -> tuple[np.ndarray, np.ndarray]:
    kind, h, w, wave = key
    return water_points(h, w, wave) if kind == "water" else sphere_points(h, w)


@functools.lru_cache(maxsize=8)  # (an index per output pixel: 4 MB for a megapixel)
def _nn_index(key: tuple) -> tuple[np.ndarray, bool]:
    """:func:`_flat_index` of the displacement ``key``."""
    _, h, w, _ = key
    idx, outside = _flat_index(*_points(key), h, w)
    idx.flags.writeable = False
    return idx, outside


@functools.lru_cache(maxsize=8)
def _linear_maps(key: tuple) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_centre_maps` of the displacement ``key``."""
    mx, my = _centre_maps(*_points(key))
    mx.flags.writeable = my.flags.writeable = False
    return mx, my


def _remap_cached(x: np.ndarray, key: tuple, fill_value: float, interp: str) -> np.ndarray:
    """:func:`remap` at the points of the displacement ``key``, its index maps cached (the
    points depend on the image size and arguments only)."""
    if interp != "nn":
        return _remap_linear(x, *_linear_maps(key), fill_value)
    return _take_nn(x, *_nn_index(key), fill_value)
