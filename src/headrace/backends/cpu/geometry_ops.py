"""Batch kernels of the geometry operators (``ops/geometry.py``), written once for any backend.

``register(device, geo, rsz)`` registers every batch kernel for one device, given the modules
holding the per-sample kernels (``geo``: crop, flip, slice, pad, paste, erase,
crop_mirror_normalize; ``rsz``: resize). This module registers the CPU ones
(``backends/cpu/geometry.py`` and ``resize.py``); ``backends/torch/geometry_ops.py`` registers
the GPU ones with the same code.

A batch kernel computes one plan per sample on the host from the sample's shape (plans are
shared between samples of equal shape when no argument varies per sample; random windows are
drawn in sample order), then runs the per-sample kernel on every sample, in parallel on the
thread pool when the batch is large enough to pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.cpu import geometry as _cpu_geometry
from headrace.backends.cpu import resize as _cpu_resize
from headrace.ops import geometry as G
from headrace.ops._geometry_common import KernelPlan
from headrace.ops._geometry_params import (
    crop_mirror_normalize_params,
    crop_params,
    erase_params,
    flip_params,
    pad_params,
    paste_params,
    random_crop_window,
    random_resized_crop_params,
    resize_crop_mirror_params,
    slice_params,
)
from headrace.ops._resize_params import resize_params
from headrace.ops._tensor_resize_params import tensor_resize_params

Args = dict[str, Any]
PlanFn = Callable[[tuple[int, ...], str | None, Args, Any], KernelPlan]

#: Batches with fewer elements than this run sample by sample on the calling thread.
PARALLEL_MIN_ELEMENTS = 1 << 16
#: Layouts assumed for image inputs without one (as the reference does).
DEFAULT_IMAGE_LAYOUTS = {3: "HWC", 4: "FHWC"}


# --- helpers -------------------------------------------------------------------------------------
def image_layout(x: Batch) -> str | None:
    """The input's layout, or the default image layout for its rank."""
    return x._layout or DEFAULT_IMAGE_LAYOUTS.get(x.ndim)


def _np_dtype(dt: Any) -> np.dtype | None:
    return None if dt is None else dt.numpy


def _in_dtype(x: Batch) -> np.dtype | None:
    try:
        return x._dtype.numpy
    except TypeError:
        return None


def _ints(v: Any) -> list[int] | None:
    return None if v is None else [int(a) for a in np.atleast_1d(v)]


def _host(a: Any) -> np.ndarray:
    """A numpy view/copy of one sample (positional argument inputs may sit on the GPU)."""
    return a if isinstance(a, np.ndarray) else a.detach().cpu().numpy()


#: Plans of recent calls, keyed by (plan function, shape, layout, dtype, arguments).
_PLAN_CACHE: dict[Any, KernelPlan] = {}
PLAN_CACHE_SIZE = 512


def cached_plan(
    plan_fn: PlanFn, shape: tuple[int, ...], layout: str | None, vals: Args, in_dt: Any
) -> KernelPlan:
    """``plan_fn(shape, layout, vals, in_dt)``, memoised across calls (plans are pure)."""
    try:
        # vals always lists one schema's arguments in the same order; arrays go in as bytes.
        frozen = [(v.shape, v.tobytes()) if type(v) is np.ndarray else v for v in vals.values()]
        key = (plan_fn, shape, layout, in_dt, *frozen)
        plan = _PLAN_CACHE.get(key)
    except TypeError:  # an unhashable argument value: no caching
        return plan_fn(shape, layout, vals, in_dt)
    if plan is None:
        plan = plan_fn(shape, layout, vals, in_dt)
        if len(_PLAN_CACHE) >= PLAN_CACHE_SIZE:
            _PLAN_CACHE.clear()
        _PLAN_CACHE[key] = plan
    return plan


def plans_for(
    kc: KernelContext,
    x: Batch,
    vals: Args,
    plan_fn: PlanFn,
    layout: str | None,
    extra: Callable[[int], Args] | None = None,
    lazy: bool = False,
) -> Sequence[KernelPlan]:
    """One plan per sample, computed in sample order on this thread (errors name the sample).

    Without per-sample arguments (and ``extra`` per-sample values) samples of equal shape
    share one plan, remembered across calls. With ``lazy=True`` (deterministic plans only) each
    plan is computed where the kernel first needs it, on the worker threads: the Python plan
    math of one sample then overlaps with another sample's native kernel instead of running
    serially before all of them.
    """
    samples = x._samples
    assert samples is not None
    in_dt = _in_dtype(x)
    if extra is None and not has_per_sample(vals):
        cache: dict[tuple[int, ...], KernelPlan] = {}

        def shared(i: int) -> KernelPlan:
            shp = tuple(samples[i].shape)
            p = cache.get(shp)
            if p is None:
                p = cache[shp] = cached_plan(plan_fn, shp, layout, vals, in_dt)
            return p

        return _LazyPlans(shared, len(samples)) if lazy else kc.map(shared, parallel=False)

    def own(i: int) -> KernelPlan:
        a = sample_args(vals, i)
        if extra is not None:
            a.update(extra(i))
        return plan_fn(tuple(samples[i].shape), layout, a, in_dt)

    if lazy and extra is None:
        return _LazyPlans(own, len(samples))
    return kc.map(own, parallel=False)


class _LazyPlans(Sequence[KernelPlan]):
    """Plans computed on first access (by whichever worker thread runs that sample)."""

    def __init__(self, make: Callable[[int], KernelPlan], n: int) -> None:
        self._make = make
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> KernelPlan:  # type: ignore[override]
        return self._make(i)


def run_plans(
    kc: KernelContext,
    x: Batch,
    plans: Sequence[KernelPlan],
    kern: Callable[..., Any],
    layout: str | None,
    out_layout: str | None,
    dense: bool = False,
    light: bool = False,
) -> tuple[Batch]:
    """Apply ``kern(sample, layout, **plan.kwargs)`` to every sample; wrap the results.

    With ``dense=True`` (kernels that take ``out=``) equal-shaped outputs are written into one
    dense batch array. ``light`` kernels (memory-bound copies and lookup tables, ~0.1 ms per
    image) give each thread one contiguous run of samples instead of one sample at a time."""
    samples = x._samples
    assert samples is not None
    parallel = (
        kc.device.device_type == "cpu"
        and len(samples) > 1
        and sum(math.prod(s.shape) for s in samples) >= PARALLEL_MIN_ELEMENTS
    )
    slab = _dense_slab(kc, plans) if dense else None
    if slab is not None:
        outs = kc.map(
            lambda i: kern(samples[i], layout, out=slab[i], **plans[i].kwargs), parallel, light
        )
    else:
        outs = kc.map(lambda i: kern(samples[i], layout, **plans[i].kwargs), parallel, light)
    dt = _st.dtype_of(outs[0]) if outs else x._dtype
    if out_layout is not None and outs and len(out_layout) != outs[0].ndim:
        out_layout = None
    return (Batch._wrap(outs, dt, out_layout, kc.device, dense=slab),)


def _dense_slab(kc: KernelContext, plans: Sequence[KernelPlan]) -> np.ndarray | None:
    """One ``(N, *shape)`` CPU array for the outputs when every sample's plan agrees on them,
    so ``Batch.torch()`` needs no stacking copy."""
    if kc.device.device_type != "cpu" or not plans:
        return None
    shape, dtype = plans[0].shape, plans[0].dtype
    if dtype is None or any(p.shape != shape or p.dtype != dtype for p in plans):
        return None
    return np.empty((len(plans), *shape), dtype)


def _hw_axes(op: str, shape: tuple[int, ...], layout: str | None) -> tuple[int, int]:
    """Indices of H and W; the layout must name every axis and have no other spatial axis."""
    if (
        layout is None
        or len(layout) != len(shape)
        or "H" not in layout
        or "W" not in layout
        or "D" in layout
    ):
        raise ShapeError(
            f"{op}: the input needs a layout with exactly the spatial axes H and W, naming "
            f"every axis (got layout {layout!r} for shape {shape}). Pass a layout such as 'HWC'."
        )
    return layout.index("H"), layout.index("W")


# --- plan adapters: operator arguments -> parameter functions ----------------------------------
_RESIZE_KEYS = (
    "size", "resize_x", "resize_y", "resize_z", "resize_shorter", "resize_longer", "max_size",
    "mode", "interp_type", "min_filter", "mag_filter", "antialias", "roi_start", "roi_end",
    "roi_relative", "subpixel_scale",
)  # fmt: skip
_CROP_KEYS = ("crop", "crop_h", "crop_w", "crop_d", "crop_pos_x", "crop_pos_y", "crop_pos_z")
_FILTER_KEYS = ("interp_type", "min_filter", "mag_filter", "antialias")


def _pick(a: Args, keys: tuple[str, ...]) -> Args:
    return {k: a[k] for k in keys}


def _out_dtype(a: Args) -> np.dtype | None:
    return _np_dtype(a["dtype"] if a["dtype"] is not None else a.get("output_dtype"))


def _resize_args(a: Args, in_dt: Any) -> Args:
    return {**_pick(a, _RESIZE_KEYS), "dtype": _np_dtype(a["dtype"]), "input_dtype": in_dt}


def _plan_resize(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    if a["save_attrs"]:
        raise InvalidArgumentError(
            "resize: `save_attrs` is not supported (got True). Use ndd.shapes() on the output."
        )
    return resize_params(shape, layout, **_resize_args(a, in_dt))  # type: ignore[arg-type]


def _plan_crop(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    return crop_params(
        shape, layout, **_pick(a, _CROP_KEYS), rounding=a["rounding"],  # type: ignore[arg-type]
        out_of_bounds_policy=a["out_of_bounds_policy"], fill_values=a["fill_values"],
        dtype=_out_dtype(a),
    )  # fmt: skip


def _plan_cmn(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    return crop_mirror_normalize_params(
        shape, layout, **_pick(a, _CROP_KEYS), rounding=a["rounding"],  # type: ignore[arg-type]
        mirror=a["mirror"], mean=a["mean"], std=a["std"], scale=a["scale"], shift=a["shift"],
        dtype=_out_dtype(a) or np.dtype(np.float32), output_layout=a["output_layout"],
        pad_output=a["pad_output"], fill_values=a["fill_values"],
        out_of_bounds_policy=a["out_of_bounds_policy"],
    )  # fmt: skip


def _plan_flip(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    return flip_params(
        shape, layout,  # type: ignore[arg-type]
        horizontal=a["horizontal"], vertical=a["vertical"], depthwise=a["depthwise"],
    )  # fmt: skip


def _plan_slice(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    return slice_params(
        shape, layout, anchor=a.get("_anchor"), slice_shape=a.get("_shape"), start=a["start"],
        end=a["end"], rel_start=a["rel_start"], rel_end=a["rel_end"], rel_shape=a["rel_shape"],
        shape_arg=a["shape"], axes=_ints(a["axes"]), axis_names=a["axis_names"],
        normalized_anchor=a["normalized_anchor"], normalized_shape=a["normalized_shape"],
        out_of_bounds_policy=a["out_of_bounds_policy"], fill_values=a["fill_values"],
        dtype=_out_dtype(a),
    )  # fmt: skip


def _plan_pad(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    return pad_params(
        shape, layout, axes=_ints(a["axes"]), axis_names=a["axis_names"], shape=a["shape"],
        align=a["align"], fill_value=a["fill_value"], batch_max_shape=a["_batch_max"],
    )  # fmt: skip


def _plan_paste(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    n = a["n_channels"]
    if n is not None and layout and "C" in layout and shape[layout.index("C")] != n:
        raise InvalidArgumentError(
            f"paste: the input has {shape[layout.index('C')]} channels but `n_channels` is {n}. "
            "Pass images with n_channels channels or fix n_channels."
        )
    return paste_params(
        shape, layout, ratio=a["ratio"], paste_x=a["paste_x"],  # type: ignore[arg-type]
        paste_y=a["paste_y"], fill_value=a["fill_value"], min_canvas_size=a["min_canvas_size"],
    )  # fmt: skip


def _plan_erase(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    return erase_params(
        shape, layout, anchor=() if a["anchor"] is None else a["anchor"],
        erase_shape=() if a["shape"] is None else a["shape"], axes=_ints(a["axes"]),
        axis_names=a["axis_names"], fill_value=0 if a["fill_value"] is None else a["fill_value"],
        normalized=a["normalized"], normalized_anchor=a["normalized_anchor"],
        normalized_shape=a["normalized_shape"], centered_anchor=a["centered_anchor"],
    )  # fmt: skip


def _plan_rcm(shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any) -> KernelPlan:
    if a["crop_d"] is not None or a["crop_pos_z"] != 0.5 or a["rounding"] != "round":
        raise InvalidArgumentError(
            "resize_crop_mirror: `crop_d`, `crop_pos_z` and `rounding` other than 'round' are "
            f"not supported (got crop_d={a['crop_d']}, crop_pos_z={a['crop_pos_z']}, "
            f"rounding={a['rounding']!r}). Use resize followed by crop for volumes."
        )
    return resize_crop_mirror_params(
        shape, layout, crop=a["crop"], crop_h=a["crop_h"], crop_w=a["crop_w"],  # type: ignore[arg-type]
        crop_pos_x=a["crop_pos_x"], crop_pos_y=a["crop_pos_y"], mirror=a["mirror"],
        **_resize_args(a, in_dt),
    )  # fmt: skip


def _plan_tensor_resize(
    shape: tuple[int, ...], layout: str | None, a: Args, in_dt: Any
) -> KernelPlan:
    return tensor_resize_params(
        shape, layout, sizes=a["sizes"], scales=a["scales"], axes=_ints(a["axes"]),
        axis_names=a["axis_names"], alignment=a["alignment"], mode=a["mode"],
        max_size=a["max_size"], roi_start=a["roi_start"], roi_end=a["roi_end"],
        roi_relative=a["roi_relative"], subpixel_scale=a["subpixel_scale"],
        size_rounding=a["size_rounding"], **_pick(a, _FILTER_KEYS), dtype=_np_dtype(a["dtype"]),
        input_dtype=in_dt,
    )  # fmt: skip


# --- registration ---------------------------------------------------------------------------------
def register(device: str, geo: ModuleType, rsz: ModuleType) -> None:
    """Register the geometry batch kernels for ``device`` with per-sample kernel modules."""

    def simple(
        schema: Any, plan_fn: PlanFn, kern: Callable[..., Any], image: bool, light: bool = False
    ) -> None:
        def k(kc: KernelContext, ins: list[Batch], vals: Args) -> tuple[Batch]:
            x = ins[0]
            lay = image_layout(x) if image else x._layout
            plans = plans_for(kc, x, vals, plan_fn, lay, lazy=not light)
            return run_plans(kc, x, plans, kern, lay, lay, light=light)

        schema.legacy_kernel(device)(k)

    simple(G.RESIZE, _plan_resize, rsz.resize, image=True)
    simple(G.CROP, _plan_crop, geo.crop, image=True, light=True)
    simple(G.FLIP, _plan_flip, geo.flip, image=True, light=True)
    simple(G.PASTE, _plan_paste, geo.paste, image=True, light=True)
    simple(G.ERASE, _plan_erase, geo.erase, image=True, light=True)
    simple(G.RESIZE_CROP_MIRROR, _plan_rcm, rsz.resize, image=True)

    resize = rsz.resize

    def tensor_resize_kernel(x: Any, layout: Any, *, kernel_layout: str, **kw: Any) -> Any:
        return resize(x, kernel_layout, **kw)

    simple(G.TENSOR_RESIZE, _plan_tensor_resize, tensor_resize_kernel, image=False)

    @G.CROP_MIRROR_NORMALIZE.legacy_kernel(device)
    def _cmn(kc: KernelContext, ins: list[Batch], vals: Args) -> tuple[Batch]:
        x = ins[0]
        lay = image_layout(x)
        plans = plans_for(kc, x, vals, _plan_cmn, lay)
        out_lay = vals["output_layout"] or lay
        if plans and lay:
            out_lay = "".join(lay[p] for p in plans[0].kwargs["perm"])
        return run_plans(
            kc, x, plans, geo.crop_mirror_normalize, lay, out_lay, dense=True, light=True
        )

    @G.SLICE.legacy_kernel(device)
    def _slice(kc: KernelContext, ins: list[Batch], vals: Args) -> tuple[Batch]:
        x, anchor, shape = (ins + [None, None])[:3]
        extra = None
        if anchor is not None or shape is not None:

            def extra(i: int) -> Args:
                return {
                    "_anchor": None if anchor is None else _host(anchor._samples[i]),
                    "_shape": None if shape is None else _host(shape._samples[i]),
                }

        plans = plans_for(kc, x, vals, _plan_slice, x._layout, extra)
        return run_plans(kc, x, plans, geo.slice, x._layout, x._layout, light=True)

    @G.PAD.legacy_kernel(device)
    def _pad(kc: KernelContext, ins: list[Batch], vals: Args) -> tuple[Batch]:
        x = ins[0]
        shapes = [tuple(s.shape) for s in x._samples]
        bmax = tuple(max(col) for col in zip(*shapes)) if shapes else ()
        plans = plans_for(kc, x, {**vals, "_batch_max": bmax}, _plan_pad, x._layout)
        return run_plans(kc, x, plans, geo.pad, x._layout, x._layout, light=True)

    @G.RANDOM_RESIZED_CROP.legacy_kernel(device)
    def _rrc(kc: KernelContext, ins: list[Batch], vals: Args) -> tuple[Batch]:
        x = ins[0]
        lay = image_layout(x)
        samples = x._samples
        gen = kc.generator()
        per = has_per_sample(vals)

        def plan(i: int) -> KernelPlan:
            a = sample_args(vals, i) if per else vals
            shp = tuple(samples[i].shape)
            h, w = _hw_axes("random_resized_crop", shp, lay)
            window = random_crop_window(
                gen, (shp[h], shp[w]), a["random_area"], a["random_aspect_ratio"],
                a["num_attempts"],
            )  # fmt: skip
            return random_resized_crop_params(
                shp, lay, window=window, size=a["size"], **_pick(a, _FILTER_KEYS),  # type: ignore[arg-type]
                dtype=_np_dtype(a["dtype"]),
            )  # fmt: skip

        plans = kc.map(plan, parallel=False)
        return run_plans(kc, x, plans, rsz.resize, lay, lay)


register("cpu", _cpu_geometry, _cpu_resize)
