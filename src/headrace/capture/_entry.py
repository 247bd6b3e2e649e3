"""How a loop enters capture mode: ``reader.next_epoch(capture=True)`` and
``ExternalSource.captured()``.

A reader or driving ``ExternalSource`` keeps its :class:`~._loop.CaptureLoop` across epochs
(traced once, in its first captured epoch). A loop left or failed during its traced step, or
one that captured nothing, is released: its feeders become free again and the next captured
epoch traces again; a reader may then iterate eagerly, except after leaving a traced step that
read no feeder and drew no random numbers (it stays in capture mode, with its batch size). A
loop left early after tracing releases an ``ExternalSource`` driver and its feeders; a reader
whose pipeline had already pulled feeders or drawn random states ahead cannot be used again
(those sources moved past a step that never completed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from headrace._exec.context import EvalContext
from headrace.capture._invariant import unwrap
from headrace.capture._loop import CaptureLoop, run_loop
from headrace.capture._workers import WorkerRequest

INVALID_READER = "This reader is in an invalid state due to a previous error and cannot be used."


def mode_name(compiled: bool) -> str:
    """How errors name the mode: by the spelling the user asked for it with."""
    return "compiled mode (compile=True)" if compiled else "capture mode"


def reader_loop(
    reader: Any,
    batch_size: Any,
    ctx: Any,
    eager_epoch: Callable[[int], Any],
    compiled: bool = False,
    workers: WorkerRequest | None = None,
) -> Any:
    """``reader.next_epoch(batch_size=N, capture=True)``: checks, then the captured epoch.

    ``eager_epoch(n)`` starts the reader's plain epoch with batch size ``n``; ``compiled``: the
    mode was asked for by its older name (``compile=True``), which the errors then use;
    ``workers``: the worker processes asked for (default: :class:`WorkerRequest` defaults).
    """
    if batch_size is None:
        spelling = "compile" if compiled else "capture"
        raise ValueError(f"{spelling}=True requires a non-None batch_size.")
    batch_size = unwrap(batch_size)
    _check_reader(reader, compiled)
    ctx = ctx if ctx is not None else EvalContext.current()
    loop = _reader_capture(reader, batch_size, ctx, compiled)
    loop.pipeline.request = workers or WorkerRequest(None, None)
    trace = loop.tracing
    source = eager_epoch(batch_size)

    def teardown(finished: bool) -> None:
        if _captured(loop):
            if finished:
                return  # the next epoch replays
            if loop.feeders or loop.rngs:  # pulled / drawn ahead of the body: cannot resume
                reader._capture_invalid = True
                release(loop)
            return
        release(loop)
        if not loop.tracing or loop.feeders or any(n.rng is not None for n in loop.nodes):
            # traced and captured nothing, or left while tracing a step that read feeders or
            # drew random numbers: the reader is free again (as in the reference)
            reader._capture = None
            reader._capture_released = True
            return
        # left or failed during its traced step otherwise: the reader stays in capture mode
        # with its batch size (as in the reference); its next captured epoch traces again
        fresh = reader._capture = CaptureLoop(loop.batch_size, loop.ctx, compiled=loop.compiled)
        reader._capture_stats = fresh.stats

    return run_loop(loop, source, trace, teardown)


def _captured(loop: CaptureLoop) -> bool:
    """Whether ``loop`` has traced a step and runs a pipeline."""
    return not loop.tracing and bool(loop.nodes or loop.feeders)


def release(loop: CaptureLoop) -> None:
    """Unbind the feeders of ``loop``, so that they can be used again; stop its workers."""
    loop.pipeline.close_workers()
    for f in loop.feeders:
        if getattr(f, "_capture_loop", None) is loop:
            f._role, f._capture_loop = None, None


def _check_reader(reader: Any, compiled: bool) -> None:
    if getattr(reader, "_capture_invalid", False):
        raise RuntimeError(INVALID_READER)
    mode = mode_name(compiled)
    if getattr(reader, "_checkpointing", False):
        raise NotImplementedError(
            f"Checkpointing is not supported in {mode}: reader {reader._name!r} has checkpointing "
            "enabled (construct it without enable_checkpointing, or iterate it eagerly)."
        )
    released = getattr(reader, "_capture_released", False)
    if (
        getattr(reader, "_capture", None) is None
        and getattr(reader, "_started", False)
        and not released
    ):
        raise RuntimeError(f"This reader was already iterated eagerly and cannot switch to {mode}.")


def _reader_capture(
    reader: Any, batch_size: int, ctx: EvalContext, compiled: bool
) -> CaptureLoop:
    """The reader's capture loop (made on first use); the same batch size and context."""
    loop: CaptureLoop | None = getattr(reader, "_capture", None)
    if loop is None:
        loop = reader._capture = CaptureLoop(batch_size, ctx, compiled=compiled)
        reader._capture_stats = loop.stats
        return loop
    if loop.batch_size != batch_size:
        raise ValueError(f"Cannot change batch_size from {loop.batch_size} to {batch_size}.")
    if loop.ctx is not ctx:
        raise RuntimeError("Cannot change EvalContext for a capture-mode loop.")
    return loop


def external_source_loop(
    src: Any,
    batch_size: Any,
    ctx: Any,
    compiled: bool = False,
    workers: WorkerRequest | None = None,
) -> Any:
    """``ExternalSource.captured(batch_size)``: trace (first epoch), then pipeline the source.

    ``compiled``: called by its older name (``.compiled()``), which the errors then use;
    ``workers``: the worker processes asked for.
    """
    if batch_size is None:
        raise ValueError(
            f"{'compiled' if compiled else 'captured'}() requires a non-None batch_size."
        )
    batch_size = unwrap(batch_size)
    _check_driver(src)
    ctx = ctx if ctx is not None else EvalContext.current()
    loop: CaptureLoop | None = src._capture_loop if src._role == "driver" else None
    if loop is not None:
        if loop.batch_size != batch_size:
            raise ValueError(f"Cannot change batch_size from {loop.batch_size} to {batch_size}.")
        if loop.ctx is not ctx:
            raise RuntimeError("Cannot change EvalContext for a capture-mode loop.")
    else:
        loop = CaptureLoop(batch_size, ctx, compiled=compiled)
        src._role, src._capture_loop = "driver", loop
        src._capture_stats = loop.stats
    loop.pipeline.request = workers or WorkerRequest(None, None)

    def teardown(finished: bool) -> None:
        if finished and _captured(loop):
            return  # kept: the next captured() replays without tracing again
        release(loop)
        src._role, src._capture_loop = None, None

    return run_loop(loop, _items(src, batch_size), loop.tracing, teardown)


def _check_driver(src: Any) -> None:
    role = getattr(src, "_role", None)
    if role == "eager":
        raise RuntimeError(
            f"{src!r} was used eagerly, so it cannot drive a capture-mode loop "
            "(an ExternalSource locks to the first way it is used)."
        )
    if role == "feeder":
        raise RuntimeError(f"{src!r} is already used in a capture-mode loop as a feeder.")


def _items(src: Any, batch_size: int) -> Iterator[Any]:
    """The items of ``src`` until it raises StopIteration."""
    while True:
        try:
            yield src._pull(batch_size)
        except StopIteration:
            return
