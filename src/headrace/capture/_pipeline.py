"""The pipeline: a producer thread computing the steps after the traced one, ahead of the body.

For each step it pulls the driving source's next item and one item of every feeder, then runs
the recorded nodes in order (synchronously, in recording order, so random nodes draw from their
generators exactly as eager execution would). Each node's result, or the exception it raised, is
kept for the body's lookup. While the pipeline runs, it owns the generators of the random nodes:
any other use of them raises.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from typing import Any

from headrace._core.batch import Batch
from headrace._core.eval_mode import EvalMode
from headrace._exec.producer import END, Emit, Producer
from headrace.capture._graph import CaptureError, Node, Ref, Step

THREAD_NAME = "headrace-capture"


def compute_step(nodes: list[Node], batch_size: int, src: Any, feeds: list[Any]) -> list[Any]:
    """Run ``nodes`` on one step's source item and feeder items; a result or exception each."""
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
                results.append(
                    node.schema.call(ins, device=node.device, batch_size=bs, rng=node.rng, **kw)
                )
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
        self, nodes: list[Node], feeders: list[Any], rngs: list[Any], batch_size: int, depth: int
    ) -> None:
        self.nodes = nodes
        self.feeders = feeders
        self.rngs = rngs
        self.batch_size = batch_size
        self.depth = depth
        self._producer: Producer | None = None

    def start(self, source: Iterator[Any]) -> None:
        """Start computing steps from ``source``."""
        self._producer = Producer(partial(self._produce, source), self.depth, THREAD_NAME)

    def _stopping(self) -> bool:
        p = self._producer  # None before start() returned: stop() cannot have run yet
        return p is not None and p.stopped

    def _produce(self, source: Iterator[Any], emit: Emit) -> None:
        self._own_rngs(threading.get_ident())
        try:
            while not self._stopping():
                try:
                    src = next(source)
                except StopIteration:
                    return
                feeds = pull_feeds(self.feeders, self.batch_size)
                results = compute_step(self.nodes, self.batch_size, src, feeds)
                if not emit(Step(src, feeds, results)):
                    return
        finally:
            self._own_rngs(None)
            if self._stopping():
                _close(source)

    def _own_rngs(self, owner: int | None) -> None:
        for r in self.rngs:
            r._capture_owner = owner

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
        self._own_rngs(None)


def _close(source: Iterator[Any]) -> None:
    close = getattr(source, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            pass
