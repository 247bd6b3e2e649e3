"""CPU kernels of ``audio_resample`` (numpy): each output sums ``2 * lobes`` samples of the
zero-padded signal (a sliding-window view gathered at the first taps) with the weights of
:func:`headrace.backends.shared.resampling.resampling_chunks`, a chunk of outputs at a time.

Examples
--------
>>> import numpy as np
>>> resample(np.ones(8, np.float32), 1.0, 2.0, 16, 3, np.dtype(np.float32)).shape
(16,)
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.saturate import saturate
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.common import audio_conversion
from headrace.backends.shared.resampling import (
    filter_bank,
    resampling_chunks,
    resampling_padding,
)

#: Up to this many lobes (quality <= 20) each tap is gathered and added on its own.
_FEW_LOBES = 4


def _resample_f32(
    f: np.ndarray, in_rate: float, out_rate: float, n_out: int, lobes: int
) -> np.ndarray:
    """float32 ``f`` (1-D, or time × channels) resampled to ``n_out`` float32 samples."""
    n_in = f.shape[0]
    cols = f.reshape(n_in, -1).T  # channels × time
    out = np.zeros((cols.shape[0], n_out), np.float32)
    if n_in == 0 or n_out == 0:
        return out.T.reshape(n_out, *f.shape[1:])
    left, right = resampling_padding(lobes)
    padded = np.zeros((cols.shape[0], n_in + left + right), np.float32)
    padded[:, left : left + n_in] = cols
    windows = [sliding_window_view(p, 2 * lobes) for p in padded]
    phases = _phases(in_rate, out_rate, lobes, n_out) if lobes > _FEW_LOBES else None
    if phases is not None:
        _polyphase(windows, phases, out)
    else:
        _chunked(windows, padded, out, n_in, in_rate, out_rate, lobes)
    if f.ndim == 1:
        return out[0]
    return np.ascontiguousarray(out.T).reshape(n_out, *f.shape[1:])


def _chunked(windows: list[np.ndarray], padded: np.ndarray, out: np.ndarray, n_in: int,
             in_rate: float, out_rate: float, lobes: int) -> None:  # fmt: skip
    """The outputs a chunk at a time, each from its gathered windows (or, with few lobes, one
    gather per tap)."""
    for s, e, first, w in resampling_chunks(n_in, out.shape[1], in_rate, out_rate, lobes):
        for c, win in enumerate(windows):
            if lobes > _FEW_LOBES:
                np.einsum("ot,ot->o", win[first], w, out=out[c, s:e])
            else:  # a few taps: one gather per tap is faster than gathering the windows
                acc = out[c, s:e]
                for t in range(2 * lobes):
                    acc += w[:, t] * padded[c, first + t]


class _Phases(NamedTuple):
    """Outputs ``j = q * n + r`` start at window ``first[r] + q * m`` with weights ``w[r]``."""

    n: int
    m: int
    first: np.ndarray
    w: np.ndarray


#: Rate ratios with at most this many phases (the outputs of one period) take :func:`_polyphase`.
_MAX_PHASES = 16


def _phases(in_rate: float, out_rate: float, lobes: int, n_out: int) -> _Phases | None:
    """The phases of a ratio whose period is short (2:1, 1:2, 3:2...), read off its filter bank
    and only where every period of the bank has the same first taps (shifted) and weights."""
    key = (in_rate, out_rate, lobes)
    if key in _PHASES:  # (a ratio whose periods differ is known too: None)
        return _PHASES[key]
    ratio = Fraction(in_rate) / Fraction(out_rate)
    m, n = ratio.numerator, ratio.denominator
    if n > _MAX_PHASES:
        return None
    bank = filter_bank(in_rate, out_rate, lobes, n_out)
    if bank is None or bank.rows % n or bank.step * n != bank.rows * m:
        return None
    first, w = bank.first.reshape(-1, n), bank.weights.reshape(-1, n, bank.weights.shape[1])
    shift = np.arange(first.shape[0])[:, None] * m
    same = np.array_equal(first - shift, np.broadcast_to(first[0], first.shape))
    phases = (
        _Phases(n, m, first[0].copy(), np.ascontiguousarray(w[0]))
        if same and (w == w[0]).all()
        else None
    )
    if len(_PHASES) >= 64:
        _PHASES.clear()
    _PHASES[key] = phases
    return phases


_PHASES: dict[tuple[float, float, int], _Phases | None] = {}


def _polyphase(windows: list[np.ndarray], ph: _Phases, out: np.ndarray) -> None:
    """Each phase's outputs as one matrix-vector product over a strided view of the windows
    (no gathered copy of them): a few GIL-free calls per signal instead of a gather and a
    product per chunk of outputs."""
    left = resampling_padding(ph.w.shape[1] // 2)[0]
    n_out = out.shape[1]
    for c, win in enumerate(windows):
        for r in range(min(ph.n, n_out)):
            count = len(range(r, n_out, ph.n))
            start = int(ph.first[r]) + left
            view = win[start : start + (count - 1) * ph.m + 1 : ph.m]
            out[c, r :: ph.n] = view @ ph.w[r]


def resample(
    x: np.ndarray, in_rate: float, out_rate: float, n_out: int, lobes: int, dtype: np.dtype
) -> np.ndarray:
    """``x`` (1-D, or time × channels) resampled to ``n_out`` samples of ``dtype``, converted
    by :func:`headrace.backends.shared.common.audio_conversion` (half an unsigned type's range
    is 0)."""
    conv = audio_conversion(x.dtype, dtype)
    if conv.pre is not None:  # to the output's scale first (in float64: exact for 32 bits)
        f = (x.astype(np.float64) * conv.pre[0] + conv.pre[1]).astype(np.float32)
    else:
        f = x if x.dtype == np.float32 else x.astype(np.float32)
    if in_rate == out_rate and n_out == x.shape[0]:
        out = f.copy() if f is x else f
    else:
        out = _resample_f32(f, in_rate, out_rate, n_out, lobes)
    if conv.scale != 1.0:
        out *= np.float32(conv.scale)
    return out if dtype == np.float32 else saturate(out, dtype, overwrite=True)


def audio_resample(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> tuple[Batch]:
    """Every sample resampled by its plan ``(in_rate, out_rate, out_length)``."""
    x = ins[0]
    samples = x._samples
    dt: _dt.DType = v["dtype"] or x._dtype
    np_dt = np.dtype(dt.numpy)
    plans, lobes = v["plans"], v["lobes"]

    def one(i: int) -> np.ndarray:
        r_in, r_out, n = plans[i]
        return resample(np.asarray(samples[i]), r_in, r_out, n, lobes, np_dt)

    out = Batch._wrap(kc.map(one), dt, x._layout, CPU)
    out._sources = x._sources
    return (out,)


__all__ = ["audio_resample", "resample"]
