"""Layout strings (``"HWC"``, ``"FCHW"`` …): the checks and look-ups, written once.

:func:`validate` checks a layout a user gives to a tensor or batch (``InvalidArgumentError``);
the others check a sample's layout for an operator (``ShapeError``, naming the operator and
saying what to pass). ``D``, ``H`` and ``W`` are the spatial axes, ``C`` the channels, ``F``
the frames.

Examples
--------
>>> spatial_axes("HWC"), spatial_axes("FDHWC"), spatial_axes("CHW")
((0, 1), (1, 2, 3), (1, 2))
>>> require("crop", (4, 5, 3), "HWC")
'HWC'
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError, ShapeError

SPATIAL = "DHW"


@functools.lru_cache(maxsize=256)
def spatial_axes(layout: str) -> tuple[int, ...]:
    """Indices of the spatial axes (``D``, ``H``, ``W``) of ``layout``, outermost first (cached:
    every planned sample asks).

    Examples
    --------
    >>> spatial_axes("DHWC")
    (0, 1, 2)
    """
    return tuple(i for i, ch in enumerate(layout) if ch in SPATIAL)


def validate(layout: Any, ndim: int) -> str | None:
    """A user's layout for data of rank ``ndim``; ``None`` or ``""`` means no layout.

    Examples
    --------
    >>> validate("HWC", 3), validate("", 2)
    ('HWC', None)
    """
    if layout is None:
        return None
    if not isinstance(layout, str):
        raise InvalidArgumentError(
            f"The layout must be a string such as 'HWC' (got {type(layout).__name__})."
        )
    if layout == "":
        return None
    if len(layout) != ndim:
        raise InvalidArgumentError(
            f"The layout {layout!r} has {len(layout)} dimensions but the data has {ndim} "
            "dimensions."
        )
    return layout


def check_rank(op: str, shape: Sequence[int], layout: str | None) -> None:
    """Raise ShapeError when a given ``layout`` does not name every axis of ``shape``.

    Examples
    --------
    >>> check_rank("hsv", (4, 5, 3), None)
    """
    if layout and len(layout) != len(shape):
        raise ShapeError(
            f"{op}: the layout does not match the sample (got layout {layout!r} for shape "
            f"{tuple(shape)}). Pass a layout naming every axis, such as 'HWC'."
        )


def require(op: str, shape: Sequence[int], layout: str | None, min_spatial: int = 1) -> str:
    """``layout``, which must name every axis of ``shape`` and have ``min_spatial`` spatial axes.

    Examples
    --------
    >>> require("flip", (4, 5), "XY", min_spatial=0)
    'XY'
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
    return layout


def require_one_of(
    op: str,
    shape: Sequence[int],
    layout: str | None,
    layouts: Sequence[str],
    hint: str,
    what: str = "data",
) -> str:
    """``layout``, which must be one of ``layouts`` and name every axis of ``shape``.

    ``what`` names the data in the error (``"2-D images"``), ``hint`` says what to pass.

    Examples
    --------
    >>> require_one_of("water", (4, 5, 3), "HWC", ("HWC",), "Pass HWC images.")
    'HWC'
    """
    if layout not in layouts or len(layout) != len(shape):
        names = ", ".join(layouts[:-1]) + " or " + layouts[-1] if len(layouts) > 1 else layouts[0]
        raise ShapeError(
            f"{op}: expects {what} laid out as {names} (got layout {layout!r} for shape "
            f"{tuple(shape)}). {hint}"
        )
    return layout


def hw_axes(op: str, shape: Sequence[int], layout: str | None) -> tuple[int, int]:
    """Indices of ``H`` and ``W``; the layout must name every axis and have no ``D``.

    Examples
    --------
    >>> hw_axes("paste", (2, 4, 5, 3), "FHWC")
    (1, 2)
    """
    if (
        layout is None
        or len(layout) != len(shape)
        or "H" not in layout
        or "W" not in layout
        or "D" in layout
    ):
        raise ShapeError(
            f"{op}: the input needs a layout with exactly the spatial axes H and W, naming "
            f"every axis (got layout {layout!r} for shape {tuple(shape)}). Pass a layout such "
            "as 'HWC'."
        )
    return layout.index("H"), layout.index("W")


__all__ = [
    "SPATIAL",
    "check_rank",
    "hw_axes",
    "require",
    "require_one_of",
    "spatial_axes",
    "validate",
]


def named_axes(
    op: str,
    layout: str | None,
    ndim: int,
    axes: Any,
    axis_names: str | None,
    default_names: str | None,
    default_axes: Sequence[int] | None,
) -> list[int]:
    """The axes an operator works on, from ``axes`` or ``axis_names`` (not both), else the
    defaults; names must be in the layout, indices in range (negative ones count from the end)."""
    if axes is not None and axis_names is not None:
        raise InvalidArgumentError(
            f"{op}: give `axes` or `axis_names`, not both (got {axes} and {axis_names!r}). "
            "Drop one."
        )
    names = axis_names if axis_names is not None else (None if axes is not None else default_names)
    if names is not None and layout:
        missing = [n for n in names if n not in layout]
        if missing:
            raise InvalidArgumentError(
                f"{op}: axis names {missing} are not in the layout {layout!r}. "
                "Use names from the layout."
            )
        return [layout.index(n) for n in names]
    if axes is not None:
        picked = [int(a) for a in np.atleast_1d(axes)]
    else:
        picked = list(default_axes or range(ndim))
    out = []
    for a in picked:
        if not -ndim <= a < ndim:
            raise InvalidArgumentError(
                f"{op}: axis {a} is out of range for {ndim} dimensions. Use 0..{ndim - 1}."
            )
        out.append(a % ndim)
    return out
