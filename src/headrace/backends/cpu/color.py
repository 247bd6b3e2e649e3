"""CPU colour kernels (numpy/OpenCV), one sample in, one sample out.

Plans come from :mod:`headrace.ops._color_params`. Measured against DALI 2.4 (CPU) on random
uint8 images:

* ``brightness_contrast``: bit-exact (uint8 goes through a 256-entry table).
* ``color_twist``/``hsv``/``hue``/``saturation``: max abs diff 1, on about 1e-5 of the values
  (float32 summation order at rounding ties).
* ``color_space_conversion``: bit-exact on uint8.
* ``normalize``: float32 results within ~3e-7 relative; integer outputs exact.
* ``lookup_table``: exact.

Integer outputs round half away from zero and saturate, as DALI's ``ConvertSat``.

Examples
--------
>>> import numpy as np
>>> from headrace.ops._color_params import brightness_contrast_params
>>> img = np.full((2, 2, 3), 100, np.uint8)
>>> plan = brightness_contrast_params(img.shape, "HWC", img.dtype, brightness=1.5)
>>> int(brightness_contrast(img, "HWC", **plan.kwargs)[0, 0, 0])
150
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from headrace._core.saturate import saturate
from headrace.backends.cpu.misc import CV_DEPTHS
from headrace.backends.cpu.reductions import broadcast_op, channel_moments, reduce_axes
from headrace.backends.shared.common import (
    B_CB,
    CB601,
    CR601,
    G_CB,
    G_CR,
    R_CR,
    Y601,
    Y_INV,
    Y_SUM,
    parallel_parts,
    rows_of_one_array,
    uniform_float32_plan,
)

_F32 = np.float32


def lut_u8(x: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[x]`` for uint8 ``x`` of any shape and a 256-entry ``table`` (OpenCV's LUT for
    the table types it reads: ~9x numpy's indexing; the output takes the table's type).

    Examples
    --------
    >>> lut_u8(np.array([0, 2], np.uint8), np.arange(256, dtype=np.uint8)[::-1].copy()).tolist()
    [255, 253]
    """
    if table.dtype not in CV_DEPTHS or table.size != 256 or x.size == 0:
        return table[x]
    flat = np.ascontiguousarray(x).reshape(-1, 1)
    return cv2.LUT(flat, np.ascontiguousarray(table)).reshape(x.shape)


@functools.lru_cache(maxsize=256)
def _u8_table(scale: float, offset: float, dtype: np.dtype) -> np.ndarray:
    """``saturate(level * scale + offset)`` for the 256 levels (made once per value: a batch's
    samples usually share it, and each one took ~10 us holding the GIL)."""
    levels = np.arange(256, dtype=_F32)
    table = saturate(levels * _F32(scale) + _F32(offset), dtype, overwrite=True)
    table.flags.writeable = False
    return table


def brightness_contrast(
    x: np.ndarray, layout: str | None, *, scale: float, offset: float, dtype: np.dtype
) -> np.ndarray:
    """``out = scale * x + offset`` computed in float32, converted to ``dtype``.

    Examples
    --------
    >>> x = np.array([[[0, 128, 255]]], np.uint8)
    >>> brightness_contrast(x, "HWC", scale=0.5, offset=64.0, dtype=np.dtype("uint8")).tolist()
    [[[64, 128, 192]]]
    """
    dtype = np.dtype(dtype)
    if x.dtype == np.uint8:
        return lut_u8(x, _u8_table(scale, offset, dtype))
    v = x.astype(_F32)
    v *= _F32(scale)
    v += _F32(offset)
    return saturate(v, dtype, overwrite=True)


def color_twist(
    x: np.ndarray, layout: str | None, *, matrix: np.ndarray, offset: float, dtype: np.dtype
) -> np.ndarray:
    """Apply ``out[c] = sum_k matrix[c, k] * x[k] + offset`` to every pixel (channels last).

    Examples
    --------
    >>> x = np.array([[[10, 20, 30]]], np.uint8)
    >>> color_twist(x, "HWC", matrix=np.eye(3) * 2, offset=1.0, dtype=np.dtype("uint8")).tolist()
    [[[21, 41, 61]]]
    """
    m = np.empty((3, 4), _F32)
    m[:, :3] = matrix
    m[:, 3] = offset
    flat = x.reshape(-1, 1, 3)
    if flat.dtype != _F32:
        flat = flat.astype(_F32)
    out = cv2.transform(flat, m) if flat.shape[0] else flat.copy()
    return saturate(out.reshape(x.shape), dtype, overwrite=True)


hsv = color_twist
hue = color_twist
saturation = color_twist

# ----------------------------------------------------------------- colour-space conversion


def _dot(rgb: tuple[np.ndarray, np.ndarray, np.ndarray], coeffs) -> np.ndarray:
    acc = rgb[0] * coeffs[0]
    acc += rgb[1] * coeffs[1]
    acc += rgb[2] * coeffs[2]
    return acc


def _rgb_to_ycbcr(rgb: tuple[np.ndarray, ...]) -> np.ndarray:
    grey = (rgb[0] == rgb[1]) & (rgb[0] == rgb[2])
    y = _dot(rgb, Y601) + _F32(16)
    cb = _dot(rgb, CB601) + _F32(128)
    cr = _dot(rgb, CR601) + _F32(128)
    cb[grey] = 128
    cr[grey] = 128
    return np.stack([y, cb, cr], axis=-1)


def _rgb_image_to_ycbcr(x: np.ndarray) -> np.ndarray:
    """:func:`_rgb_to_ycbcr` of a uint8 ``H x W x 3`` image, rounded to uint8: the same float32
    steps in the same order (so the same values), on planes OpenCV splits and merges, with the
    grey test on the uint8 planes and no temporary per step (~2x fewer passes)."""
    planes = cv2.split(np.ascontiguousarray(x))
    grey = (planes[0] == planes[1]) & (planes[0] == planes[2])
    r, g, b = (p.astype(_F32) for p in planes)
    tmp = np.empty_like(r)

    def dot(coeffs: tuple[Any, Any, Any], offset: float) -> np.ndarray:
        acc = np.multiply(r, coeffs[0])
        acc += np.multiply(g, coeffs[1], out=tmp)
        acc += np.multiply(b, coeffs[2], out=tmp)
        acc += _F32(offset)
        return acc

    y, cb, cr = dot(Y601, 16), dot(CB601, 128), dot(CR601, 128)
    np.copyto(cb, _F32(128), where=grey)
    np.copyto(cr, _F32(128), where=grey)
    u8 = np.dtype(np.uint8)
    return cv2.merge([saturate(p, u8, overwrite=True) for p in (y, cb, cr)])  # type: ignore[no-any-return]


def _ycbcr_to_rgb(y: np.ndarray, cb: np.ndarray, cr: np.ndarray) -> np.ndarray:
    ty = Y_INV * (y - _F32(16))
    tb = cb - _F32(128)
    tr = cr - _F32(128)
    r = ty + R_CR * tr
    g = ty - G_CR * tr - G_CB * tb
    b = ty + B_CB * tb
    return np.stack([r, g, b], axis=-1)


def _cv_color(x: np.ndarray, code: int) -> np.ndarray:
    """``cv2.cvtColor`` on uint8 pixels ``(..., 3)`` of any leading shape: rows of an image
    stay rows (one call per image, not one per pixel)."""
    rows = x.shape[-2] if x.ndim >= 3 else 1
    out = cv2.cvtColor(np.ascontiguousarray(x).reshape(-1, rows, 3), code)
    return out.reshape(*x.shape[:-1], -1)  # type: ignore[no-any-return]


def color_space_conversion(x: np.ndarray, layout: str | None, *, src: str, dst: str) -> np.ndarray:
    """Convert uint8 pixels between ``RGB``, ``BGR``, ``GRAY`` and ``YCbCr`` (BT.601 ranges).

    Examples
    --------
    >>> x = np.array([[[255, 0, 0]]], np.uint8)
    >>> color_space_conversion(x, "HWC", src="RGB", dst="GRAY").tolist()
    [[[76]]]
    """
    if src == dst:
        return x.copy()
    if {src, dst} == {"RGB", "BGR"}:
        return _cv_color(x, cv2.COLOR_RGB2BGR)  # the channel swap, one pass
    if dst == "GRAY" and src in ("RGB", "BGR"):  # OpenCV's fixed-point luma, as DALI's CPU
        return _cv_color(x, cv2.COLOR_RGB2GRAY if src == "RGB" else cv2.COLOR_BGR2GRAY)
    if src == "BGR":
        return color_space_conversion(_cv_color(x, cv2.COLOR_BGR2RGB), layout, src="RGB", dst=dst)
    if dst == "BGR":
        rgb = color_space_conversion(x, layout, src=src, dst="RGB")
        return _cv_color(rgb, cv2.COLOR_RGB2BGR)
    if src == "GRAY":  # dst is RGB or YCbCr
        if dst == "RGB":
            return np.repeat(x, 3, axis=-1)
        y = saturate(x.astype(_F32) * Y_SUM + _F32(16), np.dtype(np.uint8), overwrite=True)
        return np.concatenate([y, np.full_like(y, 128), np.full_like(y, 128)], axis=-1)
    if src == "RGB" and x.ndim == 3 and x.shape[2] == 3 and x.dtype == np.uint8 and x.size:
        return _rgb_image_to_ycbcr(x)
    ch = [x[..., i].astype(_F32) for i in range(3)]
    if src == "RGB":
        out = _rgb_to_ycbcr(ch)
    elif dst == "GRAY":  # src is YCbCr
        out = ((ch[0] - _F32(16)) * Y_INV)[..., None]
    else:
        out = _ycbcr_to_rgb(*ch)
    return saturate(out, np.dtype(np.uint8), overwrite=True)


# ------------------------------------------------------------------------------ normalize


def _stats(
    xs: Sequence[np.ndarray], axes: tuple[int, ...], mean, stddev, epsilon: float, ddof: int
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and reciprocal deviation over ``axes`` of all ``xs`` together (float64 sums)."""
    if mean is None:
        total = sum(reduce_axes(np.add, x, axes, np.float64) for x in xs)
        count = sum(x.size // max(1, _kept_size(x, axes)) for x in xs)
        mean = total / count
    mean = np.asarray(mean, np.float64)
    if stddev is None:
        ssq = sum(reduce_axes(np.add, np.square(x - mean, dtype=np.float64), axes) for x in xs)
        count = sum(x.size // max(1, _kept_size(x, axes)) for x in xs)
        var = ssq / max(count - ddof, 1) if count - ddof > 0 else np.zeros_like(ssq)
    else:
        var = np.square(np.asarray(stddev, np.float64))
    return mean, _reciprocal_std(var + epsilon, 1.0)


def _axis_sums(v: np.ndarray, axes: tuple[int, ...], square: bool = False) -> np.ndarray:
    """Float64 sums (of squares) over ``axes`` with kept dims."""
    return reduce_axes(np.add, np.square(v) if square else v, axes, np.float64)


def _kept_size(x: np.ndarray, axes: tuple[int, ...]) -> int:
    return math.prod(x.shape[i] for i in range(x.ndim) if i not in axes)


def _reciprocal_std(var: np.ndarray, scale: float) -> np.ndarray:
    """``scale / sqrt(var)`` where ``var > 0``, else 0 (no warnings raised)."""
    std = np.sqrt(var)
    return np.divide(scale, std, out=np.zeros_like(std), where=std > 0)


def _in_place(op: np.ufunc, v: np.ndarray, stat: Any) -> None:
    """``op(v, stat, out=v)`` for float32 ``v`` (rows at a time: :func:`broadcast_op`)."""
    broadcast_op(op, v, np.asarray(stat, _F32), out=v)


def _apply_norm(x, mean, inv, scale: float, shift: float, dtype: np.dtype) -> np.ndarray:
    mul = (inv * scale).astype(_F32)
    v = x.astype(_F32)
    _in_place(np.subtract, v, mean)
    _in_place(np.multiply, v, mul)
    if shift:
        v += _F32(shift)
    return saturate(v, dtype, overwrite=True)


def normalize(
    x: np.ndarray,
    layout: str | None,
    *,
    axes: tuple[int, ...],
    mean,
    stddev,
    scale: float,
    shift: float,
    epsilon: float,
    ddof: int,
    dtype: np.dtype,
    in_place: bool = False,
) -> np.ndarray:
    """``scale * (x - mean) / sqrt(var + epsilon) + shift`` with statistics over ``axes``
    (``in_place``: a float32 ``x`` with computed mean may be overwritten with the result).

    Examples
    --------
    >>> x = np.array([1.0, 3.0], np.float32)
    >>> normalize(x, None, axes=(0,), mean=None, stddev=None, scale=1.0, shift=0.0,
    ...           epsilon=0.0, ddof=0, dtype=np.dtype("float32")).tolist()
    [-1.0, 1.0]
    """
    if x.dtype == np.uint8 and (mean is None) == (stddev is None):
        # a table of the 256 levels; computed statistics from one integer-sum pass
        stats = (
            (mean, np.square(np.asarray(stddev, np.float64)))
            if mean is not None
            else _uint8_stats(x, axes, ddof)
        )
        if stats is not None:
            lut = _normalize_lut(
                x, *stats, scale, shift, epsilon, np.dtype(dtype), mean is not None
            )
            if lut is not None:
                return lut
    count = x.size // max(1, _kept_size(x, axes))
    if mean is None:
        v = x.astype(_F32, copy=not in_place)
        mean = _axis_sums(v, axes) / max(count, 1)
        _in_place(np.subtract, v, mean)  # centred once, reused for the variance
    else:  # converted and centred in one pass
        v = broadcast_op(np.subtract, x, np.asarray(mean, _F32), dtype=_F32)
    if stddev is None:
        ssq = _axis_sums(v, axes, square=True)
        var = ssq / (count - ddof) if count - ddof > 0 else np.zeros_like(ssq)
    else:
        var = np.square(np.asarray(stddev, np.float64))
    _in_place(np.multiply, v, _reciprocal_std(var + epsilon, scale))
    if shift:
        v += _F32(shift)
    return saturate(v, np.dtype(dtype), overwrite=True)


def normalize_stacked(
    xs: Sequence[np.ndarray], layout: str | None, plans: Sequence[Any]
) -> tuple[list[np.ndarray], np.ndarray] | None:
    """Per-sample ``normalize`` of float32 samples of one shape, statistics computed over
    trailing axes, as one set of whole-batch array calls on the stacked samples (the same
    values: each row is reduced alone either way). Small samples (a 64 x 401 spectrogram) cost
    ~10 array calls each, which a second thread slowed down instead of sharing; stacked, the
    calls are few and large. ``None`` (per-sample path) otherwise. Called by the operator's
    whole-batch hook (not named ``normalize_batched``: that would keep normalize out of chains
    of per-sample image operators, which stay the better path there).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> kw = dict(axes=(1,), mean=None, stddev=None, scale=1.0, shift=0.0, epsilon=0.0, ddof=0,
    ...           dtype=np.dtype("float32"))
    >>> xs = [np.array([[1.0, 3.0]], np.float32), np.array([[0.0, 4.0]], np.float32)]
    >>> outs, dense = normalize_stacked(xs, None, [SimpleNamespace(kwargs=kw)] * 2)
    >>> [o.tolist() for o in outs], dense.shape
    ([[[-1.0, 1.0]], [[-1.0, 1.0]]], (2, 1, 2))
    """
    kw = uniform_float32_plan(xs, plans)
    if kw is None or kw["mean"] is not None or kw["stddev"] is not None:
        return None
    axes, ndim = kw["axes"], xs[0].ndim
    if not axes or sorted(axes) != list(range(ndim - len(axes), ndim)):  # trailing axes only
        return None
    stacked_kw = {**kw, "axes": tuple(a + 1 for a in axes)}
    if np.dtype(kw["dtype"]) != _F32:
        out = normalize(np.stack(xs), None, **stacked_kw)
        return list(out), out
    out = np.empty((len(xs), *xs[0].shape), _F32)
    dense = rows_of_one_array(xs)  # (a whole-batch kernel's output: one copy call per part)

    def part(rows: slice) -> None:  # (the parts run on the worker threads)
        if dense is None:
            np.stack(xs[rows], out=out[rows])
        else:
            np.copyto(out[rows], dense[rows])
        normalize(out[rows], None, in_place=True, **stacked_kw)

    parallel_parts(len(xs), part)
    return list(out), out


_NORM_TABLES: dict[tuple, np.ndarray] = {}


def _uint8_stats(x: np.ndarray, axes: tuple[int, ...], ddof: int) -> tuple[Any, Any] | None:
    """Mean and variance of uint8 ``x`` over ``axes`` (all of them, or the spatial ones of an
    ``H x W x C`` image) from one integer-sum pass (:func:`~.reductions.channel_moments`)
    instead of four float passes; ``None`` for other axes. The variance is what
    :func:`normalize` sums, ``(x - float32(mean)) ** 2``, through the identity
    ``sum((x - m32) ** 2) = n * (var + (m - m32) ** 2)``: the two agree to ~1e-8 (the float
    path rounds each square to float32 first), far inside the float32 steps that follow.

    Examples
    --------
    >>> m, v = _uint8_stats(np.array([[[0], [2]], [[4], [6]]], np.uint8), (0, 1, 2), 0)
    >>> float(m.item()), round(float(v.item()), 9)
    (3.0, 5.0)
    """
    moments = channel_moments(x, axes)
    if moments is None or moments[2] - ddof <= 0:
        return None
    m, var, count = moments
    off = m - m.astype(_F32)  # (normalize centres on the float32 mean)
    return m, (var + np.square(off)) * (count / (count - ddof))


def _normalize_lut(x: np.ndarray, mean: Any, var: Any, scale: float, shift: float,
                   epsilon: float, dtype: np.dtype,
                   keep: bool = True) -> np.ndarray | None:  # fmt: skip
    """``normalize`` of uint8 ``x`` with given statistics as a table of the 256 levels (per
    channel) and one OpenCV LUT pass: the table holds exactly what the float32 steps of
    :func:`normalize` give each level. One statistic for all channels: a single-channel
    table over the flattened image (to float32 ~120 us per 500x375x3 image on a batch that is
    not in the cache, against ~180-200 us for three vectorised passes). ``None`` when the
    statistics vary along other axes than the last one (or the output type is not one OpenCV's
    LUT writes)."""
    m = np.asarray(mean, _F32)
    var = np.asarray(var, np.float64)
    c = x.shape[-1] if x.ndim else 1
    stats = []
    for st in (m, var):
        if st.size != 1 and not (
            st.ndim <= x.ndim and st.shape[-1] == c <= 4 and st.size == c and x.ndim >= 2
        ):
            return None
        stats.append(st.reshape(-1))
    if dtype not in CV_DEPTHS or x.size < 4096:
        return None
    m1, v1 = stats
    key = (m1.tobytes(), v1.tobytes(), float(scale), float(shift), float(epsilon), dtype.str)
    table = _NORM_TABLES.get(key) if keep else None
    if table is None:
        levels = np.arange(256, dtype=_F32)[:, None]
        inv = _reciprocal_std(v1 + epsilon, scale).astype(_F32)
        table = (levels - m1) * inv  # (256, k): the kernel's float32 subtract, then multiply
        if shift:
            table += _F32(shift)
        k = max(m1.size, v1.size)
        table = np.ascontiguousarray(saturate(np.broadcast_to(table, (256, k)), dtype))
        if keep:  # (given statistics repeat; an image's own statistics do not)
            if len(_NORM_TABLES) >= 64:
                _NORM_TABLES.clear()
            _NORM_TABLES[key] = table
    k = table.shape[1]
    if k == 1:
        return lut_u8(x, table[:, 0].copy())
    flat = np.ascontiguousarray(x).reshape(-1, 1, c)
    return cv2.LUT(flat, table.reshape(1, 256, c)).reshape(x.shape)  # type: ignore[no-any-return]


def normalize_batch(xs: Sequence[np.ndarray], layout: str | None, **params) -> list[np.ndarray]:
    """``normalize`` with ``batch=True``: statistics are shared by all samples of ``xs``.

    Examples
    --------
    >>> xs = [np.array([0.0], np.float32), np.array([2.0], np.float32)]
    >>> [o.tolist() for o in normalize_batch(xs, None, axes=(0,), mean=None, stddev=None,
    ...   scale=1.0, shift=0.0, epsilon=0.0, ddof=0, dtype=np.dtype("float32"))]
    [[-1.0], [1.0]]
    """
    axes = params["axes"]
    m, inv = _stats(xs, axes, params["mean"], params["stddev"], params["epsilon"], params["ddof"])
    dtype = np.dtype(params["dtype"])
    return [_apply_norm(x, m, inv, params["scale"], params["shift"], dtype) for x in xs]


# --------------------------------------------------------------------------- lookup_table


def lookup_table(x: np.ndarray, layout: str | None, *, table: np.ndarray, default) -> np.ndarray:
    """``out = table[x]`` where ``0 <= x < len(table)``, else ``default``.

    Examples
    --------
    >>> lookup_table(np.array([0, 1, 5, -1]), None, table=np.array([7, 8], np.uint8),
    ...              default=0).tolist()
    [7, 8, 0, 0]
    """
    if x.dtype.itemsize <= 2:  # full table over the input domain
        info = np.iinfo(x.dtype)
        n = int(info.max) - int(info.min) + 1
        full = np.full(n, default, table.dtype)
        lo = -int(info.min)
        hi = min(len(table), int(info.max) + 1)
        full[lo : lo + hi] = table[:hi]
        if x.dtype == np.uint8:
            return lut_u8(x, full)
        idx = x.astype(np.int32) + lo if lo else x
        return full[idx]
    out = np.full(x.shape, default, table.dtype)
    ok = (x >= 0) & (x < len(table))
    out[ok] = table[x[ok]]
    return out
