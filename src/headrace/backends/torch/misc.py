"""Torch kernels of the basic operators (``ops/misc.py``): the generic kernels of
:mod:`headrace.backends.shared.misc` bound to :class:`TorchXP`.

Examples
--------
>>> import torch
>>> from headrace._core import dtype as dt
>>> cast_saturate_torch(torch.tensor([-1.5, 0.5, 300.0]), dt.uint8).tolist()
[0, 1, 255]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace._core import storage as _st
from headrace._core.device import Device
from headrace.backends.shared import misc as G
from headrace.backends.torch.cast import saturate


def cast_saturate_torch(a: torch.Tensor, dt: _dt.DType) -> torch.Tensor:
    """torch ``cast``: :func:`~headrace.backends.torch.cast.saturate`."""
    if not (dt.is_integer or dt is _dt.bool_):  # floats; enums keep their storage
        return a.to(_dt.to_torch_dtype(dt))
    return saturate(a, dt)


class TorchXP:
    """The array operations of the shared kernels (:class:`~.shared.misc.ArrayOps`), torch."""

    cast = staticmethod(cast_saturate_torch)

    @staticmethod
    def reshape(a: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
        return a.reshape(shape)

    @staticmethod
    def transpose(a: torch.Tensor, perm: Sequence[int]) -> torch.Tensor:
        return a.permute(*perm).contiguous()

    @staticmethod
    def stack(xs: Sequence[torch.Tensor], axis: int) -> torch.Tensor:
        return torch.stack(list(xs), axis)

    @staticmethod
    def concat(xs: Sequence[torch.Tensor], axis: int) -> torch.Tensor:
        return torch.cat(list(xs), axis)

    @staticmethod
    def copy(a: torch.Tensor) -> torch.Tensor:
        return a.clone()

    @staticmethod
    def full(shape: tuple[int, ...], value: Any, dt: _dt.DType) -> torch.Tensor:
        dev = Device("gpu").torch_device()
        return torch.full(shape, value, dtype=_dt.to_torch_dtype(dt), device=dev)

    @staticmethod
    def one_hot(labels: torch.Tensor, n: int, on: float, off: float, dt: _dt.DType) -> torch.Tensor:
        hot = labels.to(torch.int64)[..., None] == torch.arange(n, device=labels.device)
        f64 = {"dtype": torch.float64, "device": labels.device}  # made on the device
        out = torch.where(hot, torch.full((), on, **f64), torch.full((), off, **f64))
        return out.to(_dt.to_torch_dtype(dt))

    @staticmethod
    def from_numpy(a: np.ndarray, dev: Device, dt: _dt.DType) -> torch.Tensor:
        return _st.move(a, dev, dt)


copy = G.bind(G.copy, TorchXP)
cast = G.bind(G.cast, TorchXP)
reshape = G.bind(G.reshape, TorchXP)
transpose = G.bind(G.transpose, TorchXP)
expand_dims = G.bind(G.expand_dims, TorchXP)
squeeze = G.bind(G.squeeze, TorchXP)
zeros = G.bind(G.zeros, TorchXP)
ones = G.bind(G.ones, TorchXP)
full = G.bind(G.full, TorchXP)
shapes = G.bind(G.shapes, TorchXP)
stack = G.bind(G.stack, TorchXP)
cat = G.bind(G.cat, TorchXP)
one_hot = G.bind(G.one_hot, TorchXP)
per_frame = G.bind(G.per_frame, TorchXP)
tensor_subscript = G.bind(G.tensor_subscript, TorchXP)
