"""Plans of the speech-feature operators (``ops/speech.py``): output shapes, windows and matrices.

Everything a kernel needs beyond the samples (the analysis window, the mel filter bank, the DCT
matrix) is built here on the host, once per shape and arguments, in float64 and handed to the
kernels as float32; the kernels only frame, transform and multiply.

Examples
--------
>>> p = spectrogram_params((1000,), None, "float32", nfft=64, window_length=60, window_step=20)
>>> p.shape, p.kwargs["pad"]
((33, 51), 30)
>>> mel_matrix(4, 9, 16000.0, 0.0, 8000.0, "slaney", True).shape
(4, 9)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace._dispatch.planned import KernelPlan

_F32 = np.dtype(np.float32)
_NUMERIC = "biuf"


def _numeric(op: str, in_dtype: Any) -> np.dtype:
    dt = np.dtype(in_dtype)
    if dt.kind not in _NUMERIC or dt.kind == "b":
        raise InvalidTypeError(f"{op}: expected numeric input, got {dt}.")
    return dt


def _axis(op: str, axis: int, ndim: int, name: str = "axis") -> int:
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"{op}: {name}={axis} is out of range for {ndim}-D input.")
    return axis % ndim


def _power(op: str, power: int) -> int:
    if power not in (1, 2):
        raise InvalidArgumentError(f"{op}: power must be 1 (magnitude) or 2 (power), got {power}.")
    return power


# --- preemphasis_filter --------------------------------------------------------------------------
_BORDERS = ("zero", "clamp", "reflect")


def preemphasis_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    preemph_coeff: float = 0.97,
    border: str = "clamp",
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``preemphasis_filter``: ``y[t] = x[t] - coeff * x[t-1]``; ``x[-1]`` from ``border``.

    Examples
    --------
    >>> preemphasis_params((5,), None, "int16", border="zero").kwargs["border"]
    'zero'
    """
    op = "preemphasis_filter"
    _numeric(op, in_dtype)
    if len(shape) != 1:
        raise ShapeError(f"{op}: expected 1-D audio, got shape {tuple(shape)}.")
    if border not in _BORDERS:
        raise InvalidArgumentError(f"{op}: border must be one of {_BORDERS}, got {border!r}.")
    out = _F32 if dtype is None else np.dtype(dtype)
    return KernelPlan(tuple(shape), out, {"coeff": float(preemph_coeff), "border": border,
                                          "dtype": out})  # fmt: skip


# --- spectrogram, power_spectrum -----------------------------------------------------------------
def hann_window(n: int) -> np.ndarray:
    """The reference's Hann window: ``0.5 - 0.5 cos(2 pi (i + 0.5) / n)``.

    Examples
    --------
    >>> [round(v, 4) for v in hann_window(4).tolist()]
    [0.1464, 0.8536, 0.8536, 0.1464]
    """
    i = np.arange(n, dtype=np.float64)
    return (0.5 - 0.5 * np.cos(2 * np.pi * (i + 0.5) / n)).astype(np.float32)


def spectrogram_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    nfft: int | None = None,
    window_length: int = 512,
    window_step: int = 256,
    window_fn: Any = None,
    power: int = 2,
    center_windows: bool = True,
    reflect_padding: bool = True,
    layout_out: str = "ft",
) -> KernelPlan:
    """Plan ``spectrogram``: frame count, padding, window and FFT size of one 1-D signal.

    Centred windows pad ``window_length // 2`` samples on both sides and give
    ``length // window_step + 1`` frames; otherwise ``(length - window_length) // step + 1``.
    """
    op = "spectrogram"
    _numeric(op, in_dtype)
    if len(shape) != 1:
        raise ShapeError(f"{op}: expected 1-D audio, got shape {tuple(shape)}.")
    if window_length <= 0 or window_step <= 0:
        raise InvalidArgumentError(
            f"{op}: window_length and window_step must be positive "
            f"(got {window_length}, {window_step})."
        )
    n = window_length if nfft is None else int(nfft)
    if n < window_length:
        raise InvalidArgumentError(
            f"{op}: nfft ({n}) must be at least window_length ({window_length})."
        )
    if layout_out not in ("ft", "tf"):
        raise InvalidArgumentError(f"{op}: layout must be 'ft' or 'tf', got {layout_out!r}.")
    if window_fn is None or np.size(window_fn) == 0:
        win = hann_window(window_length)
    else:
        win = np.asarray(window_fn, np.float32).reshape(-1)
        if win.size != window_length:
            raise InvalidArgumentError(
                f"{op}: window_fn has {win.size} values, window_length is {window_length}."
            )
    length = int(shape[0])
    pad = window_length // 2 if center_windows else 0
    if center_windows:
        frames = length // window_step + 1
    else:
        frames = max(0, (length - window_length) // window_step + 1)
    if frames == 0:  # (as the reference: no window fits)
        raise InvalidArgumentError(
            f"{op}: the signal ({length} samples) is too short for one window of "
            f"{window_length} samples (center_windows=False)."
        )
    bins = n // 2 + 1
    out = (bins, frames) if layout_out == "ft" else (frames, bins)
    kw = {
        "window": win,
        "nfft": n,
        "step": int(window_step),
        "frames": frames,
        "pad": pad,
        "reflect": bool(reflect_padding),
        "power": _power(op, power),
        "ft": layout_out == "ft",
    }
    return KernelPlan(out, _F32, kw)


def power_spectrum_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    axis: int = -1,
    nfft: int | None = None,
    power: int = 2,
) -> KernelPlan:
    """Plan ``power_spectrum``: the axis is zero-padded or cut to ``nfft`` (default: its extent)
    and becomes ``nfft // 2 + 1`` bins."""
    op = "power_spectrum"
    _numeric(op, in_dtype)
    ax = _axis(op, axis, len(shape))
    n = int(shape[ax]) if nfft is None else int(nfft)
    if n <= 0:
        raise InvalidArgumentError(f"{op}: nfft must be positive, got {n}.")
    out = list(shape)
    out[ax] = n // 2 + 1
    return KernelPlan(tuple(out), _F32, {"axis": ax, "nfft": n, "power": _power(op, power)})


# --- mel_filter_bank ------------------------------------------------------------------------------
def hz_to_mel(f: Any, formula: str) -> np.ndarray:
    """Hertz to mel: Slaney's (linear below 1 kHz, logarithmic above) or HTK's."""
    f = np.asarray(f, np.float64)
    if formula == "htk":
        return 2595.0 * np.log10(1.0 + f / 700.0)
    logstep = 27.0 / math.log(6.4)
    return np.where(f < 1000.0, 3.0 * f / 200.0,
                    15.0 + logstep * np.log(np.maximum(f, 1e-12) / 1000.0))  # fmt: skip


def mel_to_hz(m: Any, formula: str) -> np.ndarray:
    """Mel to hertz (inverse of :func:`hz_to_mel`)."""
    m = np.asarray(m, np.float64)
    if formula == "htk":
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    return np.where(m < 15.0, 200.0 * m / 3.0, 1000.0 * np.exp((m - 15.0) * math.log(6.4) / 27.0))


def mel_matrix(
    nfilter: int, bins: int, sample_rate: float, lo: float, hi: float, formula: str, norm: bool
) -> np.ndarray:
    """``(nfilter, bins)`` triangular filters, equally spaced in mel, linear in hertz; with
    ``norm`` each is scaled by ``2 / (f_right - f_left)`` (unit area)."""
    nfft = 2 * (bins - 1)
    freqs = np.arange(bins, dtype=np.float64) * sample_rate / max(nfft, 1)
    hz = mel_to_hz(np.linspace(hz_to_mel(lo, formula), hz_to_mel(hi, formula), nfilter + 2),
                   formula)  # fmt: skip
    left, mid, right = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        up = (freqs - left) / (mid - left)
        down = (right - freqs) / (right - mid)
    w = np.nan_to_num(np.maximum(0.0, np.minimum(up, down)))
    if norm:
        w *= 2.0 / (right - left)
    return w.astype(np.float32)


def freq_axis(layout: str | None, ndim: int, op: str) -> int:
    """The frequency axis: the layout's ``f``, else the second-to-last axis ("…ft")."""
    if layout and "f" in layout:
        return layout.index("f")
    if ndim < 2:
        raise ShapeError(f"{op}: expected a spectrogram of at least 2 dimensions (got {ndim}).")
    return ndim - 2


def mel_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    nfilter: int = 128,
    sample_rate: float = 44100.0,
    freq_low: float = 0.0,
    freq_high: float = 0.0,
    mel_formula: str = "slaney",
    normalize: bool = True,
) -> KernelPlan:
    """Plan ``mel_filter_bank``: the frequency axis becomes ``nfilter`` mel bands."""
    op = "mel_filter_bank"
    if np.dtype(in_dtype) != _F32:
        raise InvalidTypeError(f"{op}: expected float32 input, got {np.dtype(in_dtype)}.")
    ax = freq_axis(layout, len(shape), op)
    hi = sample_rate / 2 if freq_high == 0 else freq_high
    if mel_formula not in ("slaney", "htk"):
        raise InvalidArgumentError(f"{op}: mel_formula must be 'slaney' or 'htk'.")
    if nfilter <= 0 or not 0 <= freq_low < hi <= sample_rate / 2:
        raise InvalidArgumentError(
            f"{op}: need nfilter > 0 and 0 <= freq_low < freq_high <= sample_rate / 2 "
            f"(got nfilter={nfilter}, freq_low={freq_low}, freq_high={hi}, "
            f"sample_rate={sample_rate})."
        )
    mat = mel_matrix(nfilter, int(shape[ax]), sample_rate, freq_low, hi, mel_formula, normalize)
    out = list(shape)
    out[ax] = nfilter
    return KernelPlan(tuple(out), _F32, {"matrix": mat, "axis": ax, "blocks": row_blocks(mat)})


def row_blocks(mat: np.ndarray, rows_per_block: int = 8) -> tuple[tuple[int, int, int, int], ...]:
    """``(row0, row1, col0, col1)`` blocks of consecutive rows of a banded ``mat`` (a filter
    bank: each row is zero outside a short run of columns) with the columns where any of those
    rows is non-zero. ``mat[r0:r1, c0:c1] @ x[c0:c1]`` over the blocks is ``mat @ x`` in a few
    matrix products that release the GIL, with ~1/4 of the dense multiply-adds for 64 mel bands.

    Examples
    --------
    >>> row_blocks(np.array([[1.0, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 0]]), rows_per_block=2)
    ((0, 2, 0, 3), (2, 3, 0, 0))
    """
    blocks = []
    for r0 in range(0, mat.shape[0], rows_per_block):
        r1 = min(r0 + rows_per_block, mat.shape[0])
        cols = np.flatnonzero((mat[r0:r1] != 0).any(axis=0))
        c0, c1 = (int(cols[0]), int(cols[-1]) + 1) if cols.size else (0, 0)
        blocks.append((r0, r1, c0, c1))
    return tuple(blocks)


# --- to_decibels, mfcc ----------------------------------------------------------------------------
def decibels_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    multiplier: float = 10.0,
    reference: float = 0.0,
    cutoff_db: float = -200.0,
) -> KernelPlan:
    """Plan ``to_decibels``: ``multiplier * log10(max(10 ** (cutoff_db / multiplier),
    x / reference))``; ``reference`` 0 takes the sample's maximum."""
    if np.dtype(in_dtype) != _F32:
        raise InvalidTypeError(f"to_decibels: expected float32 input, got {np.dtype(in_dtype)}.")
    if multiplier == 0:
        raise InvalidArgumentError("to_decibels: multiplier must not be 0.")
    kw = {"multiplier": float(multiplier), "reference": float(reference),
          "min_ratio": float(10.0 ** (cutoff_db / multiplier))}  # fmt: skip
    return KernelPlan(tuple(shape), _F32, kw)


def dct_matrix(n: int, dct_type: int, normalize: bool) -> np.ndarray:
    """``(n, n)`` DCT of type 1-4 (half of the unnormalised textbook sums, or orthonormal).

    Examples
    --------
    >>> d = dct_matrix(4, 2, True)
    >>> bool(np.allclose(d @ d.T, np.eye(4), atol=1e-6))
    True
    """
    k = np.arange(n, dtype=np.float64)[:, None]
    i = np.arange(n, dtype=np.float64)[None, :]
    if dct_type == 1:
        m = np.cos(np.pi * k * i / max(n - 1, 1))
        m[:, 0] *= 0.5
        m[:, -1] *= 0.5
    elif dct_type == 2:
        m = np.cos(np.pi * k * (i + 0.5) / n)
        if normalize:
            m *= np.sqrt(2.0 / n)
            m[0] /= np.sqrt(2.0)
    elif dct_type == 3:
        m = np.cos(np.pi * i * (k + 0.5) / n)
        if normalize:
            m *= np.sqrt(2.0 / n)
            m[:, 0] /= np.sqrt(2.0)
        else:
            m[:, 0] *= 0.5
    else:
        m = np.cos(np.pi * (k + 0.5) * (i + 0.5) / n)
        if normalize:
            m *= np.sqrt(2.0 / n)
    return m


def mfcc_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    axis: int = 0,
    dct_type: int = 2,
    lifter: float = 0.0,
    n_mfcc: int = 20,
    normalize: bool = False,
) -> KernelPlan:
    """Plan ``mfcc``: the first ``n_mfcc`` DCT coefficients along ``axis``, liftered."""
    op = "mfcc"
    if np.dtype(in_dtype) != _F32:
        raise InvalidTypeError(f"{op}: expected float32 input, got {np.dtype(in_dtype)}.")
    ax = _axis(op, axis, len(shape))
    n = int(shape[ax])
    if dct_type not in (1, 2, 3, 4):
        raise InvalidArgumentError(f"{op}: dct_type must be 1, 2, 3 or 4, got {dct_type}.")
    if dct_type == 1 and normalize:
        raise InvalidArgumentError(f"{op}: normalize is not supported for DCT type I.")
    if n_mfcc <= 0:
        raise InvalidArgumentError(f"{op}: n_mfcc ({n_mfcc}) must be positive.")
    n_mfcc = min(n_mfcc, n)  # (more than the axis holds: all of them, as the reference)
    mat = dct_matrix(n, dct_type, normalize)[:n_mfcc]
    if lifter:
        c = 1.0 + lifter / 2.0 * np.sin(np.pi * (np.arange(n_mfcc) + 1) / lifter)
        mat = mat * c[:, None]
    out = list(shape)
    out[ax] = n_mfcc
    return KernelPlan(tuple(out), _F32, {"matrix": mat.astype(np.float32), "axis": ax})


# --- nonsilent_region -----------------------------------------------------------------------------
def check_nonsilent_args(vals: dict[str, Any]) -> None:
    """Refuse a non-positive window or reset interval. (The reference also refuses, for float
    input only, a reset interval that is not a multiple of the window; the results do not
    depend on it, and integer input takes any, as there.)"""
    w = vals.get("window_length")
    w = 2048 if w is None else w
    r = vals.get("reset_interval")
    r = 8192 if r is None else r
    if w <= 0:
        raise InvalidArgumentError(f"nonsilent_region: window_length must be positive, got {w}.")
    if r != -1 and r <= 0:
        raise InvalidArgumentError(
            f"nonsilent_region: reset_interval ({r}) must be -1 or positive."
        )
