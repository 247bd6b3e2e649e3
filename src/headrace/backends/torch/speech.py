"""Torch kernels of the speech features (``ops/speech.py``): the same plans as the NumPy kernels
(:mod:`headrace.backends.cpu.speech`), with ``unfold`` framing and ``torch.fft.rfft``.

Examples
--------
>>> power_spectrum(torch.ones(4), None, axis=0, nfft=4, power=2).tolist()
[16.0, 0.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._dispatch.args import sample_args
from headrace.backends.shared.common import check_audio, nonsilent_bounds
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload

_F32 = torch.float32


def _mat(m: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    return upload(np.asarray(m, np.float32), like.device)


def preemphasis_filter(
    x: torch.Tensor, layout: str | None, *, coeff: float, border: str, dtype: np.dtype
) -> torch.Tensor:
    """``y[t] = x[t] - coeff * x[t - 1]`` in float32; ``x[-1]`` is 0, ``x[0]`` or ``x[1]``."""
    v = x.to(_F32)
    if v.numel() == 0:
        return saturate(v, dtype)
    c = torch.tensor(coeff, dtype=_F32)  # a 0-d host tensor: applied as a scalar (no copy)
    first = {"zero": torch.zeros_like(v[:1]), "clamp": v[:1],
             "reflect": v[1:2] if v.numel() > 1 else v[:1]}[border]  # fmt: skip
    out = v - c * torch.cat([first, v[:-1]])
    return out if np.dtype(dtype) == np.float32 else saturate(out, dtype)


def _power(s: torch.Tensor, power: int) -> torch.Tensor:
    if power == 2:
        return (s.real * s.real + s.imag * s.imag).to(_F32)
    return s.abs().to(_F32)


def spectrogram(
    x: torch.Tensor,
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
) -> torch.Tensor:
    """The STFT power (or magnitude) of one signal, ``(bins, frames)`` or ``(frames, bins)``."""
    v = x.to(_F32)
    n = window.size
    if pad:
        if reflect and v.numel() > pad:
            v = F.pad(v[None, None], (pad, pad), mode="reflect")[0, 0]
        elif reflect and v.numel() > 1:  # shorter than the padding: numpy's repeated mirror
            idx = np.pad(np.arange(v.numel()), pad, mode="reflect")
            v = v[upload(idx, v.device)]
        else:
            v = F.pad(v, (pad, pad))
    if frames == 0:
        s = torch.zeros((0, nfft // 2 + 1), dtype=_F32, device=x.device)
    else:
        need = (frames - 1) * step + n
        if v.numel() < need:
            v = F.pad(v, (0, need - v.numel()))
        fr = v[:need].unfold(0, n, step) * _mat(window, v)
        s = _power(torch.fft.rfft(fr, n=nfft, dim=1), power)
    return (s.T if ft else s).contiguous()


def power_spectrum(
    x: torch.Tensor, layout: str | None, *, axis: int, nfft: int, power: int
) -> torch.Tensor:
    """``|rfft(x, nfft)| ** power`` along ``axis``."""
    return _power(torch.fft.rfft(x.to(_F32), n=nfft, dim=axis), power).contiguous()


def matrix_along_axis(
    x: torch.Tensor,
    layout: str | None,
    *,
    matrix: np.ndarray,
    axis: int,
    blocks: tuple[tuple[int, int, int, int], ...] | None = None,
) -> torch.Tensor:
    """``matrix @ x`` along ``axis`` (mel filter banks, DCTs; ``blocks`` is not needed: one
    dense product)."""
    v = torch.movedim(x.to(_F32), axis, -1)
    return torch.movedim(v @ _mat(matrix, v).T, -1, axis).contiguous()


def to_decibels(
    x: torch.Tensor, layout: str | None, *, multiplier: float, reference: float, min_ratio: float
) -> torch.Tensor:
    """``multiplier * log10(max(min_ratio, x / reference))``; reference 0: the maximum."""
    v = x.to(_F32)
    if reference != 0:
        r = v / reference
    elif v.numel():  # the maximum stays on the device (no read-back)
        top = v.max()
        r = torch.where(top != 0, v / top, torch.zeros_like(v))  # (silent: the cutoff)
    else:
        r = v
    return multiplier * torch.log10(torch.clamp(r, min=min_ratio))


def nonsilent_region(kc: Any, inputs: list[Batch], args: dict[str, Any]) -> tuple[Batch, Batch]:
    """``(begin, length)`` int32 scalars per sample (see ``ops.speech.nonsilent_region``)."""
    samples = inputs[0]._resolved()

    def one(i: int) -> tuple[torch.Tensor, torch.Tensor]:
        a = sample_args(args, i)
        s = samples[i]
        check_audio(tuple(s.shape), s.dtype, "nonsilent_region")
        w = int(a["window_length"])
        sq = s.to(torch.float64).square()
        if sq.numel() <= w:
            p = sq.sum().reshape(1) / w if sq.numel() else sq
        else:
            c = torch.cat([sq.new_zeros(1), torch.cumsum(sq, 0)])
            p = (c[w:] - c[:-w]) / w
        b, n = nonsilent_bounds(p.cpu().numpy(), s.numel(), w, a["cutoff_db"],
                                a["reference_power"])  # fmt: skip
        dev = s.device
        return (torch.full((), b, dtype=torch.int32, device=dev),
                torch.full((), n, dtype=torch.int32, device=dev))

    res = kc.map(one)
    return (
        Batch._wrap([r[0] for r in res], _dt.int32, None, kc.device),
        Batch._wrap([r[1] for r in res], _dt.int32, None, kc.device),
    )
