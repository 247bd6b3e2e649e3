"""Torch kernel of the reductions (``ops/reductions.py``): one pixel kernel, ``reduce``.

The same rules as the NumPy kernel (:mod:`headrace.backends.cpu.reductions`): float outputs
accumulate in float64 and round once to float32; integer outputs accumulate in int64 and wrap
to the output type (two's complement arithmetic wraps alike), and means are
``trunc(float32(acc) * float32(1 / N))``. torch has few kernels for uint16/32/64, so integer
data is handled as int64 (uint64 with its sign bit flipped for ``min``/``max``).

Examples
--------
>>> x = torch.tensor([[1, 2, 250], [3, 4, 255]], dtype=torch.uint8)
>>> reduce(x, None, kind="mean", axes=(0,), keep_dims=False, dtype=np.dtype("uint8")).tolist()
[2, 3, 124]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace.backends.shared.common import mean_scale, reduction_identity
from headrace.backends.torch.transfer import upload

_SIGN = -(2**63)


def _torch(dt: np.dtype) -> torch.dtype:
    return _dt.to_torch_dtype(_dt.from_numpy(dt))  # type: ignore[no-any-return]


def _wrap(v: torch.Tensor, dt: np.dtype) -> torch.Tensor:
    """int64 values reduced modulo the width of integer type ``dt`` (still int64)."""
    bits = dt.itemsize * 8
    if bits == 64:
        return v
    v = v & ((1 << bits) - 1)
    if dt.kind == "i":
        v = torch.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
    return v


def _as_float32(v: torch.Tensor, dt: np.dtype) -> torch.Tensor:
    """Wrapped int64 values of type ``dt`` as float32 (uint64 read as unsigned)."""
    if dt == np.uint64:
        f = v.to(torch.float64)
        return torch.where(f < 0, f + 2.0**64, f).to(torch.float32)
    return v.to(torch.float32)


def _from_int64(v: torch.Tensor, dt: np.dtype) -> torch.Tensor:
    """Wrapped int64 values as a tensor of integer type ``dt``."""
    return v.to(_torch(dt))


def _minmax(x: torch.Tensor, kind: str, axes: tuple[int, ...], dt: np.dtype) -> torch.Tensor:
    fn = torch.amin if kind == "min" else torch.amax
    if dt.kind == "f":
        return fn(x, dim=axes, keepdim=True) if axes else x.clone()
    v = x.to(torch.int64) if x.dtype != torch.uint64 else x.view(torch.int64) ^ _SIGN
    r = fn(v, dim=axes, keepdim=True) if axes else v
    if x.dtype == torch.uint64:
        return (r ^ _SIGN).view(torch.uint64)
    return r.to(x.dtype)


def reduce(
    x: torch.Tensor,
    layout: str | None,
    *,
    kind: str,
    axes: tuple[int, ...],
    keep_dims: bool,
    dtype: np.dtype,
    ddof: int = 0,
    mean: Any = None,
) -> torch.Tensor:
    """``kind`` of ``x`` over ``axes`` as ``dtype`` (see the module docstring)."""
    n = math.prod(x.shape[a] for a in axes)
    dt = np.dtype(dtype)
    kept = tuple(1 if d in axes else e for d, e in enumerate(x.shape))
    if kind in ("min", "max"):
        if n == 0:
            ident = np.full(kept, reduction_identity(kind, dt), dt)
            out = upload(ident, x.device)
        else:
            out = _minmax(x, kind, axes, dt)
    elif dt.kind == "f":
        out = _float_stat(x, kind, axes, n, ddof, mean, kept).to(torch.float32)
    else:
        v = x.to(torch.int64) if x.dtype != torch.uint64 else x.view(torch.int64)
        v = _wrap(v, dt)  # the input as the output type
        if kind in ("mean_square", "rms"):
            v = v * v
        acc = _wrap(v.sum(dim=axes, keepdim=True) if axes else v, dt)
        if kind == "sum":
            out = _from_int64(acc, dt)
        else:
            f = _as_float32(acc, dt) * float(mean_scale(n))
            if kind == "rms":
                f = torch.sqrt(f)
            f = torch.nan_to_num(torch.trunc(f), nan=0.0, posinf=0.0, neginf=0.0)
            r = f.to(torch.float64)
            r = torch.where(r >= 2.0**63, r - 2.0**64, r).to(torch.int64)
            out = _from_int64(r, dt)
    if not keep_dims:
        out = out.reshape(tuple(e for d, e in enumerate(x.shape) if d not in axes))
    return out.contiguous()


def _float_stat(
    x: torch.Tensor, kind: str, axes: tuple[int, ...], n: int, ddof: int, mean: Any,
    kept: tuple[int, ...],
) -> torch.Tensor:  # fmt: skip
    """The statistic in float64, with the reduced axes kept."""
    if x.dtype == torch.uint64:
        xd = x.view(torch.int64).to(torch.float64)
        xd = torch.where(xd < 0, xd + 2.0**64, xd)
    else:
        xd = x.to(torch.float64)

    def total(v: torch.Tensor) -> torch.Tensor:
        return v.sum(dim=axes, keepdim=True) if axes else v

    if kind == "sum":
        return total(xd)
    if kind in ("std_dev", "variance"):
        m = torch.as_tensor(mean, device=x.device).to(torch.float64)
        d = xd - (m.reshape(kept) if m.numel() != 1 else m.reshape(()))
        var = total(d * d) / float(n - ddof)
        return torch.sqrt(var) if kind == "std_dev" else var
    s = total(xd if kind == "mean" else xd * xd) / float(n)
    return torch.sqrt(s) if kind == "rms" else s
