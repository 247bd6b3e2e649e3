"""CUDA streams: :class:`Stream`, :func:`stream` and the default/current stream settings.

On machines without CUDA (and in fake-GPU mode) streams exist as plain handles so code written
for a GPU runs unchanged; GPU work then runs synchronously.

Examples
--------
>>> import headrace as ndd
>>> s = ndd.stream(stream=7)
>>> s.handle, s.__cuda_stream__()
(7, (0, 7))
>>> ndd.stream(stream=None) is None
True
"""

from __future__ import annotations

import threading
from typing import Any

from headrace._core.device import Device
from headrace._core.errors import InvalidArgumentError

_CREATE = object()


class Stream:
    """A CUDA stream handle with its device.

    Parameters
    ----------
    stream : int, torch stream, or an object with ``__cuda_stream__``
        What to wrap. ``None`` is rejected (use :func:`stream`, which returns None for it).
    device_id : int, optional
        GPU the stream belongs to (default: the current one).
    """

    __slots__ = ("_obj", "device_id", "handle")

    def __init__(self, stream: Any, device_id: int | None = None) -> None:
        if stream is None:
            raise InvalidArgumentError("Stream: stream=None is not a stream.")
        self._obj = stream
        if hasattr(stream, "__cuda_stream__"):
            _, handle = stream.__cuda_stream__()
        elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
            handle = stream.cuda_stream
            if device_id is None and getattr(stream, "device", None) is not None:
                device_id = stream.device.index
        else:
            handle = int(stream)
        self.handle = int(handle)
        self.device_id = device_id if device_id is not None else Device.default_device_id("gpu")

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return NotImplemented
        return (self.handle, self.device_id) == (other.handle, other.device_id)

    def __hash__(self) -> int:
        return hash((self.handle, self.device_id))

    def __repr__(self) -> str:
        return f"Stream(handle={self.handle:#x}, device_id={self.device_id})"


def _new_stream(device_id: int | None) -> Stream:
    if Device.gpu_count() and Device("gpu", device_id).torch_device().type == "cuda":
        import torch

        return Stream(torch.cuda.Stream(device=device_id), device_id)
    with _lock:
        global _next_handle
        _next_handle += 1
        return Stream(_next_handle, device_id)


_lock = threading.Lock()
_next_handle = 0x1000
_defaults: dict[int | None, Stream | None] = {}
_local = threading.local()


def stream(*, stream: Any = _CREATE, device_id: int | None = None) -> Stream | None:
    """Wrap ``stream`` (torch stream, ``__cuda_stream__`` object or raw handle), or create one.

    ``stream=None`` returns None.
    """
    if stream is None:
        return None
    if stream is _CREATE:
        return _new_stream(device_id)
    if isinstance(stream, Stream):
        return stream
    return Stream(stream, device_id)


def set_default_stream(cuda_stream: Any, /, device_id: int | None = None) -> None:
    """Set the process-wide default stream for a GPU (``None`` clears it)."""
    _defaults[device_id] = (
        None if cuda_stream is None else stream(stream=cuda_stream, device_id=device_id)
    )


def get_default_stream(device_id: int | None = None) -> Stream | None:
    """The process-wide default stream for a GPU, or None."""
    return _defaults.get(device_id)


def set_current_stream(cuda_stream: Any, /) -> None:
    """Set the calling thread's stream (``None`` resets it)."""
    _local.stream = None if cuda_stream is None else stream(stream=cuda_stream)


def get_current_stream() -> Stream | None:
    """The calling thread's stream: its own, else the default one, else a lazily made one."""
    s = getattr(_local, "stream", None)
    if s is not None:
        return s
    d = get_default_stream()
    if d is not None:
        return d
    s = getattr(_local, "lazy", None)
    if s is None:
        s = _local.lazy = _new_stream(None)
    return s


__all__ = [
    "Stream", "get_current_stream", "get_default_stream", "set_current_stream",
    "set_default_stream", "stream",
]  # fmt: skip
