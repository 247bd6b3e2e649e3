"""NumPy kernels of the basic operators (``ops/misc.py``): the generic kernels of
:mod:`headrace.backends.shared.misc` bound to :class:`NumpyXP`.

Examples
--------
>>> import numpy as np
>>> from headrace._core import dtype as dt
>>> cast_saturate_np(np.array([-1.5, 0.5, 300.0]), dt.uint8).tolist()
[0, 1, 255]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from headrace._core import dtype as _dt
from headrace._core.device import Device
from headrace._core.saturate import saturate
from headrace.backends.shared import misc as G

#: float16 bit patterns of the uint8 levels 0..255.
_U8_HALF_BITS = np.arange(256).astype(np.float16).view(np.uint16)


def cast_saturate_np(a: np.ndarray, dt: _dt.DType) -> np.ndarray:
    """numpy ``cast``: :func:`~headrace._core.saturate.saturate` (always a new array)."""
    if dt is _dt.float16 and a.dtype == np.uint8 and a.size >= 4096:
        # numpy's half conversion is scalar: the 256 levels' bits through OpenCV's LUT (~8x)
        bits = cv2.LUT(np.ascontiguousarray(a).reshape(-1, 1), _U8_HALF_BITS)
        return bits.reshape(a.shape).view(np.float16)  # type: ignore[no-any-return]
    if not (dt.is_integer or dt is _dt.bool_):  # floats; bfloat16/enums keep their storage
        return a.astype(dt.numpy)
    out = saturate(a, dt.numpy)
    return out.copy() if out is a else out


#: The numpy element types OpenCV arrays can hold (its depths 8U..64F).
CV_DEPTHS = {
    np.dtype(t)
    for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)
}


def _channel_join_ok(xs: Sequence[np.ndarray], axis: int) -> bool:
    """Whether :func:`_join_channels` takes this concatenation: the innermost axis of large
    arrays of one OpenCV type, each with at most 4 channels."""
    x0 = xs[0]
    return (
        len(xs) > 1
        and x0.ndim >= 2
        and axis in (-1, x0.ndim - 1)
        and x0.dtype in CV_DEPTHS
        and x0.size >= 4096
        and all(x.dtype == x0.dtype and x.shape[:-1] == x0.shape[:-1] for x in xs)
        and all(1 <= x.shape[-1] <= 4 for x in xs)
    )


def _join_channels(xs: Sequence[np.ndarray]) -> np.ndarray:
    """``np.concatenate(xs, axis=-1)`` through planes: every channel split out (OpenCV), the
    planes stacked, and one transpose back (~4x numpy, whose copy loops run over 3 channels)."""
    lead = xs[0].shape[:-1]
    n = math.prod(lead)
    planes = []
    for x in xs:
        c = x.shape[-1]
        flat = np.ascontiguousarray(x).reshape(n, 1, c)
        planes += [flat.reshape(1, n)] if c == 1 else [p.reshape(1, n) for p in cv2.split(flat)]
    joined = np.concatenate(planes)  # (channels, n)
    return cv2.transpose(joined).reshape(*lead, joined.shape[0])  # type: ignore[no-any-return]


class NumpyXP:
    """The array operations of the shared kernels (:class:`~.shared.misc.ArrayOps`), numpy."""

    cast = staticmethod(cast_saturate_np)

    @staticmethod
    def reshape(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return a.reshape(shape)

    @staticmethod
    def transpose(a: np.ndarray, perm: Sequence[int]) -> np.ndarray:
        p = tuple(perm)
        if (
            (p == (1, 0) or (p == (1, 0, 2) and a.shape[2] <= 4))
            and a.dtype in CV_DEPTHS
            and a.size
        ):  # swapping the two outer axes: OpenCV's transpose, ~17x numpy's strided copy
            return cv2.transpose(np.ascontiguousarray(a)).reshape(tuple(a.shape[i] for i in p))
        return np.ascontiguousarray(np.transpose(a, perm))

    @staticmethod
    def stack(xs: Sequence[np.ndarray], axis: int) -> np.ndarray:
        return np.stack(xs, axis)

    @staticmethod
    def concat(xs: Sequence[np.ndarray], axis: int) -> np.ndarray:
        if _channel_join_ok(xs, axis):
            return _join_channels(xs)
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
