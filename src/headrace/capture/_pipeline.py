"""The pipeline: a producer thread computing the steps after the traced one, ahead of the body.

For each step it pulls the driving source's next item and one item of every feeder, then runs
the recorded nodes in recording order. A random node draws from a private copy of its generator
placed where eager execution would draw for that call on that step (see :mod:`._rngs`); the
user's generators are never touched here. Each node's result, or the exception it raised, is
kept for the body's lookup.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from headrace._core.batch import Batch
from headrace._core.device import Device
from headrace._core.eval_mode import EvalMode
from headrace._exec.producer import END, Channel, Producer
from headrace._rng import RNG
from headrace.capture._graph import CaptureError, Node, Ref, Step
from headrace.capture._rngs import ScheduledRNG
from headrace.capture._stats import mark_captured

THREAD_NAME = "headrace-capture"


def compute_step(
    nodes: list[Node],
    batch_size: int,
    src: Any,
    feeds: list[Any],
    rngs: dict[int, tuple[RNG, int]] | None = None,
) -> list[Any]:
    """Run ``nodes`` on one step's source item and feeder items; a result or exception each.

    ``rngs`` maps ``id(node.rng)`` to the pipeline's copy of that generator and the position
    at which this step's draws from it begin.
    """
    srcs = src if isinstance(src, tuple) else (src,)
    n = srcs[0].batch_size if isinstance(srcs[0], Batch) else batch_size
    results: list[Any] = []

    def value(ref: Ref | None) -> Any:
        if ref is None:
            return None
        kind = ref[0]
        if kind == "src":
            return srcs[ref[1]]
        holder = results[ref[1]] if kind == "node" else feeds[ref[1]]
        if isinstance(holder, BaseException):
            raise holder
        return holder[ref[2]] if isinstance(holder, tuple) else holder

    with EvalMode.sync_cpu:
        for node in nodes:
            try:
                ins = [value(r) for r in node.inputs]
                kw = dict(node.const)
                for k, r in node.refs.items():
                    kw[k] = value(r)
                bs = n if node.explicit_bs == batch_size else node.explicit_bs
                rng = node.rng
                if rng is not None and rngs is not None:
                    rng, base = rngs[id(rng)]
                    rng._pos = base + node.rng_offset
                out = node.schema.call(ins, device=node.device, batch_size=bs, rng=rng, **kw)
                mark_captured(out)
                results.append(out)
            except BaseException as e:
                results.append(e)
    return results


def pull_feeds(feeders: list[Any], batch_size: int) -> list[Any]:
    """One item (or the exception pulling it raised) of every feeder."""
    feeds: list[Any] = []
    for f in feeders:
        try:
            feeds.append(f._pull(batch_size))
        except StopIteration:
            feeds.append(
                CaptureError(
                    f"{f!r} was exhausted before the loop's own source: a feeder must "
                    "not run out first."
                )
            )
        except BaseException as e:
            feeds.append(e)
    return feeds


class Pipeline:
    """Computes up to ``depth`` steps ahead of the body in one producer thread."""

    def __init__(
        self,
        nodes: list[Node],
        feeders: list[Any],
        scheds: list[ScheduledRNG],
        batch_size: int,
        depth: int,
    ) -> None:
        self.nodes = nodes
        self.feeders = feeders
        self.scheds = scheds
        self.batch_size = batch_size
        self.depth = depth
        self._producer: Producer | None = None

    def start(self, source: Iterator[Any]) -> None:
        """Start computing steps from ``source``, on the device current here (the thread's
        device is per thread: a new one would start on the first GPU)."""
        # (the thread must not reach this pipeline: a dropped pipeline ends its thread)
        produce = partial(
            _produce, self.nodes, self.feeders, self.scheds, self.batch_size, source,
            Device.current(),
        )  # fmt: skip
        self._producer = Producer(produce, self.depth, THREAD_NAME)

    def next_step(self) -> Step | None:
        """The next computed step (None at the end of the source); re-raises a source error."""
        assert self._producer is not None
        item = self._producer.get()
        return None if item is END else item

    def shutdown(self) -> None:
        """Stop the thread and drop the steps computed ahead (idempotent)."""
        p = self._producer
        if p is not None:
            p.stop()  # returns once the thread ended
            self._producer = None


def _produce(
    nodes: list[Node],
    feeders: list[Any],
    scheds: list[ScheduledRNG],
    batch_size: int,
    source: Iterator[Any],
    device: Device,
    emit: Channel,
) -> None:
    with device:  # the body's device (the thread's default context follows it)
        _produce_steps(nodes, feeders, scheds, batch_size, source, emit)


def _produce_steps(
    nodes: list[Node],
    feeders: list[Any],
    scheds: list[ScheduledRNG],
    batch_size: int,
    source: Iterator[Any],
    emit: Channel,
) -> None:
    # the schedules' positions now are those of the body's next step
    plan = [(id(s.rng), s.pipeline_copy(), s.start, s.period) for s in scheds]
    step = 0
    try:
        while not emit.stopped:
            try:
                src = next(source)
            except StopIteration:
                return
            mark_captured(src)
            feeds = pull_feeds(feeders, batch_size)
            rngs = {key: (c, start + step * period) for key, c, start, period in plan}
            results = compute_step(nodes, batch_size, src, feeds, rngs)
            step += 1
            if not emit(Step(src, feeds, results)):
                return
    finally:
        if emit.stopped:
            _close(source)


def _close(source: Iterator[Any]) -> None:
    close = getattr(source, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            pass
