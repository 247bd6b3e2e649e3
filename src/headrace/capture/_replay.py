"""Replay: on the steps after the traced one, a recorded call becomes a lookup.

The call site gives the recorded node; when the call's inputs are the same refs and its
arguments the same values as when it was traced, the result the pipeline computed for this step
is returned. Otherwise the call runs eagerly, random calls included: the pipeline's result for
it is dropped and the eager call draws the same words from the user's generator (see
:mod:`._rngs`). Each eager run is counted, with its reason, in the loop's statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from headrace._dispatch.hooks import NOT_CAPTURED
from headrace._rng import resolve_rng
from headrace.capture import _stats as st
from headrace.capture._graph import CaptureError, Node, as_outputs, placement
from headrace.capture._invariant import is_invariant, unwrap
from headrace.types import native as native_enum

if TYPE_CHECKING:
    from headrace.capture._loop import CaptureLoop

_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    """Whether argument value ``a`` equals the traced ``b`` (same type, same value)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _eager(loop: CaptureLoop, key: Any, schema: Any, reason: str) -> Any:
    loop.fell_back += 1
    loop.stats.note_eager(key, schema.name, reason)
    return NOT_CAPTURED


def replay_call(
    loop: CaptureLoop,
    schema: Any,
    key: Any,
    inputs: Any,
    device: Any,
    rng: Any,
    kwargs: dict[str, Any],
) -> Any:
    """The precomputed result of a recorded call, or ``NOT_CAPTURED`` to run it eagerly."""
    nid = loop.by_key.get(key)
    node = loop.nodes[nid] if nid is not None else None
    if node is None or node.schema is not schema:
        return _eager(loop, key, schema, loop.unrecorded.get(key, st.NOT_TRACED))
    if device is not None or node.device is not None:
        _check_device(node, device)
    if not _inputs_match(loop, inputs, node):
        return _eager(loop, key, schema, st.INPUTS_DIFFER)
    if not _kwargs_match(loop, kwargs, node):
        return _eager(loop, key, schema, st.ARGS_DIFFER)
    if node.rng is not None:
        sched = loop.sched_by_rng[id(node.rng)]
        if not sched.consume(node.rng_offset, resolve_rng(rng)):
            return _eager(loop, key, schema, st.RANDOM_RERUN)
    loop.stats.calls_replayed += 1
    res = loop.step.results[node.nid]  # type: ignore[union-attr]
    ids = loop.ids
    if type(res) is tuple:
        for o, ref in zip(res, node.out_refs):
            ids[id(o)] = (ref, o)
    elif isinstance(res, BaseException):
        raise res
    else:
        ids[id(res)] = (node.out_refs[0], res)
    return res


def _check_device(node: Node, device: Any) -> None:
    d = placement(device)
    if d is not node.device and d != node.device:
        raise CaptureError(
            f"{node.schema.name}: device {d} differs from the traced call's {node.device}. "
            "Cannot change device in capture mode."
        )


def _is_ref(loop: CaptureLoop, value: Any, ref: Any) -> bool:
    """Whether ``value`` is the object known by ``ref`` in this step."""
    hit = loop.ids.get(id(value))
    return hit is not None and hit[1] is value and hit[0] == ref


def _inputs_match(loop: CaptureLoop, inputs: Any, node: Node) -> bool:
    if len(inputs) != len(node.inputs):
        return False
    ids = loop.ids
    for x, r in zip(inputs, node.inputs):
        if x is None:
            if r is not None:
                return False
            continue
        hit = ids.get(id(x))  # _is_ref, inlined: this runs for every input of every lookup
        if hit is None or hit[1] is not x or hit[0] != r:
            return False
    return True


def _kwargs_match(loop: CaptureLoop, kwargs: dict[str, Any], node: Node) -> bool:
    const, refs = node.const, node.refs
    seen = 0
    for k, v in kwargs.items():
        if v is None:
            continue
        seen += 1
        c = const.get(k, _MISSING)
        if c is not _MISSING:
            if k in node.invariant and not is_invariant(v):
                raise CaptureError(
                    f"{node.schema.name}: argument {k!r} was marked with "
                    "ndd.capture.invariant() when the loop was traced. An argument marked with "
                    "ndd.capture.invariant when captured must remain marked."
                )
            if v is not c and not _same(native_enum(unwrap(v)), c):
                return False
            continue
        r = refs.get(k)
        if r is None or not _is_ref(loop, v, r):
            return False
    return seen == node.nargs


def replay_feeder(loop: CaptureLoop, source: Any) -> Any:
    """The item the pipeline pulled from feeder ``source`` for this step."""
    fid = next((i for i, f in enumerate(loop.feeders) if f is source), None)
    if fid is None:
        raise CaptureError(
            f"{source!r} was first used after the traced step: feeders of a capture-mode "
            "loop must be used during tracing."
        )
    if loop.feeds_used[fid]:
        raise CaptureError(
            f"{source!r} is read twice: a feeder must be read once per capture-mode step."
        )
    loop.feeds_used[fid] = 1
    out = loop.step.feeds[fid]  # type: ignore[union-attr]
    if isinstance(out, BaseException):
        raise out
    for i, o in enumerate(as_outputs(out)):
        loop.register(o, ("feed", fid, i))
    st.mark_captured(out)
    return out
