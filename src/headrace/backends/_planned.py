"""Batch kernels built from a per-sample *plan* function and a per-sample pixel kernel.

Many image operators split into a cheap parameter step, ``params(shape, layout, in_dtype,
**args) -> KernelPlan`` (``sampler(rng, shape, ...)`` for random ops), and a pixel kernel,
``kernel(x, layout, **plan.kwargs)``, that exists once per backend module with the same name.
:func:`planned_kernel` turns such a pair into an :class:`~headrace.ops._schema.OpSchema` batch
kernel for any backend: plans are computed in sample order on the calling thread (random
samplers draw from ``kc.generator()`` in a fixed order), pixel kernels run on the pool.

Examples
--------
>>> default_layout(None, 3, {3: "HWC"}), default_layout("CHW", 3, {3: "HWC"})
('HWC', 'CHW')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import PerSample, has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext

Vals = dict[str, Any]


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
        if "dtype" in out:
            raise InvalidArgumentError(
                f"{op}: `dtype` and its deprecated alias `output_dtype` are both given (got "
                f"{out['dtype']} and {alias}). Pass only `dtype`."
            )
        out["dtype"] = alias
    dt = out.get("dtype")
    if isinstance(dt, _dt.DType):
        out["dtype"] = dt.numpy
    return out


@dataclass(frozen=True)
class Planned:
    """How one operator maps onto a plan function and a pixel kernel.

    Attributes
    ----------
    plan : callable
        ``params(shape, layout, in_dtype, **args)`` or, for ``random=True``,
        ``sampler(rng, shape, layout, in_dtype, **args)``.
    kernel : str
        Name of the pixel kernel in the backend module.
    random : bool
        Whether ``plan`` is a sampler drawing from the call's generator.
    layouts : mapping of int to str, optional
        Layout assumed (and given to the output) for inputs without one, by number of dims.
    prepare : callable, optional
        ``prepare(kc, ins, vals) -> vals`` run first (e.g. to merge an argument input).
    """

    plan: Callable[..., Any]
    kernel: str
    random: bool = False
    layouts: Mapping[int, str] | None = None
    prepare: Callable[[KernelContext, list[Batch | None], Vals], Vals] | None = None


def planned_kernel(spec: Planned, module: ModuleType) -> Callable[..., tuple[Batch]]:
    """A batch kernel running ``spec`` with the pixel kernels of ``module``.

    Per-sample ``mask`` arguments (``water``, ``sphere``, ``jitter``) pass samples whose mask is
    0 through unchanged; random samplers still draw for them, so the draws stay aligned.
    """
    fn = getattr(module, spec.kernel)

    def kern(kc: KernelContext, ins: list[Batch | None], vals: Vals) -> tuple[Batch]:
        if spec.prepare is not None:
            vals = spec.prepare(kc, ins, vals)
        x = ins[0]
        assert x is not None
        samples = x._samples
        assert samples is not None
        lay = default_layout(x._layout, x.ndim, spec.layouts)
        in_dt = x._dtype.numpy
        per = has_per_sample(vals)
        shared = None if per else plan_args(kc.name, vals)

        def args(i: int) -> Vals:
            return shared if shared is not None else plan_args(kc.name, sample_args(vals, i))

        if spec.random:
            gen = kc.generator()  # samplers draw in sample order, on this thread

            def plan(i: int) -> Any:
                return spec.plan(gen, tuple(samples[i].shape), lay, in_dt, **args(i))

        else:
            cache: dict[tuple[int, ...], Any] = {}  # equal shapes, shared args: one plan

            def plan(i: int) -> Any:
                shape = tuple(samples[i].shape)
                if per:
                    return spec.plan(shape, lay, in_dt, **args(i))
                if shape not in cache:
                    cache[shape] = spec.plan(shape, lay, in_dt, **args(i))
                return cache[shape]

        plans = kc.map(plan, parallel=False)
        mask = vals.get("mask", True)

        def run(i: int) -> Any:
            if not (mask[i] if type(mask) is PerSample else mask):
                return samples[i]  # masked out: passed through unchanged
            return fn(samples[i], lay, **plans[i].kwargs)

        outs = kc.map(run)
        return (wrap(kc, outs, plans, x, lay),)

    return kern


def wrap(kc: KernelContext, outs: list[Any], plans: list[Any], x: Batch, lay: str | None) -> Batch:
    """The output Batch: the plans' dtype (else the input's) and the (defaulted) input layout."""
    dt = x._dtype
    if plans and plans[0].dtype is not None:
        dt = _dt.from_numpy(np.dtype(plans[0].dtype))
    if lay is not None and outs and len(lay) != outs[0].ndim:
        lay = None
    return Batch._wrap(outs, dt, lay, kc.device)
