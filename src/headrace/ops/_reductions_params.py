"""Plans of the reductions (``ndd.reductions.*``): reduced axes, output shape and type.

Semantics checked against DALI 2.4 (CPU):

* inputs: the eight integer types and float32 (others are refused, as the reference does);
* default output type: ``sum`` gives uint64 for unsigned and int64 for signed integers and
  float32 for float32; ``min``/``max`` keep the input's type; ``mean``, ``mean_square``,
  ``rms``, ``std_dev`` and ``variance`` give float32;
* ``dtype`` may be: for ``sum`` the input's type, its 64-bit widening or float32 (64-bit
  integers: their own type only); for ``mean``
  and ``rms`` the input's type or float32; for ``mean_square`` the 64-bit widening or float32;
* ``axes`` / ``axis_names`` (not both; none: every axis; ``[]``: none), ``keep_dims`` keeps
  the reduced axes as extent 1 (and the layout); otherwise their layout letters are dropped;
* ``std_dev`` / ``variance`` take the mean as a second input: one value per output element
  (shaped like the output, with or without the kept unit dims) or a scalar, broadcast;
  the divisor is ``N - ddof``, unclamped (``ddof = N`` gives inf, as in the reference).

Examples
--------
>>> p = PLANS["sum"]((2, 3, 4), "HWC", np.dtype("uint8"), axis_names="HC")
>>> p.shape, p.dtype, p.kwargs["axes"]
((3,), dtype('uint64'), (0, 2))
>>> PLANS["mean"]((5,), None, np.dtype("int16"), keep_dims=True).shape
(1,)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace._dispatch.planned import KernelPlan

_INTS = tuple(np.dtype(t) for t in "u1 i1 u2 i2 u4 i4 u8 i8".split())
_F32 = np.dtype(np.float32)
SUPPORTED = (*_INTS, _F32)
KINDS = ("sum", "min", "max", "mean", "mean_square", "rms", "std_dev", "variance")


def _wide(dt: np.dtype) -> np.dtype:
    """The 64-bit integer of ``dt``'s signedness (float32 stays float32)."""
    if dt.kind == "f":
        return dt
    return np.dtype(np.uint64 if dt.kind == "u" else np.int64)


def output_types(kind: str, in_dt: np.dtype) -> tuple[np.dtype, ...]:
    """The output types ``kind`` accepts for ``in_dt`` input, the default first.

    Examples
    --------
    >>> [str(t) for t in output_types("sum", np.dtype("int8"))]
    ['int64', 'int8', 'float32']
    """
    if kind in ("min", "max"):
        return (in_dt,)
    if kind == "sum":  # (64-bit integers sum only to their own type)
        floats = () if in_dt.itemsize == 8 else (_F32,)
        return tuple(dict.fromkeys((_wide(in_dt), in_dt, *floats)))
    if kind in ("mean", "rms"):
        return tuple(dict.fromkeys((_F32, in_dt)))
    if kind == "mean_square":
        return tuple(dict.fromkeys((_F32, _wide(in_dt))))
    return (_F32,)  # std_dev, variance


def reduced_axes(op: str, shape: Sequence[int], layout: str | None, axes: Any,
                 axis_names: str | None) -> tuple[int, ...]:  # fmt: skip
    """The sorted axes to reduce (every axis when neither ``axes`` nor ``axis_names`` is given).

    Examples
    --------
    >>> reduced_axes("reductions.sum", (2, 3, 4), "HWC", [-1, 0], None)
    (0, 2)
    """
    if axis_names is not None and axes is None and not layout:
        raise InvalidArgumentError(
            f"{op}: axis_names={axis_names!r} needs an input layout, and the input has none. "
            "Pass `axes` or give the data a layout."
        )
    picked = _layout.named_axes(op, layout, len(shape), axes, axis_names, None, None)
    if len(set(picked)) != len(picked):
        raise InvalidArgumentError(
            f"{op}: an axis is given twice (axes {sorted(picked)}). Name each axis once."
        )
    return tuple(sorted(picked))


def _check_mean(op: str, mean: Any, out_shape: tuple[int, ...]) -> None:
    size = math.prod(mean.shape)
    want = math.prod(out_shape)
    if size != 1 and size != want:
        raise ShapeError(
            f"{op}: the mean has shape {tuple(mean.shape)} but the reduced sample has shape "
            f"{out_shape}. Pass one mean per output element (for example the output of "
            "reductions.mean with the same axes) or a scalar."
        )


def reduction_plan(kind: str) -> Callable[..., KernelPlan]:
    """The plan function of ``reductions.<kind>``."""
    op = f"reductions.{kind}"

    def plan(
        shape: tuple[int, ...],
        layout: str | None,
        in_dtype: np.dtype | None,
        *,
        axes: Any = None,
        axis_names: str | None = None,
        keep_dims: bool = False,
        dtype: np.dtype | None = None,
        ddof: int = 0,
        _mean: Any = None,
    ) -> KernelPlan:
        in_dt = None if in_dtype is None else np.dtype(in_dtype)
        if in_dt not in SUPPORTED:
            raise InvalidTypeError(
                f"{op}: unsupported input type {in_dt}. Pass integers or float32 (cast "
                "float64/float16/bool data first)."
            )
        allowed = output_types(kind, in_dt)
        out_dt = allowed[0] if dtype is None else np.dtype(dtype)
        if out_dt not in allowed:
            names = ", ".join(str(t) for t in allowed)
            raise InvalidTypeError(
                f"{op}: cannot reduce {in_dt} data to dtype={out_dt}. Use one of: {names}."
            )
        ax = reduced_axes(op, shape, layout, axes, axis_names)
        kept = tuple(1 if d in ax else e for d, e in enumerate(shape))
        out_shape = kept if keep_dims else tuple(e for d, e in enumerate(shape) if d not in ax)
        kw: dict[str, Any] = {"kind": kind, "axes": ax, "keep_dims": bool(keep_dims)}
        kw["dtype"] = out_dt
        if kind in ("std_dev", "variance"):
            assert _mean is not None
            _check_mean(op, _mean, out_shape)
            kw["ddof"] = int(ddof)
            kw["mean"] = _mean
        return KernelPlan(out_shape, out_dt, kw)

    plan.__name__ = plan.__qualname__ = f"{kind}_params"
    return plan


#: The plan function of each reduction, by kind.
PLANS = {k: reduction_plan(k) for k in KINDS}


def reduced_layout(layout: str | None, plans: Sequence[KernelPlan], args: Any) -> str | None:
    """The output layout: the input's without the reduced axes (all of it with ``keep_dims``).

    Examples
    --------
    >>> reduced_layout("HWC", [PLANS["max"]((2, 3, 4), "HWC", np.dtype("uint8"), axes=1)], {})
    'HC'
    """
    if not layout or not len(plans):
        return layout or None
    kw = plans[0].kwargs
    if kw["keep_dims"]:
        return layout
    return "".join(c for d, c in enumerate(layout) if d not in kw["axes"]) or None
