"""Parameter math of ``tensor_resize``: resampling arbitrary axes of any tensor.

The output extent of every axis comes from ``sizes`` or from ``scales`` times the input extent
(axes not named by ``axes``/``axis_names`` keep their extent), combined by ``mode`` and
``max_size`` exactly as ``resize`` does, then rounded per ``size_rounding``. With
``subpixel_scale`` the input region is stretched around the point
``(1 - alignment) * roi_start + alignment * roi_end`` so that the scale stays the fractional one.

The axes that change (different extent, a region of interest or a flip) must lie within three
consecutive dimensions, as in DALI 2.4; they are resampled by the ``tensor_resize`` kernels (the
``resize`` kernels seeing them as the spatial axes ``D``/``H``/``W`` of a stand-in layout,
``plan.kwargs["kernel_layout"]``).

Examples
--------
>>> flags = dict(size_rounding="round", roi_relative=False, subpixel_scale=True, antialias=True)
>>> p = tensor_resize_params((4, 6, 2), None, None, sizes=[2, 3], axes=[0, 1], **flags)
>>> p.shape, p.kwargs["kernel_layout"]
((2, 3, 2), 'HWC')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._core.saturate import round_half_away
from headrace._dispatch.planned import KernelPlan
from headrace.ops._geometry_common import as_float_list, check_choice
from headrace.ops._resize_params import (
    RESIZE_MODES,
    _adjust_output_size,
    crop_resize_plan,
    resize_window,
)
from headrace.types import INTERP_NN

OP = "tensor_resize"
SIZE_ROUNDING = ("round", "truncate", "ceil")
MAX_RESIZED_DIMS = 3
_f32 = np.float32


def _round_size(v: float, how: str) -> int:
    """Round a non-negative extent per ``size_rounding``."""
    if how == "round":
        return round_half_away(v)
    if how == "truncate":
        return int(v)
    return math.ceil(v)


def _per_axis(name: str, value: Any, axes: list[int], default: Sequence[float]) -> list[float]:
    """Spread the values given for ``axes`` over all dimensions (others take ``default``)."""
    vals = as_float_list(OP, name, value, len(axes))
    out = [float(v) for v in default]
    for a, v in zip(axes, vals):
        out[a] = v
    return out


def _check_args(sizes: Any, scales: Any, roi_start: Any, roi_end: Any, mode: str) -> None:
    if (sizes is None) == (scales is None):
        raise InvalidArgumentError(
            f"{OP}: give exactly one of `sizes` and `scales` (got "
            f"{'both' if sizes is not None else 'neither'}). Pass one of them."
        )
    if (roi_start is None) != (roi_end is None):
        raise InvalidArgumentError(
            f"{OP}: `roi_start` and `roi_end` must be given together (got only one). "
            "Pass both or neither."
        )
    if scales is not None and mode in ("not_smaller", "not_larger"):
        raise InvalidArgumentError(
            f"{OP}: `scales` cannot be combined with mode={mode!r}. Use `sizes` or another mode."
        )


def _check_dtype(dtype: Any, in_dtype: Any) -> None:
    if dtype is None or in_dtype is None:
        return
    if np.dtype(dtype) not in (np.dtype(in_dtype), np.dtype(np.float32)):
        raise InvalidArgumentError(
            f"{OP}: `dtype` must be the input type or float (got {np.dtype(dtype)}). "
            "Cast after resizing for other types."
        )


def _resized_block(changed: list[int], ndim: int) -> tuple[int, int]:
    """First axis and length of the block of consecutive axes that are resampled."""
    if not changed:
        return 0, 1  # nothing changes: a nearest-neighbour identity pass over axis 0
    first, last = changed[0], changed[-1]
    if last - first + 1 > MAX_RESIZED_DIMS:
        raise InvalidArgumentError(
            f"{OP}: at most {MAX_RESIZED_DIMS} consecutive dimensions can be resized "
            f"(got changes in dimensions {changed} of {ndim}). Resize in several steps."
        )
    return first, last - first + 1


def tensor_resize_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    /,
    *,
    size_rounding: str,
    roi_relative: bool,
    subpixel_scale: bool,
    antialias: bool,
    sizes: Any = None,
    scales: Any = None,
    axes: Any = None,
    axis_names: str | None = None,
    alignment: Any = None,
    mode: str | None = None,
    max_size: Any = None,
    roi_start: Any = None,
    roi_end: Any = None,
    interp_type: Any = None,
    min_filter: Any = None,
    mag_filter: Any = None,
    dtype: Any = None,
    minibatch_size: int | None = None,
    temp_buffer_hint: int | None = None,
) -> KernelPlan:
    """Plan ``tensor_resize`` for one sample (kernel: ``resize.tensor_resize``).

    Arguments left as ``None`` are "not given" (``alignment``: 0.5). ``sizes``, ``scales``,
    ``alignment``, ``max_size``, ``roi_start`` and ``roi_end`` hold one value per axis of
    ``axes`` (or of ``axis_names``; by default every dimension), or a single value for all of
    them. ``minibatch_size`` and ``temp_buffer_hint`` have no effect.

    Returns
    -------
    KernelPlan
        ``kwargs`` are those of ``resize.resize`` plus ``kernel_layout``, the stand-in layout
        the kernel resamples the sample as, instead of the sample's.

    Raises
    ------
    InvalidArgumentError
        Both or neither of ``sizes``/``scales``; ``scales`` with a keep-aspect mode; a bad
        ``size_rounding``, ``mode``, axis or ``dtype`` (only the input type or float32);
        changes spanning more than 3 dimensions.

    Examples
    --------
    >>> flags = dict(roi_relative=False, subpixel_scale=True, antialias=True)
    >>> tensor_resize_params((10,), None, None, scales=[0.35], size_rounding="truncate",
    ...                      **flags).shape
    (3,)
    """
    ndim = len(shape)
    if ndim < 1:
        raise ShapeError(f"{OP}: the input must have at least 1 dimension (got a scalar).")
    mode_ = check_choice(OP, "mode", mode if mode is not None else "default", RESIZE_MODES)
    check_choice(OP, "size_rounding", size_rounding, SIZE_ROUNDING)
    _check_args(sizes, scales, roi_start, roi_end, mode_)
    _check_dtype(dtype, in_dtype)
    ax = _layout.named_axes(OP, layout, ndim, axes, axis_names, None, None)
    extents = [float(s) for s in shape]
    if sizes is not None:
        req = _per_axis("sizes", sizes, ax, extents)
    else:
        scale = _per_axis("scales", scales, ax, [1.0] * ndim)
        req = [float(_f32(s) * _f32(e)) for s, e in zip(scale, extents)]
    roi_s = roi_e = None
    if roi_start is not None:
        roi_s = _per_axis("roi_start", roi_start, ax, [0.0] * ndim)
        roi_e = _per_axis("roi_end", roi_end, ax, [1.0] * ndim if roi_relative else extents)
    max_l = None if max_size is None else _per_axis("max_size", max_size, ax, [0.0] * ndim)
    align = _per_axis("alignment", 0.5 if alignment is None else alignment, ax, [0.5] * ndim)
    # The region (flips included) as resize computes it, before any sub-pixel adjustment.
    win = resize_window(
        [int(s) for s in shape], req, mode=mode_, max_size=max_l, roi_start=roi_s,
        roi_end=roi_e, roi_relative=roi_relative, subpixel_scale=False,
    )  # fmt: skip
    lo, hi = list(win.roi_lo), list(win.roi_hi)
    roi_ext = [_f32(abs(_f32(h) - _f32(l))) for l, h in zip(lo, hi)]
    out_f = _adjust_output_size([_f32(abs(r)) for r in req], roi_ext, mode_, max_l)
    min_size = 0 if any(s == 0 for s in shape) else 1
    out_size = []
    for d in range(ndim):
        o = abs(float(out_f[d]))
        dst = max(min_size, _round_size(o, size_rounding))
        if subpixel_scale and dst != o:
            adj = 10.0 if o == 0 else min(dst / o, 10.0)
            c = (1.0 - align[d]) * lo[d] + align[d] * hi[d]
            lo[d] = float(_f32(min(max(c + (lo[d] - c) * adj, -1e9), 1e9)))
            hi[d] = float(_f32(min(max(c + (hi[d] - c) * adj, -1e9), 1e9)))
        out_size.append(dst)
    changed = [
        d for d in range(ndim) if out_size[d] != shape[d] or lo[d] != 0 or hi[d] != float(shape[d])
    ]
    first, k = _resized_block(changed, ndim)
    block = range(first, first + k)
    kernel_layout = "F" * first + "DHW"[MAX_RESIZED_DIMS - k :] + "C" * (ndim - first - k)
    plan = crop_resize_plan(
        shape, kernel_layout, ([lo[d] for d in block], [hi[d] - lo[d] for d in block]),
        [out_size[d] for d in block], interp=interp_type if changed else INTERP_NN,
        min_filter=min_filter if changed else None, mag_filter=mag_filter if changed else None,
        antialias=antialias, dtype=dtype,
    )  # fmt: skip
    return KernelPlan(plan.shape, plan.dtype, {**plan.kwargs, "kernel_layout": kernel_layout})
