"""The planned-kernel mechanism: per-sample plans on the host, one pixel kernel per backend.

A planned operator (``OpSchema(..., planned=Planned(plan, ...))``) splits into

* a *plan* function, ``plan(shape, layout, in_dtype, **args) -> KernelPlan`` (for random ops a
  sampler ``plan(generator, shape, layout, in_dtype, **args)``), computed on the CPU from the
  sample's shape and the call's arguments — the same on every backend, so the CPU and the GPU
  draw identical random parameters;
* a *pixel kernel* per backend, ``kernel(sample, layout, **plan.kwargs)``, found by the op's name
  in ``backends/<backend>/<family>.py``.

:func:`planned_kernel` joins them into a batch kernel. It

* shares one plan between samples of equal shape when no argument varies per sample, and
  remembers plans across calls (:data:`PLAN_CACHE_SIZE`; plans are pure);
* draws random plans in sample order on the calling thread;
* computes the plans of heavy kernels on the worker threads (a sample's Python plan math then
  overlaps another sample's native kernel), and those of ``light`` kernels up front;
* runs the pixel kernels on the thread pool once the batch holds at least
  :data:`~headrace._dispatch.kernel_context.PARALLEL_MIN_ELEMENTS` elements (CPU only), giving
  each thread a contiguous run of samples for ``light`` kernels;
* writes equal-shaped outputs of ``dense`` kernels (those taking ``out=``) into one batch array;
* passes samples whose per-sample ``mask`` is 0 through unchanged (their plans, hence their
  checks and draws, still happen).

Examples
--------
>>> default_layout(None, 3, {3: "HWC"}), default_layout("CHW", 3, {3: "HWC"})
('HWC', 'CHW')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import PerSample, has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext, annotate

Vals = dict[str, Any]

#: How many plans of recent calls are remembered.
PLAN_CACHE_SIZE = 512
_PLAN_CACHE: dict[Any, Any] = {}


@dataclass(frozen=True)
class KernelPlan:
    """Everything a pixel kernel needs for one sample, computed without touching pixels.

    Attributes
    ----------
    shape : tuple of int
        Output sample shape.
    dtype : numpy.dtype or None
        Output element type; ``None`` keeps the input's.
    kwargs : dict
        Keyword arguments of the pixel kernel (``kernel(x, layout, **kwargs)``).
    """

    shape: tuple[int, ...]
    dtype: np.dtype | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Planned:
    """How a planned operator computes its per-sample plans (see :mod:`.planned`).

    Attributes
    ----------
    plan : callable
        ``plan(shape, layout, in_dtype, **args) -> KernelPlan``; with ``random=True`` a sampler
        ``plan(generator, shape, layout, in_dtype, **args)`` drawing in sample order.
    random : bool
        Whether ``plan`` draws from the call's generator.
    layouts : mapping of int to str, optional
        Layout assumed (and given to the output) for inputs without one, by number of dims.
    prepare : callable, optional
        ``prepare(kc, inputs, args) -> args`` run first, e.g. to turn argument inputs or
        batch-wide statistics into arguments.
    out_layout : callable, optional
        ``out_layout(layout, plans, args) -> layout`` of the output (default: the input's).
    whole_batch : callable, optional
        ``whole_batch(kc, x, layout, plans, args) -> list | None``: computes every output at once
        when it returns a list (e.g. statistics shared by the batch); ``None`` runs the pixel
        kernel sample by sample.
    light : bool
        Memory-bound kernel (~0.1 ms per image): plans are computed up front, and each thread
        gets one contiguous run of samples.
    dense : bool
        The pixel kernel takes ``out=``: equal-shaped outputs go into one dense batch array.
    chainable : bool or callable, optional
        Whether the call may run sample-major with its neighbours (:mod:`.chain`). ``None``
        (default): when there is neither ``prepare`` nor ``whole_batch``; ``True``: ``prepare``
        reads only the arguments; ``chainable(args)``: decided per call (``whole_batch`` is
        used only when it says no).
    in_dtypes : tuple of numpy dtypes, optional
        The input element types the operator accepts (default: any); another type is refused
        once per call, before any plan, on every backend.
    reads_window : bool
        The plans hold ``anchor``/``shape`` kwargs (full rank) and read only that box of the
        input when it lies inside it (crops): in a chain, the stage before may then make just
        that box (see ``restrict``).
    restrict : callable, optional
        ``restrict(plan, layout, lo, hi) -> KernelPlan | None``: a plan making only the box
        ``lo..hi`` of this plan's output, with the same values (``None``: it cannot). Used in a
        chain when the next stage reads only that box and nothing else sees this output.
    """

    plan: Callable[..., Any]
    random: bool = False
    layouts: Mapping[int, str] | None = None
    prepare: Callable[[KernelContext, list[Batch | None], Vals], Vals] | None = None
    out_layout: Callable[[str | None, Sequence[Any], Vals], str | None] | None = None
    whole_batch: Callable[..., list[Any] | None] | None = None
    light: bool = False
    dense: bool = False
    chainable: bool | Callable[[Vals], bool] | None = None
    in_dtypes: tuple[np.dtype, ...] | None = None
    reads_window: bool = False
    restrict: Callable[[KernelPlan, str | None, tuple[int, ...], tuple[int, ...]],
                       KernelPlan | None] | None = None  # fmt: skip

    def chains_statically(self) -> bool:
        """Whether calls may ever run in a chain."""
        if self.chainable is None:
            return self.prepare is None and self.whole_batch is None
        return self.chainable is not False

    def chains(self, args: Vals) -> bool:
        """Whether a call with ``args`` may run in a chain."""
        c = self.chainable
        return self.chains_statically() if c is None or isinstance(c, bool) else bool(c(args))


def default_layout(layout: str | None, ndim: int, defaults: Mapping[int, str] | None) -> str | None:
    """The input's layout, or the operator's default layout for ``ndim`` dims when it has none.

    Examples
    --------
    >>> default_layout(None, 4, {3: "HWC", 4: "FHWC"}), default_layout(None, 2, {3: "HWC"})
    ('FHWC', None)
    """
    if layout or not defaults:
        return layout or None
    return defaults.get(ndim)


def plan_args(op: str, vals: Vals) -> Vals:
    """The keyword arguments of a plan function: ``None`` values dropped, dtypes as numpy.

    ``output_dtype`` (the reference's deprecated spelling) becomes ``dtype``; ``mask`` is left
    out (the batch kernel applies it).

    Examples
    --------
    >>> from headrace._core import dtype as dt
    >>> plan_args("op", {"a": None, "dtype": dt.float32, "mask": True})
    {'dtype': dtype('float32')}
    """
    out = {k: v for k, v in vals.items() if v is not None and k not in ("mask", "output_dtype")}
    alias = vals.get("output_dtype")
    if alias is not None:
        check_dtype_alias(op, vals)
        out["dtype"] = alias
    dt = out.get("dtype")
    if isinstance(dt, _dt.DType):
        out["dtype"] = dt.numpy
    return out


def check_in_dtype(op: str, accepted: tuple[np.dtype, ...] | None, in_dt: np.dtype | None) -> None:
    """Refuse an input element type the operator does not accept (``accepted=None``: any).

    Examples
    --------
    >>> try:
    ...     check_in_dtype("resize", (np.dtype(np.uint8),), np.dtype(bool))
    ... except RuntimeError as e:
    ...     print(e)
    resize: the input type must be one of uint8 (got bool). Cast the input first.
    """
    if accepted is None or in_dt is None or in_dt in accepted:
        return
    names = ", ".join(np.dtype(t).name for t in accepted)
    raise InvalidArgumentError(
        f"{op}: the input type must be one of {names} (got {np.dtype(in_dt).name}). "
        "Cast the input first."
    )


def check_dtype_alias(op: str, vals: Vals) -> None:
    """Refuse ``dtype`` together with its deprecated alias ``output_dtype``."""
    alias = vals.get("output_dtype")
    if alias is not None and vals.get("dtype") is not None:
        raise InvalidArgumentError(
            f"{op}: `dtype` and its deprecated alias `output_dtype` are both given (got "
            f"{vals['dtype']} and {alias}). Pass only `dtype`."
        )


def _frozen(value: Any) -> Any:
    """An argument value as a hashable cache-key part (arrays by shape and bytes)."""
    return (value.shape, value.tobytes()) if type(value) is np.ndarray else value


def args_key(vals: Vals) -> tuple[Any, ...]:
    """The arguments of a call as a hashable key: names and values (arrays by shape and
    bytes); raises ``TypeError`` for an unhashable value when the key is hashed."""
    return (*vals, *map(_frozen, vals.values()))


def cached_plan(op: str, plan: Callable[..., Any], shape: tuple[int, ...], layout: Any,
                in_dt: Any, vals: Vals, key: tuple[Any, ...] | None = None) -> Any:  # fmt: skip
    """``plan(shape, layout, in_dt, **plan_args(op, vals))``, memoised across calls (plans are
    pure). The key holds the raw argument values, so a hit costs no argument conversion;
    ``key``: :func:`args_key` of ``vals``, when the caller made it already (once per call)."""
    try:
        full = (plan, shape, layout, in_dt, args_key(vals) if key is None else key)
        hit = _PLAN_CACHE.get(full)
    except TypeError:  # an unhashable argument value: no caching
        return plan(shape, layout, in_dt, **plan_args(op, vals))
    if hit is None:
        hit = plan(shape, layout, in_dt, **plan_args(op, vals))
        if len(_PLAN_CACHE) >= PLAN_CACHE_SIZE:
            _PLAN_CACHE.clear()
        _PLAN_CACHE[full] = hit
    return hit


class LazySamples(Sequence[Any]):
    """Per-sample values made on first access (by whichever worker thread runs that sample),
    then kept: the plans of a call, the crop decoders' windows.

    Examples
    --------
    >>> made = []
    >>> lazy = LazySamples(lambda i: made.append(i) or i * 10, 3)
    >>> lazy[2], lazy[2], len(lazy), made
    (20, 20, 3, [2])
    """

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[int], Any], n: int) -> None:
        self._make = make
        self._made: list[Any] = [_UNMADE] * n

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, i: int) -> Any:  # type: ignore[override]
        value = self._made[i]
        if value is _UNMADE:
            value = self._made[i] = self._make(i)
        return value


_UNMADE = object()


def _in_dtype(x: Batch) -> np.dtype | None:
    try:
        return x._dtype.numpy
    except TypeError:
        return None


def make_plans(kc: KernelContext, spec: Planned, x: Batch, lay: str | None, vals: Vals
               ) -> Sequence[Any]:  # fmt: skip
    """One plan per sample (errors name the sample)."""
    samples = x._samples
    assert samples is not None
    in_dt = _in_dtype(x)
    plan = spec.plan
    name = kc.name
    check_in_dtype(name, spec.in_dtypes, in_dt)  # once per call, before any sample
    check_dtype_alias(name, vals)
    per = has_per_sample(vals)

    def args(i: int) -> Vals:
        return plan_args(name, sample_args(vals, i) if per else vals)

    if spec.random:
        gen = kc.generator()  # samplers draw in sample order, on this thread
        shared = None if per else args(0)
        return kc.map(
            lambda i: plan(gen, tuple(samples[i].shape), lay, in_dt, **(shared or args(i))),
            parallel=False,
        )
    if not per:
        seen: dict[tuple[int, ...], Any] = {}
        key = args_key(vals)  # (once per call)

        def one(i: int) -> Any:
            shp = tuple(samples[i].shape)
            p = seen.get(shp)
            if p is None:
                p = seen[shp] = cached_plan(name, plan, shp, lay, in_dt, vals, key)
            return p

    else:  # per-sample arguments: each sample's own values key the cache
        shared = {k: v for k, v in vals.items() if type(v) is not PerSample}
        varying = [(k, v) for k, v in vals.items() if type(v) is PerSample]
        shared_key = args_key(shared)  # (once per call)

        def one(i: int) -> Any:
            own = {k: v[i] for k, v in varying}
            key = (shared_key, *own, *map(_frozen, own.values()))
            return cached_plan(name, plan, tuple(samples[i].shape), lay, in_dt,
                               {**shared, **own}, key)  # fmt: skip

    if spec.light:
        return kc.map(one, parallel=False)
    return LazySamples(one, len(samples))


#: ``batched(samples, layout, plans) -> (outputs, dense or None) | None``: a whole-batch kernel.
BatchedKernel = Callable[[list[Any], str | None, Sequence[Any]], tuple[list[Any], Any] | None]


def planned_kernel(
    spec: Planned, fn: Callable[..., Any], batched: BatchedKernel | None = None
) -> Callable[..., tuple[Batch]]:
    """A batch kernel running ``spec``'s plans with the pixel kernel ``fn``.

    ``batched``, when given, is tried first on unmasked batches: it computes every output at once
    from the plans (returning ``None`` when it does not apply, e.g. an unsupported layout), and
    its outputs must equal the pixel kernel's.
    """

    def kern(kc: KernelContext, ins: list[Batch | None], vals: Vals) -> tuple[Batch]:
        if spec.prepare is not None:
            vals = spec.prepare(kc, ins, vals)
        x = ins[0]
        assert x is not None
        samples = x._samples
        assert samples is not None
        lay = default_layout(x._layout, x.ndim, spec.layouts)
        plans = make_plans(kc, spec, x, lay, vals)
        out_lay = lay if spec.out_layout is None else spec.out_layout(lay, plans, vals)
        if spec.whole_batch is not None:
            outs = spec.whole_batch(kc, x, lay, plans, vals)
            if outs is not None:
                return (wrap(kc, outs, plans, x, out_lay),)
        if batched is not None and len(samples) > 1 and vals.get("mask", True) is True:
            res = batched(samples, lay, plans)
            if res is not None:
                return (wrap(kc, res[0], plans, x, out_lay, res[1]),)
        return (run_plans(kc, x, plans, fn, lay, out_lay, spec, vals.get("mask", True)),)

    kern.__name__ = kern.__qualname__ = f"planned_{fn.__name__}"
    return kern


def run_plans(
    kc: KernelContext,
    x: Batch,
    plans: Sequence[Any],
    fn: Callable[..., Any],
    lay: str | None,
    out_lay: str | None,
    spec: Planned,
    mask: Any = True,
) -> Batch:
    """Apply ``fn(sample, lay, **plan.kwargs)`` to every sample; wrap the results."""
    samples = x._samples
    assert samples is not None
    parallel = kc.worth_parallel(samples)
    slab = dense_slab(kc, plans) if spec.dense else None
    masked = type(mask) is PerSample or not mask

    def run(i: int) -> Any:
        if masked and not (mask[i] if type(mask) is PerSample else mask):
            _ = plans[i]  # still planned, so still checked (as the reference checks every sample)
            return samples[i]  # masked out: passed through unchanged
        if slab is not None:
            return fn(samples[i], lay, out=slab[i], **plans[i].kwargs)
        return fn(samples[i], lay, **plans[i].kwargs)

    return wrap(kc, kc.map(run, parallel, spec.light), plans, x, out_lay, slab)


def wrap(kc: KernelContext, outs: list[Any], plans: Sequence[Any], x: Batch, out_lay: str | None,
         slab: Any = None) -> Batch:  # fmt: skip
    """The output Batch: the outputs' dtype (else the plans', else the input's) and layout."""
    dt = x._dtype
    if outs:
        dt = _st.dtype_of(outs[0])
    elif plans and plans[0].dtype is not None:
        dt = _dt.from_numpy(np.dtype(plans[0].dtype))
    if out_lay is not None and outs and len(out_lay) != outs[0].ndim:
        out_lay = None
    return Batch._wrap(outs, dt, out_lay, kc.device, dense=slab)


def dense_slab(kc: KernelContext, plans: Sequence[Any]) -> np.ndarray | None:
    """One ``(N, *shape)`` CPU array for the outputs when every sample's plan agrees on them,
    so ``Batch.torch()`` needs no stacking copy."""
    if kc.device.device_type != "cpu" or not plans:
        return None
    shape: Any = None
    dtype: Any = None
    for i in range(len(plans)):  # (up to the first disagreement: the rest stay lazy)
        try:
            p = plans[i]
        except Exception as e:  # planning a sample can fail: the error names the sample
            raise annotate(e, kc.name, i, kc.source(i)) from None
        if i == 0:
            shape, dtype = p.shape, p.dtype
        if dtype is None or p.shape != shape or p.dtype != dtype:
            return None
    return np.empty((len(plans), *shape), dtype)
