"""NumPy kernels of the basic operators (``ops/misc.py``): the generic kernels of
:mod:`headrace.backends.generic_misc` bound to :class:`NumpyXP`.

Examples
--------
>>> import numpy as np
>>> from headrace._core import dtype as dt
>>> cast_saturate_np(np.array([-1.5, 0.5, 300.0]), dt.uint8).tolist()
[0, 1, 255]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.device import Device
from headrace.backends import generic_misc as G


def round_half_away(a: np.ndarray) -> np.ndarray:
    """Round to nearest, halves away from zero (the reference's float → int rule)."""
    return np.where(a >= 0, np.floor(a + 0.5), np.ceil(a - 0.5))


def cast_saturate_np(a: np.ndarray, dt: _dt.DType) -> np.ndarray:
    """numpy cast with the reference's rules: round-to-nearest from floats, then saturate."""
    target = dt.numpy
    if dt.kind in (_dt.DType.Kind.signed, _dt.DType.Kind.unsigned):
        info = np.iinfo(target)
        if a.dtype.kind == "f":
            return np.clip(round_half_away(a), info.min, info.max).astype(target)
        if (
            (a.dtype.kind in "iu" and np.iinfo(a.dtype).max > info.max)
            or (a.dtype.kind == "i" and info.min == 0)
            or (a.dtype.kind in "iu" and np.iinfo(a.dtype).min < info.min)
        ):
            return np.clip(a, info.min, info.max).astype(target)
    if dt is _dt.bool_:
        return a != 0
    return a.astype(target)


class NumpyXP:
    """The array operations of the generic kernels (:class:`~.generic_misc.ArrayOps`), numpy."""

    cast = staticmethod(cast_saturate_np)

    @staticmethod
    def reshape(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return a.reshape(shape)

    @staticmethod
    def transpose(a: np.ndarray, perm: Sequence[int]) -> np.ndarray:
        return np.ascontiguousarray(np.transpose(a, perm))

    @staticmethod
    def stack(xs: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.stack(xs, axis)

    @staticmethod
    def concat(xs: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.concatenate(xs, axis)

    @staticmethod
    def copy(a: np.ndarray) -> np.ndarray:
        return a.copy()

    @staticmethod
    def full(shape: tuple[int, ...], value: Any, dt: _dt.DType) -> np.ndarray:
        return np.full(shape, value, dtype=dt.numpy)

    @staticmethod
    def one_hot(labels: np.ndarray, n: int, on: float, off: float, dt: _dt.DType) -> np.ndarray:
        hot = labels.astype(np.int64)[..., None] == np.arange(n)
        return np.where(hot, on, off).astype(dt.numpy)

    @staticmethod
    def from_numpy(a: np.ndarray, dev: Device, dt: _dt.DType) -> np.ndarray:
        return a


copy = G.bind(G.copy, NumpyXP)
cast = G.bind(G.cast, NumpyXP)
reshape = G.bind(G.reshape, NumpyXP)
transpose = G.bind(G.transpose, NumpyXP)
expand_dims = G.bind(G.expand_dims, NumpyXP)
squeeze = G.bind(G.squeeze, NumpyXP)
zeros = G.bind(G.zeros, NumpyXP)
ones = G.bind(G.ones, NumpyXP)
full = G.bind(G.full, NumpyXP)
shapes = G.bind(G.shapes, NumpyXP)
stack = G.bind(G.stack, NumpyXP)
cat = G.bind(G.cat, NumpyXP)
one_hot = G.bind(G.one_hot, NumpyXP)
per_frame = G.bind(G.per_frame, NumpyXP)
tensor_subscript = G.bind(G.tensor_subscript, NumpyXP)
