"""Host side of the windowed-sinc audio resampler (``audio_resample``, ``decoders.audio``,
``readers.NemoAsr``): where each output's taps start in the signal and their weights.

Output ``k`` is the sum of ``2 * lobes`` consecutive input samples around its position ``k *
in_rate / out_rate``, weighted by :func:`sinc_window`. Positions advance in float32 steps within
blocks of 256 outputs, as the reference's CPU resampler does, so the weights equal its own.

When the rate ratio is a fraction ``M / L`` with a small ``L`` (44.1 kHz to 16 kHz: 441 / 160),
those positions repeat every ``256 * L / gcd(L, 256)`` outputs, ``M / L`` times as many inputs
further: the weights of one period (a *filter bank*) are computed once and cached, and every
later output reuses them. Other ratios compute the taps of each chunk of outputs.

:func:`resampling_chunks` gives both the same way: chunks of outputs with the first tap of each
output, an index into the signal padded with :func:`resampling_padding` zeros, and the weights.
A backend gathers ``2 * lobes`` samples from each first tap (a sliding-window view) and sums
them with the weights.

Examples
--------
>>> import numpy as np
>>> x = np.arange(8, dtype=np.float32)
>>> left, right = resampling_padding(3)
>>> p = np.concatenate([np.zeros(left), x, np.zeros(right)])
>>> [(s, e, (p[f[:, None] + np.arange(6)] * w).sum(1).round(2).tolist())
...  for s, e, f, w in resampling_chunks(8, 4, 2.0, 1.0, 3)]
[(0, 4, [0.0, 2.0, 4.0, 6.0])]
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from fractions import Fraction
from functools import cache
from typing import NamedTuple

import numpy as np

_F32 = np.float32
#: Outputs per chunk: the gathered windows of a chunk (``CHUNK x 2 * lobes``) stay in cache.
CHUNK = 1 << 13
_BLOCK = 256
#: Largest filter bank built (elements: outputs per period x taps), 64 MiB of float32: every
#: ratio of the usual rates (8, 16, 22.05, 24, 32, 44.1, 48 kHz) at any quality.
_TABLE_MAX = 1 << 24
#: The cache keeps the most recently used filter banks up to this many elements in all.
_TABLES_KEPT = 1 << 25


@cache
def sinc_window(lobes: int) -> tuple[np.ndarray, np.float32, np.float32]:
    """The resampling window of ``lobes`` lobes: a Hann-windowed sinc sampled at ``64 * lobes + 1``
    points (float32, a zero on each side), and the ``center`` and ``scale`` mapping a distance in
    input samples to a (fractional) table index, read with linear interpolation.

    Examples
    --------
    >>> lut, center, scale = sinc_window(3)
    >>> lut.shape, float(lut[int(center)])
    ((198,), 1.0)
    """
    coeffs = 64 * lobes + 1
    scale = _F32(2.0 * lobes / (coeffs - 1))
    scale_env = _F32(2.0 / coeffs)
    center = (coeffs - 1) // 2
    x = (np.arange(coeffs) - center).astype(_F32)
    y = (x * scale).astype(np.float64)
    sinc = np.sinc(y)
    env = 0.5 * (1 + np.cos((x * scale_env).astype(np.float64) * np.pi))
    lut = np.zeros(coeffs + 5, _F32)
    lut[1 : coeffs + 1] = sinc * env
    lut.setflags(write=False)
    return lut, _F32(center + 1), _F32(1 / scale)


def resampling_padding(lobes: int) -> tuple[int, int]:
    """Zeros to put before and after a signal so that every tap of :func:`resampling_chunks`
    falls inside it (the signal is zero beyond its ends).

    Examples
    --------
    >>> resampling_padding(16)
    (16, 18)
    """
    return lobes, lobes + 2


def resampling_taps(
    in_rate: float, out_rate: float, lobes: int, start: int, stop: int
) -> tuple[np.ndarray, np.ndarray]:
    """First tap (input index, int64, may fall outside the signal) and the ``2 * lobes`` weights
    (float32) of outputs ``start:stop`` (``start`` a multiple of 256).

    Examples
    --------
    >>> first, w = resampling_taps(2.0, 1.0, 3, 0, 4)
    >>> first.tolist(), w.shape, round(float(w[1].sum()), 3)
    ([-3, -1, 1, 3], (4, 6), 1.0)
    """
    scale = in_rate / out_rate
    lut, center, wscale = sinc_window(lobes)
    first = np.arange(start, stop, _BLOCK)
    in_block_f = first * scale
    in_block_i = np.floor(in_block_f).astype(np.int64)
    steps = np.full((first.size, _BLOCK), _F32(scale), _F32)
    steps[:, 0] = (in_block_f - in_block_i).astype(_F32)
    pos = np.cumsum(steps, axis=1, dtype=_F32)  # sequential float32 sums, block by block
    base = np.repeat(in_block_i, _BLOCK)[: stop - start]
    pos = pos.reshape(-1)[: stop - start]
    top = np.ceil(pos)
    x = (top - _F32(lobes))[:, None] + np.arange(2 * lobes, dtype=_F32) - pos[:, None]
    fi = x * wscale + center
    fl = np.floor(fi)
    di = fi - fl
    i = np.clip(fl.astype(np.int64), 0, lut.size - 2)
    w = lut[i] + di * (lut[i + 1] - lut[i])
    return top.astype(np.int64) - lobes + base, w.astype(_F32, copy=False)


class FilterBank(NamedTuple):
    """The taps of one period of outputs: output ``q * rows + r`` starts at input
    ``first[r] + q * step`` with weights ``weights[r]``."""

    rows: int
    step: int
    first: np.ndarray
    weights: np.ndarray


_tables: OrderedDict[tuple[float, float, int], FilterBank | None] = OrderedDict()
_lock = threading.Lock()
_build_lock = threading.Lock()


def filter_bank(in_rate: float, out_rate: float, lobes: int, n_out: int) -> FilterBank | None:
    """The cached filter bank of a rate ratio, or ``None`` when the ratio's period is too long
    to keep, or longer than ``4 * n_out`` and not computed yet (a short signal computes its taps).

    Examples
    --------
    >>> fb = filter_bank(44100.0, 16000.0, 16, 16000)
    >>> fb.rows, fb.step, fb.weights.shape
    (7680, 21168, (7680, 32))
    >>> filter_bank(1.0, float(np.float32(1.37)), 16, 100) is None
    True
    """
    key = (in_rate, out_rate, lobes)
    with _lock:
        if key in _tables:
            _tables.move_to_end(key)
            return _tables[key]
    with _build_lock:  # threads resampling at the same rates build the bank once
        with _lock:
            if key in _tables:
                return _tables[key]
        return _new_bank(key, n_out)


def _new_bank(key: tuple[float, float, int], n_out: int) -> FilterBank | None:
    in_rate, out_rate, lobes = key
    ratio = Fraction(in_rate) / Fraction(out_rate)
    m, n = ratio.numerator, ratio.denominator
    period = _BLOCK * n // math.gcd(n, _BLOCK)
    if period * 2 * lobes > _TABLE_MAX:
        bank = None
    elif period > 4 * n_out:
        return None
    else:
        bank = _build_bank(in_rate, out_rate, lobes, period, m, n)
    with _lock:
        _tables[key] = bank
        while len(_tables) > 1 and sum(_size(b) for b in _tables.values()) > _TABLES_KEPT:
            _tables.popitem(last=False)
    return bank


def _size(bank: FilterBank | None) -> int:
    return 0 if bank is None else bank.weights.size


def _build_bank(
    in_rate: float, out_rate: float, lobes: int, period: int, m: int, n: int
) -> FilterBank:
    """The filter bank of ``period`` (a multiple of 256) outputs, at least ``CHUNK``, computed a
    chunk at a time."""
    rows = period * max(1, CHUNK // period)
    first = np.empty(rows, np.int64)
    weights = np.empty((rows, 2 * lobes), _F32)
    for s in range(0, rows, CHUNK):
        e = min(s + CHUNK, rows)
        first[s:e], weights[s:e] = resampling_taps(in_rate, out_rate, lobes, s, e)
    first.setflags(write=False)
    weights.setflags(write=False)
    return FilterBank(rows, rows * m // n, first, weights)


def resampling_chunks(
    n_in: int, n_out: int, in_rate: float, out_rate: float, lobes: int
) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """``(start, stop, first, weights)`` for consecutive chunks of the ``n_out`` outputs: the first
    tap of each output as an index into the signal padded by :func:`resampling_padding`, and its
    ``2 * lobes`` weights. Every index is inside the padded signal.

    Examples
    --------
    >>> [(s, e, f.tolist()) for s, e, f, w in resampling_chunks(4, 2, 2.0, 1.0, 3)]
    [(0, 2, [0, 2])]
    """
    left, right = resampling_padding(lobes)
    last = n_in + left + right - 2 * lobes
    bank = filter_bank(in_rate, out_rate, lobes, n_out)
    s = 0
    while s < n_out:
        if bank is None:
            e = min(s + CHUNK, n_out)
            first, w = resampling_taps(in_rate, out_rate, lobes, s, e)
            first += left
        else:
            q, r = divmod(s, bank.rows)
            e = min(s + CHUNK, n_out, s - r + bank.rows)
            first = bank.first[r : r + e - s] + (q * bank.step + left)
            w = bank.weights[r : r + e - s]
        np.clip(first, 0, last, out=first)  # a guard: taps outside are zeros already
        yield s, e, first, w
        s = e


__all__ = [
    "CHUNK",
    "FilterBank",
    "filter_bank",
    "resampling_chunks",
    "resampling_padding",
    "resampling_taps",
    "sinc_window",
]
