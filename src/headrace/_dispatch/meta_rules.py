"""Output-metadata rules for operator schemas (``OpSchema(meta=...)``).

A rule gets the inputs' :class:`~headrace._core.meta.Meta` (``None`` for an absent input; a
call with an input of unknown metadata is not predicted at all), the converted arguments and
the tensor-valued arguments (by name), and returns one ``Meta`` (or ``None``) per output, or
``None`` when it cannot tell. A pending call's outputs then answer
``dtype``, ``ndim`` and ``layout`` without being computed (see :mod:`headrace._core.meta`).

Examples
--------
>>> from headrace._core import dtype as dt
>>> rule = same_as_input()
>>> [m] = rule([Meta(dt.uint8, 3, "HWC")], {"dtype": dt.float32}, {})
>>> m.dtype is dt.float32, m.ndim, m.layout
(True, 3, 'HWC')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.meta import Meta

Rule = Callable[[list[Meta | None], Mapping[str, Any], Mapping[str, Any]], Sequence[Any] | None]

__all__ = [
    "Meta",
    "Rule",
    "crop_mirror_normalize",
    "expand_dims",
    "filled",
    "per_frame",
    "random_bbox_crop",
    "random_value",
    "same_as_input",
    "stack",
    "subscript",
    "with_dtype",
    "warp_affine",
]


def _out_dtype(vals: Mapping[str, Any], default: _dt.DType) -> _dt.DType:
    return vals.get("dtype") or vals.get("output_dtype") or default


def same_as_input(*, needs_layout: bool = True) -> Rule:
    """Input 0's number of dimensions and layout; its type unless ``dtype`` says otherwise.

    ``needs_layout``: an input without a layout gets the operator's default one (an image op
    reads it as ``HWC``), so nothing is predicted for it.
    """
    return with_dtype(needs_layout=needs_layout)


def with_dtype(default: _dt.DType | None = None, *, needs_layout: bool = True) -> Rule:
    """Input 0's dimensions and layout, the type of ``dtype`` (or ``default``, or the input's);
    ``needs_layout`` as for :func:`same_as_input`."""

    def rule(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Mapping[str, Any]) -> Any:
        m = ins[0] if ins else None
        if m is None or (needs_layout and m.layout is None):
            return None
        return [Meta(_out_dtype(vals, default or m.dtype), m.ndim, m.layout)]

    return rule


def crop_mirror_normalize(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Any) -> Any:
    """float32 by default; the ``output_layout`` when it reorders the input's axes."""
    m = ins[0] if ins else None
    out_layout = vals.get("output_layout")
    if m is None or m.layout is None or m.ndim != 3 or not out_layout:
        return None
    if sorted(out_layout) != sorted(m.layout):
        return None
    return [Meta(_out_dtype(vals, _dt.float32), 3, out_layout)]


def filled(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Mapping[str, Any]) -> Any:
    """``zeros``/``ones``/``full``: ``shape``'s rank (else the fill value's), ``dtype`` (else the
    fill value's, else int32, the reference's default) and ``layout``."""
    if "shape" in lazy:
        return None
    fill = ins[0] if ins else None
    shape = vals.get("shape")
    ndim = len(shape) if shape is not None else (fill.ndim if fill is not None else 0)
    dtype = vals.get("dtype") or (fill.dtype if fill is not None else _dt.int32)
    return [Meta(dtype, ndim, vals.get("layout"))]


def random_value(default: _dt.DType) -> Rule:
    """A random generator: ``shape``'s rank, else the shape-like input's, else a scalar."""

    def rule(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Mapping[str, Any]) -> Any:
        if "shape" in lazy:
            return None
        shape = vals.get("shape")
        if shape is not None:
            ndim = max(int(np.size(shape)), 1) if np.ndim(shape) == 0 else len(shape)
        elif ins and ins[0] is not None:  # (a shape-like input)
            ndim = ins[0].ndim
        else:
            ndim = 0
        return [Meta(_out_dtype(vals, default), ndim, None)]

    return rule


def random_bbox_crop(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Any) -> Any:
    """Anchor and shape (float32 vectors), the boxes, the labels (a placeholder the function
    drops when none are given) and the indices of the boxes kept (int32)."""
    boxes = ins[0] if ins else None
    if boxes is None:
        return None
    return [
        Meta(_dt.float32, 1, None),
        Meta(_dt.float32, 1, None),
        Meta(boxes.dtype, boxes.ndim, boxes.layout),
        ins[1] if len(ins) > 1 else None,
        Meta(_dt.int32, 1, None),
    ]


def per_frame(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Any) -> Any:
    """The input with a layout that starts with ``F`` (``*`` for unnamed axes)."""
    m = ins[0] if ins else None
    if m is None or m.ndim == 0:
        return None
    lay = m.layout
    if lay and lay[0] == "F":
        new = lay
    elif lay and vals.get("replace"):
        new = "F" + lay[1:]
    elif lay:
        return None  # (an error, raised by the call)
    else:
        new = "F" + "*" * (m.ndim - 1)
    return [Meta(m.dtype, m.ndim, new)]


#: ``_inserted``'s answer for names inserted into a layout that is not known.
_UNKNOWN = object()


def _inserted(layout: str | None, ndim: int, at: Sequence[int], names: str | None) -> Any:
    """``layout`` with ``names`` at positions ``at`` of the result (None without names)."""
    if not names:
        return None
    if layout is None and ndim:
        return _UNKNOWN
    letters = list(layout or "")
    for pos, name in sorted(zip(at, names, strict=True)):
        letters.insert(pos, name)
    return "".join(letters)


def stack(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Any) -> Any:
    """One more dimension at ``axis``, named ``axis_name``; the inputs' type."""
    m = ins[0] if ins else None
    if m is None:
        return None
    axis = vals.get("axis") or 0
    if axis < 0:
        axis += m.ndim + 1
    lay = _inserted(m.layout, m.ndim, [axis], vals.get("axis_name"))
    if lay is _UNKNOWN or (lay is None and vals.get("axis_name") is None and m.layout):
        return None  # (a layout without the new axis' name: left to the result)
    return [Meta(m.dtype, m.ndim + 1, lay)]


def expand_dims(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Any) -> Any:
    """Dimensions of extent 1 at ``axes`` (of the result), named ``new_axis_names``."""
    m = ins[0] if ins else None
    axes = vals.get("axes")
    if m is None or axes is None:
        return None
    axes = [int(a) for a in axes]
    names = vals.get("new_axis_names")
    if any(a < 0 for a in axes) or (names and len(names) != len(axes)):
        return None
    lay = _inserted(m.layout, m.ndim, axes, names)
    if lay is _UNKNOWN or (lay is None and m.layout):
        return None
    return [Meta(m.dtype, m.ndim + len(axes), lay)]


def subscript(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Any) -> Any:
    """``x.slice[...]``: an integer index removes its dimension (and layout letter)."""
    m = ins[0] if ins else None
    spec = vals.get("_spec")
    if m is None or spec is None:
        return None
    spec = list(spec)
    if Ellipsis in spec:
        i = spec.index(Ellipsis)
        fill = m.ndim - (len(spec) - 1)
        if fill < 0:
            return None
        spec = spec[:i] + ["s"] * fill + spec[i + 1 :]
    if len(spec) > m.ndim:
        return None
    spec += ["s"] * (m.ndim - len(spec))
    kept = [d for d, kind in enumerate(spec) if kind != "i"]
    lay = None if m.layout is None else "".join(m.layout[d] for d in kept) or None
    return [Meta(m.dtype, len(kept), lay)]


def warp_affine(ins: list[Meta | None], vals: Mapping[str, Any], lazy: Any) -> Any:
    """The input's metadata; a per-frame ``mtx`` input makes a sequence of an image."""
    m = ins[0] if ins else None
    if m is None:
        return None
    dt = _out_dtype(vals, m.dtype)
    mtx = ins[1] if len(ins) > 1 else None
    frames = mtx is not None and bool(mtx.layout) and mtx.layout[0] == "F"  # type: ignore[index]
    if frames and not (m.layout or "").startswith("F"):
        if m.layout is None:
            return None
        return [Meta(dt, m.ndim + 1, "F" + m.layout)]
    return [Meta(dt, m.ndim, m.layout)]
