"""Stream-ordered hand-off of GPU data between CUDA streams, without device-wide syncs.

GPU data produced on a stream carries a *ready mark*: a CUDA event recorded on that stream right
after the work that wrote it, together with the stream. A consumer on another stream waits on the
event (a GPU-side wait, the host does not block) and records its stream on the memory, so torch's
caching allocator does not hand the memory out again before the consumer is done with it.

Nothing here blocks the host, and everything is a no-op for CPU data, fake-GPU data (torch CPU
tensors) and machines without CUDA.

Examples
--------
>>> import numpy as np
>>> mark(None) is None  # nothing to mark without CUDA work
True
>>> wait_on_current(None, [np.zeros(2)])  # CPU data: nothing to wait for
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

Ready = tuple[Any, Any]
"""(torch.cuda.Event, torch.cuda.Stream): the event follows the writes of the data's producer."""

fallback_stream: Callable[[int], Any] | None = None
"""Set by the execution layer: the torch stream of the current context for a device index. Data
whose producer is not known (no mark) is assumed to come from that stream."""


def _cuda_tensor(a: Any) -> bool:
    return getattr(a, "is_cuda", False) is True


def first_cuda(arrays: Iterable[Any]) -> Any:
    """The first CUDA tensor among ``arrays``, or None (CPU / fake-GPU data)."""
    for a in arrays:
        if _cuda_tensor(a):
            return a
        if a is not None and not hasattr(a, "is_cuda"):  # numpy: the rest is numpy too
            return None
    return None


def mark(sample: Any, stream: Any = None) -> Ready | None:
    """A ready mark on ``stream`` (default: torch's current stream of ``sample``'s device) when
    ``sample`` is CUDA data; None otherwise."""
    if not _cuda_tensor(sample):
        return None
    torch = sys.modules["torch"]
    if stream is None:
        stream = torch.cuda.current_stream(sample.device)
    ev = torch.cuda.Event()
    ev.record(stream)
    return (ev, stream)


def wait(ready: Ready | None, arrays: Iterable[Any], consumer: Any) -> None:
    """Make ``consumer`` (a torch CUDA stream) wait until data marked ``ready`` is written, and
    keep the memory of ``arrays`` valid for work queued on ``consumer``.

    Data without a mark is assumed to come from the current context's stream."""
    producer = ready[1] if ready is not None else None
    if ready is None:
        if fallback_stream is None:
            return
        producer = fallback_stream(consumer.device.index)
        if producer is None or producer == consumer:
            return
        consumer.wait_stream(producer)
    elif producer == consumer:
        return
    else:
        consumer.wait_event(ready[0])
    for a in arrays:
        if _cuda_tensor(a):
            a.record_stream(consumer)


def wait_on_current(ready: Ready | None, arrays: list[Any]) -> None:
    """:func:`wait` with torch's current stream (of the data's device) as the consumer."""
    a = first_cuda(arrays)
    if a is None:
        return
    torch = sys.modules["torch"]
    wait(ready, arrays, torch.cuda.current_stream(a.device))


def dlpack_consumer(stream: Any, sample: Any) -> Any:
    """The torch stream named by a DLPack ``stream`` argument for CUDA data, or None for "do not
    synchronise" (``-1``). ``None``/``0``/``1`` name the legacy default stream."""
    torch = sys.modules["torch"]
    if stream == -1:
        return None
    if stream is None or stream in (0, 1):
        return torch.cuda.default_stream(sample.device)
    if not isinstance(stream, int):
        raise TypeError(f"__dlpack__: stream must be an int or None (got {type(stream).__name__}).")
    return torch.cuda.ExternalStream(stream, device=sample.device)


__all__ = ["Ready", "dlpack_consumer", "first_cuda", "mark", "wait", "wait_on_current"]
