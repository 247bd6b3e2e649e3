"""Helpers shared by the parameter modules: layout parsing and argument checks.

A *plan* (:class:`headrace._dispatch.planned.KernelPlan`, re-exported here for the parameter
modules of other families) is what a parameter function returns for one sample.

Examples
--------
>>> spatial_axes("HWC"), spatial_axes("FDHWC"), spatial_axes("CHW")
((0, 1), (1, 2, 3), (1, 2))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.planned import KernelPlan as KernelPlan

SPATIAL_CHARS = "DHW"


def spatial_axes(layout: str) -> tuple[int, ...]:
    """Indices of the spatial axes (``D``, ``H``, ``W``) of ``layout``, outermost first.

    Examples
    --------
    >>> spatial_axes("DHWC")
    (0, 1, 2)
    """
    return tuple(i for i, ch in enumerate(layout) if ch in SPATIAL_CHARS)


def check_layout(op: str, shape: Sequence[int], layout: str, min_spatial: int = 1) -> None:
    """Raise ShapeError unless ``layout`` names every axis of ``shape`` and has spatial axes.

    Examples
    --------
    >>> check_layout("crop", (4, 5, 3), "HWC")
    """
    if layout is None or len(layout) != len(shape):
        raise ShapeError(
            f"{op}: the layout must name every axis of the sample (got layout {layout!r} "
            f"for shape {tuple(shape)}). Pass a layout such as 'HWC'."
        )
    if len(spatial_axes(layout)) < min_spatial:
        raise ShapeError(
            f"{op}: the layout has no spatial axes D/H/W (got {layout!r}). "
            "Pass image data with a layout such as 'HWC' or 'CHW'."
        )


def as_float_list(op: str, name: str, value: Any, n: int) -> list[float]:
    """Broadcast a scalar or check a length-``n`` sequence, returning floats.

    Examples
    --------
    >>> as_float_list("resize", "size", 3, 2)
    [3.0, 3.0]
    """
    arr = np.asarray(value, dtype=np.float64).ravel()
    if arr.size == 1:
        return [float(arr[0])] * n
    if arr.size != n:
        raise InvalidArgumentError(
            f"{op}: `{name}` needs 1 or {n} values (got {arr.size}: {arr.tolist()}). "
            f"Give one value per spatial axis."
        )
    return [float(v) for v in arr]


def check_choice(op: str, name: str, value: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise InvalidArgumentError.

    Examples
    --------
    >>> check_choice("crop", "rounding", "round", ("round", "truncate"))
    'round'
    """
    if value not in choices:
        raise InvalidArgumentError(
            f"{op}: `{name}` must be one of {list(choices)} (got {value!r}). "
            "Pick one of the listed values."
        )
    return value
