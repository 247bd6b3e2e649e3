"""Parameter math for ``rotate`` and ``warp_affine`` (2-D images and sequences of them).

Both ops reduce to one destination-to-source affine map in DALI's coordinate convention: the
point ``(0, 0)`` is the *corner* of the first pixel, pixel ``(i, j)`` has its centre at
``(j + 0.5, i + 0.5)`` (x, y). The kernels sample the source at ``M @ (x + 0.5, y + 0.5, 1)``.

Rotation (checked against DALI 2.4 for shapes and pixels):

* positive ``angle`` (degrees) turns the image counter-clockwise on screen;
* the canvas, unless ``size`` or ``keep_size`` is given, is the bounding box of the rotated
  image, ``ceil(|cos| w + |sin| h - 0.01)`` by ``ceil(|cos| h + |sin| w - 0.01)``, grown by one
  where needed so that each side keeps the parity of the input side it is mostly made of
  (computed with DALI's float32 angle so that 45-degree ties break the same way);
* the input centre maps onto the output centre.

``fill_value=None`` (the default, as in DALI) clamps source coordinates, repeating the border.
Only nearest-neighbour and linear interpolation exist (DALI rejects the others for warps).
``size`` values are truncated to integers, as DALI 2.4 does.

Examples
--------
>>> rotated_canvas_size(30, 20, 90.0)
(20, 30)
>>> rotate_params((30, 20, 3), "HWC", "uint8", angle=45.0).shape
(36, 36, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError
from headrace._core.saturate import saturate
from headrace._dispatch.planned import KernelPlan
from headrace.backends.shared.common import dali_radians as _dali_radians
from headrace.backends.shared.common import rotated_canvas_size
from headrace.ops._color_params import to_numpy_dtype
from headrace.ops._geometry_common import nn_or_linear
from headrace.types import DALIInterpType

_F32 = np.float32
_LAYOUTS = ("HWC", "FHWC", "HW", "FHW")


def _spatial(op: str, shape: Sequence[int], layout: str | None) -> tuple[int, int]:
    if layout is None:
        layout = "HWC" if len(shape) == 3 else "HW" if len(shape) == 2 else ""
    hint = "Volumes (DHWC) are not supported yet; transpose CHW data to HWC first."
    i = _layout.require_one_of(op, shape, layout, _LAYOUTS, hint, "2-D images").index("H")
    return int(shape[i]), int(shape[i + 1])


def _out_shape(shape: Sequence[int], layout: str | None, hw: tuple[int, int]) -> tuple[int, ...]:
    out = list(shape)
    i = (layout or ("HWC" if len(shape) == 3 else "HW")).index("H")
    out[i], out[i + 1] = hw
    return tuple(out)


def _size_arg(op: str, size: Any) -> tuple[int, int] | None:
    if size is None:
        return None
    vals = np.asarray(size, dtype=np.float64).ravel()
    if vals.size == 0:
        return None
    if vals.size != 2 or np.any(vals < 0) or not np.all(np.isfinite(vals)):
        raise InvalidArgumentError(
            f"{op}: `size` must be two non-negative numbers (height, width) (got "
            f"{vals.tolist()}). Leave out the channel axis."
        )
    return int(vals[0]), int(vals[1])


def _as_input_type(fill_value: float, in_dtype: Any) -> float:
    """The fill value converted to the input's type first (rounded and clamped for integer
    data), as the reference: a uint8 image filled with 58.53 gets 59, also in a float output."""
    dt = to_numpy_dtype(in_dtype)
    if dt is None or dt.kind not in "iub":
        return float(fill_value)
    return float(saturate(np.asarray([fill_value], np.float64), dt)[0])


def _plan(op, shape, layout, in_dtype, matrix, hw, fill_value, interp, dtype) -> KernelPlan:
    out_dt = to_numpy_dtype(dtype) or np.dtype(in_dtype)
    kw = {
        "matrix": np.asarray(matrix, np.float64),
        "out_hw": hw,
        "fill_value": None if fill_value is None else _as_input_type(fill_value, in_dtype),
        "interp": nn_or_linear(op, interp),
        "dtype": out_dt,
    }
    return KernelPlan(_out_shape(shape, layout, hw), out_dt, kw)


def rotate_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    angle: float,
    axis: Any = None,
    keep_size: bool = False,
    size: Any = None,
    fill_value: float | None = None,
    interp_type: Any = DALIInterpType.INTERP_LINEAR,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``rotate`` by ``angle`` degrees counter-clockwise about the image centre.

    Examples
    --------
    >>> p = rotate_params((10, 20, 3), "HWC", "uint8", angle=90.0)
    >>> p.shape, p.kwargs["out_hw"]
    ((20, 10, 3), (20, 10))
    """
    op = "rotate"
    if axis is not None and np.asarray(axis).size:
        raise InvalidArgumentError(
            f"{op}: `axis` applies to 3-D volumes, which are not supported yet (got {axis!r}). "
            "Rotate 2-D images without `axis`."
        )
    angle = float(angle)
    if not math.isfinite(angle):
        raise InvalidArgumentError(f"{op}: `angle` must be finite (got {angle}). Pass degrees.")
    h, w = _spatial(op, shape, layout)
    hw = _size_arg(op, size)
    if hw is None:
        hw = (h, w) if keep_size else rotated_canvas_size(h, w, angle)
    a = _dali_radians(angle)
    c, s = math.cos(a), math.sin(a)
    rot = np.array([[c, -s], [s, c]])
    t = np.array([w / 2, h / 2]) - rot @ np.array([hw[1] / 2, hw[0] / 2])
    matrix = np.concatenate([rot, t[:, None]], axis=1)
    return _plan(op, shape, layout, in_dtype, matrix, hw, fill_value, interp_type, dtype)


def warp_affine_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    matrix: Any,
    size: Any = None,
    inverse_map: bool = True,
    fill_value: float | None = None,
    interp_type: Any = DALIInterpType.INTERP_LINEAR,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``warp_affine``; ``matrix`` (2x3 or 6 values) maps output to input points unless
    ``inverse_map=False``, in which case it maps input to output and is inverted.

    Examples
    --------
    >>> p = warp_affine_params((8, 8, 1), "HWC", "uint8", matrix=[1, 0, 2, 0, 1, 0])
    >>> p.kwargs["matrix"].tolist()
    [[1.0, 0.0, 2.0], [0.0, 1.0, 0.0]]
    """
    op = "warp_affine"
    m = np.asarray(matrix, dtype=np.float64).ravel()
    if m.size != 6 or not np.all(np.isfinite(m)):
        raise InvalidArgumentError(
            f"{op}: `matrix` must hold 6 finite numbers, a 2x3 matrix (got {m.size} values). "
            "Pass [[m11, m12, m13], [m21, m22, m23]]."
        )
    m = m.reshape(2, 3)
    if not inverse_map:
        full = np.vstack([m, [0.0, 0.0, 1.0]])
        if abs(np.linalg.det(full)) < 1e-12:
            raise InvalidArgumentError(
                f"{op}: the matrix is singular and cannot be inverted (got {m.tolist()}). "
                "Pass an invertible transform."
            )
        m = np.linalg.inv(full)[:2]
    h, w = _spatial(op, shape, layout)
    hw = _size_arg(op, size) or (h, w)
    return _plan(op, shape, layout, in_dtype, m, hw, fill_value, interp_type, dtype)
