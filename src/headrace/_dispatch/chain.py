"""Sample-major runs of chained planned operators (``x → op1 → op2 → … → opk``).

Run one operator at a time, a batch goes through every operator's thread-pool hand-off and each
intermediate result leaves the cache before the next operator reads it (32 spectrograms are
~13 MB). When the calls of a chain are still pending, the thread that runs the last one runs
them all together instead: the plans of every stage are made first, from shapes alone (a plan
needs no pixels, and gives its output's shape and type), then each pool thread takes a sample
through all the stages while it is in its cache. Every stage still gets its own plans, random
draws and checks, so the results are those of the operator-by-operator run. An intermediate
batch that something still refers to (a user's variable, another call) is kept; the others are
dropped as soon as the next stage has read them (less memory traffic: ~8% on the speech
pipeline) — and should one be asked for after all, its call runs again and gives the same
values (``Invocation.complete_dropped``). A dropped intermediate is also made only as far as
the next stage reads it: when that stage crops inside the sample (``Planned.reads_window``:
``crop``, ``crop_mirror_normalize``) and the stage before can make just that box
(``Planned.restrict``: ``resize``), the resize computes only the crop's rows and columns, with
the same values up to float32 summation order (a uint8 value may move by 1 where it lies
within rounding of a half: see ``band_resize``; the ResNet eval chain resize ->
crop_mirror_normalize: ~20 % faster).

A call is a *stage* (:class:`Stage`) when it runs a planned kernel on the CPU on one batch input
and its :class:`~headrace._dispatch.planned.Planned` allows it (``chainable``). A chain is the
longest run of stages ending at the call being run whose producers nobody has started (they are
claimed here).
Anything unexpected — an error in any stage, an output whose shape or type differs from its plan
— makes the chain give up and run its calls one by one as usual, so errors are raised by the
operator and the sample they belong to, exactly as without chaining.

Examples
--------
>>> import numpy as np, headrace as ndd
>>> x = ndd.batch([np.arange(6, dtype=np.float32).reshape(2, 3)] * 2, layout="HW")
>>> y = ndd.normalize(ndd.flip(x, horizontal=1), axes=[1])  # flip and normalize: one chain
>>> np.asarray(y.select(0), np.float64).round(2).tolist()
[[1.22, 0.0, -1.22], [1.22, 0.0, -1.22]]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.device import Device
from headrace._core.invocation import Invocation
from headrace._dispatch.kernel_context import KernelContext, big_enough
from headrace._dispatch.planned import (
    KernelPlan,
    Planned,
    default_layout,
    dense_slab,
    make_plans,
    wrap,
)
from headrace._exec.context import EvalContext


class _Mismatch(Exception):
    """A stage's output differs from what its plan promised: run the chain call by call."""


class _Shaped:
    """A stand-in sample with only a shape, for planning the stage after a pending one."""

    __slots__ = ("ndim", "shape")

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.ndim = len(shape)


class Stage:
    """A pending planned CPU call that may run sample-major with its neighbours.

    Parameters
    ----------
    name : str
        The operator.
    spec : Planned
        Its plans.
    pixel : callable
        Its CPU pixel kernel.
    x : Batch
        Its (single) data input, possibly pending.
    vals : callable
        Returns the call's arguments, with per-sample argument batches resolved and checked.
    kernel_context : callable
        Returns a fresh :class:`KernelContext` for the call.
    ctx : EvalContext
        The context the call was made in (chains never mix contexts).
    """

    __slots__ = ("ctx", "kernel_context", "name", "pixel", "spec", "vals", "x")

    def __init__(
        self,
        name: str,
        spec: Planned,
        pixel: Callable[..., Any],
        x: Batch,
        vals: Callable[[], dict[str, Any]],
        kernel_context: Callable[[], KernelContext],
        ctx: EvalContext,
    ) -> None:
        self.name = name
        self.spec = spec
        self.pixel = pixel
        self.x = x
        self.vals = vals
        self.kernel_context = kernel_context
        self.ctx = ctx

    def producer(self) -> Invocation | None:
        """The pending call making this stage's input, when that call is a stage too."""
        src = self.x._src if self.x._samples is None else None
        if src is None or src[1] != 0:
            return None
        inv: Invocation = src[0]
        st = inv.stage
        if inv.done or st is None or st.ctx is not self.ctx:
            return None
        return inv


def can_stage(spec: Planned | None, module: Any, kernel: str, dev: Device, ins: Sequence[Any],
              stream: Any) -> bool:  # fmt: skip
    """Whether a call may be a :class:`Stage`: planned, on the CPU, one batch input, and no
    whole-batch kernel in the backend."""
    return (
        spec is not None
        and module is not None
        and spec.chains_statically()
        and dev.device_type == "cpu"
        and stream is None
        and len(ins) >= 1
        and isinstance(ins[0], Batch)
        and all(x is None for x in ins[1:])
        and getattr(module, f"{kernel}_batched", None) is None
    )


class _Planned:
    """One stage, planned: its context, arguments, layouts, plans and the output type."""

    __slots__ = ("dtype", "kc", "lay", "out_lay", "plans", "slab", "stage", "vals")

    def __init__(self, stage: Stage, x: Batch, sources: Any, dense: bool = True) -> None:
        spec = stage.spec
        kc = stage.kernel_context()
        kc.sources = sources
        vals = stage.vals()
        if not spec.chains(vals) or vals.get("mask", True) is not True:
            raise _Mismatch
        if spec.prepare is not None:
            vals = spec.prepare(kc, [x], vals)
        lay = default_layout(x._layout, x.ndim, spec.layouts)
        plans = make_plans(kc, spec, x, lay, vals)
        plans = [plans[i] for i in range(len(plans))]  # all made now, on this thread
        self.stage, self.kc, self.vals, self.lay, self.plans = stage, kc, vals, lay, plans
        self.out_lay = lay if spec.out_layout is None else spec.out_layout(lay, plans, vals)
        dt = plans[0].dtype if plans and plans[0].dtype is not None else None
        self.dtype = np.dtype(dt) if dt is not None else x._dtype.numpy
        if any(p.dtype is not None and np.dtype(p.dtype) != self.dtype for p in plans):
            raise _Mismatch  # one batch has one type
        self.slab = dense_slab(kc, plans) if spec.dense and dense else None

    def shapes(self) -> Batch:
        """The output as stand-ins: what the next stage plans from."""
        shaped = [_Shaped(tuple(p.shape)) for p in self.plans]
        return Batch._wrap(shaped, _dt.from_numpy(self.dtype), self.out_lay, self.kc.device)

    def run(self, i: int, sample: Any) -> Any:
        plan = self.plans[i]
        pixel = self.stage.pixel
        if self.slab is not None:
            out = pixel(sample, self.lay, out=self.slab[i], **plan.kwargs)
        else:
            out = pixel(sample, self.lay, **plan.kwargs)
        if out.dtype != self.dtype or tuple(out.shape) != tuple(plan.shape):
            raise _Mismatch
        return out


def _claim_chain(last: Stage) -> list[Invocation]:
    """The pending producers of ``last``, first first, each claimed by this thread."""
    chain: list[Invocation] = []
    cur = last
    while True:
        inv = cur.producer()
        if inv is None or not inv.claim():
            return chain[::-1]
        chain.append(inv)
        cur = inv.stage  # type: ignore[assignment]


def run_chain(last: Stage, input_batch: Callable[[Batch], Batch]) -> tuple[Batch] | None:
    """Run ``last`` together with its pending producer stages, sample-major.

    ``input_batch`` makes the first stage's input concrete. Returns ``last``'s outputs, or
    ``None`` when there is no chain (or it gave up): the caller then runs ``last`` as usual,
    after every claimed producer has been run call by call.
    """
    claimed = _claim_chain(last)
    if not claimed:
        return None
    stages: list[Stage] = [inv.stage for inv in claimed] + [last]  # type: ignore[misc]
    keep = [_observable(st) for st in stages[1:]] + [True]
    try:
        try:
            results = _run_sample_major(stages, input_batch, keep)
        except Exception:  # any failure: the call-by-call run below raises it properly
            results = None
        if results is None:
            for inv in claimed:
                inv.run_claimed()
            return None
        for inv, out in zip(claimed, results[:-1]):
            if out is None:
                inv.complete_dropped()
            else:
                inv.complete((out,))
        return (results[-1],)
    except BaseException:  # interrupted (Ctrl-C): the calls not run go back to whoever needs them
        for inv in claimed:
            inv.unclaim()
        raise


#: References to a pending intermediate batch that the chain itself accounts for: its
#: consumer's ``Stage.x``, the consumer call's input list, and ``sys.getrefcount``'s argument.
_OWN_REFERENCES = 3


def _observable(consumer: Stage) -> bool:
    """Whether the batch ``consumer`` reads (a claimed stage's output) may be looked at by
    anyone else: any reference the chain does not account for (a user's variable, a capture
    loop, another call's input). An unobservable intermediate is not kept; should it be asked
    for after all, its call computes it again (``Invocation.complete_dropped``), so a wrong
    guess costs time, never a different result."""
    return sys.getrefcount(consumer.x) > _OWN_REFERENCES


def _push_windows(producer: _Planned, consumer: _Planned) -> None:
    """Where the consumer reads only a box of a sample (a crop inside the image), let the
    producer make just that box, and the consumer read all of it (e.g. resize then
    crop_mirror_normalize: the resize computes only the crop's rows and columns)."""
    restrict = producer.stage.spec.restrict
    if restrict is None or not consumer.stage.spec.reads_window:
        return
    for i, plan in enumerate(consumer.plans):
        anchor, extent = plan.kwargs["anchor"], plan.kwargs["shape"]
        made = producer.plans[i].shape
        hi = tuple(a + e for a, e in zip(anchor, extent))
        if (
            len(anchor) != len(made)
            or min(anchor) < 0
            or any(h > m for h, m in zip(hi, made))
            or tuple(extent) == tuple(made)
        ):
            continue
        part = restrict(producer.plans[i], producer.lay, tuple(anchor), hi)
        if part is None or tuple(part.shape) != tuple(extent):
            continue
        producer.plans[i] = part
        consumer.plans[i] = KernelPlan(
            plan.shape, plan.dtype, {**plan.kwargs, "anchor": (0,) * len(anchor)}
        )


def _run_sample_major(
    stages: list[Stage], input_batch: Callable[[Batch], Batch], keep: Sequence[bool]
) -> list[Batch | None]:
    base = input_batch(stages[0].x)
    samples = base._samples
    assert samples is not None
    sources = base._sources
    planned: list[_Planned] = []
    x = base
    for st, k in zip(stages, keep):
        p = _Planned(st, x, sources, dense=k)
        planned.append(p)
        x = p.shapes()
    n = len(samples)
    if any(len(p.plans) != n for p in planned):
        raise _Mismatch
    for j in range(len(planned) - 1):
        if not keep[j]:  # nobody else sees stage j's output: make only what stage j+1 reads
            _push_windows(planned[j], planned[j + 1])

    def one(i: int) -> list[Any]:
        s = samples[i]
        outs = []
        for p, k in zip(planned, keep):
            s = p.run(i, s)
            outs.append(s if k else None)
        return outs

    ctx = planned[-1].kc.ctx
    parallel = big_enough(samples)
    per_sample = ctx.parallel_map(one, range(n)) if parallel else [one(i) for i in range(n)]
    out: list[Batch | None] = []
    x = base
    for j, p in enumerate(planned):
        if not keep[j]:
            out.append(None)
            continue
        b = wrap(p.kc, [r[j] for r in per_sample], p.plans, x, p.out_lay, p.slab)
        out.append(b)
        x = b
    return out
