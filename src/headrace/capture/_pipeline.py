"""The pipeline: a producer thread computing the steps after the traced one, ahead of the body.

For each step it pulls the driving source's next item and one item of every feeder, then runs
the recorded nodes in recording order. A random node draws from a private copy of its generator
placed where eager execution would draw for that call on that step (see :mod:`._rngs`); the
user's generators are never touched here. Each node's result, or the exception it raised, is
kept for the body's lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from headrace._core.device import Device
from headrace._exec.producer import END, Channel, Producer
from headrace.capture._graph import Node, Step
from headrace.capture._rngs import ScheduledRNG
from headrace.capture._stats import mark_captured
from headrace.capture._steps import compute_step, pull_feeds
from headrace.capture._workers import CaptureWorkers, WorkerRequest

THREAD_NAME = "headrace-capture"


class Pipeline:
    """Computes up to ``depth`` steps ahead of the body in one producer thread; with
    ``workers`` (:meth:`use_workers`), the thread hands the steps to worker processes."""

    def __init__(
        self,
        nodes: list[Node],
        feeders: list[Any],
        scheds: list[ScheduledRNG],
        batch_size: int,
        depth: int,
        on_gpu: Callable[[], bool] = lambda: False,
    ) -> None:
        self.nodes = nodes
        self.on_gpu = on_gpu  # whether the traced step put values on a GPU
        self.feeders = feeders
        self.scheds = scheds
        self.batch_size = batch_size
        self.depth = depth
        self._producer: Producer | None = None
        self.request: WorkerRequest = WorkerRequest(None, None)
        self.workers: CaptureWorkers | None = None

    def start(self, source: Iterator[Any]) -> None:
        """Start computing steps from ``source``, on the device current here (the thread's
        device is per thread: a new one would start on the first GPU)."""
        # (the thread must not reach this pipeline: a dropped pipeline ends its thread)
        workers = self._workers()
        if workers is not None:
            starts = [(s.start, s.period) for s in self.scheds]
            produce = partial(
                _produce_in_workers, workers, self.feeders, starts, self.batch_size, source,
                Device.current(),
            )  # fmt: skip
        else:
            produce = partial(
                _produce, self.nodes, self.feeders, self.scheds, self.batch_size, source,
                Device.current(),
            )  # fmt: skip
        self._producer = Producer(produce, self.depth, THREAD_NAME)

    def _workers(self) -> CaptureWorkers | None:
        """The worker processes this epoch runs in (made on first use), or None for threads."""
        n, context = self.request.resolve(self.nodes, [s.rng for s in self.scheds], self.on_gpu())
        w = self.workers
        if w is not None and (n != w.num_workers or context is not w.context):
            w.close()
            w = self.workers = None
        if n and w is None:
            w = self.workers = CaptureWorkers(self.nodes, [s.rng for s in self.scheds], n, context)
        if w is not None:
            w.start()  # here, not in the producer thread (workers die with their starter)
        return w

    def close_workers(self) -> None:
        """Stop the worker processes, if any (idempotent)."""
        if self.workers is not None:
            self.workers.close()
            self.workers = None

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


def _produce_in_workers(
    workers: CaptureWorkers,
    feeders: list[Any],
    starts: list[tuple[int, int]],
    batch_size: int,
    source: Iterator[Any],
    device: Device,
    emit: Channel,
) -> None:
    with device:
        try:
            workers.run_epoch(source, feeders, starts, batch_size, emit)
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
