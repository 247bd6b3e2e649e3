"""NumPy kernels of the speech features (``ops/speech.py``).

The pixel kernels take the plans of ``ops/_speech_params.py``: the window, FFT size and framing
of ``spectrogram``, the matrices of ``mel_filter_bank`` and ``mfcc`` (one kernel,
``matrix_along_axis``). The spectrogram's FFTs are one ``cv2.dft`` per signal over its frames
(measured on 401 frames of 512 points, one thread: 117 us against 248 us for ``scipy.fft``'s
pocketfft and ~390 us for ``numpy.fft``; the same float32 accuracy, max error 2e-7 of the peak
power against a float64 FFT; the GIL released); ``power_spectrum`` runs the same transform
with its axis moved last.

Examples
--------
>>> preemphasis_filter(np.array([1.0, 2.0, 4.0], np.float32), None, coeff=0.5, border="zero",
...                    dtype=np.dtype("float32")).tolist()
[1.0, 1.5, 3.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.saturate import saturate
from headrace._dispatch.args import has_per_sample, sample_args
from headrace.backends.shared.common import (
    check_audio,
    nonsilent_bounds,
    parallel_parts,
    rows_of_one_array,
    uniform_float32_plan,
)

_F32 = np.float32


def preemphasis_filter(
    x: np.ndarray, layout: str | None, *, coeff: float, border: str, dtype: np.dtype
) -> np.ndarray:
    """``y[t] = x[t] - coeff * x[t - 1]`` in float32; ``x[-1]`` is 0, ``x[0]`` or ``x[1]``."""
    v = x.astype(_F32, copy=False)
    out = np.empty(v.shape, _F32)
    if v.size:
        c = _F32(coeff)
        np.multiply(v[:-1], c, out=out[1:])
        np.subtract(v[1:], out[1:], out=out[1:])
        v0 = v[0]
        if border == "zero":
            out[0] = v0
        else:  # x[-1] is x[0] ("clamp") or x[1] ("reflect")
            out[0] = v0 - c * (v[1] if border == "reflect" and v.size > 1 else v0)
    return out if np.dtype(dtype) == _F32 else saturate(out, np.dtype(dtype))


def _padded(v: np.ndarray, pad: int, reflect: bool) -> np.ndarray:
    """``v`` with ``pad`` samples mirrored (``reflect``, without repeating the edge) or zeros on
    both sides; one ``concatenate`` in the common case of a signal longer than ``pad``."""
    if not pad:
        return v
    if reflect and v.size > pad:
        return np.concatenate((v[pad:0:-1], v, v[-2 : -pad - 2 : -1]))
    return np.pad(v, pad, mode="reflect" if reflect and v.size > 1 else "constant")


def _frames(x: np.ndarray, window: np.ndarray, step: int, frames: int, pad: int,
            reflect: bool, width: int | None = None) -> np.ndarray:  # fmt: skip
    """``(frames, width)`` windowed frames of the 1-D signal ``x``, zero beyond the window
    (``width`` defaults to the window's length)."""
    n = window.size
    width = n if width is None else width
    buf = np.empty((frames, width), _F32)
    if frames == 0:
        return buf
    v = np.ascontiguousarray(_padded(x.astype(_F32, copy=False), pad, reflect))
    need = (frames - 1) * step + n
    if v.size < need:
        v = np.concatenate((v, np.zeros(need - v.size, _F32)))
    view = np.ndarray((frames, n), _F32, buffer=v, strides=(step * 4, 4))
    np.multiply(view, window, out=buf[:, :n])
    buf[:, n:] = 0
    return buf


def _ccs_power(c: np.ndarray, nfft: int, power: int, transpose: bool,
               dest: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """``|X| ** power`` (1 or 2) of rows transformed by ``cv2.dft(..., DFT_ROWS)``: each row
    holds OpenCV's packed real spectrum ``Re0, Re1, Im1, Re2, Im2, ...`` (and ``Re(n/2)`` last
    for an even ``n``). ``(rows, n // 2 + 1)``, or its transpose ``(n // 2 + 1, rows)``, which
    is computed from the transposed spectrum so that every step reads whole rows. ``c`` may be
    overwritten; ``dest``: where the result goes when it has its shape (a dense batch's sample)."""
    bins = nfft // 2 + 1
    pairs = (nfft - 1) // 2  # bins with both a real and an imaginary part
    rows_first = not (transpose and c.size)
    if not rows_first:
        c = cv2.transpose(c)  # (nfft, rows): real and imaginary parts are whole rows
    np.square(c, out=c)
    shape = (c.shape[0], bins) if rows_first else (bins, c.shape[1])
    usable = dest is not None and dest.shape == shape and not (transpose and rows_first)
    out = dest if usable else np.empty(shape, _F32)
    cb, ob = (c.T, out.T) if rows_first else (c, out)  # bins first, in memory order either way
    ob[0] = cb[0]
    if pairs:
        np.add(cb[1 : 2 * pairs : 2], cb[2 : 2 * pairs + 1 : 2], out=ob[1 : pairs + 1])
    if nfft % 2 == 0 and nfft > 1:
        ob[bins - 1] = cb[nfft - 1]
    if power == 1:
        np.sqrt(out, out=out)
    return np.ascontiguousarray(out.T if transpose and rows_first else out)


def spectrogram(
    x: np.ndarray,
    layout: str | None,
    *,
    window: np.ndarray,
    nfft: int,
    step: int,
    frames: int,
    pad: int,
    reflect: bool,
    power: int,
    ft: bool,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The STFT power (or magnitude) of one signal, ``(bins, frames)`` or ``(frames, bins)``
    (written into ``out`` when given: a sample of the batch's dense array).

    The FFTs are one ``cv2.dft`` over the rows of frames (OpenCV's real transform: about twice
    pocketfft's speed in float32 on one thread, as accurate, and without the GIL)."""
    fr = _frames(x, window, step, frames, pad, reflect, width=max(nfft, window.size))
    rows = fr[:, :nfft]  # (the frames' buffer takes the transform: one large array less)
    c = cv2.dft(rows, dst=rows if rows.flags.c_contiguous else None, flags=cv2.DFT_ROWS)
    res = _ccs_power(c, nfft, power, transpose=ft, dest=out)
    if out is not None and res is not out:
        out[...] = res
        return out
    return res


def power_spectrum(
    x: np.ndarray, layout: str | None, *, axis: int, nfft: int, power: int
) -> np.ndarray:
    """``|rfft(x, nfft)| ** power`` along ``axis`` (cut or zero-padded to ``nfft``): one
    ``cv2.dft`` over the rows of ``x`` with that axis last (see :func:`spectrogram`)."""
    v = np.moveaxis(x.astype(_F32, copy=False), axis, -1)
    lead, length = v.shape[:-1], v.shape[-1]
    rows = np.zeros((math.prod(lead), nfft), _F32)
    n = min(length, nfft)
    if rows.size and n:
        rows[:, :n] = v.reshape(-1, length)[:, :n]
    c = cv2.dft(rows, flags=cv2.DFT_ROWS) if rows.size else rows
    out = _ccs_power(c, nfft, power, transpose=False).reshape(*lead, nfft // 2 + 1)
    return np.ascontiguousarray(np.moveaxis(out, -1, axis))


def matrix_along_axis(
    x: np.ndarray,
    layout: str | None,
    *,
    matrix: np.ndarray,
    axis: int,
    blocks: tuple[tuple[int, int, int, int], ...] | None = None,
) -> np.ndarray:
    """``matrix @ x`` along ``axis`` (mel filter banks, DCTs). ``blocks``: ``(row0, row1,
    col0, col1)`` with ``matrix[row0:row1]`` zero outside columns ``col0:col1`` (a filter
    bank's triangles, ``ops._speech_params.row_blocks``): one short product per block."""
    v = x.astype(_F32, copy=False)
    if blocks is not None:
        src = v if axis == 0 else np.moveaxis(v, axis, 0)
        flat = src.reshape(src.shape[0], -1)
        out = np.empty((matrix.shape[0], flat.shape[1]), _F32)
        for r0, r1, c0, c1 in blocks:
            if c1 > c0:
                np.matmul(matrix[r0:r1, c0:c1], flat[c0:c1], out=out[r0:r1])
            else:
                out[r0:r1] = 0
        out = out.reshape(matrix.shape[0], *src.shape[1:])
        return out if axis == 0 else np.ascontiguousarray(np.moveaxis(out, 0, axis))
    if axis == 0:
        return np.ascontiguousarray(np.tensordot(matrix, v, axes=(1, 0)))
    if axis == v.ndim - 1:
        return np.ascontiguousarray(v @ matrix.T)
    out = np.tensordot(matrix, v, axes=(1, axis))
    return np.ascontiguousarray(np.moveaxis(out, 0, axis))


def to_decibels(
    x: np.ndarray, layout: str | None, *, multiplier: float, reference: float, min_ratio: float
) -> np.ndarray:
    """``multiplier * log10(max(min_ratio, x / reference))``; reference 0: the maximum."""
    v = x.astype(_F32, copy=False)
    ref = reference if reference != 0 else (float(np.maximum.reduce(v, None)) if v.size else 1.0)
    lo = _F32(min_ratio)
    if ref == 1:  # (x / 1 is x: one pass fewer)
        r = np.maximum(v, lo)
    else:
        # (a maximum of 0, a silent sample: every ratio is 0, so the output is the cutoff, as
        # the reference)
        r = np.divide(v, _F32(ref)) if ref != 0 else np.zeros_like(v)
        np.maximum(r, lo, out=r)
    if lo > 0:  # every value is positive (or NaN): log10 raises no warning
        np.log10(r, out=r)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            np.log10(r, out=r)
    r *= _F32(multiplier)
    return r


def matrix_along_axis_batched(
    xs: Sequence[np.ndarray], layout: str | None, plans: Sequence[Any]
) -> tuple[list[np.ndarray], np.ndarray] | None:
    """:func:`matrix_along_axis` (mel filter banks, DCTs) of float32 samples of one shape that
    are the rows of one dense array (a spectrogram's batch): each block product runs once per
    part of the batch, as one stacked ``numpy.matmul``, instead of once per sample (a handful of
    short calls per sample, which a second thread slowed down instead of sharing: 90 -> 120
    us per 64 x 401 mel spectrogram on 2 threads). The same products, so the same values.
    ``None`` (per-sample path) otherwise: stacking separate samples first would cost more than
    it saves."""
    kw = uniform_float32_plan(xs, plans)
    dense = rows_of_one_array(xs)
    if kw is None or dense is None or dense.ndim != 3:  # (2-D samples: a product per sample)
        return None
    matrix, axis = kw["matrix"].astype(_F32, copy=False), kw["axis"]
    blocks = kw.get("blocks") or ((0, matrix.shape[0], 0, matrix.shape[1]),)
    shape = list(dense.shape)
    shape[axis + 1] = matrix.shape[0]
    out = np.empty(shape, _F32)
    first = axis == 0  # (bands, frames): matrix @ x; else (frames, bands): x @ matrix.T

    def part(rows: slice) -> None:  # (the parts run on the worker threads)
        src, dst = dense[rows], out[rows]
        for r0, r1, c0, c1 in blocks:
            if c1 <= c0:
                (dst[:, r0:r1] if first else dst[..., r0:r1])[...] = 0
            elif first:
                np.matmul(matrix[r0:r1, c0:c1], src[:, c0:c1], out=dst[:, r0:r1])
            else:  # as matrix_along_axis: matrix @ x^T into a (bands, frames) array, the
                # same BLAS call per sample, so the same bits whatever the BLAS kernel
                prod = np.matmul(matrix[r0:r1, c0:c1], src[..., c0:c1].transpose(0, 2, 1))
                dst[..., r0:r1] = prod.transpose(0, 2, 1)

    parallel_parts(len(xs), part)
    return list(out), out


def to_decibels_batched(
    xs: Sequence[np.ndarray], layout: str | None, plans: Sequence[Any]
) -> tuple[list[np.ndarray], np.ndarray] | None:
    """:func:`to_decibels` of float32 samples of one shape as whole-batch array calls on the
    stacked samples, each divided by its own reference (its maximum, by default): the same
    values, element by element. Per sample, a few short calls that a second thread slowed
    down. ``None`` (per-sample path) otherwise."""
    kw = uniform_float32_plan(xs, plans)
    x0 = xs[0]
    if kw is None or not x0.size:
        return None
    out = np.empty((len(xs), *x0.shape), _F32)
    dense = rows_of_one_array(xs)  # (a whole-batch kernel's output: read in place)

    def part(rows: slice) -> None:  # (the parts run on the worker threads)
        v = out[rows]
        if dense is None:
            np.stack(xs[rows], out=v)
        src = v if dense is None else dense[rows]
        n = len(v)
        if kw["reference"] != 0:
            refs = np.full(n, _F32(kw["reference"]), _F32)
        else:
            refs = np.maximum.reduce(src.reshape(n, -1), axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):  # (what one sample alone warns of)
            np.divide(src, refs.reshape(n, *(1,) * x0.ndim), out=v)
            v[refs == 0] = 0  # (a silent sample: the cutoff, as one sample alone gives)
            np.maximum(v, _F32(kw["min_ratio"]), out=v)
            np.log10(v, out=v)
        v *= _F32(kw["multiplier"])

    parallel_parts(len(xs), part)
    return list(out), out


def moving_power(x: np.ndarray, window: int) -> np.ndarray:
    """Mean of ``x**2`` over each window of ``window`` samples (one window when shorter).

    The running sums of the squares come from OpenCV's ``integral2`` (the squared sums, in
    float64, of the signal as one image row; other input types: ``integral`` of the float64
    squares): the same sequential float64 sums as ``numpy.cumsum`` of the squares, bit for bit,
    ~3x faster, with the GIL released (``cumsum`` into its own input holds it), and without a
    separate array of squares.
    """
    if x.size <= window:
        sq = np.square(x, dtype=np.float64)
        return np.array([sq.sum() / window]) if sq.size else sq
    if x.dtype in _INTEGRAL2_TYPES:
        c = cv2.integral2(x.reshape(1, -1), sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)[1][1]
    else:
        sq = np.square(x, dtype=np.float64)
        c = cv2.integral(sq.reshape(1, -1), sdepth=cv2.CV_64F)[1]  # 0, then the running sums
    out = c[window:] - c[:-window]
    return np.divide(out, window, out=out)


#: Input types whose squares OpenCV's ``integral2`` sums exactly in float64.
_INTEGRAL2_TYPES = {np.dtype(t) for t in (np.uint8, np.int16, np.uint16, np.float32, np.float64)}


def nonsilent_region(kc: Any, inputs: list[Batch], args: dict[str, Any]) -> tuple[Batch, Batch]:
    """``(begin, length)`` int32 scalars per sample (see ``ops.speech.nonsilent_region``)."""
    samples = inputs[0]._resolved()
    per = has_per_sample(args)

    def one(i: int) -> tuple[np.ndarray, np.ndarray]:
        a = sample_args(args, i) if per else args
        s = np.asarray(samples[i])
        check_audio(s.shape, s.dtype, "nonsilent_region")
        w = int(a["window_length"])
        b, n = nonsilent_bounds(moving_power(s, w), s.size, w, a["cutoff_db"],
                                a["reference_power"])  # fmt: skip
        return np.array(b, np.int32), np.array(n, np.int32)

    res = kc.map(one, chunked=True)  # one run of samples per thread: fewer hand-offs
    return (
        Batch._wrap([r[0] for r in res], _dt.int32, None, kc.device),
        Batch._wrap([r[1] for r in res], _dt.int32, None, kc.device),
    )
