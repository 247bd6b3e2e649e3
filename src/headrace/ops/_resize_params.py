"""Parameter math of the resize family (``resize``, ``resize_crop_mirror``, ``tensor_resize``).

Output-size rules follow DALI 2.4: the requested extents are combined according to ``mode``
(missing extents scaled by the geometric mean of the given scales in ``"default"`` mode, kept
in ``"stretch"`` mode, a common scale in ``"not_smaller"``/``"not_larger"``), limited by
``max_size``, rounded half away from zero, and - with ``subpixel_scale`` - the input ROI is
widened or narrowed around its centre so that the scale stays the fractional one that was
asked for. The arithmetic is done in float32 where DALI uses ``float``, so shapes agree with
DALI exactly (checked by the tests over many combinations).

Resampling is separable. Each spatial axis gets a filter: nearest neighbour, or a tabulated
window (triangle, Gaussian, Catmull-Rom cubic, Lanczos-3) whose support grows with the
downscale factor when ``antialias`` is on. The plans name the filters (:class:`AxisFilter`);
the kernels turn them into source indices and coefficients
(:func:`headrace.backends.shared.common.axis_weights`).

Every plan function takes the sample's shape, layout and dtype, then the operator's arguments
by their schema names (defaults are the schema's; ``None`` means "not given").

Examples
--------
>>> plan = resize_params((480, 640, 3), "HWC", None, resize_shorter=256, antialias=True,
...                      roi_relative=False, subpixel_scale=True, save_attrs=False)
>>> plan.shape
(256, 341, 3)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._core.layout import spatial_axes
from headrace._core.saturate import round_half_away
from headrace._dispatch.planned import KernelPlan
from headrace.ops._geometry_common import (
    as_float_list,
    check_choice,
)
from headrace.types import DALIInterpType
from headrace.types import interp_type as _to_interp

_f32 = np.float32
RESIZE_MODES = ("default", "stretch", "not_smaller", "not_larger")


# ----------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class AxisFilter:
    """Resampling filter for one axis.

    Attributes
    ----------
    kind : str
        ``"nn"``, ``"triangular"`` (linear interpolation is a triangle of support 2),
        ``"gaussian"``, ``"cubic"`` or ``"lanczos3"``.
    support : float
        Width of the window in input pixels (ignored for ``"nn"``).
    """

    kind: str
    support: float = 2.0


def _filter_support(kind: str, radius: float) -> float:
    """Window width for a filter of the given radius (DALI's rescale rules)."""
    r = float(_f32(radius))
    if kind == "cubic":
        return max(4.0, 2 * r)
    if kind == "lanczos3":
        return 2 * max(3.0, r)
    return max(1.0, 2 * r)


_BASE_RADIUS = {"triangular": 1.0, "gaussian": 1.0, "cubic": 2.0, "lanczos3": 3.0}


def _default_radius(kind: str, in_size: float, out_size: float, antialias: bool) -> float:
    base = _BASE_RADIUS[kind]
    if antialias and in_size > out_size:
        return base * float(_f32(in_size) / _f32(out_size))
    return base


# ----------------------------------------------------------------------------- filter choice


def _filter_kinds(
    interp: Any, min_filter: Any, mag_filter: Any, antialias: bool
) -> tuple[str, str, bool]:
    """Resolve (min kind, mag kind) from the interpolation arguments, as DALI does."""
    names = {
        DALIInterpType.INTERP_NN: "nn",
        DALIInterpType.INTERP_LINEAR: "triangular",
        DALIInterpType.INTERP_TRIANGULAR: "triangular",
        DALIInterpType.INTERP_CUBIC: "cubic",
        DALIInterpType.INTERP_LANCZOS3: "lanczos3",
        DALIInterpType.INTERP_GAUSSIAN: "gaussian",
    }
    min_src = min_filter if min_filter is not None else interp
    mag_src = mag_filter if mag_filter is not None else interp
    min_kind = "triangular" if min_src is None else names[_to_interp(min_src)]
    mag_kind = "triangular" if mag_src is None else names[_to_interp(mag_src)]
    return min_kind, mag_kind, antialias


def choose_filter(
    min_kind: str, mag_kind: str, antialias: bool, in_size: float, out_size: int
) -> AxisFilter:
    """Pick the filter of one axis: the minifying one when the axis shrinks.

    Examples
    --------
    >>> choose_filter("triangular", "triangular", True, 400.0, 100)
    AxisFilter(kind='triangular', support=8.0)
    """
    shrinking = out_size < in_size
    kind = min_kind if shrinking else mag_kind
    if kind == "nn":
        return AxisFilter("nn", 1.0)
    radius = _default_radius(kind, in_size, out_size, antialias and shrinking)
    return AxisFilter(kind, _filter_support(kind, radius))


# ----------------------------------------------------------------------------- sizes


def _adjust_output_size(
    req: list[np.float32], in_size: list[np.float32], mode: str, max_size: list[float] | None
) -> list[np.float32]:
    """DALI's extent resolution (float/double mix reproduced)."""
    ndim = len(req)
    out = list(req)
    mask = [bool(out[d] != 0 and in_size[d] != 0) for d in range(ndim)]
    scale = [float(out[d] / in_size[d]) if in_size[d] else 1.0 for d in range(ndim)]
    provided = sum(mask)
    if provided == 0:
        return list(in_size)

    def limit(d: int) -> None:
        if max_size is not None and max_size[d] > 0 and abs(out[d]) > max_size[d]:
            out[d] = _f32(math.copysign(max_size[d], out[d]))

    if mode in ("default", "stretch"):
        if provided < ndim:
            if mode == "default":
                avg = 1.0
                for d in range(ndim):
                    if mask[d]:
                        avg *= abs(scale[d])
                if provided > 1:
                    avg = avg ** (1.0 / provided)
            for d in range(ndim):
                if not mask[d]:
                    out[d] = _f32(float(in_size[d]) * avg) if mode == "default" else in_size[d]
        for d in range(ndim):
            limit(d)
        return out
    final = 0.0
    first = True
    for d in range(ndim):
        if mask[d]:
            s = float(_f32(abs(scale[d])))
            if (
                first
                or (mode == "not_smaller" and s > final)
                or (mode == "not_larger" and s < final)
            ):
                final = s
            first = False
    if max_size is not None:
        for d in range(ndim):
            if max_size[d] > 0:
                s = float(max_size[d]) / float(in_size[d])
                final = min(final, s)
    for d in range(ndim):
        if not mask[d] or abs(scale[d]) != final:
            sc = math.copysign(final, scale[d])
            out[d] = _f32(float(in_size[d]) * sc)
    return out


_MAX_EXTENT = 2**31 - 1
"""The largest output extent (the kernels' sizes are 32-bit)."""


def _size_arg_name(resize_shorter: Any, resize_longer: Any) -> str:
    if resize_shorter is not None:
        return "resize_shorter"
    if resize_longer is not None:
        return "resize_longer"
    return "resize_x/resize_y/resize_z"


@dataclass(frozen=True)
class ResizeWindow:
    """Per-spatial-axis result of DALI's size logic: output extents and input ROI."""

    out_size: tuple[int, ...]
    roi_lo: tuple[float, ...]
    roi_hi: tuple[float, ...]


_EXACT_F32 = 1 << 24  # integers below this are exact in float32


def resize_window(
    in_size: Sequence[int],
    requested: Sequence[float],
    *,
    mode: str = "default",
    max_size: Sequence[float] | None = None,
    roi_start: Sequence[float] | None = None,
    roi_end: Sequence[float] | None = None,
    roi_relative: bool = False,
    subpixel_scale: bool = True,
) -> ResizeWindow:
    """Output extents and source ROI for the spatial extents ``in_size`` (outermost first).

    ``requested`` holds one requested extent per axis (0 = unspecified, negative = flip).

    Examples
    --------
    >>> resize_window((480, 640), (256, 256), mode="not_smaller").out_size
    (256, 341)
    """
    ndim = len(in_size)
    if (  # the usual explicit size (e.g. a random crop to 224x224): whole input, exact extents
        roi_start is None
        and max_size is None
        and mode in ("default", "stretch")
        and all(r > 0 and float(r).is_integer() and r < _EXACT_F32 for r in requested)
        and all(0 < s < _EXACT_F32 for s in in_size)
    ):
        return ResizeWindow(
            tuple(int(r) for r in requested), (0.0,) * ndim, tuple(float(s) for s in in_size)
        )
    empty_input = any(s == 0 for s in in_size)
    lo: list[np.float32] = []
    hi: list[np.float32] = []
    for d in range(ndim):
        if roi_start is not None and roi_end is not None and in_size[d] > 0:
            a, b = float(_f32(roi_start[d])), float(_f32(roi_end[d]))
            if roi_relative:
                a *= in_size[d]
                b *= in_size[d]
            if abs(b - a) < 1e-3:
                off = float(_f32(0.5e-3)) * (1 if a <= b else -1)
                a, b = a - off, b + off
            lo.append(_f32(a))
            hi.append(_f32(b))
        else:
            lo.append(_f32(0))
            hi.append(_f32(in_size[d]))
    req = [_f32(r) for r in requested]
    sizes: list[np.float32] = []
    for d in range(ndim):
        sz = hi[d] - lo[d]
        if sz < 0:
            lo[d], hi[d] = hi[d], lo[d]
            req[d] = -req[d]
            sz = -sz
        sizes.append(_f32(sz))
    out = _adjust_output_size(req, sizes, mode, None if max_size is None else list(max_size))
    min_size = 0 if empty_input else 1
    out_size: list[int] = []
    for d in range(ndim):
        if lo[d] == hi[d] and out[d] != 0:
            raise ShapeError(
                f"resize: cannot produce a non-empty output from an empty input region "
                f"(got input extents {tuple(in_size)}). Give a non-empty input or ROI."
            )
        o = float(out[d])
        dst = max(min_size, round_half_away(abs(o)))
        out_size.append(dst)
        if o < 0:
            lo[d], hi[d] = hi[d], lo[d]
        if subpixel_scale and dst != abs(o):
            adj = min(max(dst / abs(o), -10.0), 10.0)
            center = (float(lo[d]) + float(hi[d])) * 0.5
            lo[d] = _f32(min(max(center + (float(lo[d]) - center) * adj, -1e9), 1e9))
            hi[d] = _f32(min(max(center + (float(hi[d]) - center) * adj, -1e9), 1e9))
    return ResizeWindow(tuple(out_size), tuple(float(v) for v in lo), tuple(float(v) for v in hi))


def _spatial_info(op: str, shape: Sequence[int], layout: str) -> tuple[int, ...]:
    _layout.require(op, shape, layout)
    axes = spatial_axes(layout)
    if axes != tuple(range(axes[0], axes[0] + len(axes))):
        raise ShapeError(
            f"{op}: spatial dimensions must be adjacent, as in HWC (got layout {layout!r}). "
            "Transpose the data first."
        )
    return axes


def _resolve_dtype(op: str, dtype: Any) -> np.dtype | None:
    if dtype is None:
        return None
    return np.dtype(dtype)


def resize_params(
    shape: Sequence[int],
    layout: str,
    in_dtype: Any,
    /,
    *,
    antialias: bool,
    roi_relative: bool,
    subpixel_scale: bool,
    save_attrs: bool,
    size: Any = None,
    resize_x: float | None = None,
    resize_y: float | None = None,
    resize_z: float | None = None,
    resize_shorter: float | None = None,
    resize_longer: float | None = None,
    max_size: Any = None,
    mode: str | None = None,
    interp_type: Any = None,
    min_filter: Any = None,
    mag_filter: Any = None,
    roi_start: Any = None,
    roi_end: Any = None,
    dtype: Any = None,
    image_type: Any = None,
    minibatch_size: int | None = None,
    temp_buffer_hint: int | None = None,
) -> KernelPlan:
    """Plan ``resize`` for one sample (kernel: ``resize.resize``).

    Arguments left as ``None`` count as "not specified" (DALI distinguishes that from a
    value equal to the default). ``dtype`` must be ``None``, the input type ``in_dtype`` or
    float32. ``image_type``, ``minibatch_size`` and ``temp_buffer_hint`` have no effect.

    Returns
    -------
    KernelPlan
        ``kwargs`` holds ``out_size``, ``roi_lo``, ``roi_hi`` (floats per spatial axis) and
        ``filters`` (one :class:`AxisFilter` per spatial axis).

    Examples
    --------
    >>> flags = dict(antialias=True, roi_relative=False, subpixel_scale=True, save_attrs=False)
    >>> p = resize_params((100, 200, 3), "HWC", None, size=[50, 0], **flags)
    >>> p.shape, p.kwargs["filters"][0].support
    ((50, 100, 3), 4.0)
    """
    if save_attrs:
        raise InvalidArgumentError(
            "resize: `save_attrs` is not supported (got True). Use ndd.shapes() on the output."
        )
    op = "resize"
    axes = _spatial_info(op, shape, layout)
    ndim = len(axes)
    in_size = [int(shape[a]) for a in axes]
    separate = [v is not None for v in (resize_x, resize_y, resize_z)]
    methods = any(separate) + (size is not None) + (resize_shorter is not None)
    methods += resize_longer is not None
    if methods != 1:
        raise InvalidArgumentError(
            f"{op}: exactly one way of giving the size is allowed (got {methods}). Use one of "
            "`size`, `resize_x`/`resize_y`/`resize_z`, `resize_shorter` or `resize_longer`."
        )
    if (resize_shorter is not None) + (resize_longer is not None) + (mode is not None) > 1:
        raise InvalidArgumentError(
            f"{op}: `resize_shorter`, `resize_longer` and `mode` are mutually exclusive "
            f"(got mode={mode!r}). Drop `mode` or use `size`."
        )
    if (roi_start is None) != (roi_end is None):
        raise InvalidArgumentError(
            f"{op}: `roi_start` and `roi_end` must be given together (got only one). "
            "Pass both or neither."
        )
    if resize_shorter is not None:
        mode_ = "not_smaller"
        requested = [float(resize_shorter)] * ndim
    elif resize_longer is not None:
        mode_ = "not_larger"
        requested = [float(resize_longer)] * ndim
    else:
        mode_ = check_choice(op, "mode", mode if mode is not None else "default", RESIZE_MODES)
        if size is not None:
            requested = as_float_list(op, "size", size, ndim)
        else:
            xyz = [resize_x or 0.0, resize_y or 0.0, resize_z or 0.0]
            requested = [float(v) for v in reversed(xyz[:ndim])]
    max_l = None if max_size is None else as_float_list(op, "max_size", max_size, ndim)
    roi_s = roi_e = None
    if roi_start is not None:
        roi_s = as_float_list(op, "roi_start", roi_start, ndim)
        roi_e = as_float_list(op, "roi_end", roi_end, ndim)
    for arg, vals in (("size", requested), ("max_size", max_l), ("roi_start", roi_s),
                      ("roi_end", roi_e)):  # fmt: skip
        if vals is not None and not all(math.isfinite(v) for v in vals):
            shown = (
                arg
                if arg != "size" or size is not None
                else _size_arg_name(resize_shorter, resize_longer)
            )
            raise InvalidArgumentError(f"{op}: `{shown}` must be finite (got {list(vals)}).")
    win = resize_window(
        in_size,
        requested,
        mode=mode_,
        max_size=max_l,
        roi_start=roi_s,
        roi_end=roi_e,
        roi_relative=roi_relative,
        subpixel_scale=subpixel_scale,
    )
    if any(e > _MAX_EXTENT for e in win.out_size):
        raise InvalidArgumentError(
            f"{op}: the output size {list(win.out_size)} is too large (each extent at most "
            f"{_MAX_EXTENT}); check `size`/`resize_*`/`max_size`."
        )
    out_dtype = _resolve_dtype(op, dtype)
    if out_dtype is not None and in_dtype is not None:
        if out_dtype not in (np.dtype(in_dtype), np.dtype(np.float32)):
            raise InvalidArgumentError(
                f"{op}: `dtype` must be the input type or float (got {out_dtype}). "
                "Cast after resizing for other types."
            )
    kinds = _filter_kinds(interp_type, min_filter, mag_filter, bool(antialias))
    return _plan_from_window(shape, axes, win, kinds, out_dtype)


def _plan_from_window(
    shape: Sequence[int],
    axes: tuple[int, ...],
    win: ResizeWindow,
    kinds: tuple[str, str, bool],
    out_dtype: np.dtype | None,
) -> KernelPlan:
    filters = tuple(
        choose_filter(*kinds, abs(h - l), o)
        for l, h, o in zip(win.roi_lo, win.roi_hi, win.out_size)
    )
    out_shape = list(shape)
    for a, o in zip(axes, win.out_size):
        out_shape[a] = o
    kwargs = {
        "out_size": win.out_size,
        "roi_lo": win.roi_lo,
        "roi_hi": win.roi_hi,
        "filters": filters,
        "dtype": out_dtype,
    }
    return KernelPlan(tuple(out_shape), out_dtype, kwargs)


def restrict_to_window(
    plan: KernelPlan, layout: str | None, lo: tuple[int, ...], hi: tuple[int, ...]
) -> KernelPlan | None:
    """``Planned.restrict`` of ``resize``: a plan making only the box ``lo..hi`` of an ``HWC``
    output (all channels), through the kernel's ``window`` (the same values as resizing, then
    cropping); ``None`` for other layouts.

    Examples
    --------
    >>> lin = AxisFilter("triangular", 2.0)
    >>> p = KernelPlan((256, 341, 3), None, {"out_size": (256, 341), "filters": (lin, lin)})
    >>> part = restrict_to_window(p, "HWC", (16, 58, 0), (240, 282, 3))
    >>> part.shape, part.kwargs["window"]
    ((224, 224, 3), (16, 58, 224, 224))
    """
    if layout != "HWC" or "window" in plan.kwargs or len(lo) != 3 or len(plan.shape) != 3:
        return None
    if lo[2] != 0 or hi[2] != plan.shape[2]:
        return None
    if all(f.kind == "nn" for f in plan.kwargs.get("filters", ())):
        return None  # (nearest neighbour is a cheap remap of the whole image)
    h, w = hi[0] - lo[0], hi[1] - lo[1]
    window = (lo[0], lo[1], h, w)
    return KernelPlan((h, w, plan.shape[2]), plan.dtype, {**plan.kwargs, "window": window})


def crop_resize_plan(
    shape: Sequence[int],
    layout: str,
    window: tuple[Sequence[float], Sequence[float]],
    out_size: Sequence[int],
    *,
    antialias: bool,
    interp: Any = None,
    min_filter: Any = None,
    mag_filter: Any = None,
    mirror: Sequence[bool] | None = None,
    dtype: Any = None,
) -> KernelPlan:
    """Plan a resize of the input region ``window`` = (start, extent) to ``out_size``.

    Used by ``random_resized_crop``, ``resize_crop_mirror`` and the ROI-aware decoders.
    ``mirror`` flips chosen spatial axes (outermost first).

    Examples
    --------
    >>> crop_resize_plan((10, 10, 3), "HWC", ((2, 2), (4, 4)), (8, 8), antialias=True).shape
    (8, 8, 3)
    """
    axes = _spatial_info("resize", shape, layout)
    start, extent = window
    lo, hi = [], []
    for d in range(len(axes)):
        a, b = float(start[d]), float(start[d]) + float(extent[d])
        if mirror is not None and mirror[d]:
            a, b = b, a
        lo.append(a)
        hi.append(b)
    win = ResizeWindow(tuple(int(o) for o in out_size), tuple(lo), tuple(hi))
    kinds = _filter_kinds(interp, min_filter, mag_filter, bool(antialias))
    return _plan_from_window(shape, axes, win, kinds, _resolve_dtype("resize", dtype))
