"""One step of a capture-mode loop's recorded calls: what the pipeline thread and the worker
processes run (:mod:`._pipeline`, :mod:`._workers`).

:func:`compute_step` runs the recorded nodes on one step's source item and feeder items, each
random node drawing from a private copy of its generator placed where eager execution would
draw; :func:`pull_feeds` takes one item of every feeder.
"""

from __future__ import annotations

from typing import Any

from headrace._core.batch import Batch
from headrace._core.eval_mode import EvalMode
from headrace._rng import RNG
from headrace.capture._graph import CaptureError, Node, Ref
from headrace.capture._stats import mark_captured


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


__all__ = ["compute_step", "pull_feeds"]
