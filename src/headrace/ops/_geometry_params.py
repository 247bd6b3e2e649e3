"""Parameter math of the geometry ops: crop, crop_mirror_normalize, random_resized_crop, flip,
slice, pad, paste and erase (the resize family lives in :mod:`._resize_params`).

Every ``*_params`` function is the plan function of its operator: it takes one sample's shape,
layout and dtype, then that sample's arguments by their schema names (the defaults are the
schema's; ``None`` means "not given"), and returns a
:class:`~headrace._dispatch.planned.KernelPlan` for the kernel of the same name in
``headrace.backends.cpu.geometry`` / ``headrace.backends.torch.geometry`` (``resize.resize``
for the resize-based ones). ``random_resized_crop_sampler`` draws its window first.

Window rounding follows DALI 2.4 (checked against it by the tests): crop extents are truncated,
crop anchors are ``round``ed (half away from zero) or truncated per ``rounding``; slice
anchors and ends are rounded separately and the extent is their difference.

Examples
--------
>>> pos = dict(crop_pos_x=0.5, crop_pos_y=0.5, crop_pos_z=0.5)
>>> crop_params((20, 30, 3), "HWC", None, crop=(10, 7), rounding="round",
...             out_of_bounds_policy="error", **pos).kwargs["anchor"]
(5, 12, 0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
from headrace.ops._resize_params import crop_resize_plan, resize_params

OOB_POLICIES = ("error", "pad", "trim_to_shape")


def _fill_array(fill: Any) -> np.ndarray:
    return np.atleast_1d(np.asarray(0 if fill is None else fill, dtype=np.float64)).ravel()


def apply_oob_policy(
    op: str,
    anchor: list[int],
    extent: list[int],
    in_shape: Sequence[int],
    policy: str,
) -> tuple[list[int], list[int]]:
    """Check or trim a window against the input (``"pad"`` keeps it as is).

    Examples
    --------
    >>> apply_oob_policy("crop", [-2, 0], [5, 3], (4, 4), "trim_to_shape")
    ([0, 0], [3, 3])
    """
    check_choice(op, "out_of_bounds_policy", policy, OOB_POLICIES)
    out_of_bounds = any(a < 0 or a + e > s for a, e, s in zip(anchor, extent, in_shape))
    if not out_of_bounds or policy == "pad":
        return anchor, extent
    if policy == "error":
        raise ShapeError(
            f"{op}: the window (anchor {tuple(anchor)}, shape {tuple(extent)}) is out of bounds "
            f"of the input of shape {tuple(in_shape)}. Use a smaller window or set "
            "out_of_bounds_policy='pad' or 'trim_to_shape'."
        )
    lo = [min(max(a, 0), s) for a, s in zip(anchor, in_shape)]
    hi = [min(max(a + e, 0), s) for a, e, s in zip(anchor, extent, in_shape)]
    return lo, [h - l for l, h in zip(lo, hi)]


def _window_plan(
    op: str,
    shape: Sequence[int],
    anchor: list[int],
    extent: list[int],
    fill_values: Any,
    dtype: Any,
    channel_axis: int | None,
) -> KernelPlan:
    kwargs = {
        "anchor": tuple(anchor),
        "shape": tuple(extent),
        "fill_values": _fill_array(fill_values),
        "channel_axis": channel_axis,
        "dtype": None if dtype is None else np.dtype(dtype),
    }
    return KernelPlan(tuple(extent), kwargs["dtype"], kwargs)


# ----------------------------------------------------------------------------- crop


def crop_window(
    op: str,
    in_extents: Sequence[int],
    crop_extents: Sequence[float],
    crop_pos: Sequence[float],
    rounding: str = "round",
) -> tuple[list[int], list[int]]:
    """Anchor and extent of a crop window for the given spatial extents.

    Examples
    --------
    >>> crop_window("crop", (20, 30), (11, 7), (0.77, 0.3))
    ([7, 7], [11, 7])
    """
    check_choice(op, "rounding", rounding, ("round", "truncate"))
    anchor, extent = [], []
    for n, c, p in zip(in_extents, crop_extents, crop_pos):
        if c < 0 or not 0 <= p <= 1:
            raise InvalidArgumentError(
                f"{op}: crop extents must be >= 0 and crop positions in [0, 1] "
                f"(got extent {c}, position {p}). Fix the crop arguments."
            )
        e = int(c) if c > 0 else int(n)
        a = p * (n - e)
        anchor.append(round_half_away(a) if rounding == "round" else int(a))
        extent.append(e)
    return anchor, extent


def _crop_extents(
    op: str, ndim: int, crop: Any, crop_h: Any, crop_w: Any, crop_d: Any
) -> list[float]:
    if crop is not None:
        if any(v is not None for v in (crop_h, crop_w, crop_d)):
            raise InvalidArgumentError(
                f"{op}: `crop` cannot be combined with `crop_h`/`crop_w`/`crop_d` "
                f"(got crop={crop}). Use one of the two forms."
            )
        return as_float_list(op, "crop", crop, ndim)
    by_axis = {"D": crop_d, "H": crop_h, "W": crop_w}
    names = "DHW"[3 - ndim :]
    return [float(by_axis[n]) if by_axis[n] is not None else 0.0 for n in names]


def _spatial_window(
    op: str,
    shape: Sequence[int],
    layout: str,
    crop: Any,
    crop_h: Any,
    crop_w: Any,
    crop_d: Any,
    pos: tuple[float, float, float],
    rounding: str,
    policy: str,
) -> tuple[list[int], list[int]]:
    """Full-rank anchor/extent of a spatial crop (non-spatial axes untouched)."""
    _layout.require(op, shape, layout)
    sp = spatial_axes(layout)
    if crop is not None and all(v is None for v in (crop_h, crop_w, crop_d)):
        vals = np.asarray(crop, dtype=np.float64).ravel().tolist()
        if len(vals) in (2, 3) and len(vals) != len(sp):
            # as the reference: two values are (H, W), three (D, H, W), D being the frames of a
            # sequence without a depth axis (a volume keeps its depth with two)
            crop_d, crop_h, crop_w = ([None] + vals)[-3:]
            crop = None
    extents = _crop_extents(op, len(sp), crop, crop_h, crop_w, crop_d)
    names = [layout[a] for a in sp]
    pos_by = {"W": pos[0], "H": pos[1], "D": pos[2]}
    a_sp, e_sp = crop_window(
        op, [shape[a] for a in sp], extents, [pos_by[n] for n in names], rounding
    )
    anchor, extent = [0] * len(shape), list(shape)
    for i, a in enumerate(sp):
        anchor[a], extent[a] = a_sp[i], e_sp[i]
    if crop_d is not None and "D" not in layout and "F" in layout:
        # a sequence without a depth axis: crop_d / crop_pos_z cut its frames, as the reference
        f = layout.index("F")
        win = crop_window(op, [shape[f]], [float(crop_d)], [pos[2]], rounding)
        (anchor[f],), (extent[f],) = win
    return apply_oob_policy(op, anchor, extent, shape, policy)


def crop_params(
    shape: Sequence[int],
    layout: str,
    in_dtype: Any,
    /,
    *,
    crop_pos_x: float,
    crop_pos_y: float,
    crop_pos_z: float,
    rounding: str,
    out_of_bounds_policy: str,
    crop: Any = None,
    crop_h: float | None = None,
    crop_w: float | None = None,
    crop_d: float | None = None,
    fill_values: Any = None,
    dtype: Any = None,
    image_type: Any = None,
) -> KernelPlan:
    """Plan ``crop`` for one sample (kernel: ``geometry.crop``; ``image_type`` has no effect).

    Examples
    --------
    >>> pos = dict(crop_pos_x=0.5, crop_pos_y=0.5, crop_pos_z=0.5, rounding="round")
    >>> crop_params((4, 4, 3), "HWC", None, crop=(7, 6), out_of_bounds_policy="pad",
    ...             **pos).kwargs["anchor"]
    (-2, -1, 0)
    """
    anchor, extent = _spatial_window(
        "crop", shape, layout, crop, crop_h, crop_w, crop_d,
        (crop_pos_x, crop_pos_y, crop_pos_z), rounding, out_of_bounds_policy,
    )  # fmt: skip
    c_axis = layout.find("C")
    return _window_plan(
        "crop", shape, anchor, extent, fill_values, dtype, c_axis if c_axis >= 0 else None
    )


# ----------------------------------------------------------------------------- CMN


def _per_channel(op: str, name: str, value: Any, channels: int) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=np.float32)).ravel()
    if arr.size == 1:
        return np.full(channels, arr[0], np.float32)
    if arr.size != channels:
        raise InvalidArgumentError(
            f"{op}: `{name}` needs 1 or {channels} values, one per channel (got {arr.size}). "
            "Give a scalar or one value per channel."
        )
    return arr


def _output_perm(op: str, layout: str, output_layout: str | None) -> tuple[int, ...]:
    if not output_layout:
        return tuple(range(len(layout)))
    out = output_layout
    if len(out) == len(layout) - 1 and layout[0] in "FD" and layout[0] not in out:
        out = layout[0] + out
    if sorted(out) != sorted(layout):
        raise InvalidArgumentError(
            f"{op}: `output_layout` must be a permutation of the input layout {layout!r} "
            f"(got {output_layout!r}). Use e.g. 'CHW' or 'HWC'."
        )
    return tuple(layout.index(ch) for ch in out)


def crop_mirror_normalize_params(
    shape: Sequence[int],
    layout: str,
    in_dtype: Any,
    /,
    *,
    crop_pos_x: float,
    crop_pos_y: float,
    crop_pos_z: float,
    rounding: str,
    out_of_bounds_policy: str,
    mirror: int,
    mean: Any,
    std: Any,
    scale: float,
    shift: float,
    output_layout: str,
    pad_output: bool,
    crop: Any = None,
    crop_h: float | None = None,
    crop_w: float | None = None,
    crop_d: float | None = None,
    fill_values: Any = None,
    dtype: Any = None,
    image_type: Any = None,
) -> KernelPlan:
    """Plan ``crop_mirror_normalize`` (kernel: ``geometry.crop_mirror_normalize``).

    ``out = (x - mean) / std * scale + shift`` per channel, folded into one multiply-add;
    ``dtype`` defaults to float32; ``image_type`` has no effect.

    Examples
    --------
    >>> from headrace.ops.geometry import CROP_MIRROR_NORMALIZE as CMN
    >>> p = crop_mirror_normalize_params((256, 341, 3), "HWC", None, crop=(224, 224),
    ...                                  **{k: v for k, v in CMN.defaults.items() if v is not None})
    >>> p.shape, p.dtype
    ((3, 224, 224), dtype('float32'))
    """
    op = "crop_mirror_normalize"
    out_dtype = np.dtype(np.float32 if dtype is None else dtype)
    has_crop = crop is not None or any(v is not None for v in (crop_h, crop_w, crop_d))
    if has_crop:
        anchor, extent = _spatial_window(
            op, shape, layout, crop, crop_h, crop_w, crop_d,
            (crop_pos_x, crop_pos_y, crop_pos_z), rounding, out_of_bounds_policy,
        )  # fmt: skip
    else:
        _layout.require(op, shape, layout)
        anchor, extent = [0] * len(shape), list(shape)
    c_axis = layout.find("C")
    channels = shape[c_axis] if c_axis >= 0 else 1
    std_arr = _per_channel(op, "std", std, channels)
    if np.any(std_arr == 0):
        raise InvalidArgumentError(
            f"{op}: `std` must not be 0 (got {std_arr.tolist()}). Use std > 0."
        )
    mul = (np.float32(scale) / std_arr).astype(np.float32)
    add = (np.float32(shift) - _per_channel(op, "mean", mean, channels) * mul).astype(np.float32)
    perm = _output_perm(op, layout, output_layout)
    out_extent = list(extent)
    fills = _fill_array(fill_values)
    pad = 0
    if pad_output and c_axis >= 0:  # up to a power of two channels (3 -> 4, 5 -> 8, 2 -> 2)
        pad = (1 << max(0, (channels - 1).bit_length())) - channels
        out_extent[c_axis] += pad
    out_shape = tuple(out_extent[p] for p in perm)
    w_axis = layout.find("W")
    kwargs = {
        "anchor": tuple(anchor),
        "shape": tuple(extent),
        "mirror_axis": w_axis if mirror and w_axis >= 0 else None,
        "mul": mul,
        "add": add,
        "perm": perm,
        "pad_output": pad,
        "pad_fill": _pad_fill(fills, channels, pad, out_of_bounds_policy),
        "channel_axis": c_axis if c_axis >= 0 else None,
        "fill_values": fills,
        "dtype": out_dtype,
    }
    return KernelPlan(out_shape, out_dtype, kwargs)


def _pad_fill(fills: np.ndarray, channels: int, pad: int, policy: str) -> np.ndarray:
    """The values of ``crop_mirror_normalize``'s padding channels: with
    ``out_of_bounds_policy="pad"``, ``fill_values`` (one value, or the padding channels' entries
    of one per output channel), everywhere; otherwise 0, as the reference."""
    if policy != "pad" or not pad:
        return np.zeros(pad)
    if fills.size == 1:
        return np.full(pad, fills[0])
    if fills.size == channels + pad:
        return fills[channels:]
    return np.zeros(pad)  # (one value per input channel: the padding gets 0)


# ----------------------------------------------------------------------------- RRC


def random_crop_window(
    rng: np.random.Generator,
    in_hw: Sequence[int],
    random_area: Sequence[float] = (0.08, 1.0),
    random_aspect_ratio: Sequence[float] = (3 / 4, 4 / 3),
    num_attempts: int = 10,
) -> tuple[tuple[int, int], tuple[int, int]]:
    """Sample a random-resized-crop window ``((y, x), (h, w))`` (also for ROI decoders).

    Area fraction is uniform in ``random_area``; the aspect ratio (w / h) is log-uniform in
    ``random_aspect_ratio``. Always draws ``4 * num_attempts`` uniforms, so the amount drawn
    per sample does not depend on the image. When no attempt fits, the whole image is used,
    cropped to the closest allowed aspect ratio and centred (DALI's fallback).

    Examples
    --------
    >>> (y, x), (h, w) = random_crop_window(np.random.default_rng(0), (100, 200))
    >>> 0 <= y <= 100 - h and 0 <= x <= 200 - w
    True
    """
    check_crop_ranges(random_area, random_aspect_ratio, num_attempts)
    draws = rng.random((int(num_attempts), 4))
    return crop_window_from_draws(draws, in_hw, random_area, random_aspect_ratio)


def check_crop_ranges(
    random_area: Sequence[float], random_aspect_ratio: Sequence[float], num_attempts: int
) -> None:
    """Refuse ranges :func:`random_crop_window` cannot sample from."""
    area_lo, area_hi = (float(v) for v in random_area)
    ar_lo, ar_hi = (float(v) for v in random_aspect_ratio)
    if not (0 < area_lo <= area_hi and 0 < ar_lo <= ar_hi and num_attempts >= 1):
        raise InvalidArgumentError(
            f"random_resized_crop: need 0 < random_area[0] <= random_area[1], 0 < aspect ratio "
            f"range and num_attempts >= 1 (got {random_area}, {random_aspect_ratio}, "
            f"{num_attempts}). Fix the ranges."
        )


def crop_window_from_draws(
    draws: np.ndarray,
    in_hw: Sequence[int],
    random_area: Sequence[float],
    random_aspect_ratio: Sequence[float],
) -> tuple[tuple[int, int], tuple[int, int]]:
    """:func:`random_crop_window` from its uniforms ``draws`` (``(num_attempts, 4)``), drawn
    beforehand: a batch draws every sample's in one call, in sample order, and the windows
    are made later, where each image's size is known.

    Examples
    --------
    >>> crop_window_from_draws(np.full((1, 4), 0.5), (100, 100), (0.25, 0.25), (1.0, 1.0))
    ((25, 25), (50, 50))
    """
    area_lo, area_hi = (float(v) for v in random_area)
    ar_lo, ar_hi = (float(v) for v in random_aspect_ratio)
    h_in, w_in = int(in_hw[0]), int(in_hw[1])
    log_lo, log_hi = math.log(ar_lo), math.log(ar_hi)
    for a_u, r_u, y_u, x_u in draws.tolist():
        area = (area_lo + (area_hi - area_lo) * a_u) * h_in * w_in
        ratio = math.exp(log_lo + (log_hi - log_lo) * r_u)
        w = round_half_away(math.sqrt(area * ratio))
        h = round_half_away(math.sqrt(area / ratio))
        if 0 < w <= w_in and 0 < h <= h_in:
            y = min(int(y_u * (h_in - h + 1)), h_in - h)
            x = min(int(x_u * (w_in - w + 1)), w_in - w)
            return (y, x), (h, w)
    ratio_in = w_in / max(h_in, 1)
    h, w = h_in, w_in
    if ratio_in > ar_hi:
        w = max(1, round_half_away(h_in * ar_hi))
    elif ratio_in < ar_lo:
        h = max(1, round_half_away(w_in / ar_lo))
    return ((h_in - h) // 2, (w_in - w) // 2), (h, w)


def random_resized_crop_sampler(
    generator: np.random.Generator,
    shape: Sequence[int],
    layout: str,
    in_dtype: Any,
    /,
    *,
    size: Any,
    random_area: Sequence[float],
    random_aspect_ratio: Sequence[float],
    num_attempts: int,
    antialias: bool,
    interp_type: Any = None,
    mag_filter: Any = None,
    min_filter: Any = None,
    dtype: Any = None,
    minibatch_size: int | None = None,
    temp_buffer_hint: int | None = None,
) -> KernelPlan:
    """Draw a ``random_resized_crop`` window and plan its resize (kernel: ``resize.resize``).

    The window comes from :func:`random_crop_window`; ``minibatch_size`` and
    ``temp_buffer_hint`` have no effect.

    Examples
    --------
    >>> p = random_resized_crop_sampler(
    ...     np.random.default_rng(0), (100, 200, 3), "HWC", None, size=(32, 32),
    ...     random_area=(0.08, 1.0), random_aspect_ratio=(0.75, 4 / 3), num_attempts=10,
    ...     antialias=True)
    >>> p.shape
    (32, 32, 3)
    """
    h, w = _layout.hw_axes("random_resized_crop", shape, layout)
    window = random_crop_window(
        generator, (shape[h], shape[w]), random_area, random_aspect_ratio, num_attempts
    )
    return random_resized_crop_params(
        shape, layout, window=window, size=size, interp_type=interp_type,
        mag_filter=mag_filter, min_filter=min_filter, antialias=antialias, dtype=dtype,
    )  # fmt: skip


def random_resized_crop_params(
    shape: Sequence[int],
    layout: str,
    *,
    window: tuple[tuple[int, int], tuple[int, int]],
    size: Any,
    antialias: bool,
    interp_type: Any = None,
    mag_filter: Any = None,
    min_filter: Any = None,
    dtype: Any = None,
) -> KernelPlan:
    """Plan the deterministic part of ``random_resized_crop`` (kernel: ``resize.resize``).

    ``window`` comes from :func:`random_crop_window` (see :func:`random_resized_crop_sampler`).

    Examples
    --------
    >>> random_resized_crop_params((100, 200, 3), "HWC", window=((0, 0), (50, 50)),
    ...                            size=(32, 32), antialias=True).shape
    (32, 32, 3)
    """
    _layout.require("random_resized_crop", shape, layout, min_spatial=2)
    out = as_float_list("random_resized_crop", "size", size, 2)
    if any(v <= 0 for v in out):
        raise InvalidArgumentError(
            f"random_resized_crop: `size` must be positive (got {size}). Give the output (H, W)."
        )
    return crop_resize_plan(
        shape, layout, window, [int(v) for v in out], interp=interp_type,
        min_filter=min_filter, mag_filter=mag_filter, antialias=antialias, dtype=dtype,
    )  # fmt: skip


def resize_crop_mirror_params(
    shape: Sequence[int],
    layout: str,
    in_dtype: Any,
    /,
    *,
    crop_pos_x: float,
    crop_pos_y: float,
    crop_pos_z: float,
    rounding: str,
    mirror: int,
    crop: Any = None,
    crop_h: float | None = None,
    crop_w: float | None = None,
    crop_d: float | None = None,
    **resize_args: Any,
) -> KernelPlan:
    """Plan ``resize_crop_mirror`` as one resampling of the matching input ROI (kernel:
    ``resize.resize``): resize as ``resize`` would (``resize_args`` are its arguments), crop
    that result, mirror horizontally. Images only: no ``crop_d``, ``crop_pos_z`` other than
    0.5 or ``rounding`` other than ``"round"``.

    Examples
    --------
    >>> from headrace.ops.geometry import RESIZE_CROP_MIRROR as RCM
    >>> args = {k: v for k, v in RCM.defaults.items() if v is not None}
    >>> resize_crop_mirror_params((480, 640, 3), "HWC", None, **args, resize_shorter=256,
    ...                           crop=(224, 224)).shape
    (224, 224, 3)
    """
    if crop_d is not None or crop_pos_z != 0.5 or rounding != "round":
        raise InvalidArgumentError(
            "resize_crop_mirror: `crop_d`, `crop_pos_z` and `rounding` other than 'round' are "
            f"not supported (got crop_d={crop_d}, crop_pos_z={crop_pos_z}, "
            f"rounding={rounding!r}). Use resize followed by crop for volumes."
        )
    plan = resize_params(shape, layout, in_dtype, save_attrs=False, **resize_args)
    k = plan.kwargs
    out = k["out_size"]
    extents = _crop_extents("resize_crop_mirror", len(out), crop, crop_h, crop_w, None)
    anchor, ext = crop_window(
        "resize_crop_mirror", out, extents, (crop_pos_y, crop_pos_x)[-len(out) :]
    )
    lo, hi = list(k["roi_lo"]), list(k["roi_hi"])
    for d in range(len(out)):
        step = (hi[d] - lo[d]) / out[d]
        lo[d], hi[d] = lo[d] + anchor[d] * step, lo[d] + (anchor[d] + ext[d]) * step
    if mirror:
        lo[-1], hi[-1] = hi[-1], lo[-1]
    out_shape = list(plan.shape)
    for a, e in zip(spatial_axes(layout), ext):
        out_shape[a] = e
    kwargs = dict(k, out_size=tuple(ext), roi_lo=tuple(lo), roi_hi=tuple(hi))
    return KernelPlan(tuple(out_shape), plan.dtype, kwargs)


# ----------------------------------------------------------------------------- flip


def flip_params(
    shape: Sequence[int],
    layout: str,
    in_dtype: Any,
    /,
    *,
    horizontal: int,
    vertical: int,
    depthwise: int,
) -> KernelPlan:
    """Plan ``flip``: which axes to reverse (kernel: ``geometry.flip``).

    Examples
    --------
    >>> flip_params((2, 3, 3), "HWC", None, horizontal=1, vertical=1, depthwise=0).kwargs["axes"]
    (1, 0)
    """
    _layout.require("flip", shape, layout, min_spatial=0)
    axes = tuple(
        layout.index(ch)
        for ch, on in (("W", horizontal), ("H", vertical), ("D", depthwise))
        if on and ch in layout
    )
    return KernelPlan(tuple(shape), None, {"axes": axes})


# ----------------------------------------------------------------------------- slice


def _is_int(v: Any) -> bool:
    return np.asarray(v).dtype.kind in "iu"


def slice_params(
    in_shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    /,
    *,
    normalized_anchor: bool,
    normalized_shape: bool,
    out_of_bounds_policy: str,
    start: Any = None,
    end: Any = None,
    shape: Any = None,
    rel_start: Any = None,
    rel_end: Any = None,
    rel_shape: Any = None,
    axes: Any = None,
    axis_names: str | None = None,
    fill_values: Any = None,
    dtype: Any = None,
    image_type: Any = None,
    anchor_input: Any = None,
    shape_input: Any = None,
    op: str = "slice",
) -> KernelPlan:
    """Plan ``slice``: turn any anchor/shape form into an integer box (kernel: ``geometry.slice``).

    ``anchor_input``/``shape_input`` are the positional ``anchor``/``shape`` inputs of the
    sample (float inputs are scaled by the extent when ``normalized_anchor``/
    ``normalized_shape``; integer inputs are always absolute); ``shape`` is the keyword
    argument. ``image_type`` has no effect. ``op`` names the operator in errors.

    Examples
    --------
    >>> flags = dict(normalized_anchor=True, normalized_shape=True, out_of_bounds_policy="error")
    >>> slice_params((20, 30, 1), "HWC", None, rel_start=(0.13, 0.27), rel_shape=(0.5, 0.33),
    ...              **flags).shape
    (7, 15, 1)
    """
    ndim = len(in_shape)
    ax = _layout.named_axes(op, layout, ndim, axes, axis_names, "WH", (1, 0))
    ext = [float(in_shape[a]) for a in ax]
    n = len(ax)

    def vec(name: str, v: Any, scale: bool) -> list[float]:
        vals = as_float_list(op, name, v, n)
        return [x * e for x, e in zip(vals, ext)] if scale else vals

    if sum(v is not None for v in (start, rel_start)) + (anchor_input is not None) > 1:
        raise InvalidArgumentError(
            f"{op}: give only one of anchor input, `start`, `rel_start` (got several). "
            "Drop the rest."
        )
    ends = sum(v is not None for v in (end, rel_end, shape, rel_shape, shape_input))
    if ends > 1:
        raise InvalidArgumentError(
            f"{op}: give only one of shape input, `end`, `rel_end`, `shape`, `rel_shape` "
            f"(got {ends}). Drop the rest."
        )
    if anchor_input is not None:
        lo = vec("anchor", anchor_input, normalized_anchor and not _is_int(anchor_input))
    elif start is not None:
        lo = vec("start", start, False)
    elif rel_start is not None:
        lo = vec("rel_start", rel_start, True)
    else:
        lo = [0.0] * n
    if shape_input is not None:
        rel = normalized_shape and not _is_int(shape_input)
        hi = [a + s for a, s in zip(lo, vec("shape", shape_input, rel))]
    elif shape is not None:
        hi = [a + s for a, s in zip(lo, vec("shape", shape, False))]
    elif rel_shape is not None:
        hi = [a + s for a, s in zip(lo, vec("rel_shape", rel_shape, True))]
    elif end is not None:
        hi = vec("end", end, False)
    elif rel_end is not None:
        hi = vec("rel_end", rel_end, True)
    else:
        hi = ext
    box_lo, box_ext = [0] * ndim, list(in_shape)
    for i, a in enumerate(ax):
        a0, a1 = round_half_away(lo[i]), round_half_away(hi[i])
        if a1 < a0:
            raise InvalidArgumentError(
                f"{op}: the slice end is before its start on axis {a} (got {a0}..{a1}). "
                "Give a non-negative shape."
            )
        box_lo[a], box_ext[a] = a0, a1 - a0
    box_lo, box_ext = apply_oob_policy(op, box_lo, box_ext, in_shape, out_of_bounds_policy)
    c_axis = layout.find("C") if layout else -1
    return _window_plan(
        op, in_shape, box_lo, box_ext, fill_values, dtype, c_axis if c_axis >= 0 else None
    )


# ----------------------------------------------------------------------------- pad


def pad_params(
    in_shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    /,
    *,
    fill_value: float,
    axes: Any = None,
    axis_names: str | None = None,
    shape: Any = None,
    align: Any = None,
    batch_max_shape: Sequence[int] | None = None,
) -> KernelPlan:
    """Plan ``pad``: pad the end of chosen axes (kernel: ``geometry.pad``).

    ``shape`` entries of -1 (or no ``shape``) mean the largest extent in the batch, which
    the operator passes as ``batch_max_shape``; an extent below the input's keeps the input's.
    Extents are then rounded up to ``align``.

    Examples
    --------
    >>> pad_params((3, 5), "HW", None, shape=(-1, 8), align=4, fill_value=0.0,
    ...            batch_max_shape=(6, 5)).shape
    (8, 8)
    """
    op = "pad"
    ndim = len(in_shape)
    ax = _layout.named_axes(op, layout, ndim, axes, axis_names, None, None)
    n = len(ax)
    target = [-1.0] * n if shape is None else as_float_list(op, "shape", shape, n)
    aligns = [1.0] * n if align is None else as_float_list(op, "align", align, n)
    maxs = list(batch_max_shape) if batch_max_shape is not None else list(in_shape)
    out = list(in_shape)
    for i, a in enumerate(ax):
        # A requested extent below the input's keeps the input's (DALI never trims); 0 or less
        # asks for the batch's largest, as the reference.
        ext = max(int(maxs[a]) if target[i] <= 0 else int(target[i]), int(in_shape[a]))
        al = max(int(aligns[i]), 1)
        out[a] = -(-ext // al) * al
    return KernelPlan(tuple(out), None, {"out_shape": tuple(out), "fill_value": float(fill_value)})


# ----------------------------------------------------------------------------- paste


def paste_params(
    shape: Sequence[int],
    layout: str,
    in_dtype: Any,
    /,
    *,
    ratio: float,
    fill_value: Any,
    paste_x: float,
    paste_y: float,
    min_canvas_size: float,
    n_channels: int | None = None,
) -> KernelPlan:
    """Plan ``paste``: place the image on a larger canvas (kernel: ``geometry.paste``).

    Examples
    --------
    >>> paste_params((10, 20, 3), "HWC", None, ratio=2.0, fill_value=0, paste_x=0.0,
    ...              paste_y=0.5, min_canvas_size=0.0).kwargs["anchor"]
    (5, 0, 0)
    """
    op = "paste"
    _layout.require(op, shape, layout, min_spatial=2)
    c_axis = layout.find("C")
    if n_channels is not None and c_axis >= 0 and shape[c_axis] != n_channels:
        raise InvalidArgumentError(
            f"{op}: the input has {shape[c_axis]} channels but `n_channels` is {n_channels}. "
            "Pass images with n_channels channels or fix n_channels."
        )
    if ratio < 1:
        raise InvalidArgumentError(
            f"{op}: `ratio` must be >= 1 (got {ratio}). Use a canvas at least as big."
        )
    if not (0 <= paste_x <= 1 and 0 <= paste_y <= 1):
        raise InvalidArgumentError(
            f"{op}: `paste_x`/`paste_y` must lie in [0, 1] (got {paste_x}, {paste_y}). Clamp them."
        )
    h_ax, w_ax = layout.index("H"), layout.index("W")
    out = list(shape)
    anchor = [0] * len(shape)
    f32 = np.float32  # (the reference's arguments are float32: 0.7 * 140 is 98, not 97.99...)
    for ax, pos in ((h_ax, paste_y), (w_ax, paste_x)):
        out[ax] = max(int(f32(shape[ax]) * f32(ratio)), int(min_canvas_size))
        anchor[ax] = int(f32(pos) * f32(out[ax] - shape[ax]))
    kwargs = {
        "anchor": tuple(anchor),
        "out_shape": tuple(out),
        "fill_values": _fill_array(fill_value),
        "channel_axis": c_axis if c_axis >= 0 else None,
    }
    return KernelPlan(tuple(out), None, kwargs)


# ----------------------------------------------------------------------------- erase


def erase_params(
    in_shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    /,
    *,
    normalized_anchor: bool,
    normalized_shape: bool,
    centered_anchor: bool,
    anchor: Any = None,
    shape: Any = None,
    axes: Any = None,
    axis_names: str | None = None,
    fill_value: Any = None,
    normalized: bool | None = None,
) -> KernelPlan:
    """Plan ``erase``: boxes to fill (kernel: ``geometry.erase``).

    ``anchor``/``shape`` hold the regions' starts and extents, region by region. Without
    ``axes``/``axis_names`` every axis but ``C`` is given per region. Region start and end
    are truncated to integers (as DALI does), then clipped to the input.

    Examples
    --------
    >>> flags = dict(normalized_anchor=False, normalized_shape=False, centered_anchor=False)
    >>> erase_params((300, 300, 3), "HWC", None, anchor=(10, 20), shape=(190, 200),
    ...              axis_names="HW", **flags).kwargs["boxes"]
    (((10, 20, 0), (200, 220, 3)),)
    """
    op = "erase"
    ndim = len(in_shape)
    default = [i for i in range(ndim) if not layout or layout[i] != "C"]
    ax = _layout.named_axes(op, layout, ndim, axes, axis_names, None, default)
    if normalized is not None:
        normalized_anchor = normalized_shape = bool(normalized)
    # float32 arithmetic, as the reference: 0.2 * 50 must be exactly 10, not 10.000000000000002
    a_vals = np.asarray(() if anchor is None else anchor, dtype=np.float32).ravel()
    s_vals = np.asarray(() if shape is None else shape, dtype=np.float32).ravel()
    n = len(ax)
    if a_vals.size != s_vals.size or a_vals.size % max(n, 1):
        raise InvalidArgumentError(
            f"{op}: `anchor` and `shape` must both hold {n} values per region "
            f"(got {a_vals.size} and {s_vals.size}). Give matching, complete regions."
        )
    boxes = []
    for r in range(a_vals.size // max(n, 1)):
        lo, hi = [0] * ndim, list(in_shape)
        for i, a in enumerate(ax):
            st = a_vals[r * n + i] * np.float32(in_shape[a] if normalized_anchor else 1)
            ex = s_vals[r * n + i] * np.float32(in_shape[a] if normalized_shape else 1)
            if centered_anchor:
                st -= ex / np.float32(2)
            lo[a] = min(max(int(st), 0), in_shape[a])
            hi[a] = min(max(int(st + ex), 0), in_shape[a])
        boxes.append((tuple(lo), tuple(hi)))
    c_axis = layout.find("C") if layout else -1
    kwargs = {
        "boxes": tuple(boxes),
        "fill_values": _fill_array(fill_value),
        "channel_axis": c_axis if c_axis >= 0 else None,
    }
    return KernelPlan(tuple(in_shape), None, kwargs)
