"""Nearest-neighbour sampling points of the affine warps (``rotate``, ``warp_affine``), shared by
the CPU and torch kernels: plain numpy on the host.

The rule is the reference's CPU warp (DALI 2.4), reproduced bit for bit:

* the destination-to-source matrix is float32 (``rotate``: cosine and sine of the float32
  angle, translation ``in_size / 2 - R @ (out_size / 2)`` evaluated in float32);
* coordinates have pixel corners at integers; the first source point of output row ``y`` is
  ``(t + m0 * 0.5) + m1 * (y + 0.5)`` (``m0``, ``m1``, ``t``: the matrix columns; float32,
  left to right), and each next pixel of the row adds ``m0`` to the previous point (float32
  accumulation);
* the pixel read is ``(floor(sx), floor(sy))``; outside the image it is the fill value, or the
  nearest edge pixel without one.

Where a point falls exactly on a pixel edge (an output size whose parity differs from the
input's, right-angle rotations), the float32 rounding of those steps decides which pixel is
read; OpenCV's and torch's nearest modes round such ties differently, hence this module.

Examples
--------
>>> m = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]], np.float32)  # half a pixel to the right
>>> sx, sy = nn_source_pixels(m, (1, 3))
>>> sx.tolist(), sy.tolist()
([[1.0, 2.0, 3.0]], [[0.0, 0.0, 0.0]])
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from functools import cache
from itertools import pairwise
from typing import Any

import cv2
import numpy as np

_F32 = np.float32
_HALF = np.float32(0.5)
_TURNS = 64  # full turns searched when recovering a rotation's float32 angle


@cache
def _libm() -> Any:
    """The C library's float32 ``cosf``/``sinf`` (what the reference's float32 ``std::cos`` and
    ``std::sin`` call), or ``None`` where it cannot be loaded."""
    try:
        lib = ctypes.CDLL("libm.so.6")
        for name in ("cosf", "sinf"):
            fn = getattr(lib, name)
            fn.restype = ctypes.c_float
            fn.argtypes = [ctypes.c_float]
    except (OSError, AttributeError):
        return None
    return lib


def _float32_angle(c: float, s: float) -> np.float32 | None:
    """The float32 angle ``a`` whose float64 cosine and sine are exactly ``c`` and ``s`` (a
    rotate plan holds those of DALI's float32 angle), or ``None`` when none is found."""
    base = math.atan2(s, c)
    for k in sorted(range(-_TURNS, _TURNS + 1), key=abs):
        a = _F32(base + 2.0 * math.pi * k)
        if math.cos(float(a)) == c and math.sin(float(a)) == s:
            return a
    return None


def rotation_matrix(
    matrix: np.ndarray, in_hw: tuple[int, int], out_hw: tuple[int, int]
) -> np.ndarray:
    """The reference's float32 ``rotate`` matrix for a plan's float64 one.

    The plan's rotation entries are the float64 cosine and sine of DALI's float32 angle; the
    reference takes float32 ``cosf``/``sinf`` of that angle (the C library's, when it can be
    loaded; else the float64 values rounded) and builds the translation in float32:
    ``tx = (c * -(ow / 2) + -s * -(oh / 2)) + w / 2``, ``ty = (s * -(ow / 2) + c * -(oh / 2))
    + h / 2``.

    Examples
    --------
    >>> rotation_matrix(np.array([[1.0, -0.0, 1.0], [0.0, 1.0, 1.0]]), (4, 6), (2, 4)).tolist()
    [[1.0, -0.0, 1.0], [0.0, 1.0, 1.0]]
    """
    c64, s64 = float(matrix[0][0]), float(matrix[1][0])
    lib = _libm()
    a = None if lib is None else _float32_angle(c64, s64)
    if a is None:
        c, s = _F32(c64), _F32(s64)
    else:
        c, s = _F32(lib.cosf(a)), _F32(lib.sinf(a))
    ox, oy = -(_F32(out_hw[1]) * _HALF), -(_F32(out_hw[0]) * _HALF)
    tx = (c * ox + -s * oy) + _F32(in_hw[1]) * _HALF
    ty = (s * ox + c * oy) + _F32(in_hw[0]) * _HALF
    return np.array([[c, -s, tx], [s, c, ty]], _F32)


def _granule(v: np.ndarray) -> float:
    """The largest power of two that divides every (float32) value of ``v`` (inf: all zero)."""
    nz = v[v != 0].astype(np.float64)
    if nz.size == 0:
        return math.inf
    mant, exp = np.frexp(nz)
    m = np.abs(mant * 2.0**24).astype(np.int64)
    low = m & -m
    return float(np.min(np.ldexp(low.astype(np.float64), exp - 24)))


def _exact_progression(start: np.ndarray, step: np.ndarray, n: int) -> bool:
    """Whether every ``start + k * step`` (``k < n``) is a float32 value: then the float32
    running sums equal the closed form (no step rounds)."""
    q = min(_granule(start), _granule(step))
    top = float(np.max(np.abs(start))) + (n - 1) * float(np.max(np.abs(step)))
    return q == math.inf or top <= q * 2.0**24


def nn_source_pixels(matrix: np.ndarray, out_hw: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The source pixel of every output pixel, as the reference's CPU nearest-neighbour warp
    picks it: ``(floor(sx), floor(sy))`` of its float32 row-wise running source points.

    Parameters
    ----------
    matrix : numpy.ndarray
        2x3 destination-to-source matrix, corner convention (used as float32).
    out_hw : tuple of int
        Output height and width (both positive).

    Returns
    -------
    tuple of numpy.ndarray
        Column and row indices, each ``out_hw`` float32 holding integers (any value: those
        outside the input are for the caller's border rule).
    """
    h, w = out_hw
    m = np.asarray(matrix, _F32)
    ys = np.arange(h, dtype=_F32) + _HALF
    pts = np.empty((w, 2 * h), _F32)  # row j: output column j, x of every row, then y
    pts[0, :h] = (m[0, 2] + m[0, 0] * _HALF) + m[0, 1] * ys
    pts[0, h:] = (m[1, 2] + m[1, 0] * _HALF) + m[1, 1] * ys
    step = np.repeat(m[:, 0], h)
    if _exact_progression(pts[0], step, w):
        pts[1:] = pts[0] + np.arange(1, w, dtype=_F32)[:, None] * step
    else:  # float32 accumulation, as the reference steps along a row
        for prev, col in pairwise(list(pts)):
            np.add(prev, step, out=col)
    np.floor(pts, out=pts)
    t = cv2.transpose(pts)
    return t[:h], t[h:]


def rotating(warp: Callable[..., Any]) -> Callable[..., Any]:
    """A backend's ``rotate`` kernel from its ``warp_affine``: nearest neighbour takes the
    reference's float32 matrix (:func:`rotation_matrix`: float32 cosine and sine, float32
    translation), whose rounding decides the half-pixel ties; linear takes the plan's as is.

    Examples
    --------
    >>> def warp(x, layout, *, matrix, out_hw, interp, **kw):
    ...     return matrix
    >>> m = np.array([[-1.0, 0.0, 3.0], [0.0, -1.0, 2.0]])  # 180 degrees of a 2x3 image
    >>> r = rotating(warp)(np.zeros((2, 3, 1)), "HWC", matrix=m, out_hw=(2, 3), interp="nn")
    >>> r.dtype.name, r.round(6).tolist()  # (float32 sin(pi) is -8.7e-8, not 0)
    ('float32', [[-1.0, -0.0, 3.0], [0.0, -1.0, 2.0]])
    """

    def rotate(x: Any, layout: str | None, *, matrix: np.ndarray, out_hw: tuple[int, int],
               interp: str, **kw: Any) -> Any:  # fmt: skip
        if interp == "nn":
            frames = layout is not None and layout.startswith("F")
            in_hw = tuple(x.shape[1:3] if frames else x.shape[:2])
            matrix = rotation_matrix(matrix, in_hw, out_hw)  # type: ignore[arg-type]
        return warp(x, layout, matrix=matrix, out_hw=out_hw, interp=interp, **kw)

    rotate.__doc__ = "``warp_affine`` with a rotate plan's matrix (see ``warp_nn.rotating``)."
    return rotate
