"""How a loop enters capture mode: ``reader.next_epoch(capture=True)`` and
``ExternalSource.captured()``.

A reader keeps its :class:`~._loop.CaptureLoop` across epochs (traced once, in its first
captured epoch); an ``ExternalSource`` traces again at every ``captured()`` call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from headrace._exec.context import EvalContext
from headrace.capture._invariant import unwrap
from headrace.capture._loop import CaptureLoop, run_loop

INVALID_READER = "This reader is in an invalid state due to a previous error and cannot be used."


def reader_loop(reader: Any, batch_size: Any, ctx: Any, eager_epoch: Callable[[int], Any]) -> Any:
    """``reader.next_epoch(batch_size=N, capture=True)``: checks, then the captured epoch.

    ``eager_epoch(n)`` starts the reader's plain epoch with batch size ``n``.
    """
    if batch_size is None:
        raise ValueError("capture=True requires a non-None batch_size.")
    batch_size = unwrap(batch_size)
    _check_reader(reader)
    ctx = ctx if ctx is not None else EvalContext.current()
    loop = _reader_capture(reader, batch_size, ctx)
    trace = loop.tracing
    source = eager_epoch(batch_size)

    def teardown(finished: bool) -> None:
        # a pipeline left early has drawn from the feeders / RNGs ahead of the body
        if not finished and (loop.feeders or loop.rngs) and not loop.tracing:
            reader._capture_invalid = True

    return run_loop(loop, source, trace, teardown)


def _check_reader(reader: Any) -> None:
    if getattr(reader, "_capture_invalid", False):
        raise RuntimeError(INVALID_READER)
    if getattr(reader, "_checkpointing", False):
        raise NotImplementedError(
            "A reader with checkpointing enabled cannot be used in capture mode (checkpointing "
            "and capture mode are mutually exclusive)."
        )
    if getattr(reader, "_capture", None) is None and getattr(reader, "_started", False):
        raise RuntimeError(
            "This reader was already iterated eagerly and cannot switch to capture mode."
        )


def _reader_capture(reader: Any, batch_size: int, ctx: EvalContext) -> CaptureLoop:
    """The reader's capture loop (made on first use); the same batch size and context."""
    loop: CaptureLoop | None = getattr(reader, "_capture", None)
    if loop is None:
        loop = reader._capture = CaptureLoop(batch_size, ctx)
        return loop
    if loop.batch_size != batch_size:
        raise ValueError(f"Cannot change batch_size from {loop.batch_size} to {batch_size}.")
    if loop.ctx is not ctx:
        raise RuntimeError("Cannot change EvalContext for a capture-mode loop.")
    return loop


def external_source_loop(src: Any, batch_size: Any, ctx: Any) -> Any:
    """``ExternalSource.captured(batch_size)``: trace again, then pipeline the source."""
    if batch_size is None:
        raise ValueError("captured() requires a non-None batch_size.")
    batch_size = unwrap(batch_size)
    _check_driver(src)
    ctx = ctx if ctx is not None else EvalContext.current()
    loop = CaptureLoop(batch_size, ctx)
    src._role, src._capture_loop = "driver", loop

    def teardown(finished: bool) -> None:
        src._capture_loop = None
        src._role = "driver"

    return run_loop(loop, _items(src, batch_size), True, teardown)


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
