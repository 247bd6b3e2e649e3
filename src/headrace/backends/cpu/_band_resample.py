"""Separable resampling of ``HWC`` images as banded matrix products (the GIL stays released).

Each axis is resampled by a matrix of DALI's own float32 coefficients
(:func:`~headrace.backends.shared.common.axis_weights`, clamped source indices folded in). The
matrix is banded, so it is stored as blocks of :data:`BLOCK` output rows, each with the window
of ``L`` input rows it reads: one axis is then one gather of those windows and one stacked
``numpy.matmul`` (BLAS ``sgemm``), both without the GIL. The height axis runs first, on the
source's own rows (gathered as they are, uint8 converted inside the product: whole rows stream
from memory, where transposing a freshly decoded image first cost ~5x more than transposing a
cached one); the width axis then runs on the transposed intermediate (``cv2.transpose``), so
every pass multiplies whole contiguous rows, and the (small, cached) result is transposed back.
A convex band (non-negative weights: the antialiased triangle, Gaussian) keeps uint8 results in
range, so they are rounded without a clamp. An image costs about eight native calls and no
per-pixel Python; the band matrices are cached per axis (:func:`axis_band`), so a new image
shape costs only the axis it does not share.

Accuracy (measured): against :func:`headrace.backends.cpu.resize._generic` (the exact numpy
resampler, same coefficients) 0-1 levels of uint8 difference (float summation order); against
DALI 2.4 on 64 of the 500x375 sample images (decoded by each library), ``resize_shorter=256``,
``size=(224, 224)`` and cubic / Lanczos-3 downscales: max abs diff 1, mean abs diff <= 3e-5.
Speed (one thread, 64 freshly decoded ~500x375 sample images to shorter side 256, so none is in
the cache): 0.62 ms per image, against 0.80 ms with the width axis first (same run); against
3.3 ms for the Pillow path it first replaced (Pillow's antialiased resampler plus its buffer
bridge). The GIL is held for the Python calls only.

Every ``sgemm`` is kept below OpenBLAS's threading threshold (``m * n * k <= 2**18``; larger
images are cut into column chunks), so that the library's own threads never stack on the
sample threads.

Examples
--------
>>> import numpy as np
>>> x = np.full((40, 60, 3), 7, np.uint8)
>>> out = band_resize(x, (20, 30), (0.0, 0.0), (40.0, 60.0),
...                   (("triangular", 4.0), ("triangular", 4.0)), np.dtype(np.uint8))
>>> out.shape, int(out.min()), int(out.max())
((20, 30, 3), 7, 7)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

import cv2
import numpy as np

from headrace._core.saturate import half, saturate
from headrace.backends.shared.common import axis_weights

__all__ = ["BLOCK", "axis_band", "band_resize", "band_ok"]

#: Output rows per band block (measured: 8 is the fastest of 4/8/16/32 on 500x375 images).
BLOCK = 8
#: OpenBLAS runs an sgemm single-threaded when ``m * n * k`` is at most this.
_SGEMM_SINGLE = 1 << 18
_MAX_CHANNELS = 4
#: Filters whose tables are non-negative: their coefficients are too, and each output's sum to
#: 1 (normalised, within float32 rounding) or 0, so uint8 images stay in range (``Band.convex``).
_CONVEX_KINDS = frozenset({"triangular", "gaussian"})
#: The reference's rounding of non-negative float32 values (halves up): ``trunc(v + _HALF)``.
_HALF = np.float32(half(np.dtype(np.float32)))


class _Axis(NamedTuple):
    kind: str
    support: float


class Band(NamedTuple):
    """One axis's resampling matrix as blocks: ``out[i*B + r] = weights[i, r] @ src[rows[i]]``.

    Attributes
    ----------
    weights : numpy.ndarray of float32, shape (blocks, BLOCK, L)
    rows : numpy.ndarray of intp, shape (blocks, L)
        The (in-range) source rows each block reads.
    out_len : int
        The axis's output length (the last block may hold unused rows).
    convex : bool
        Every weight is >= 0 and every output's weights sum to 1 (within float32 rounding) or 0:
        the antialiased triangle and the Gaussian. The outputs stay inside the input's range, so
        a uint8 result needs no clamping.
    """

    weights: np.ndarray
    rows: np.ndarray
    out_len: int
    convex: bool


@functools.lru_cache(maxsize=4096)
def axis_band(in_len: int, out_len: int, lo: float, hi: float, kind: str, support: float) -> Band:
    """The :class:`Band` resampling ``in_len`` samples onto ``out_len`` (region ``lo..hi``).

    Examples
    --------
    >>> b = axis_band(4, 2, 0.0, 4.0, "triangular", 2.0)
    >>> b.weights.shape[1:], b.weights[0, :2].tolist(), b.rows.tolist()
    ((8, 4), [[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]], [[0, 1, 2, 3]])
    """
    idx, coeffs = axis_weights(in_len, out_len, lo, hi, _Axis(kind, support))
    k = coeffs.shape[1]
    nb = -(-out_len // BLOCK)
    n = nb * BLOCK
    cols = idx.astype(np.intp)[:, None] + np.arange(k)
    np.maximum(cols, 0, out=cols)  # (two ufuncs: np.clip's wrapper costs more on small arrays)
    np.minimum(cols, in_len - 1, out=cols)
    if n > out_len:  # pad the last block with rows of zero weight reading the last window
        cols = np.concatenate([cols, np.repeat(cols[-1:], n - out_len, axis=0)])
        coeffs = np.concatenate([coeffs, np.zeros((n - out_len, k), np.float32)])
    # a row's taps increase (clamped, they stay sorted): its first and last are its window
    first = cols[:, 0].reshape(nb, BLOCK).min(axis=1)
    last = cols[:, -1].reshape(nb, BLOCK).max(axis=1)
    width = min(int((last - first).max()) + 1, in_len)
    start = np.minimum(first, in_len - width)  # (first >= 0)
    # each tap's place in its block's window, as a flat index of the (n, width) matrix; clamped
    # taps may share a source row: their weights add up (the reference repeats edge pixels)
    pos = cols - np.repeat(start, BLOCK)[:, None]
    pos += np.arange(0, n * width, width)[:, None]
    weights = np.bincount(pos.ravel(), coeffs.ravel(), n * width).astype(np.float32)
    weights = weights.reshape(nb, BLOCK, width)
    rows = start[:, None] + np.arange(width)
    weights.flags.writeable = False
    rows.flags.writeable = False
    return Band(weights, rows, out_len, kind in _CONVEX_KINDS)


def _apply(band: Band, src: np.ndarray) -> np.ndarray:
    """``band`` applied to the rows of the 2-D ``src`` (uint8 or float32): float32
    ``(blocks * BLOCK, N)``."""
    w, rows = band.weights, band.rows
    nb, b, width = w.shape
    cols = src.shape[1]
    step = max(1, _SGEMM_SINGLE // (b * width))
    # (``np.take`` gathers without the GIL; indexing ``src[rows]`` holds it throughout)
    if cols <= step:
        return np.matmul(w, np.take(src, rows, axis=0)).reshape(nb * b, cols)
    out = np.empty((nb, b, cols), np.float32)
    for c0 in range(0, cols, step):
        part = np.take(src[:, c0 : c0 + step], rows, axis=0)
        np.matmul(w, part, out=out[:, :, c0 : c0 + step])
    return out.reshape(nb * b, cols)


def band_ok(x: np.ndarray, filters: Sequence[object]) -> bool:
    """Whether resize takes this path for ``x`` (uint8 ``H x W x C``, C <= 4; float data
    keeps the numpy resampler, whose results equal the reference's bit for bit)."""
    return (
        x.ndim == 3
        and 1 <= x.shape[2] <= _MAX_CHANNELS
        and x.dtype == np.uint8  # float data keeps the numpy resampler's summation order
        and all(f.kind != "nn" for f in filters)  # type: ignore[attr-defined]
    )


def band_resize(
    x: np.ndarray,
    out_size: Sequence[int],
    lo: Sequence[float],
    hi: Sequence[float],
    filters: Sequence[tuple[str, float]] | Sequence[object],
    out_dtype: np.dtype,
    window: Sequence[int] | None = None,
) -> np.ndarray:
    """``x`` (uint8 or float32 ``H x W x C``, C <= 4) resampled to ``out_size = (Ho, Wo)`` from the
    region ``lo..hi`` (``(y, x)``; ``lo > hi`` mirrors) with per-axis ``filters`` (objects with
    ``kind`` and ``support``, or ``(kind, support)`` pairs), converted to ``out_dtype`` with the
    reference's rounding and saturation. ``window = (y, x, height, width)``: only that part of
    the output, with the same coefficients; the first pass then reads only the source columns
    the kept ones need, so BLAS multiplies each column in a call of another shape, which may
    change float32 results in the last bit. Rounded to uint8, that moves a value by 1 where
    it lies within float32 rounding of a half: seldom with OpenBLAS's kernels for Intel AVX-512;
    with those for AMD EPYC, 7-26 of the 9.6 million values of a batch of 64 in the eval chain
    on the sample images (measured). Computing windows in the whole's call shapes made them
    equal everywhere but took 21% off the eval pipeline's throughput (848 -> 668 img/s, 2
    threads, same run), so windows stay fast; a given program takes the same windows every run
    (4 runs of the eval chain: the same bits), so its results repeat.
    """
    h, w, c = x.shape
    ho, wo = int(out_size[0]), int(out_size[1])
    y0, x0, wh, ww = (0, 0, ho, wo) if window is None else (int(v) for v in window)
    fy, fx = (_Axis(*f) if isinstance(f, tuple) else f for f in filters)
    by = axis_band(h, ho, float(lo[0]), float(hi[0]), fy.kind, float(fy.support))  # type: ignore[attr-defined]
    bx = axis_band(w, wo, float(lo[1]), float(hi[1]), fx.kind, float(fx.support))  # type: ignore[attr-defined]
    by, oy = _part(by, y0, wh)
    bx, ox = _part(bx, x0, ww)
    # the source columns the kept output columns read (a window: ~2/3 of them for a centre crop
    # of a resize to the shorter side): the first pass resamples only those
    ends = bx.rows[(0, -1), :][:, (0, -1)]  # (each block's window is sorted; mirrored bands
    c0, c1 = int(ends.min()), int(ends.max()) + 1  # run right to left)
    src = x.reshape(h, w * c)
    if c0 > 0 or c1 < w:
        src = src[:, c0 * c : c1 * c]
        bx = Band(bx.weights, bx.rows - c0, bx.out_len, bx.convex)
    wk = c1 - c0
    # rows first, straight from the (uint8) source: whole rows are gathered, which streams from
    # memory, where a transpose of a freshly decoded image was ~5x slower than of a cached one
    t = _apply(by, src)[oy : oy + wh].reshape(wh, wk, c)
    t = cv2.transpose(t if c > 1 else t[:, :, 0])  # (W, Ho[, C]), still in the cache
    out = _apply(bx, t.reshape(wk, wh * c))[ox : ox + ww].reshape(ww, wh, c)  # (Wo, Ho, C)
    if out_dtype == np.float32:
        return _untranspose(out)
    if out_dtype == np.uint8 and x.dtype == np.uint8 and by.convex and bx.convex:
        # the values lie in [0, 255.3]: rounding needs no clamp (saturate's result, one pass less)
        out += _HALF
        return _untranspose(out.astype(np.uint8))
    return _untranspose(saturate(out, out_dtype, overwrite=True))


def _part(band: Band, start: int, length: int) -> tuple[Band, int]:
    """The blocks of ``band`` holding outputs ``start .. start + length - 1``, and where
    ``start`` falls in them (the whole band when that is all of it)."""
    if start == 0 and length == band.out_len:
        return band, 0
    b0, b1 = start // BLOCK, -(-(start + length) // BLOCK)
    part = Band(band.weights[b0:b1], band.rows[b0:b1], length, band.convex)
    return part, start - b0 * BLOCK


def _untranspose(t: np.ndarray) -> np.ndarray:
    """``(W, H, C)`` to ``(H, W, C)`` (one ``cv2.transpose``, without the GIL)."""
    w, h, c = t.shape
    if c == 1:
        return cv2.transpose(t[:, :, 0]).reshape(h, w, 1)
    return cv2.transpose(t)
