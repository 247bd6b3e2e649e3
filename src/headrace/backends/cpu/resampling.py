"""CPU kernels of ``audio_resample`` (numpy): windowed-sinc taps from
:func:`headrace.backends.shared.common.resampling_taps`, summed chunk by chunk.

Examples
--------
>>> import numpy as np
>>> resample(np.ones(8, np.float32), 1.0, 2.0, 16, 3, np.dtype(np.float32)).shape
(16,)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.saturate import saturate
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.common import RESAMPLE_CHUNK, audio_scale, resampling_taps


def resample(
    x: np.ndarray, in_rate: float, out_rate: float, n_out: int, lobes: int, dtype: np.dtype
) -> np.ndarray:
    """``x`` (1-D, or time × channels) resampled to ``n_out`` samples of ``dtype``."""
    n_in = x.shape[0]
    f = x if x.dtype == np.float32 else x.astype(np.float32)
    if in_rate == out_rate and n_out == n_in:
        out = f.copy() if f is x else f
    else:
        out = np.zeros((n_out, *x.shape[1:]), np.float32)
        if n_in:
            for s in range(0, n_out, RESAMPLE_CHUNK):
                e = min(s + RESAMPLE_CHUNK, n_out)
                idx, w = resampling_taps(n_in, in_rate, out_rate, lobes, s, e)
                if f.ndim == 1:
                    np.einsum("ot,ot->o", f[idx], w, out=out[s:e])
                else:
                    np.einsum("otc,ot->oc", f[idx], w, out=out[s:e])
    k = audio_scale(x.dtype, dtype)
    if k != 1.0:
        out *= np.float32(k)
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
