"""NumPy kernels of the speech features (``ops/speech.py``).

The pixel kernels take the plans of ``ops/_speech_params.py``: the window, FFT size and framing
of ``spectrogram``, the matrices of ``mel_filter_bank`` and ``mfcc`` (one kernel,
``matrix_along_axis``). FFTs run in float32 (``numpy.fft`` keeps single precision).

Examples
--------
>>> preemphasis_filter(np.array([1.0, 2.0, 4.0], np.float32), None, coeff=0.5, border="zero",
...                    dtype=np.dtype("float32")).tolist()
[1.0, 1.5, 3.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.saturate import saturate
from headrace._dispatch.args import sample_args
from headrace.backends.shared.common import check_audio, nonsilent_bounds

_F32 = np.float32


def preemphasis_filter(
    x: np.ndarray, layout: str | None, *, coeff: float, border: str, dtype: np.dtype
) -> np.ndarray:
    """``y[t] = x[t] - coeff * x[t - 1]`` in float32; ``x[-1]`` is 0, ``x[0]`` or ``x[1]``."""
    v = x.astype(_F32, copy=False)
    out = np.empty(v.shape, _F32)
    if v.size:
        c = _F32(coeff)
        np.subtract(v[1:], c * v[:-1], out=out[1:])
        first = {"zero": _F32(0), "clamp": v[0], "reflect": v[1] if v.size > 1 else v[0]}[border]
        out[0] = v[0] - c * first
    return out if np.dtype(dtype) == _F32 else saturate(out, np.dtype(dtype))


def _frames(x: np.ndarray, window: np.ndarray, step: int, frames: int, pad: int,
            reflect: bool) -> np.ndarray:  # fmt: skip
    """``(frames, window_length)`` windowed frames of the 1-D signal ``x``."""
    v = x.astype(_F32, copy=False)
    if pad:
        mode = "reflect" if reflect and v.size > 1 else "constant"
        v = np.pad(v, pad, mode=mode)
    n = window.size
    if frames == 0:
        return np.zeros((0, n), _F32)
    need = (frames - 1) * step + n
    if v.size < need:
        v = np.pad(v, (0, need - v.size))
    fr = np.lib.stride_tricks.sliding_window_view(v, n)[: need - n + 1 : step]
    return fr * window


def _power(spec: np.ndarray, power: int) -> np.ndarray:
    if power == 2:
        return (spec.real * spec.real + spec.imag * spec.imag).astype(_F32, copy=False)
    return np.abs(spec).astype(_F32, copy=False)


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
) -> np.ndarray:
    """The STFT power (or magnitude) of one signal, ``(bins, frames)`` or ``(frames, bins)``."""
    fr = _frames(x, window, step, frames, pad, reflect)
    s = _power(np.fft.rfft(fr, n=nfft, axis=1), power)
    return np.ascontiguousarray(s.T if ft else s)


def power_spectrum(
    x: np.ndarray, layout: str | None, *, axis: int, nfft: int, power: int
) -> np.ndarray:
    """``|rfft(x, nfft)| ** power`` along ``axis``."""
    s = np.fft.rfft(x.astype(_F32, copy=False), n=nfft, axis=axis)
    return np.ascontiguousarray(_power(s, power))


def matrix_along_axis(
    x: np.ndarray,
    layout: str | None,
    *,
    matrix: np.ndarray,
    axis: int,
    bands: tuple[tuple[int, int], ...] | None = None,
) -> np.ndarray:
    """``matrix @ x`` along ``axis`` (mel filter banks, DCTs). ``bands``: row ``j`` of the
    matrix is zero outside columns ``bands[j][0]:bands[j][1]`` (a filter bank's triangles), so
    each output row is a short product."""
    v = x.astype(_F32, copy=False)
    if bands is not None:
        src = np.moveaxis(v, axis, 0)
        flat = src.reshape(src.shape[0], -1)
        out = np.zeros((len(bands), flat.shape[1]), _F32)
        for j, (lo, hi) in enumerate(bands):
            if hi > lo:
                np.dot(matrix[j, lo:hi], flat[lo:hi], out=out[j])
        out = out.reshape(len(bands), *src.shape[1:])
        return np.ascontiguousarray(np.moveaxis(out, 0, axis))
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
    ref = reference if reference != 0 else (float(v.max()) if v.size else 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = v / _F32(ref) if ref != 0 else np.ones_like(v)
        out = _F32(multiplier) * np.log10(np.maximum(_F32(min_ratio), r))
    return out.astype(_F32, copy=False)


def moving_power(x: np.ndarray, window: int) -> np.ndarray:
    """Mean of ``x**2`` over each window of ``window`` samples (one window when shorter)."""
    sq = np.square(x.astype(np.float64))
    if sq.size <= window:
        return np.array([sq.sum() / window]) if sq.size else sq
    c = np.concatenate(([0.0], np.cumsum(sq)))
    return (c[window:] - c[:-window]) / window


def nonsilent_region(kc: Any, inputs: list[Batch], args: dict[str, Any]) -> tuple[Batch, Batch]:
    """``(begin, length)`` int32 scalars per sample (see ``ops.speech.nonsilent_region``)."""
    samples = inputs[0]._resolved()

    def one(i: int) -> tuple[np.ndarray, np.ndarray]:
        a = sample_args(args, i)
        s = np.asarray(samples[i])
        check_audio(s.shape, s.dtype, "nonsilent_region")
        w = int(a["window_length"])
        b, n = nonsilent_bounds(moving_power(s, w), s.size, w, a["cutoff_db"],
                                a["reference_power"])  # fmt: skip
        return np.array(b, np.int32), np.array(n, np.int32)

    res = kc.map(one)
    return (
        Batch._wrap([r[0] for r in res], _dt.int32, None, kc.device),
        Batch._wrap([r[1] for r in res], _dt.int32, None, kc.device),
    )
