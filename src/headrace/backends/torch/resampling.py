"""Torch kernels of ``audio_resample``: the windowed-sinc taps of
:func:`headrace.backends.shared.common.resampling_taps` (computed on the host, as for the CPU
kernel) gathered and summed on the signal's device.

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
from headrace.backends.shared.common import RESAMPLE_CHUNK, audio_scale, resampling_taps
from headrace.backends.torch.cast import saturate

_NP = {
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.uint8: np.uint8,
    torch.bool: np.bool_,
}


def resample(
    x: torch.Tensor, in_rate: float, out_rate: float, n_out: int, lobes: int, dtype: Any
) -> torch.Tensor:
    """``x`` (1-D, or time × channels) resampled to ``n_out`` samples of torch ``dtype``."""
    n_in = x.shape[0]
    f = x.to(torch.float32)
    if in_rate == out_rate and n_out == n_in:
        out = f.clone()
    else:
        out = torch.zeros((n_out, *x.shape[1:]), dtype=torch.float32, device=x.device)
        if n_in:
            for s in range(0, n_out, RESAMPLE_CHUNK):
                e = min(s + RESAMPLE_CHUNK, n_out)
                idx, w = resampling_taps(n_in, in_rate, out_rate, lobes, s, e)
                ti = torch.from_numpy(idx).to(x.device)
                tw = torch.from_numpy(w).to(x.device)
                if f.ndim == 1:
                    out[s:e] = (f[ti] * tw).sum(1)
                else:
                    out[s:e] = torch.einsum("otc,ot->oc", f[ti], tw)
    k = audio_scale(np.dtype(_NP[x.dtype]), np.dtype(_NP[dtype]))
    if k != 1.0:
        out *= k
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
