"""NumPy kernel of the reductions (``ops/reductions.py``): one pixel kernel, ``reduce``.

Float outputs accumulate in float64 and round once to float32 (the reference accumulates
float32 in a tree, so the two agree to an ulp or so). Integer outputs follow the reference
exactly: the sum accumulates in the output type (wrapping), and a mean is
``trunc(float32(acc) * float32(1 / N))`` (then ``sqrt`` in float32 for ``rms``).

Examples
--------
>>> x = np.array([[1, 2, 250], [3, 4, 255]], np.uint8)
>>> reduce(x, None, kind="mean", axes=(0,), keep_dims=False, dtype=np.dtype("uint8")).tolist()
[2, 3, 124]
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from headrace.backends.shared.common import mean_scale, reduction_identity


def reduce_axes(
    ufunc: np.ufunc, x: np.ndarray, axes: tuple[int, ...], dtype: Any = None
) -> np.ndarray:
    """``ufunc.reduce`` over ``axes`` (kept as size-1 dims), one axis at a time from the
    outermost. NumPy reducing several axes at once runs its inner loop over the innermost kept
    dimension — 3 channels for an HWC image, ~10x slower than reducing the outer axis first
    with the rows of the image as the inner loop.

    Examples
    --------
    >>> x = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    >>> reduce_axes(np.add, x, (0, 1), np.float64).ravel().tolist()
    [84.0, 92.0, 100.0]
    """
    if ufunc is np.add and dtype is not None and x.dtype == _F32 and np.dtype(dtype) == _F64:
        block = _block_sums(x, axes)
        if block is not None:
            return block
    out = x
    for a in sorted(axes):
        if a == out.ndim - 1 and 1 < out.shape[a] <= _SHORT and out.size >= 4096:
            out = _reduce_short_last(ufunc, out, dtype)
        else:
            out = ufunc.reduce(out, axis=a, keepdims=True, dtype=dtype)
    if not axes:  # (a reduction over no axes is a copy in the accumulation type)
        out = np.asarray(x, dtype)
    return out


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
#: OpenCV sums trailing axes only when a row holds this many elements or more, and leading axes
#: only when this many columns (kept elements) remain: below, NumPy's paths are faster (measured,
#: e.g. an HWC image's 3 channels: OpenCV 630 us vs 200 us over 500x375).
_CV_MIN_ROW = 8
_CV_MIN_COLUMNS = 64


def _block_sums(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray | None:
    """Float64 sums of float32 ``x`` over ``axes`` when they are its leading or its trailing
    axes: one ``cv2.reduce`` over ``x`` seen as a matrix (one call, the GIL released, ~2x
    NumPy's casting reduction on a 64 x 401 spectrogram). Each float32 value is exact in
    float64, so the sums differ from NumPy's (pairwise) order by float64 rounding at most.
    ``None`` when the axes are not such a block."""
    nd = x.ndim
    if not nd or not axes or not x.size or not x.flags.c_contiguous:
        return None
    ax = sorted(a % nd for a in axes)
    lo, hi = ax[0], ax[-1]
    if hi - lo + 1 != len(ax) or (lo and hi != nd - 1):  # (a repeated axis fails too)
        return None
    kept = (*x.shape[:lo], *(1,) * len(ax), *x.shape[hi + 1 :])
    if hi == nd - 1:  # trailing: one sum per row of (kept, reduced)
        flat, dim = x.reshape(math.prod(x.shape[:lo]), -1), 1
        if flat.shape[1] < _CV_MIN_ROW:  # short rows: NumPy's plane-wise sums are faster
            return None
    else:  # leading: one sum per column of (reduced, kept)
        flat, dim = x.reshape(-1, math.prod(x.shape[hi + 1 :])), 0
        if flat.shape[1] < _CV_MIN_COLUMNS:  # a few long columns: NumPy is faster
            return None
    if max(flat.shape) >= 2**31:
        return None
    return cv2.reduce(flat, dim, cv2.REDUCE_SUM, dtype=cv2.CV_64F).reshape(kept)


#: Innermost axes up to this long are reduced by one ufunc call per element (see below).
_SHORT = 8


def _reduce_short_last(ufunc: np.ufunc, x: np.ndarray, dtype: Any) -> np.ndarray:
    """``ufunc.reduce`` over a short innermost axis (an image's channels) as ``c - 1`` calls
    over whole planes, in NumPy's own order (``(x0 op x1) op x2 ...``): the same values, ~10x
    faster than a reduction whose inner loop is 3 elements long."""
    if dtype is None:  # NumPy's own accumulator (small integer sums widen)
        dtype = ufunc.reduce(np.zeros(2, x.dtype)).dtype
    acc = x[..., 0].astype(dtype)
    for k in range(1, x.shape[-1]):
        ufunc(acc, x[..., k], out=acc, dtype=acc.dtype, casting="unsafe")
    return acc[..., None]


def broadcast_op(
    op: np.ufunc, x: np.ndarray, stat: np.ndarray, out: np.ndarray | None = None, dtype: Any = None
) -> np.ndarray:
    """``op(x, stat)`` for a statistic with kept (size-1) reduced axes, e.g. ``(1, 1, C)`` per
    channel of an HWC image. A statistic constant along axis 0 is repeated once along the rest
    of a row, so that NumPy loops over whole rows rather than over the few channels it varies
    along (~15x faster for HWC images). ``out`` (C-contiguous, ``x``'s shape) and ``dtype`` as
    for the ufunc.

    Examples
    --------
    >>> x = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    >>> broadcast_op(np.subtract, x, np.array([[[0, 1, 2]]]), dtype=np.float32)[1].tolist()
    [[6.0, 6.0, 6.0], [9.0, 9.0, 9.0]]
    """
    st = np.asarray(stat)
    if (
        st.ndim == x.ndim >= 2
        and st.shape[-1] == 1
        and 1 < x.shape[-1] <= _SHORT
        and st.size > 1
        and x.size >= 4096
    ):  # a statistic per pixel over the channels: one call per channel plane
        if out is None:
            out = np.empty(x.shape, np.result_type(x, st) if dtype is None else dtype)
        plane = st[..., 0]
        for k in range(x.shape[-1]):
            op(x[..., k], plane, out=out[..., k], dtype=dtype)
        return out
    if st.ndim == x.ndim >= 2 and st.shape[0] == 1 and x.shape[0] > 1 and st.size > 1:
        row = np.ascontiguousarray(np.broadcast_to(st, (1, *x.shape[1:]))).reshape(1, -1)
        if out is None:
            out = np.empty(x.shape, np.result_type(x, st) if dtype is None else dtype)
        rows = out.reshape(x.shape[0], -1)
        op(np.ascontiguousarray(x).reshape(x.shape[0], -1), row, out=rows, dtype=dtype)
        return out
    if out is None:
        return op(x, st, dtype=dtype)  # type: ignore[no-any-return]
    return op(x, st, out=out, dtype=dtype)  # type: ignore[no-any-return]


def channel_moments(x: np.ndarray, axes: tuple[int, ...]) -> tuple[Any, Any, int] | None:
    """``(mean, variance, count)`` in float64 (reduced axes kept) of an 8- or 16-bit integer or
    float32 ``x`` over all its axes, or over the spatial axes of an ``H x W x C`` image (per
    channel, C <= 4), from one ``cv2.meanStdDev`` pass (integer inputs: exact sums); ``None``
    for other axes, inputs OpenCV does not sum, and nearly constant data (see below).

    Examples
    --------
    >>> m, v, n = channel_moments(np.array([[[0, 1], [2, 3]]], np.uint8), (0, 1))
    >>> m.ravel().tolist(), v.ravel().round(9).tolist(), n
    ([1.0, 2.0], [1.0, 1.0], 2)
    """
    if x.dtype not in _MOMENT_TYPES or not x.size:
        return None
    if x.ndim == 3 and tuple(sorted(axes)) == (0, 1) and 1 <= x.shape[2] <= 4:
        img, kept = x, (1, 1, x.shape[2])
    elif tuple(sorted(axes)) == tuple(range(x.ndim)):
        img, kept = x.reshape(-1, 1), (1,) * x.ndim
    else:
        return None
    count = x.size // math.prod(kept)
    if count > 1 << 31:  # (OpenCV's integer sums)
        return None
    mean, std = cv2.meanStdDev(np.ascontiguousarray(img))
    m, var = mean.reshape(kept), np.square(std.reshape(kept))
    # OpenCV's variance is E[x^2] - E[x]^2 in float64: ~1e-16 of E[x^2] off. Where that is more
    # than ~1e-12 of the variance itself (nearly constant data), the caller's float64 passes
    # are taken instead.
    if not np.all(var * 1e4 > np.square(m) + var):
        return None
    return m, var, count


#: Types whose moments :func:`channel_moments` takes from OpenCV.
_MOMENT_TYPES = {np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float32)}


def _int_mean(acc: np.ndarray, n: int, root: bool, dt: np.dtype) -> np.ndarray:
    """``trunc(float32(acc) / N)`` (``sqrt`` first for ``root``), as the reference computes."""
    f = np.asarray(acc).astype(np.float32) * mean_scale(n)
    if root:
        f = np.sqrt(f)
    f = np.nan_to_num(np.trunc(f), nan=0.0, posinf=0.0, neginf=0.0)
    return f.astype(dt)


def reduce(
    x: np.ndarray,
    layout: str | None,
    *,
    kind: str,
    axes: tuple[int, ...],
    keep_dims: bool,
    dtype: np.dtype,
    ddof: int = 0,
    mean: Any = None,
) -> np.ndarray:
    """``kind`` of ``x`` over ``axes`` as ``dtype`` (see the module docstring)."""
    n = math.prod(x.shape[a] for a in axes)
    dt = np.dtype(dtype)
    with np.errstate(all="ignore"):
        if kind in ("min", "max"):
            if n == 0:
                shape = tuple(1 if d in axes else e for d, e in enumerate(x.shape))
                out = np.full(shape, reduction_identity(kind, dt), dt)
            else:
                out = reduce_axes(np.minimum if kind == "min" else np.maximum, x, axes)
        elif dt.kind == "f":
            out = _float_stat(x, kind, axes, n, ddof, mean).astype(dt)
        else:
            xi = x.astype(dt)
            if kind != "sum":
                xi = np.multiply(xi, xi) if kind != "mean" else xi
            acc = reduce_axes(np.add, xi, axes, dt)
            out = acc if kind == "sum" else _int_mean(acc, n, kind == "rms", dt)
        if not keep_dims:
            out = np.asarray(out).reshape(tuple(e for d, e in enumerate(x.shape) if d not in axes))
    out = np.asarray(out)
    return out if out.flags.c_contiguous else out.copy()  # (ascontiguousarray makes 0-D 1-D)


def _float_stat(
    x: np.ndarray, kind: str, axes: tuple[int, ...], n: int, ddof: int, mean: Any
) -> np.ndarray:
    """The statistic in float64, with the reduced axes kept."""
    f64 = np.float64
    if kind == "sum":
        return reduce_axes(np.add, x, axes, f64)
    if kind in ("std_dev", "variance"):
        kept = tuple(1 if d in axes else e for d, e in enumerate(x.shape))
        m = np.asarray(mean, dtype=f64)
        m = m.reshape(kept) if m.size != 1 else m.reshape(())
        moments = channel_moments(x, axes) if x.dtype.kind in "iu" else None
        if moments is not None and n - ddof > 0:  # sum((x - m)^2) = n (var + (mu - m)^2)
            mu, v, _ = moments
            var = (v + np.square(mu - m)) * (n / (n - ddof))
            return np.sqrt(var) if kind == "std_dev" else var
        d = broadcast_op(np.subtract, x, m, dtype=f64)
        var = reduce_axes(np.add, np.square(d, out=d), axes) / f64(n - ddof)
        return np.sqrt(var) if kind == "std_dev" else var
    if kind == "mean":
        s = reduce_axes(np.add, x, axes, f64) / f64(n)
    else:
        s = reduce_axes(np.add, np.square(x, dtype=f64), axes) / f64(n)
    return np.sqrt(s) if kind == "rms" else s
