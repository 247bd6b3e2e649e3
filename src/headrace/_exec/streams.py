"""CUDA streams: :class:`Stream`, :func:`stream` and the default/current stream settings.

GPU operators run on the stream of their :class:`~headrace.EvalContext`: the context's explicit
stream, else the calling thread's current stream (:func:`set_current_stream`), else the
process-wide default stream of the device (:func:`set_default_stream`), else a stream created
lazily and kept (one per context; the thread's default context keeps one per device).

On machines without CUDA (and in fake-GPU mode) streams exist as plain handles so code written
for a GPU runs unchanged; GPU work then runs synchronously.

Examples
--------
>>> import headrace as ndd
>>> s = ndd.stream(stream=7)
>>> s.handle, s.__cuda_stream__(), s == 7
(7, (0, 7), True)
>>> ndd.stream(stream=None) is None
True
"""

from __future__ import annotations

import threading
from typing import Any

from headrace._core.device import Device, _real_gpu_count
from headrace._core.errors import InvalidArgumentError, InvalidTypeError

_CREATE: Any = object()


def _device_of_stream_object(obj: Any) -> int | None:
    """The GPU a stream-like object says it belongs to, if it says."""
    dev_id = getattr(obj, "device_id", None)
    if isinstance(dev_id, int):
        return dev_id
    dev = getattr(obj, "device", None)
    if isinstance(dev, int):
        return dev
    idx = getattr(dev, "index", None)
    return idx if isinstance(idx, int) else None


class Stream:
    """A CUDA stream handle with its device.

    Parameters
    ----------
    stream : int, torch stream, or an object with ``__cuda_stream__``
        What to wrap (default: create a new stream). ``None`` is rejected (use :func:`stream`,
        which returns None for it).
    device_id : int, optional
        GPU the stream belongs to (default: the stream's own device, else the current one).

    Streams compare equal to streams, raw handles, torch streams and ``__cuda_stream__`` objects
    with the same handle (and device, where known).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.Stream(5) == ndd.Stream(stream=5) == 5
    True
    >>> ndd.Stream() != ndd.Stream()
    True
    """

    __slots__ = ("_obj", "_torch", "device_id", "handle")

    def __init__(self, stream: Any = _CREATE, device_id: int | None = None) -> None:
        if stream is None:
            raise InvalidArgumentError("Stream: stream=None is not a stream.")
        if stream is _CREATE:
            stream = _new_stream_object(device_id)
        if isinstance(stream, Stream):
            if device_id is not None and device_id != stream.device_id:
                raise InvalidArgumentError(
                    f"Stream: device_id={device_id} does not match the stream's device "
                    f"{stream.device_id}."
                )
            stream = stream._obj
        self._obj = stream
        self._torch: Any = None
        own_dev = None
        if hasattr(stream, "cuda_stream") and hasattr(stream, "wait_event"):  # a torch stream
            handle = stream.cuda_stream
            own_dev = _device_of_stream_object(stream)
            self._torch = stream
        elif hasattr(stream, "__cuda_stream__"):
            _, handle = stream.__cuda_stream__()
            own_dev = _device_of_stream_object(stream)
        elif isinstance(stream, bool) or not isinstance(stream, int):
            raise InvalidTypeError(
                f"Stream: expected a stream handle (int), a torch stream or an object with "
                f"__cuda_stream__ (got {type(stream).__name__})."
            )
        else:
            handle = stream
        if device_id is not None and own_dev is not None and device_id != own_dev:
            raise InvalidArgumentError(
                f"Stream: device_id={device_id} does not match the stream's device {own_dev}."
            )
        self.handle = int(handle)
        if device_id is None:
            device_id = own_dev if own_dev is not None else Device.default_device_id("gpu")
        self.device_id = device_id

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)

    def torch_stream(self) -> Any:
        """The stream as a torch CUDA stream (None without CUDA, e.g. in fake-GPU mode)."""
        t = self._torch
        if t is None and _real_gpu_count():
            import torch

            if self.handle == 0:
                t = torch.cuda.default_stream(self.device_id)
            else:
                t = torch.cuda.ExternalStream(self.handle, device=self.device_id)
            self._torch = t
        return t

    def synchronize(self) -> None:
        """Wait (on the host) for the work queued on this stream; a no-op without CUDA."""
        t = self.torch_stream()
        if t is not None:
            t.synchronize()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Stream):
            return (self.handle, self.device_id) == (other.handle, other.device_id)
        if isinstance(other, int) and not isinstance(other, bool):
            return self.handle == other
        if hasattr(other, "__cuda_stream__") or hasattr(other, "wait_event"):
            try:
                o = Stream(other)
            except (TypeError, ValueError):
                return NotImplemented
            return self.handle == o.handle and (
                _device_of_stream_object(other) is None or self.device_id == o.device_id
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.handle)

    def __repr__(self) -> str:
        return f"Stream(handle={self.handle:#x}, device_id={self.device_id})"


def _real_cuda(device_id: int | None) -> bool:
    return bool(_real_gpu_count()) and Device("gpu", device_id).torch_device().type == "cuda"


def _new_stream_object(device_id: int | None) -> Any:
    """A new torch CUDA stream, or a new fake handle without CUDA."""
    if _real_cuda(device_id):
        import torch

        return torch.cuda.Stream(device=device_id)
    global _next_handle
    with _lock:
        _next_handle += 1
        return _next_handle


_lock = threading.Lock()
_next_handle = 0x1000
_defaults: dict[int | None, Stream] = {}
_local = threading.local()


def _key(device_id: int | None) -> int | None:
    return device_id if device_id is not None else Device.default_device_id("gpu")


def stream(*, stream: Any = _CREATE, device_id: int | None = None) -> Stream | None:
    """Wrap ``stream`` (torch stream, ``__cuda_stream__`` object or raw handle), or create one.

    ``stream=None`` returns None. A new stream belongs to ``device_id`` (default: the current
    device); on a CUDA machine it is a new torch stream.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.stream(stream=3) == ndd.Stream(3)
    True
    """
    if stream is None:
        return None
    if isinstance(stream, Stream) and (device_id is None or device_id == stream.device_id):
        return stream
    return Stream(stream, device_id)


def set_default_stream(cuda_stream: Any, /, device_id: int | None = None) -> None:
    """Set the process-wide default stream of a GPU (``None`` clears it).

    The GPU is ``device_id``, else the stream's own device, else the current one. Calls already
    issued keep the stream they were issued with.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.set_default_stream(11)
    >>> ndd.get_default_stream() == 11
    True
    >>> ndd.set_default_stream(None)
    """
    if cuda_stream is None:
        _defaults.pop(_key(device_id), None)
        return
    s = stream(stream=cuda_stream, device_id=device_id)
    assert s is not None
    _defaults[s.device_id] = s


def get_default_stream(device_id: int | None = None) -> Stream | None:
    """The process-wide default stream of a GPU (default: the current one), or None."""
    return _defaults.get(_key(device_id))


def _thread_streams(attr: str) -> dict[int | None, Stream]:
    d = getattr(_local, attr, None)
    if d is None:
        d = {}
        setattr(_local, attr, d)
    return d  # type: ignore[no-any-return]


def set_current_stream(cuda_stream: Any, /) -> None:
    """Set the calling thread's stream on the stream's device (``None`` resets the current
    device's). It is used by the thread's default context and by contexts created afterwards
    on this thread that have no stream of their own. Work already queued on the previous stream
    is not waited for.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.set_current_stream(ndd.stream(stream=12))
    >>> ndd.get_current_stream() == 12
    True
    >>> ndd.set_current_stream(None)
    """
    cur = _thread_streams("current")
    if cuda_stream is None:
        cur.pop(_key(None), None)
        return
    s = stream(stream=cuda_stream)
    assert s is not None
    cur[s.device_id] = s


def thread_current_stream(device_id: int | None) -> Stream | None:
    """The stream set with :func:`set_current_stream` on this thread for a GPU, or None."""
    d = getattr(_local, "current", None)
    return d.get(_key(device_id)) if d else None


def default_context_stream(device_id: int | None) -> Stream:
    """The stream of this thread's default context for a GPU: the thread's current stream, else
    the default stream, else one created for this thread on first use."""
    key = _key(device_id)
    s = thread_current_stream(key)
    if s is not None:
        return s
    s = _defaults.get(key)
    if s is not None:
        return s
    lazy = _thread_streams("lazy")
    s = lazy.get(key)
    if s is None:
        s = lazy[key] = Stream(_CREATE, key)
    return s


def get_current_stream() -> Stream:
    """The stream of the calling thread's default context on the current device (its current
    stream, else the default one, else a lazily created one, stable across calls).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.get_current_stream() is ndd.get_current_stream()
    True
    """
    return default_context_stream(None)


__all__ = [
    "Stream", "get_current_stream", "get_default_stream", "set_current_stream",
    "set_default_stream", "stream",
]  # fmt: skip
