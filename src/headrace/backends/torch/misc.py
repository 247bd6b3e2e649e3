"""Torch kernels of the basic operators: the generic kernels of ``backends/cpu/misc.py``
registered for the GPU with a torch array namespace."""

from __future__ import annotations

from typing import Any

import torch

from headrace._core import dtype as _dt
from headrace.backends.cpu.misc import register


def cast_saturate_torch(a: torch.Tensor, dt: _dt.DType) -> torch.Tensor:
    """torch cast with the reference's rules: round-to-nearest from floats, then saturate."""
    target = _dt.to_torch_dtype(dt)
    if dt is _dt.bool_:
        return a != 0
    if dt.is_integer:
        info = torch.iinfo(target)
        if a.is_floating_point():
            d = a.double()
            r = torch.where(d >= 0, torch.floor(d + 0.5), torch.ceil(d - 0.5))
            return r.clamp(info.min, info.max).to(target)
        src = torch.iinfo(a.dtype) if a.dtype != torch.bool else None
        if src is not None and (src.max > info.max or src.min < info.min):
            return (
                a.to(torch.int64).clamp(info.min, info.max).to(target)
                if src.bits < 64
                else (a.clamp(max(info.min, src.min), min(info.max, src.max)).to(target))
            )
    return a.to(target)


class TorchXP:
    """The array operations the generic kernels need, for torch."""

    cast = staticmethod(cast_saturate_torch)
    reshape = staticmethod(lambda a, s: a.reshape(s))
    transpose = staticmethod(lambda a, p: a.permute(*p).contiguous())
    stack = staticmethod(lambda xs, axis: torch.stack(list(xs), axis))
    concat = staticmethod(lambda xs, axis: torch.cat(list(xs), axis))
    copy = staticmethod(lambda a: a.clone())

    @staticmethod
    def full(shape: tuple[int, ...], value: Any, dt: _dt.DType, like: Any = None) -> Any:
        from headrace._core.device import Device

        dev = Device("gpu").torch_device()
        return torch.full(shape, value, dtype=_dt.to_torch_dtype(dt), device=dev)

    @staticmethod
    def one_hot(labels: Any, n: int, on: float, off: float, dt: _dt.DType) -> Any:
        hot = labels.to(torch.int64)[..., None] == torch.arange(n, device=labels.device)
        out = torch.where(
            hot,
            torch.tensor(on, dtype=torch.float64, device=labels.device),
            torch.tensor(off, dtype=torch.float64, device=labels.device),
        )
        return out.to(_dt.to_torch_dtype(dt))


register("gpu", TorchXP)
