"""Capture-mode loops: trace the first step, then run the recorded calls ahead of the loop body.

Step 0 runs eagerly while every operator call is checked and recorded (its call site, where its
inputs came from, its arguments, its RNG). From step 1 on, a background thread pulls the
driving source's next item, polls the feeders and runs the recorded calls for steps
``k+1 … k+prefetch_depth`` while the body works on step ``k``. In the body each captured call
becomes a call-site lookup that returns the precomputed result; a call whose inputs or arguments
differ from the traced ones runs eagerly instead. Random calls draw from their RNGs in the same
order as eager execution, so results are identical.
"""

from __future__ import annotations

import queue
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.device import Device
from headrace._core.device import device as _to_device
from headrace._core.dtype import DType
from headrace._core.tensor import Tensor
from headrace._dispatch import hooks as _state
from headrace._exec.callsite import _internal_cache, _is_internal
from headrace._exec.context import EvalContext
from headrace._exec.eval_mode import EvalMode
from headrace.capture._invariant import is_invariant, unwrap

NEVER_CAPTURED = frozenset({"arithmetic_generic_op", "_tensor_subscript"})
DEFAULT_DEPTH = 2
_END = object()
_MISSING = object()
RNG_MISUSE = (
    "The RNG of a captured operator was used unexpectedly: random calls in a capture-mode loop "
    "must draw in the same order on every step (no new, removed or reseeded random calls, and "
    "no other use of that RNG while the loop runs)."
)


class CaptureError(RuntimeError):
    """A rule of capture mode was broken."""


def _constant(v: Any) -> bool:
    """A value that can be compared across steps to prove it did not change."""
    if v is None or isinstance(v, (bool, int, float, str, bytes, DType, Device, complex)):
        return True
    if isinstance(v, (tuple, list)):
        return all(_constant(x) for x in v)
    if isinstance(v, np.ndarray):
        return v.size <= 64
    return isinstance(v, np.generic)


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


class Node:
    """One recorded operator call."""

    __slots__ = (
        "const",
        "device",
        "explicit_bs",
        "inputs",
        "invariant",
        "key",
        "nargs",
        "nid",
        "out_refs",
        "refs",
        "rng",
        "schema",
    )

    def __init__(
        self,
        nid: int,
        schema: Any,
        key: Any,
        inputs: list[Any],
        const: dict[str, Any],
        refs: dict[str, Any],
        device: Any,
        explicit_bs: int | None,
        rng: Any,
    ) -> None:
        self.nid = nid
        self.schema = schema
        self.key = key
        self.inputs = inputs
        self.const = const
        self.refs = refs
        self.device = device
        self.explicit_bs = explicit_bs
        self.rng = rng
        self.nargs = len(const) + len(refs)
        self.invariant: frozenset[str] = frozenset()
        self.out_refs = tuple(("node", nid, i) for i in range(schema.num_outputs))


class Step:
    """What the pipeline computed for one step."""

    __slots__ = ("feeds", "results", "source")

    def __init__(self, source: Any, feeds: list[Any], results: list[Any]) -> None:
        self.source = source
        self.feeds = feeds
        self.results = results


class CaptureLoop:
    """The recorded graph of one loop and its prefetching pipeline."""

    def __init__(self, batch_size: int, ctx: EvalContext, depth: int = DEFAULT_DEPTH) -> None:
        self.batch_size = batch_size
        self.ctx = ctx
        self.depth = depth
        self.nodes: list[Node] = []
        self.by_key: dict[Any, int] = {}
        self.feeders: list[Any] = []
        self.feeder_keys: dict[Any, int] = {}
        self.rngs: list[Any] = []
        self.tracing = True
        self.suspended = False
        self.body_code: types.CodeType | None = None
        self.ids: dict[int, tuple[Any, Any]] = {}
        self.counts: dict[Any, int] = {}
        self.step: Step | None = None
        self.feeds_used: list[int] = []
        self.thread: threading.Thread | None = None
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, depth))
        self.stop = threading.Event()
        self.fell_back = 0
        self.step_n = batch_size  # batch size of the current step (the last one may be partial)

    # --- bookkeeping of the current step ------------------------------------------------
    def begin_step(self, source_out: Any, step: Step | None) -> None:
        """Start a step whose driving-source output is ``source_out``."""
        self.ids = {}
        self.counts = {}
        self.step = step
        first = source_out[0] if isinstance(source_out, tuple) else source_out
        self.step_n = first.batch_size if isinstance(first, Batch) else self.batch_size
        self.feeds_used = [0] * len(self.feeders)
        outs = source_out if isinstance(source_out, tuple) else (source_out,)
        for i, o in enumerate(outs):
            self._register(o, ("src", i))

    def end_step(self) -> None:
        """Check the feeder rules at the end of a replayed step."""
        if self.tracing:
            return
        for f, used in zip(self.feeders, self.feeds_used):
            if used == 0:
                raise CaptureError(
                    f"{f!r} was not consumed in this step: a feeder of a capture-mode loop "
                    "must be read exactly once per capture-mode step."
                )

    def _register(self, obj: Any, ref: Any) -> None:
        self.ids[id(obj)] = (ref, obj)

    def _ref_of(self, obj: Any) -> Any:
        hit = self.ids.get(id(obj))
        return hit[0] if hit is not None and hit[1] is obj else None

    def site_key(self) -> Any:
        """The chain of (code, instruction) positions of the calling user code."""
        f: types.FrameType | None = sys._getframe(3)  # site_key <- on_call <- call <- op
        internal = _internal_cache
        while f is not None:
            code = f.f_code
            flag = internal.get(code)
            if flag is None:
                flag = _is_internal(code)
            if not flag:
                break
            f = f.f_back
        if f is None:
            key: Any = ()
        elif f.f_code is self.body_code:  # the common case: a call written in the loop body
            key = (f.f_code, f.f_lasti)
        else:
            chain = []
            body = self.body_code
            while f is not None and len(chain) < 8:
                chain.append((f.f_code, f.f_lasti))
                if f.f_code is body:
                    break
                f = f.f_back
            key = tuple(chain)
        counts = self.counts
        n = counts.get(key, 0)
        counts[key] = n + 1
        return (key, n)

    # --- operator calls in the body -----------------------------------------------------
    def on_call(
        self,
        schema: Any,
        inputs: Any,
        device: Any,
        batch_size: Any,
        rng: Any,
        kwargs: dict[str, Any],
    ) -> Any:
        """Handle an operator call made by the loop body."""
        if schema.name in NEVER_CAPTURED:
            return _state.NOT_CAPTURED
        if batch_size is not None and unwrap(batch_size) not in (self.batch_size, self.step_n):
            raise CaptureError(
                f"Cannot change batch size to {unwrap(batch_size)}, the capture-mode loop uses "
                f"{self.batch_size}."
            )
        key = self.site_key()
        if self.tracing:
            return self._trace(schema, key, inputs, device, batch_size, rng, kwargs)
        return self._replay(schema, key, inputs, device, rng, kwargs)

    def _run_plain(
        self,
        schema: Any,
        inputs: Any,
        device: Any,
        batch_size: Any,
        rng: Any,
        kwargs: dict[str, Any],
    ) -> Any:
        self.suspended = True
        try:
            return schema.call(inputs, device=device, batch_size=batch_size, rng=rng, **kwargs)
        finally:
            self.suspended = False

    def _trace(
        self,
        schema: Any,
        key: Any,
        inputs: Any,
        device: Any,
        batch_size: Any,
        rng: Any,
        kwargs: dict[str, Any],
    ) -> Any:
        refs_in: list[Any] = []
        ok = True
        for x in inputs:
            if x is None:
                refs_in.append(None)
                continue
            r = self._ref_of(x)
            if r is None:
                ok = False
            refs_in.append(r)
        const: dict[str, Any] = {}
        refs: dict[str, Any] = {}
        marked = []
        for k, v in kwargs.items():
            if v is None:
                continue
            if is_invariant(v):
                const[k] = unwrap(v)
                marked.append(k)
            elif isinstance(v, (Tensor, Batch)):
                r = self._ref_of(v)
                if r is None:
                    ok = False
                refs[k] = r
            elif _constant(v):
                const[k] = v
            else:
                ok = False
        rng_obj = None
        if schema.random:
            from headrace._rng import resolve_rng

            rng_obj = resolve_rng(rng)
            has_batch = any(isinstance(x, Batch) for x in inputs) or batch_size is not None
            if not has_batch:
                ok = False  # random calls producing one sample are never captured
            rng = rng_obj
        out = self._run_plain(schema, inputs, device, batch_size, rng, kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        repeated = schema.random and key[1] > 0
        if not ok or repeated or not all(isinstance(o, Batch) for o in outs):
            if repeated:
                warnings.warn(
                    f"{schema.name}: the random call at this site runs more than once per "
                    "iteration; only its first run uses the capture pipeline.",
                    UserWarning,
                    stacklevel=4,
                )
            return out
        for o in outs:
            if o.batch_size != self.batch_size:
                return out
        node = Node(
            len(self.nodes),
            schema,
            key,
            refs_in,
            const,
            refs,
            None if device is None else _to_device("gpu" if device == "mixed" else device),
            batch_size,
            rng_obj,
        )
        node.invariant = frozenset(marked)
        self.nodes.append(node)
        self.by_key[key] = node.nid
        if rng_obj is not None and all(r is not rng_obj for r in self.rngs):
            self.rngs.append(rng_obj)
        for i, o in enumerate(outs):
            self._register(o, ("node", node.nid, i))
        return out

    def _inputs_match(self, inputs: Any, node: Node) -> bool:
        if len(inputs) != len(node.inputs):
            return False
        ids = self.ids
        for x, r in zip(inputs, node.inputs):
            if x is None:
                if r is not None:
                    return False
                continue
            hit = ids.get(id(x))
            if hit is None or hit[1] is not x or hit[0] != r:
                return False
        return True

    def _kwargs_match(self, kwargs: dict[str, Any], node: Node) -> bool:
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
                        "ndd.capture.invariant() when the loop was traced; dropping the marker "
                        "on a later step is not allowed."
                    )
                if v is not c and not _same(unwrap(v), c):
                    return False
                continue
            r = refs.get(k)
            if r is None:
                return False
            hit = self.ids.get(id(v))
            if hit is None or hit[1] is not v or hit[0] != r:
                return False
        return seen == node.nargs

    def _replay(
        self, schema: Any, key: Any, inputs: Any, device: Any, rng: Any, kwargs: dict[str, Any]
    ) -> Any:
        nid = self.by_key.get(key)
        node = self.nodes[nid] if nid is not None else None
        if node is None or node.schema is not schema:
            return _state.NOT_CAPTURED
        d = None if device is None else _to_device("gpu" if device == "mixed" else device)
        if d is not node.device and d != node.device:
            raise CaptureError(
                f"{schema.name}: device {d} differs from the traced call's {node.device}. Cannot "
                "change device in capture mode."
            )
        same = self._inputs_match(inputs, node) and self._kwargs_match(kwargs, node)
        if not same:
            if node.rng is not None:
                raise CaptureError(RNG_MISUSE)
            self.fell_back += 1
            return _state.NOT_CAPTURED
        res = self.step.results[node.nid]  # type: ignore[union-attr]
        ids = self.ids
        if type(res) is tuple:
            for o, ref in zip(res, node.out_refs):
                ids[id(o)] = (ref, o)
        elif isinstance(res, BaseException):
            raise res
        else:
            ids[id(res)] = (node.out_refs[0], res)
        return res

    def on_feeder_call(self, source: Any, batch_size: int | None) -> Any:
        """Handle a call of another ExternalSource in the body."""
        key = self.site_key()
        if self.tracing:
            bound = getattr(source, "_capture_loop", None)
            if bound is not None and bound is not self:
                raise CaptureError(
                    f"{source!r} is already bound to a different capture context: each "
                    "capture-mode loop needs its own feeder instances."
                )
            if getattr(source, "_role", None) == "eager":
                raise CaptureError(
                    f"{source!r} was used eagerly before, so it cannot feed a capture-mode loop."
                )
            if key in self.feeder_keys:
                raise CaptureError(
                    f"{source!r} is read twice: a feeder must be read once per capture-mode step."
                )
            source._role, source._capture_loop = "feeder", self
            self.feeders.append(source)
            self.feeder_keys[key] = len(self.feeders) - 1
            self.feeds_used.append(1)
            out = source._pull(self.batch_size if batch_size is None else batch_size)
            for i, o in enumerate(out if isinstance(out, tuple) else (out,)):
                self._register(o, ("feed", len(self.feeders) - 1, i))
            return out
        fid = next((i for i, f in enumerate(self.feeders) if f is source), None)
        if fid is None:
            raise CaptureError(
                f"{source!r} was first used after the traced step: feeders of a capture-mode "
                "loop must be used during tracing."
            )
        if self.feeds_used[fid]:
            raise CaptureError(
                f"{source!r} is read twice: a feeder must be read once per capture-mode step."
            )
        self.feeds_used[fid] = 1
        out = self.step.feeds[fid]  # type: ignore[union-attr]
        if isinstance(out, BaseException):
            raise out
        for i, o in enumerate(out if isinstance(out, tuple) else (out,)):
            self._register(o, ("feed", fid, i))
        return out

    # --- the pipeline -------------------------------------------------------------------
    def start(self, source: Iterator[Any]) -> None:
        """Start computing steps from ``source`` in a background thread."""
        self.tracing = False
        self.stop.clear()
        self.queue = queue.Queue(maxsize=max(1, self.depth))
        self.thread = threading.Thread(
            target=self._pipeline, args=(source,), name="headrace-capture", daemon=True
        )
        self.thread.start()

    def _put(self, item: Any) -> bool:
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _pipeline(self, source: Iterator[Any]) -> None:
        ident = threading.get_ident()
        for r in self.rngs:
            r._capture_owner = ident
        try:
            while not self.stop.is_set():
                try:
                    src = next(source)
                except StopIteration:
                    self._put(_END)
                    return
                except BaseException as e:
                    self._put(e)
                    return
                feeds: list[Any] = []
                for f in self.feeders:
                    try:
                        feeds.append(f._pull(self.batch_size))
                    except StopIteration:
                        feeds.append(
                            CaptureError(
                                f"{f!r} was exhausted before the loop's own source: a feeder must "
                                "not run out first."
                            )
                        )
                    except BaseException as e:
                        feeds.append(e)
                if not self._put(Step(src, feeds, self._compute(src, feeds))):
                    return
        finally:
            for r in self.rngs:
                r._capture_owner = None
            close = getattr(source, "close", None)
            if close is not None and self.stop.is_set():
                try:
                    close()
                except Exception:
                    pass

    def _compute(self, src: Any, feeds: list[Any]) -> list[Any]:
        srcs = src if isinstance(src, tuple) else (src,)
        results: list[Any] = []
        n = srcs[0].batch_size if isinstance(srcs[0], Batch) else self.batch_size

        def value(ref: Any) -> Any:
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
            for node in self.nodes:
                try:
                    ins = [value(r) for r in node.inputs]
                    kw = dict(node.const)
                    for k, r in node.refs.items():
                        kw[k] = value(r)
                    bs = n if node.explicit_bs == self.batch_size else node.explicit_bs
                    out = node.schema.call(
                        ins, device=node.device, batch_size=bs, rng=node.rng, **kw
                    )
                    results.append(out)
                except BaseException as e:
                    results.append(e)
        return results

    def next_step(self) -> Step | None:
        """The next precomputed step (None at the end of the source)."""
        while True:
            try:
                item = self.queue.get(timeout=0.1)
                break
            except queue.Empty:
                if self.thread is not None and not self.thread.is_alive():
                    return None
        if item is _END:
            return None
        if isinstance(item, BaseException):
            raise item
        return item

    def shutdown(self) -> None:
        """Stop the pipeline thread and drop prefetched steps."""
        self.stop.set()
        t = self.thread
        if t is not None:
            while t.is_alive():
                try:
                    self.queue.get_nowait()
                except queue.Empty:
                    pass
                t.join(timeout=0.05)
        self.thread = None
        for r in self.rngs:
            r._capture_owner = None


def run_loop(
    loop: CaptureLoop,
    source: Iterator[Any],
    trace: bool,
    on_teardown: Callable[[bool], None] | None = None,
) -> Iterator[Any]:
    """The generator behind capture-mode iteration over ``source``."""
    if _state.current_loop() is not None:
        raise CaptureError("Only one capture-mode loop can be active at a time in a thread.")
    finished = False
    try:
        if trace:
            try:
                first = next(source)
            except StopIteration:
                finished = True
                return
            _state.set_loop(loop)
            loop.body_code = sys._getframe(1).f_code if sys._getframe(1) else None
            loop.begin_step(first, None)
            yield first
            _state.set_loop(None)
            loop.tracing = False
            if not loop.nodes and not loop.feeders:
                warnings.warn(
                    "Capture mode: no operators were captured during tracing; the loop continues "
                    "eagerly.",
                    UserWarning,
                    stacklevel=2,
                )
                yield from source
                finished = True
                return
        loop.start(source)
        while True:
            step = loop.next_step()
            if step is None:
                finished = True
                return
            _state.set_loop(loop)
            loop.begin_step(step.source, step)
            yield step.source
            loop.end_step()
            _state.set_loop(None)
    finally:
        _state.set_loop(None)
        loop.shutdown()
        if on_teardown is not None:
            on_teardown(finished)


INVALID_READER = "This reader is in an invalid state due to a previous error and cannot be used."


def reader_loop(reader: Any, batch_size: Any, ctx: Any, eager_epoch: Callable[[int], Any]) -> Any:
    """``reader.next_epoch(batch_size=N, capture=True)``: checks, then the captured epoch."""
    if batch_size is None:
        raise ValueError("capture=True requires a non-None batch_size.")
    batch_size = unwrap(batch_size)
    if getattr(reader, "_capture_invalid", False):
        raise RuntimeError(INVALID_READER)
    if getattr(reader, "_checkpointing", False):
        raise NotImplementedError(
            "A reader with checkpointing enabled cannot be used in capture mode (checkpointing "
            "and capture mode are mutually exclusive)."
        )
    loop = getattr(reader, "_capture", None)
    if loop is None and getattr(reader, "_started", False):
        raise RuntimeError(
            "This reader was already iterated eagerly and cannot switch to capture mode."
        )
    ctx = ctx if ctx is not None else EvalContext.current()
    if loop is not None:
        if loop.batch_size != batch_size:
            raise ValueError(f"Cannot change batch_size from {loop.batch_size} to {batch_size}.")
        if loop.ctx is not ctx:
            raise RuntimeError("Cannot change EvalContext for a capture-mode loop.")
    trace = loop is None or loop.tracing
    if loop is None:
        loop = reader._capture = CaptureLoop(batch_size, ctx)
    source = eager_epoch(batch_size)

    def teardown(finished: bool) -> None:
        if not finished and (loop.feeders or loop.rngs) and not loop.tracing:
            reader._capture_invalid = True

    return run_loop(loop, source, trace, teardown)


def external_source_loop(src: Any, batch_size: Any, ctx: Any) -> Any:
    """``ExternalSource.captured(batch_size)``: trace again, then pipeline the source."""
    if batch_size is None:
        raise ValueError("captured() requires a non-None batch_size.")
    batch_size = unwrap(batch_size)
    if getattr(src, "_role", None) == "eager":
        raise RuntimeError(
            f"{src!r} was used eagerly, so it cannot drive a capture-mode loop "
            "(an ExternalSource locks to the first way it is used)."
        )
    if getattr(src, "_role", None) == "feeder":
        raise RuntimeError(f"{src!r} is already used in a capture-mode loop as a feeder.")
    ctx = ctx if ctx is not None else EvalContext.current()
    loop = CaptureLoop(batch_size, ctx)

    def items() -> Iterator[Any]:
        while True:
            try:
                yield src._pull(batch_size)
            except StopIteration:
                return

    src._role, src._capture_loop = "driver", loop

    def teardown(finished: bool) -> None:
        src._capture_loop = None
        src._role = "driver"

    return run_loop(loop, items(), True, teardown)
