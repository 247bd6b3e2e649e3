"""Torch kernels of ``audio_resample``: the first taps and weights of
:func:`headrace.backends.shared.resampling.resampling_chunks` (computed on the host, as for the
CPU kernel) uploaded a chunk at a time; the zero-padded signal's windows (``unfold``) are
gathered and summed on the signal's device.

Examples
--------
>>> import torch
>>> resample(torch.ones(8), 1.0, 2.0, 16, 3, torch.float32).shape
torch.Size([16])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.dtype import to_torch_dtype
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.common import audio_conversion
from headrace.backends.shared.resampling import resampling_chunks, resampling_padding
from headrace.backends.torch.cast import saturate


def _resample_f32(
    f: torch.Tensor, in_rate: float, out_rate: float, n_out: int, lobes: int
) -> torch.Tensor:
    """float32 ``f`` (1-D, or time × channels) resampled to ``n_out`` float32 samples."""
    n_in = f.shape[0]
    cols = f.reshape(n_in, -1).T  # channels × time
    out = torch.zeros((cols.shape[0], n_out), dtype=torch.float32, device=f.device)
    if n_in and n_out:
        left, right = resampling_padding(lobes)
        windows = torch.nn.functional.pad(cols, (left, right)).unfold(1, 2 * lobes, 1)
        for s, e, first, w in resampling_chunks(n_in, n_out, in_rate, out_rate, lobes):
            ti = torch.from_numpy(first).to(f.device, non_blocking=True)
            tw = torch.from_numpy(np.array(w)).to(f.device, non_blocking=True)  # a writable copy
            out[:, s:e] = torch.einsum("cot,ot->co", windows[:, ti], tw)
    return out[0] if f.ndim == 1 else out.T.reshape(n_out, *f.shape[1:]).contiguous()


def resample(
    x: torch.Tensor, in_rate: float, out_rate: float, n_out: int, lobes: int, dtype: Any
) -> torch.Tensor:
    """``x`` (1-D, or time × channels) resampled to ``n_out`` samples of torch ``dtype``,
    converted as the CPU kernel (:func:`headrace.backends.shared.common.audio_conversion`)."""
    np_out = np.dtype(_dt.dtype(dtype).numpy)
    conv = audio_conversion(np.dtype(_dt.dtype(x.dtype).numpy), np_out)
    if conv.pre is not None:  # to the output's scale first (in float64: exact for 32 bits)
        f = (x.to(torch.float64) * conv.pre[0] + conv.pre[1]).to(torch.float32)
    else:
        f = x.to(torch.float32)
    if in_rate == out_rate and n_out == x.shape[0]:
        out = f.clone() if f is x else f
    else:
        out = _resample_f32(f, in_rate, out_rate, n_out, lobes)
    if conv.scale != 1.0:
        out *= conv.scale
    return out if dtype == torch.float32 else saturate(out, dtype)


def audio_resample(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> tuple[Batch]:
    """Every sample resampled by its plan ``(in_rate, out_rate, out_length)``."""
    x = ins[0]
    samples = x._samples
    dt: _dt.DType = v["dtype"] or x._dtype
    tdt = to_torch_dtype(dt)
    plans, lobes = v["plans"], v["lobes"]

    def one(i: int) -> torch.Tensor:
        r_in, r_out, n = plans[i]
        return resample(samples[i], r_in, r_out, n, lobes, tdt)

    out = Batch._wrap(kc.map(one), dt, x._layout, kc.device)
    out._sources = x._sources
    return (out,)


__all__ = ["audio_resample", "resample"]
