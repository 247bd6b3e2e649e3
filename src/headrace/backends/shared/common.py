"""Backend-neutral helpers shared by the CPU (``backends/cpu``) and torch (``backends/torch``)
kernels: plain Python/numpy computed on the host.

Both backends derive the same values (window overlaps, resampling coefficients, noise fields,
random offsets, sampling points, border indices) from the same plan. Backend modules import
this module; they never import each other. Nothing here touches pixels.

Examples
--------
>>> reflect101_indices(3, 2).tolist()
[2, 1, 0, 1, 2, 1, 0]
>>> overlap((-1, 0), (3, 2), (2, 2))
((slice(0, 2, None), slice(0, 2, None)), (slice(1, 3, None), slice(0, 2, None)), False)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, NamedTuple, Protocol

import numpy as np

from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace._exec.context import calling_context
from headrace.codecs.convert import YCBCR_COEFFS

_F32 = np.float32

# =================================================================================================
# Geometry: windows, spatial axes and resampling coefficients
# =================================================================================================

_slice = builtins.slice
_f32 = np.float32


def dali_radians(angle_deg: float) -> float:
    """The angle in radians as DALI computes it (float32 degrees times float32 pi/180)."""
    return float(_f32(_f32(angle_deg) * _f32(math.pi / 180)))


def rotated_canvas_size(h: int, w: int, angle: float) -> tuple[int, int]:
    """DALI's output (height, width) for rotating an ``h`` x ``w`` image by ``angle`` degrees.

    Examples
    --------
    >>> rotated_canvas_size(10, 10, 30.0)
    (14, 14)
    """
    a = dali_radians(-angle)
    c, s = abs(math.cos(a)), abs(math.sin(a))
    eps = 1e-2
    w_out = math.ceil(c * w + s * h - eps)
    h_out = math.ceil(c * h + s * w - eps)
    pw, ph = (w % 2, h % 2) if s <= c else (h % 2, w % 2)
    w_out += (w_out % 2) ^ pw
    h_out += (h_out % 2) ^ ph
    return h_out, w_out


def overlap(
    anchor: Sequence[int], shape: Sequence[int], in_shape: Sequence[int]
) -> tuple[tuple[slice, ...], tuple[slice, ...], bool]:
    """Where the box ``anchor``/``shape`` meets an input of ``in_shape``.

    Returns
    -------
    src : tuple of slice
        The overlap, in input coordinates.
    dst : tuple of slice
        The overlap, in box coordinates.
    inside : bool
        Whether the whole box lies inside the input.

    Examples
    --------
    >>> overlap((1, 1), (2, 2), (4, 4))[2]
    True
    """
    src, dst, inside = [], [], True
    for a, e, n in zip(anchor, shape, in_shape):
        lo, hi = max(a, 0), min(a + e, n)
        hi = max(hi, lo)
        inside &= a >= 0 and a + e <= n
        src.append(_slice(lo, hi))
        dst.append(_slice(lo - a, hi - a))
    return tuple(src), tuple(dst), inside


class Filter(Protocol):
    """The resampling filter of one axis, as resize plans give it.

    ``kind`` is ``"nn"``, ``"triangular"``, ``"gaussian"``, ``"cubic"`` or ``"lanczos3"``;
    ``support`` the window width in input pixels (ignored for ``"nn"``).
    """

    @property
    def kind(self) -> str: ...

    @property
    def support(self) -> float: ...


@cache
def _table(kind: str) -> np.ndarray:
    """Tabulated window, sampled as DALI samples it (linear interpolation between entries)."""
    if kind == "triangular":
        return np.array([0, 1, 0], dtype=_f32)
    n = {"gaussian": 65, "cubic": 129, "lanczos3": 193}[kind]
    half = _f32((n - 1) * 0.5)
    i = np.arange(n, dtype=_f32)
    if kind == "gaussian":
        x = _f32(4) * (i - half) / _f32(n - 1)
        return np.exp(-x * x).astype(_f32)
    if kind == "cubic":
        x = np.abs(_f32(4) * (i - half) / _f32(n - 1))
        x2, x3 = x * x, x * x * x
        near = _f32(1.5) * x3 - _f32(2.5) * x2 + _f32(1)
        far = _f32(-0.5) * x3 + _f32(2.5) * x2 - _f32(4) * x + _f32(2)
        return np.where(x >= 2, 0, np.where(x > 1, far, near)).astype(_f32)
    x = _f32(6) * (i - half) / _f32(n - 1)
    val = (np.sinc(x.astype(np.float64)) * np.sinc(x.astype(np.float64) / 3)).astype(_f32)
    return np.where(np.abs(x) >= 3, _f32(0), val).astype(_f32)


@cache
def _padded_table(kind: str) -> np.ndarray:
    """:func:`_table` with a zero entry on each side (read-only, shared)."""
    t = _table(kind)
    padded = np.concatenate([np.zeros(1, _f32), t, np.zeros(1, _f32)])
    padded.flags.writeable = False
    return padded


@cache
def _taps(support: int) -> np.ndarray:
    """``0, 1, ..., support - 1`` in float32 (read-only, shared)."""
    taps = np.arange(support, dtype=_f32)
    taps.flags.writeable = False
    return taps


def filter_table(kind: str) -> np.ndarray:
    """The tabulated window of a filter ``kind`` (float32; entries are linearly interpolated),
    shared by :func:`axis_weights` and kernels that build the same coefficients on a device.

    Examples
    --------
    >>> filter_table("triangular").tolist()
    [0.0, 1.0, 0.0]
    """
    return _table(kind)


def axis_weights(
    in_len: int, out_len: int, lo: float, hi: float, flt: Filter
) -> tuple[np.ndarray, np.ndarray]:
    """Source indices and coefficients for resampling one axis (DALI's CPU resampler, float32).

    Output pixel ``j`` is ``sum_k coeffs[j, k] * src[clip(idx[j] + k, 0, in_len - 1)]``.

    Parameters
    ----------
    in_len, out_len : int
        Input and output extents.
    lo, hi : float
        Input region mapped onto the output (``lo > hi`` mirrors).
    flt : Filter
        Filter of the axis (not ``"nn"``).

    Returns
    -------
    idx : numpy.ndarray of int32, shape (out_len,)
    coeffs : numpy.ndarray of float32, shape (out_len, support)

    Examples
    --------
    >>> from headrace.ops._resize_params import AxisFilter
    >>> idx, c = axis_weights(4, 2, 0.0, 4.0, AxisFilter("triangular", 2.0))
    >>> idx.tolist(), c.tolist()
    ([0, 2], [[0.5, 0.5], [0.5, 0.5]])
    """
    table = _table(flt.kind)
    n_coeffs = table.size
    tscale = _f32(n_coeffs - 1) / _f32(flt.support)
    anchor = _f32(flt.support) * _f32(0.5)
    support = max(1, math.ceil(_f32(n_coeffs - 1) / tscale))
    scale = (_f32(hi) - _f32(lo)) / _f32(out_len)
    origin = _f32(lo) + _f32(0.5) * scale - _f32(0.5) - anchor
    # (in place where it saves a temporary: one image axis is ~20 small numpy calls, per sample
    # when every sample has its own window, as random crops do)
    sx0f = np.arange(out_len, dtype=_f32)
    sx0f *= scale
    sx0f += origin
    sx0 = np.ceil(sx0f)
    t = (sx0 - sx0f)[:, None] + _taps(support)  # window positions, >= 0
    t *= tscale
    t0 = np.floor(t)
    frac = t - t0
    i = t0.astype(np.intp)
    i += 1  # the table's entries sit at 1..n_coeffs of the zero-padded table
    padded = _padded_table(flt.kind)
    coeffs = np.take(padded, i, mode="clip")
    i += 1
    step = np.take(padded, i, mode="clip")
    step -= coeffs
    step *= frac
    coeffs += step  # c0 + frac * (c1 - c0)
    coeffs[t >= n_coeffs] = 0
    total = coeffs.sum(axis=1, dtype=_f32)
    np.divide(coeffs, total[:, None], out=coeffs, where=(total != 0)[:, None])
    del in_len  # indices are clamped by the kernels
    return sx0.astype(np.int32), coeffs


def nn_indices(in_len: int, out_len: int, lo: float, hi: float, outer: bool) -> np.ndarray:
    """Source indices of nearest-neighbour resampling along one axis (DALI's rounding).

    ``outer`` axes accumulate the source position step by step in float32, as DALI does.

    Examples
    --------
    >>> nn_indices(4, 2, 0.0, 4.0, outer=False).tolist()
    [1, 3]
    """
    scale = (_f32(hi) - _f32(lo)) / _f32(out_len)
    if outer:
        steps = np.full(out_len, scale, dtype=_f32)
        steps[0] = _f32(lo) + _f32(0.5) * scale
        pos = np.cumsum(steps, dtype=_f32)
    else:
        pos = _f32(lo) + (np.arange(out_len, dtype=_f32) + _f32(0.5)) * scale
    return np.clip(np.floor(pos), 0, in_len - 1).astype(np.intp)


def axis_matrix(in_len: int, out_len: int, lo: float, hi: float, flt: Filter) -> np.ndarray:
    """Dense ``(out_len, in_len)`` float32 resampling matrix for one axis (used by torch).

    Examples
    --------
    >>> from headrace.ops._resize_params import AxisFilter
    >>> axis_matrix(2, 1, 0.0, 2.0, AxisFilter("triangular", 2.0)).tolist()
    [[0.5, 0.5]]
    """
    mat = np.zeros((out_len, in_len), dtype=_f32)
    rows = np.arange(out_len)
    if flt.kind == "nn":
        mat[rows, nn_indices(in_len, out_len, lo, hi, outer=False)] = 1
        return mat
    idx, coeffs = axis_weights(in_len, out_len, lo, hi, flt)
    for k in range(coeffs.shape[1]):
        np.add.at(mat, (rows, np.clip(idx + k, 0, in_len - 1)), coeffs[:, k])
    return mat


# ================================================================================================
# Filters (``backends/<backend>/filters.py``): border indices, noise fields, jitter offsets,
# grid masks and displacement points. The random ones are deterministic functions of a plan's
# ``seed`` (numpy PCG64), so the CPU and the torch kernels produce identical values.
# ================================================================================================


def reflect101_indices(n: int, r: int) -> np.ndarray:
    """Source indices of a length-``n`` axis padded by ``r`` on both sides (reflect-101).

    A single sample mirrors onto itself.

    Examples
    --------
    >>> reflect101_indices(3, 2).tolist()
    [2, 1, 0, 1, 2, 1, 0]
    >>> reflect101_indices(1, 1).tolist()
    [0, 0, 0]
    """
    idx = np.arange(-r, n + r)
    if n == 1:
        return np.zeros_like(idx)
    period = 2 * (n - 1)
    idx = np.abs(idx) % period
    return np.where(idx >= n, period - idx, idx)


def noise_generator(seed: int) -> np.random.Generator:
    """The numpy generator that expands a sampler's ``seed``.

    Examples
    --------
    >>> float(noise_generator(1).random()) == float(noise_generator(1).random())
    True
    """
    return np.random.Generator(np.random.PCG64(seed))


def gaussian_field(seed: int, shape: Sequence[int], mean: float, stddev: float) -> np.ndarray:
    """The float32 noise that ``noise.gaussian`` adds for ``seed``.

    Examples
    --------
    >>> gaussian_field(3, (2,), 0.0, 0.0).tolist()
    [0.0, 0.0]
    """
    n = noise_generator(seed).standard_normal(tuple(shape), dtype=_F32)
    n *= _F32(stddev)
    n += _F32(mean)
    return n


def salt_pepper_masks(
    seed: int, shape: Sequence[int], prob: float, salt_vs_pepper: float, channel_axis: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean (salt, pepper) masks, broadcastable to ``shape``.

    Examples
    --------
    >>> s, p = salt_pepper_masks(0, (3, 4, 3), 1.0, 1.0, 2)
    >>> s.shape, bool(s.all()), bool(p.any())
    ((3, 4, 1), True, False)
    """
    draw_shape = list(shape)
    if channel_axis is not None:
        draw_shape[channel_axis] = 1
    u = noise_generator(seed).random((2, *draw_shape), dtype=_F32)
    hit = u[0] < prob
    salt = hit & (u[1] < salt_vs_pepper)
    return salt, hit & ~salt


def shot_field(seed: int, x: np.ndarray, factor: float) -> np.ndarray:
    """``Poisson(max(0, x / factor)) * factor`` as float32 (``x`` itself when factor is 0).

    Examples
    --------
    >>> shot_field(0, np.zeros(3, np.uint8), 10.0).tolist()
    [0.0, 0.0, 0.0]
    """
    if factor == 0:
        return x.astype(_F32)
    lam = np.maximum(x.astype(np.float64) / factor, 0.0)
    return (noise_generator(seed).poisson(lam) * factor).astype(_F32)


def jitter_offsets(seed: int, shape: Sequence[int], n_degree: int) -> tuple[np.ndarray, ...]:
    """Integer (dy, dx) offsets per pixel component for ``jitter``.

    Examples
    --------
    >>> dy, dx = jitter_offsets(0, (5, 5, 3), 2)
    >>> int(dy.min()) >= -1 and int(dx.max()) <= 1
    True
    """
    lo = -(n_degree >> 1)
    d = noise_generator(seed).integers(lo, lo + n_degree + 1, (2, *shape), dtype=np.int32)
    return d[0], d[1]


def jitter_indices(seed: int, shape: Sequence[int], n_degree: int) -> np.ndarray:
    """Flat source indices (H*W*C) of every output component of ``jitter``.

    Examples
    --------
    >>> jitter_indices(0, (2, 2, 1), 0).tolist()
    [0, 1, 2, 3]
    """
    h, w, c = shape
    dy, dx = jitter_offsets(seed, shape, n_degree)
    ys = np.clip(np.arange(h, dtype=np.int64)[:, None, None] + dy, 0, h - 1)
    xs = np.clip(np.arange(w, dtype=np.int64)[None, :, None] + dx, 0, w - 1)
    cs = np.arange(c, dtype=np.int64)[None, None, :]
    return ((ys * w + xs) * c + cs).ravel()


def grid_keep_mask(
    h: int, w: int, *, tile: int, ratio: float, angle: float, shift_x: float, shift_y: float
) -> np.ndarray:
    """Boolean (h, w) mask of the pixels ``grid_mask`` keeps (float32 math, as DALI).

    Examples
    --------
    >>> grid_keep_mask(1, 4, tile=2, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0).tolist()
    [[False, True, False, True]]
    """
    ca = _F32(math.cos(angle)) / _F32(tile)
    sa = _F32(math.sin(angle)) / _F32(tile)
    sx, sy = _F32(shift_x) / _F32(tile), _F32(shift_y) / _F32(tile)
    ys = np.arange(h, dtype=_F32)[:, None]
    xs = np.arange(w, dtype=_F32)[None, :]
    fx = (-sx + ys * -sa) + xs * ca
    fy = (-sy + ys * ca) + xs * sa
    r = _F32(ratio)
    return ((fx - np.floor(fx)) >= r) | ((fy - np.floor(fy)) >= r)


def water_points(h: int, w: int, wave: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Source points (x, y) of ``water`` for every output pixel (float32, DALI's formula).

    Examples
    --------
    >>> px, py = water_points(2, 3, (0.0, 0.0, 0.1, 0.1, 0.0, 0.0))
    >>> px.tolist()
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    ax, ay, fx, fy, phx, phy = (_F32(v) for v in wave)
    ys = np.arange(h, dtype=_F32)[:, None]
    xs = np.arange(w, dtype=_F32)[None, :]
    px = xs + ax * np.sin(fx * ys + phx)
    py = ys + ay * np.cos(fy * xs + phy)
    return np.broadcast_to(px, (h, w)), np.broadcast_to(py, (h, w))


def sphere_points(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Source points (x, y) of ``sphere`` for every output pixel (float32, DALI's formula).

    Examples
    --------
    >>> px, py = sphere_points(2, 2)
    >>> px.shape
    (2, 2)
    """
    mid_x, mid_y = _F32(w * 0.5), _F32(h * 0.5)
    d = _F32(int(max(mid_x, mid_y)))
    ty = np.arange(h, dtype=_F32)[:, None] + _F32(0.5) - mid_y
    tx = np.arange(w, dtype=_F32)[None, :] + _F32(0.5) - mid_x
    rad = np.sqrt(tx * tx + ty * ty) / d
    return mid_x + rad * tx, mid_y + rad * ty


# =================================================================================================
# Colour: BT.601 YCbCr coefficients (float32, as the kernels compute)
# =================================================================================================

# ITU-R BT.601 with 16..235 (luma) / 16..240 (chroma) ranges, scaled to 8 bits: the reference's
# exact float32 rows, shared with the decoders' conversion (pixels at x.5 round as it does).
Y601, CB601, CR601 = YCBCR_COEFFS
Y_SUM = _F32(219 / 255)
Y_INV = _F32(255 / 219)
R_CR = _F32(255 / 224 * 1.402)
G_CB = _F32(255 / 224 * 1.772 * 0.114 / 0.587)
G_CR = _F32(255 / 224 * 1.402 * 0.299 / 0.587)
B_CB = _F32(255 / 224 * 1.772)


# =================================================================================================
# Reductions
# =================================================================================================


def reduction_identity(kind: str, dt: np.dtype) -> int | float:
    """What ``min``/``max`` give where no element is reduced: the reference's start values
    (the type's maximum for ``min``; its lowest finite value, not -inf, for ``max``).

    Examples
    --------
    >>> reduction_identity("min", np.dtype("uint8")), reduction_identity("max", np.dtype("int8"))
    (255, -128)
    """
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        return int(ii.max if kind == "min" else ii.min)
    fi = np.finfo(dt)
    return float(fi.max if kind == "min" else fi.min)


def mean_scale(n: int) -> np.float32:
    """The factor ``float32(1 / n)`` the reference multiplies an integer accumulator by
    (inf for no element).

    Examples
    --------
    >>> float(mean_scale(4))
    0.25
    """
    return _F32(1) / _F32(n) if n else _F32(np.inf)


# =================================================================================================
# Image and experimental operators: border index maps, histogram equalisation tables
# =================================================================================================

#: Border modes of ``filter`` and the experimental warps/morphology, by their reference names.
BORDER_MODES = ("constant", "replicate", "reflect", "reflect_101", "wrap")


def map_border(idx: np.ndarray, n: int, mode: str) -> np.ndarray:
    """Map integer source positions ``idx`` on a length-``n`` axis inside it by ``mode``.

    ``constant`` positions outside stay out of range (the caller masks them); ``replicate``
    clamps; ``reflect`` mirrors with the edge repeated (``cba|abc``); ``reflect_101`` without
    (``cb|abc``); ``wrap`` is periodic.

    Examples
    --------
    >>> i = np.arange(-3, 6)
    >>> map_border(i, 3, "reflect").tolist(), map_border(i, 3, "reflect_101").tolist()
    ([2, 1, 0, 0, 1, 2, 2, 1, 0], [1, 2, 1, 0, 1, 2, 1, 0, 1])
    >>> map_border(i, 3, "wrap").tolist(), map_border(i, 3, "replicate").tolist()
    ([0, 1, 2, 0, 1, 2, 0, 1, 2], [0, 0, 0, 0, 1, 2, 2, 2, 2])
    """
    if mode == "constant":
        return idx
    if mode == "replicate" or n == 1:
        return np.clip(idx, 0, n - 1)
    if mode == "wrap":
        return idx % n
    if mode == "reflect":
        m = idx % (2 * n)
        return np.where(m >= n, 2 * n - 1 - m, m)
    period = 2 * (n - 1)  # reflect_101
    m = np.abs(idx) % period
    return np.where(m >= n, period - m, m)


def padded_indices(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source indices of a length-``n`` axis padded by ``before``/``after`` (not ``constant``).

    Examples
    --------
    >>> padded_indices(3, 2, 1, "replicate").tolist()
    [0, 0, 0, 1, 2, 2]
    """
    return map_border(np.arange(-before, n + after), n, mode)


def equalize_lut(hist: np.ndarray) -> np.ndarray:
    """OpenCV's ``equalizeHist`` table for one 256-bin histogram (uint8).

    The first occupied bin maps to 0; bin ``j`` after it to ``round(cdf'(j) * 255 / (N - h0))``
    in float32 (``cdf'`` leaves out the first occupied bin); a one-valued image is unchanged.

    Examples
    --------
    >>> h = np.zeros(256, np.int64); h[[10, 20, 30]] = 1
    >>> lut = equalize_lut(h); lut[10], lut[20], lut[30]
    (np.uint8(0), np.uint8(128), np.uint8(255))
    """
    hist = np.asarray(hist, np.int64)
    nz = np.flatnonzero(hist)
    if nz.size == 0:
        return np.arange(256, dtype=np.uint8)
    i = int(nz[0])
    total = int(hist.sum())
    if hist[i] == total:
        return np.full(256, i, np.uint8)
    scale = _F32(255.0 / (total - hist[i]))
    cdf = np.cumsum(hist) - hist[: i + 1].sum()
    lut = np.rint(cdf.astype(_F32) * scale)
    lut[: i + 1] = 0
    return np.clip(lut, 0, 255).astype(np.uint8)


# =================================================================================================
# Coordinates: coord_flip and coord_transform
# =================================================================================================


def coord_flip_centers(ndim: int, layout: str, a: dict) -> np.ndarray:  # type: ignore[type-arg]
    """Per component of ``coord_flip``'s points: the flip center, or NaN when not flipped.

    >>> coord_flip_centers(2, "", {"flip_x": 1, "flip_y": 0, "center_x": 0.5}).tolist()
    [0.5, nan]
    """
    lay = layout or "xyz"[:ndim]
    if len(lay) != ndim or set(lay) - set("xyz") or len(set(lay)) != len(lay):
        raise InvalidArgumentError(
            f"layout {layout!r} must name each of the {ndim} coordinates once with x, y or z."
        )
    return np.array([_F32(a[f"center_{c}"]) if a[f"flip_{c}"] else np.nan for c in lay], np.float32)


def affine_mt(a: dict, n: int) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[type-arg]
    """``coord_transform``'s float32 matrix ``M`` (m x n) and vector ``T`` (m) for ``n``-vectors.

    >>> m, t = affine_mt({"M": None, "T": None, "MT": np.float32([1, 2, 3, 4, 5, 6])}, 2)
    >>> m.tolist(), t.tolist()
    ([[1.0, 2.0], [4.0, 5.0]], [3.0, 6.0])
    """
    M, T, MT = a["M"], a["T"], a["MT"]
    if MT is not None:
        if M is not None or T is not None:
            raise InvalidArgumentError("argument 'MT' excludes the arguments 'M' and 'T'.")
        mt = np.asarray(MT, np.float32)
        if mt.size == 1:
            return np.eye(n, dtype=np.float32) * mt.ravel()[0], np.zeros(n, np.float32)
        if mt.size % (n + 1):
            raise InvalidArgumentError(
                f"argument 'MT' has {mt.size} elements; it needs m x {n + 1} for {n}-vectors."
            )
        mt = mt.reshape(-1, n + 1)
        return np.ascontiguousarray(mt[:, :n]), np.ascontiguousarray(mt[:, n])
    if M is None:
        m = np.eye(n, dtype=np.float32)
    else:
        m = np.asarray(M, np.float32)
        if m.size == 1:
            m = np.eye(n, dtype=np.float32) * m.ravel()[0]
        elif m.size % n:
            raise InvalidArgumentError(
                f"argument 'M' has {m.size} elements; it needs m x {n} for {n}-vectors."
            )
        else:
            m = m.reshape(-1, n)
    rows = m.shape[0]
    if T is None:
        t = np.zeros(rows, np.float32)
    else:
        t = np.asarray(T, np.float32).ravel()
        if t.size == 1:
            t = np.full(rows, t[0], np.float32)
        elif t.size != rows:
            raise InvalidArgumentError(
                f"argument 'T' has {t.size} elements; the matrix M has {rows} rows."
            )
    return m, t


def check_coord_input(
    op: str, shape: tuple[int, ...], dt: np.dtype, out_dt: np.dtype | None
) -> None:
    """The input checks of ``coord_flip`` (``out_dt`` None) and ``coord_transform``."""
    if op == "coord_flip":
        if dt != np.float32:
            raise InvalidTypeError(f"{op}: the points must be float32, got {dt}.")
        if len(shape) != 2 or shape[1] not in (1, 2, 3):
            raise ShapeError(
                f"{op}: the points must have shape (N, D) with D of 1, 2 or 3: {shape}."
            )
        return
    if len(shape) < 2:
        raise ShapeError(f"{op}: the input needs at least 2 dims (..., vector), got shape {shape}.")
    if out_dt is not None and out_dt not in (np.dtype(np.float32), dt):
        raise InvalidArgumentError(
            f"{op}: argument 'dtype' must be float32 or the input's type ({dt}), got {out_dt}."
        )


def nonsilent_bounds(
    power: np.ndarray, length: int, window: int, cutoff_db: float, reference_power: float
) -> tuple[int, int]:
    """``(begin, length)`` of the non-silent region from the mean power of each window
    (``power[j]``: samples ``j .. j + window - 1``): the windows whose power is at least
    ``reference * 10 ** (cutoff_db / 10)`` (reference 0: the largest power) span it.

    Examples
    --------
    >>> nonsilent_bounds(np.array([0.0, 1.0, 0.5, 0.0]), 7, 4, -6.0, 0.0)
    (1, 5)
    """
    if length == 0 or power.size == 0:
        return 0, 0
    ref = float(power.max()) if reference_power == 0 else reference_power
    above = power >= ref * 10.0 ** (cutoff_db / 10.0)
    begin = int(above.argmax())  # (boolean argmax stops at the first True)
    if not above[begin]:
        return 0, 0
    last = above.size - 1 - int(above[::-1].argmax())
    return begin, min(last + window, length) - begin


def uniform_float32_plan(xs: Sequence[np.ndarray], plans: Sequence[Any]) -> dict[str, Any] | None:
    """The plan arguments shared by every sample when the samples are float32 arrays of one
    shape planned by one (cached) plan — what a whole-batch kernel on the stacked samples needs
    — else None.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> p = SimpleNamespace(kwargs={"k": 1})
    >>> uniform_float32_plan([np.zeros(2, np.float32)] * 2, [p, p])
    {'k': 1}
    >>> uniform_float32_plan([np.zeros(2, np.float32), np.zeros(3, np.float32)], [p, p]) is None
    True
    """
    kw = plans[0].kwargs
    x0 = xs[0]
    if x0.dtype != np.float32 or any(plans[i].kwargs is not kw for i in range(1, len(plans))):
        return None
    if any(x.shape != x0.shape or x.dtype != np.float32 for x in xs[1:]):
        return None
    return kw  # type: ignore[no-any-return]


def parallel_parts(n: int, fn: Callable[[slice], object], min_part: int = 4) -> None:
    """``fn(part)`` for contiguous parts of ``range(n)`` (as slices), one per worker thread of
    the running call's context (fewer when a part would hold under ``min_part`` items), in parallel:
    for whole-batch kernels made of a few large array calls, which release the GIL.

    Examples
    --------
    >>> seen = []
    >>> parallel_parts(10, lambda part: seen.append((part.start, part.stop)), min_part=5)
    >>> sorted(seen) in ([(0, 10)], [(0, 5), (5, 10)])
    True
    """
    ctx = calling_context()
    k = max(1, min(ctx.num_threads, n // max(1, min_part)))
    bounds = [n * i // k for i in range(k + 1)]
    ctx.parallel_map(fn, [slice(bounds[i], bounds[i + 1]) for i in range(k)])


def rows_of_one_array(xs: Sequence[np.ndarray]) -> np.ndarray | None:
    """The ``(N, ...)`` C-contiguous array whose rows the samples are (in order), or None: a
    dense batch's samples, which a whole-batch kernel can read in place.

    Examples
    --------
    >>> a = np.zeros((3, 4), np.float32)
    >>> rows_of_one_array(list(a)) is a, rows_of_one_array([a[0], a[2]]) is None
    (True, True)
    """
    base = xs[0].base
    if not isinstance(base, np.ndarray) or base.shape != (len(xs), *xs[0].shape):
        return None
    if base.dtype != xs[0].dtype or not base.flags.c_contiguous:
        return None
    start, step, strides = base.__array_interface__["data"][0], base.strides[0], base.strides[1:]
    for i, x in enumerate(xs):
        if x.base is not base or x.strides != strides:
            return None
        if x.__array_interface__["data"][0] != start + i * step:
            return None
    return base


def check_audio(shape: Sequence[int], dtype: Any, op: str) -> None:
    """Refuse samples that are not 1-D numeric signals."""
    if len(shape) != 1:
        raise ShapeError(f"{op}: expected 1-D audio, got shape {tuple(shape)}.")
    if np.dtype(str(dtype).replace("torch.", "")).kind not in "iuf":
        raise InvalidTypeError(f"{op}: expected numeric audio, got {dtype}.")


# Audio: the windowed-sinc resampler (``audio_resample``, ``decoders.audio``, ``readers.NemoAsr``)
# =================================================================================================


def resampling_lobes(quality: float) -> int:
    """Sinc lobes on each side of the resampling window for ``quality`` in [0, 100].

    The reference's documented mapping: 0 gives 3 lobes, 50 gives 16, 100 gives 64.

    Examples
    --------
    >>> [resampling_lobes(q) for q in (0, 50, 100)]
    [3, 16, 64]
    """
    return math.floor(0.007 * quality * quality - 0.09 * quality + 3 + 0.5)  # half away from 0


def resampled_length(n_in: int, in_rate: float, out_rate: float) -> int:
    """Length of ``n_in`` samples at ``in_rate`` resampled to ``out_rate``: ``ceil(n * out / in)``.

    Examples
    --------
    >>> resampled_length(16000, 16000, 22050), resampled_length(16000, 1.0, float(np.float32(1.37)))
    (22050, 21921)
    """
    return math.ceil(n_in * out_rate / in_rate)


class AudioConversion(NamedTuple):
    """How ``audio_resample`` converts between sample types (see :func:`audio_conversion`).

    ``pre``, when not ``None``, is ``(a, b)``: the input becomes ``x * a + b`` (float) before it
    is resampled; the resampled values are then multiplied by ``scale``, rounded and saturated.
    """

    pre: tuple[float, float] | None
    scale: float


def audio_conversion(in_dtype: np.dtype, out_dtype: np.dtype) -> AudioConversion:
    """The conversion of resampled audio from ``in_dtype`` to ``out_dtype``.

    The same type keeps its values (no conversion at all). Otherwise the values are normalized
    to the dynamic range of each type, read as ``[-1, 1]`` (the reference's documented rule):
    a signed integer ``v`` is ``v / max``, an unsigned one ``2 * v / max - 1`` (half of its
    range is 0) and a float is itself; a signed target gets ``v * max``, an unsigned one
    ``(v + 1) * max / 2`` (float -> uint8: -1 -> 0, -0.5 -> 63.75 -> 64, 0 -> 127.5 -> 128,
    1 -> 255), rounded half away from zero and saturated.

    Where an unsigned type takes part, the input is converted to the output's scale (unrounded)
    *before* it is resampled, as the reference does (this matters at the ends, where the
    signal is padded with zeros, and in the ringing of the filter: an unsigned output is
    resampled uncentred, unsigned input for a signed or float output centred). Between signed
    and float types the resampled values are scaled instead (the same: the map is linear).

    Parameters
    ----------
    in_dtype, out_dtype : numpy.dtype
        The input's and the output's sample type (integer or float).

    Returns
    -------
    AudioConversion
        ``pre``: the ``(a, b)`` of ``x * a + b`` where an unsigned type takes part, else
        ``None``; ``scale``: the factor applied to the resampled values.

    Examples
    --------
    >>> audio_conversion(np.dtype(np.int16), np.dtype(np.float32)).scale == 1 / 32767
    True
    >>> audio_conversion(np.dtype(np.float32), np.dtype(np.uint8))
    AudioConversion(pre=(127.5, 127.5), scale=1.0)
    >>> audio_conversion(np.dtype(np.uint16), np.dtype(np.float32)).pre == (2 / 65535, -1.0)
    True
    >>> audio_conversion(np.dtype(np.uint8), np.dtype(np.uint16))
    AudioConversion(pre=(257.0, 0.0), scale=1.0)
    """
    i_int = np.issubdtype(in_dtype, np.integer)
    o_int = np.issubdtype(out_dtype, np.integer)
    if in_dtype == out_dtype or (not i_int and not o_int):
        return AudioConversion(None, 1.0)
    i_uns = np.issubdtype(in_dtype, np.unsignedinteger)
    o_uns = np.issubdtype(out_dtype, np.unsignedinteger)
    i_max = float(np.iinfo(in_dtype).max) if i_int else 1.0
    o_max = float(np.iinfo(out_dtype).max) if o_int else 1.0
    if not i_uns and not o_uns:  # signed or float: scaled after resampling
        return AudioConversion(None, o_max / i_max)
    a, b = (2.0 / i_max, -1.0) if i_uns else (1.0 / i_max, 0.0)  # x * a + b is in [-1, 1]
    if o_uns:  # to (v + 1) * max / 2
        h = o_max / 2
        return AudioConversion((a * h, (b + 1.0) * h), 1.0)
    return AudioConversion((a * o_max, b * o_max), 1.0)


# Boxes
# =================================================================================================


def check_encoder_args(v: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(anchors [M, 4], means [4], stds [4])`` of a ``box_encoder`` call, checked."""
    anchors = np.asarray(v["anchors"], _F32).reshape(-1)
    if anchors.size == 0 or anchors.size % 4:
        raise InvalidArgumentError(
            f"box_encoder: anchors must hold 4 numbers (ltrb) per anchor, got {anchors.size}."
        )
    if not 0 <= v["criteria"] <= 1:
        raise InvalidArgumentError(f"box_encoder: criteria must be in [0, 1], got {v['criteria']}.")
    means = np.asarray(v["means"], _F32).reshape(-1)
    stds = np.asarray(v["stds"], _F32).reshape(-1)
    if means.size != 4 or stds.size != 4:
        raise InvalidArgumentError("box_encoder: means and stds need 4 values each.")
    if (stds == 0).any():
        raise InvalidArgumentError("box_encoder: stds must not be 0.")
    return anchors.reshape(-1, 4), means, stds


# =================================================================================================
# multi_paste: where each pasted region comes from and goes
# =================================================================================================

#: One pasted region: (input index, sample index, in_y, in_x, h, w, out_y, out_x).
PasteRegion = tuple[int, int, int, int, int, int, int, int]


def _paste_pairs(a: dict[str, Any], name: str, n: int) -> np.ndarray | None:
    """The ``[n, 2]`` (H, W) values of the per-region argument ``name`` (``None``: not given)."""
    v = a.get(name)
    if v is None:
        return None
    arr = np.asarray(v)
    if arr.size != 2 * n:
        raise InvalidArgumentError(
            f"multi_paste: {name} needs {n} (H, W) pairs, one per pasted region, got shape "
            f"{list(arr.shape)}."
        )
    return arr.reshape(n, 2)


def _paste_arg(
    a: dict[str, Any], name: str, n: int, extents: list[tuple[int, int]], ceil: bool
) -> np.ndarray | None:
    """Absolute (H, W) per region from ``name`` or ``name_rel`` (relative to ``extents``:
    starts round down, sizes up, in float32 as the reference computes them)."""
    absolute = _paste_pairs(a, name, n)
    rel = _paste_pairs(a, name + "_rel", n)
    if absolute is not None and rel is not None:
        raise InvalidArgumentError(f"multi_paste: give {name} or {name}_rel, not both.")
    if absolute is not None:
        return absolute.astype(np.int64)
    if rel is None:
        return None
    scaled = rel.astype(_f32) * np.asarray(extents, _f32).reshape(n, 2)
    return (np.ceil(scaled) if ceil else np.floor(scaled)).astype(np.int64)


def multi_paste_regions(
    a: dict[str, Any],
    sources: list[tuple[int, int]],
    src_shapes: list[tuple[int, ...]],
    default_hw: tuple[int, int] | None,
) -> tuple[tuple[int, int], list[PasteRegion]]:
    """The canvas (H, W) of one output sample of ``multi_paste`` and its regions, in paste order.

    ``sources`` are the (input, sample) pairs pasted, ``src_shapes`` their HWC shapes,
    ``default_hw`` the canvas when ``output_size`` is not given (the uniform input shape).

    Examples
    --------
    >>> a = {"output_size": [4, 4], "in_anchors": [[1, 0]], "shapes": [[2, 2]],
    ...      "out_anchors": [[2, 1]]}
    >>> multi_paste_regions(a, [(0, 0)], [(3, 3, 1)], None)
    ((4, 4), [(0, 0, 1, 0, 2, 2, 2, 1)])
    """
    n = len(sources)
    if a.get("output_size") is not None:
        size = np.asarray(a["output_size"]).reshape(-1)
        if size.size != 2 or (size < 0).any():
            raise InvalidArgumentError(
                f"multi_paste: output_size must be two non-negative extents (H, W), got "
                f"{size.tolist()}."
            )
        out_hw = (int(size[0]), int(size[1]))
    elif default_hw is not None:
        out_hw = default_hw
    else:
        raise InvalidArgumentError(
            "multi_paste: the input samples differ in shape; give output_size (H, W)."
        )
    in_hw = [(int(s[0]), int(s[1])) for s in src_shapes]
    in_anchor = _paste_arg(a, "in_anchors", n, in_hw, ceil=False)
    in_anchor = np.zeros((n, 2), np.int64) if in_anchor is None else in_anchor
    shape = _paste_arg(a, "shapes", n, in_hw, ceil=True)
    if shape is None:
        shape = np.asarray(in_hw, np.int64).reshape(n, 2) - in_anchor
    out_anchor = _paste_arg(a, "out_anchors", n, [out_hw] * n, ceil=False)
    out_anchor = np.zeros((n, 2), np.int64) if out_anchor is None else out_anchor
    regions = []
    for r, (k, j) in enumerate(sources):
        (iy, ix), (h, w), (oy, ox) = in_anchor[r], shape[r], out_anchor[r]
        ih, iw = in_hw[r]
        if h < 0 or w < 0 or iy < 0 or ix < 0 or iy + h > ih or ix + w > iw:
            raise InvalidArgumentError(
                f"multi_paste: region {r} (anchor {[int(iy), int(ix)]}, shape "
                f"{[int(h), int(w)]}) does not lie inside its source sample of shape "
                f"{list(src_shapes[r])}."
            )
        if oy < 0 or ox < 0 or oy + h > out_hw[0] or ox + w > out_hw[1]:
            raise InvalidArgumentError(
                f"multi_paste: region {r} pasted at {[int(oy), int(ox)]} with shape "
                f"{[int(h), int(w)]} does not fit the output canvas {list(out_hw)}."
            )
        regions.append((k, j, int(iy), int(ix), int(h), int(w), int(oy), int(ox)))
    return out_hw, regions


def box_fill(
    fill: np.ndarray,
    lo: Sequence[int],
    hi: Sequence[int],
    channel_axis: int | None,
    shape: Sequence[int],
) -> np.ndarray:
    """The per-channel fill values of a box that covers only some channels (``erase`` over the
    channel axis): the entries of those channels, as the reference.

    Examples
    --------
    >>> box_fill(np.array([1.0, 2, 3]), (1, 0), (2, 2), 1, (3, 3)).tolist()
    [1.0, 2.0]
    """
    if channel_axis is None or fill.size <= 1 or fill.size != shape[channel_axis]:
        return fill
    return fill[lo[channel_axis] : hi[channel_axis]]
