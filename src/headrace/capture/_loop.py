"""Capture-mode loops: trace the first step, then run the recorded calls ahead of the loop body.

Step 0 runs eagerly while every operator call is checked and recorded (its call site, where its
inputs came from, its arguments, its RNG): :mod:`._tracing`. From step 1 on, a background
thread pulls the driving source's next item, polls the feeders and runs the recorded calls for
steps ``k+1 … k+depth`` while the body works on step ``k``: :mod:`._pipeline`. In the body each
captured call becomes a call-site lookup that returns the precomputed result; a call whose
inputs or arguments differ from the traced ones runs eagerly instead: :mod:`._replay`. Random
calls get, in the pipeline, the very words eager execution would draw for them, while the
user's generators move in the body exactly as in eager execution: :mod:`._rngs`.

The loop attaches to dispatch through :mod:`headrace._dispatch.hooks`: while the body runs, the
loop is bound to the thread and sees every operator call first (:meth:`CaptureLoop.on_call`).
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable, Generator, Iterator
from typing import Any

from headrace._core.batch import Batch
from headrace._core.callsite import user_stacklevel
from headrace._dispatch import hooks
from headrace._exec.context import EvalContext
from headrace._rng import RNG, set_draw_observer
from headrace.capture import _stats as st
from headrace.capture._graph import CaptureError, Node, Ref, Step, as_outputs
from headrace.capture._invariant import unwrap
from headrace.capture._pipeline import Pipeline
from headrace.capture._replay import replay_call, replay_feeder
from headrace.capture._rngs import ScheduledRNG
from headrace.capture._sites import site_key
from headrace.capture._tracing import trace_call, trace_feeder

DEFAULT_DEPTH = 2


class CaptureLoop:
    """The recorded graph of one loop, the state of its current step, and its pipeline."""

    def __init__(
        self,
        batch_size: int,
        ctx: EvalContext,
        depth: int = DEFAULT_DEPTH,
        *,
        compiled: bool = False,
    ) -> None:
        self.batch_size = batch_size
        self.ctx = ctx
        self.depth = depth
        # entered with the older spelling (compile=True / .compiled()): errors use its words
        self.compiled = compiled
        # the graph, recorded while tracing
        self.nodes: list[Node] = []
        self.by_key: dict[Any, int] = {}
        self.unrecorded: dict[Any, str] = {}  # call sites traced but not recorded: why
        self.feeders: list[Any] = []
        self.feeder_keys: dict[Any, int] = {}
        self.anchors: dict[RNG, int] = {}  # position of each generator's first traced draw
        self.rngs: list[RNG] = []  # generators of captured random calls (node.rng)
        self.scheds: list[ScheduledRNG] = []  # their schedules, one per generator, made by sync
        self.sched_by_rng: dict[int, ScheduledRNG] = {}
        self.stats = st.CaptureStats()
        self.tracing = True
        self.suspended = False  # True while a call of the body runs eagerly
        self.body_code: types.CodeType | None = None
        # the current step
        self.ids: dict[int, tuple[Ref, Any]] = {}  # id(value) -> (its ref, the value)
        self.counts: dict[Any, int] = {}  # runs of each call site
        self.step: Step | None = None
        self.feeds_used: list[int] = []
        self.step_n = batch_size  # batch size of the current step (the last one may be partial)
        self.fell_back = 0
        self.gpu_data = False  # a value of the traced step lives on a GPU (no worker processes)
        # shares the graph's lists: it runs what tracing recorded into them
        self.pipeline = Pipeline(
            self.nodes, self.feeders, self.scheds, batch_size, depth, lambda: self.gpu_data
        )

    # --- bookkeeping of the current step ------------------------------------------------
    def begin_step(self, source_out: Any, step: Step | None) -> None:
        """Start a step whose driving-source output is ``source_out``."""
        self.ids = {}
        self.counts = {}
        self.step = step
        outs = as_outputs(source_out)
        self.step_n = outs[0].batch_size if isinstance(outs[0], Batch) else self.batch_size
        self.feeds_used = [0] * len(self.feeders)
        for i, o in enumerate(outs):
            self.register(o, ("src", i))
        if step is not None:
            self.stats.steps_replayed += 1
            for s in self.scheds:
                s.begin_step()

    def end_step(self) -> None:
        """Check the feeder and generator rules at the end of a replayed step."""
        if self.tracing:
            return
        for f, used in zip(self.feeders, self.feeds_used):
            if used == 0:
                raise CaptureError(
                    f"{f!r} was not consumed in this step: a feeder of a capture-mode loop "
                    "must be read exactly once per capture-mode step "
                    "(An ExternalSource was not consumed this step)."
                )
        for s in self.scheds:
            s.finish_step()

    def note_draw(self, rng: RNG) -> None:
        """The draw observer while tracing: anchor each generator at its first draw."""
        if rng not in self.anchors:
            self.anchors[rng] = rng._pos

    def sync_rngs(self) -> None:
        """After the traced step: one schedule per generator that captured calls draw from."""
        for node in self.nodes:
            if node.rng is not None and all(r is not node.rng for r in self.rngs):
                self.rngs.append(node.rng)
        self.scheds[:] = [ScheduledRNG(r, self.anchors.get(r, r._pos)) for r in self.rngs]
        self.sched_by_rng = {id(s.rng): s for s in self.scheds}
        self.anchors.clear()

    def register(self, obj: Any, ref: Ref) -> None:
        """Know ``obj`` by ``ref`` for the rest of this step."""
        self.ids[id(obj)] = (ref, obj)
        if self.tracing and not self.gpu_data:
            dev = getattr(obj, "device", None)
            self.gpu_data = getattr(dev, "device_type", "cpu") != "cpu"

    def ref_of(self, obj: Any) -> Ref | None:
        """The ref of ``obj`` in this step, or None for a value of unknown origin."""
        hit = self.ids.get(id(obj))
        return hit[0] if hit is not None and hit[1] is obj else None

    # --- recording ----------------------------------------------------------------------
    def add_node(self, node: Node, out: Any) -> None:
        """Record ``node``, whose call returned ``out``."""
        self.nodes.append(node)
        self.by_key[node.key] = node.nid
        self.stats.captured_calls.append(node.schema.name)
        for o, ref in zip(as_outputs(out), node.out_refs):
            self.register(o, ref)

    def add_feeder(self, source: Any, key: Any) -> int:
        """Record feeder ``source`` (read once in this step); its index."""
        fid = len(self.feeders)
        self.feeders.append(source)
        self.feeder_keys[key] = fid
        self.feeds_used.append(1)
        self.stats.feeders += 1
        return fid

    # --- calls made by the body -----------------------------------------------------------
    def on_call(
        self,
        schema: Any,
        inputs: Any,
        device: Any,
        batch_size: Any,
        rng: Any,
        kwargs: dict[str, Any],
    ) -> Any:
        """Handle an operator call made by the loop body (the dispatch hook)."""
        if not schema.capture:
            self.stats.note_eager(site_key(self.body_code, {}), schema.name, st.NOT_CAPTURABLE)
            return hooks.NOT_CAPTURED
        if batch_size is not None:
            self._check_batch_size(unwrap(batch_size))
        key = site_key(self.body_code, self.counts)
        if self.tracing:
            return trace_call(self, schema, key, inputs, device, batch_size, rng, kwargs)
        return replay_call(self, schema, key, inputs, device, rng, kwargs)

    def _check_batch_size(self, n: Any) -> None:
        if n not in (self.batch_size, self.step_n):
            if self.compiled:
                raise CaptureError(
                    f"Cannot change batch_size to {n}, the compiled loop uses {self.batch_size}."
                )
            raise CaptureError(
                f"Cannot change batch size to {n}, the capture-mode loop uses {self.batch_size}."
            )

    def on_feeder_call(self, source: Any, batch_size: int | None) -> Any:
        """Handle a call of another ExternalSource in the body."""
        key = site_key(self.body_code, self.counts)
        if self.tracing:
            return trace_feeder(self, source, key, batch_size)
        return replay_feeder(self, source)

    def run_plain(
        self,
        schema: Any,
        inputs: Any,
        device: Any,
        batch_size: Any,
        rng: Any,
        kwargs: dict[str, Any],
    ) -> Any:
        """Run a call eagerly, unseen by this loop."""
        self.suspended = True
        try:
            return schema.call(inputs, device=device, batch_size=batch_size, rng=rng, **kwargs)
        finally:
            self.suspended = False

    # --- the pipeline -------------------------------------------------------------------
    def start(self, source: Iterator[Any]) -> None:
        """Start computing the steps of ``source`` in the background."""
        self.tracing = False
        self.stats.mode = "captured"
        self.pipeline.start(source)

    def next_step(self) -> Step | None:
        """The next precomputed step (None at the end of the source)."""
        return self.pipeline.next_step()

    def shutdown(self) -> None:
        """Stop the pipeline and drop the steps computed ahead."""
        self.pipeline.shutdown()


_PIPELINE = object()
"""Returned by :func:`_traced_step` when the loop goes on with the pipeline."""


def run_loop(
    loop: CaptureLoop,
    source: Iterator[Any],
    trace: bool,
    on_teardown: Callable[[bool], None] | None = None,
) -> Generator[Any, None, None]:
    """The generator behind capture-mode iteration over ``source``.

    ``trace``: step 0 still has to be traced. ``on_teardown(finished)`` runs at the end, with
    ``finished`` False when the loop was left early or failed.
    """
    if hooks.current_loop() is not None:
        raise CaptureError("Only one capture-mode loop can be active at a time in a thread.")
    finished = False
    try:
        if trace:
            body = sys._getframe(1).f_code  # the frame iterating over this generator
            if (yield from _traced_step(loop, source, body)) is not _PIPELINE:
                finished = True
                return
        yield from _pipelined_steps(loop, source)
        finished = True
    finally:
        hooks.set_loop(None)
        set_draw_observer(None)
        loop.shutdown()
        if not finished:
            loop.pipeline.close_workers()  # left early or failed: no worker outlives the epoch
            loop.stats.mode = "torn down"
        if on_teardown is not None:
            on_teardown(finished)


def _traced_step(
    loop: CaptureLoop, source: Iterator[Any], body: types.CodeType
) -> Generator[Any, None, object]:
    """Step 0, run eagerly and recorded; then the rest eagerly when nothing was recorded."""
    try:
        first = next(source)
    except StopIteration:
        return None
    hooks.set_loop(loop)
    set_draw_observer(loop.note_draw)
    loop.body_code = body
    loop.begin_step(first, None)
    st.mark_captured(first)
    loop.stats.steps_traced += 1
    yield first
    set_draw_observer(None)
    hooks.set_loop(None)
    loop.tracing = False
    if loop.nodes or loop.feeders:
        loop.sync_rngs()
        return _PIPELINE
    loop.stats.mode = "eager"
    warnings.warn(
        "capture=True was specified but no operators were captured during tracing. "
        "Falling back to dynamic mode: the loop continues eagerly (see ndd.capture.stats()).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
    for item in source:
        loop.stats.steps_eager += 1
        yield item
    return None


def _pipelined_steps(loop: CaptureLoop, source: Iterator[Any]) -> Generator[Any, None, None]:
    """The steps after the traced one, computed ahead by the pipeline."""
    loop.start(source)
    while (step := loop.next_step()) is not None:
        hooks.set_loop(loop)
        loop.begin_step(step.source, step)
        yield step.source
        loop.end_step()
        hooks.set_loop(None)
