"""Tracing: the first step of a capture-mode loop runs eagerly while its calls are recorded.

An operator call is recorded as a :class:`~._graph.Node` when everything it depends on can be
named on later steps: each tensor input and tensor argument is an output of the source, of a
feeder or of a recorded call, every other argument is marked ``ndd.capture.invariant`` or is a
comparable constant that the calling function's source proves (:mod:`._provable`), a repeated
run of a site has its first run's inputs, and all its outputs are batches of the loop's batch
size. Anything
else just runs eagerly, now and on every later step.
"""

from __future__ import annotations

import sys
import types
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.callsite import _is_internal, user_stacklevel
from headrace._core.device import Device
from headrace._core.dtype import DType
from headrace._core.tensor import Tensor
from headrace._rng import resolve_rng
from headrace.capture import _stats as st
from headrace.capture._graph import CaptureError, Node, Ref, as_outputs, placement
from headrace.capture._invariant import is_invariant, unwrap
from headrace.capture._provable import unprovable_args
from headrace.types import native as native_enum

if TYPE_CHECKING:
    from headrace.capture._loop import CaptureLoop

_SMALL_ARRAY = 64
"""The largest numpy array argument compared by value across steps."""


def _constant(v: Any) -> bool:
    """A value that can be compared across steps to prove it did not change."""
    if v is None or isinstance(v, (bool, int, float, str, bytes, DType, Device, complex)):
        return True
    if isinstance(v, (tuple, list)):
        return all(_constant(x) for x in v)
    if isinstance(v, np.ndarray):
        return v.size <= _SMALL_ARRAY
    return isinstance(v, np.generic)


class _Recording:
    """What tracing learned about one call's inputs and arguments."""

    __slots__ = ("const", "inputs", "marked", "reason", "refs")

    def __init__(self) -> None:
        self.inputs: list[Ref | None] = []
        self.const: dict[str, Any] = {}
        self.refs: dict[str, Ref | None] = {}
        self.marked: list[str] = []
        self.reason: str | None = None  # why the call cannot be recorded (the first reason)

    @property
    def ok(self) -> bool:
        return self.reason is None

    def fail(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def take_inputs(self, loop: CaptureLoop, inputs: Any) -> None:
        for x in inputs:
            r = None if x is None else loop.ref_of(x)
            if x is not None and r is None:
                self.fail(st.UNKNOWN_INPUT)
            self.inputs.append(r)

    def take_args(self, loop: CaptureLoop, kwargs: dict[str, Any]) -> None:
        for k, v in kwargs.items():
            if v is None:
                continue
            v = native_enum(v)  # the reference's own enum values: ours (comparable, picklable)
            if is_invariant(v):
                self.const[k] = unwrap(v)
                self.marked.append(k)
            elif isinstance(v, (Tensor, Batch)):
                r = self.refs[k] = loop.ref_of(v)
                if r is None:
                    self.fail(st.UNKNOWN_TENSOR_ARG.format(k))
            elif _constant(v):
                self.const[k] = v
            else:
                self.fail(st.NOT_CONSTANT.format(k))

    def prove_args(self, kwargs: dict[str, Any]) -> None:
        """Fail unless the source proves every argument that is neither a batch nor marked."""
        if not self.ok:
            return
        names = [k for k in self.const if k not in self.marked]
        bad = unprovable_args(_user_frame(), names)
        if bad is not None:
            self.fail(st.NOT_PROVABLE.format(bad))

    def same_as(self, node: Node) -> bool:
        """Whether this run of a call site has the inputs and arguments of its first run."""
        return (
            self.inputs == node.inputs and self.refs == node.refs and _equal(self.const, node.const)
        )


def _equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    try:
        return all(bool(np.all(np.asarray(a[k]) == np.asarray(b[k]))) for k in a)
    except Exception:  # values numpy cannot compare: not the same
        return False


def _user_frame() -> types.FrameType | None:
    """The innermost frame that is not headrace's own: the one making the operator call."""
    f: types.FrameType | None = sys._getframe(1)
    while f is not None and _is_internal(f.f_code):
        f = f.f_back
    return f


def trace_call(
    loop: CaptureLoop,
    schema: Any,
    key: Any,
    inputs: Any,
    device: Any,
    batch_size: Any,
    rng: Any,
    kwargs: dict[str, Any],
) -> Any:
    """Run an operator call of the traced step eagerly and record it when it can be replayed."""
    rec = _Recording()
    rec.take_inputs(loop, inputs)
    rec.take_args(loop, kwargs)
    rec.prove_args(kwargs)
    if not schema.random and key[1] > 0:
        _check_repeat(loop, key, rec)
    rng_obj = None
    pos = 0
    if schema.random:
        rng = rng_obj = resolve_rng(rng)
        pos = rng_obj._pos  # where this call draws (the draw itself anchors the generator)
        if batch_size is None and not any(isinstance(x, Batch) for x in inputs):
            rec.fail(st.SINGLE_SAMPLE_RANDOM)
    out = loop.run_plain(schema, inputs, device, batch_size, rng, kwargs)
    if _recordable(loop, schema, key, rec, out):
        node = Node(
            len(loop.nodes),
            schema,
            key,
            rec.inputs,
            rec.const,
            rec.refs,
            placement(device),
            batch_size,
            rng_obj,
            frozenset(rec.marked),
        )
        if rng_obj is not None:
            node.rng_offset = pos - loop.anchors.get(rng_obj, pos)
        loop.add_node(node, out)
        st.mark_captured(out)
    else:
        reason = loop.unrecorded[key] = rec.reason or st.BAD_OUTPUT
        loop.stats.note_eager(key, schema.name, reason)
        if reason == st.REPEATED_RANDOM:  # as the reference: its traced run counts as captured,
            st.mark_captured(out)  # only its runs on later steps are eager
    return out


def _check_repeat(loop: CaptureLoop, key: Any, rec: _Recording) -> None:
    """A later run of a call site in the traced step is recorded only as a repeat of its
    first, recorded run: same inputs, same arguments (a loop feeding a call its own output is
    not)."""
    first = next((n for n in loop.nodes if n.key == (key[0], 0)), None)
    if first is None or not rec.same_as(first):
        rec.fail(st.REPEAT_DIFFERS)


def _recordable(loop: CaptureLoop, schema: Any, key: Any, rec: _Recording, out: Any) -> bool:
    """Whether the call that returned ``out`` can be replayed on later steps."""
    repeated = schema.random and key[1] > 0
    if repeated:
        warnings.warn(
            f"{schema.name}: the random call at this site runs more than once per "
            "iteration; only its first run uses the capture pipeline.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    if repeated:
        rec.fail(st.REPEATED_RANDOM)
    if not rec.ok:
        return False
    return all(isinstance(o, Batch) and o.batch_size == loop.batch_size for o in as_outputs(out))


def trace_feeder(loop: CaptureLoop, source: Any, key: Any, batch_size: int | None) -> Any:
    """Bind ``source`` to the loop as a feeder and pull its item for the traced step."""
    _check_new_feeder(loop, source, key)
    source._role, source._capture_loop = "feeder", loop
    fid = loop.add_feeder(source, key)
    out = source._pull(loop.batch_size if batch_size is None else batch_size)
    for i, o in enumerate(as_outputs(out)):
        loop.register(o, ("feed", fid, i))
    st.mark_captured(out)  # a feeder's items come from the graph, as the source's
    return out


def _check_new_feeder(loop: CaptureLoop, source: Any, key: Any) -> None:
    bound = getattr(source, "_capture_loop", None)
    if bound is not None and bound is not loop:
        raise CaptureError(
            f"{source!r} is already used in a capture-mode loop. Already bound to a different "
            "capture context: each capture-mode loop needs its own feeder instances."
        )
    if getattr(source, "_role", None) == "eager":
        raise CaptureError(
            f"{source!r} was used eagerly before, so it cannot feed a capture-mode loop "
            "(This ExternalSource was already used eagerly)."
        )
    if key in loop.feeder_keys:
        raise CaptureError(
            f"{source!r} is read twice: a feeder must be read once per capture-mode step."
        )
