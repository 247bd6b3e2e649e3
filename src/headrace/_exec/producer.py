"""A bounded producer thread: one read-ahead mechanism for readers and capture-mode loops.

A :class:`Producer` runs ``produce(emit)`` in a daemon thread. ``produce`` hands items to
``emit``, which waits while the queue holds ``depth`` items and returns ``False`` once the
consumer stopped the producer (``produce`` should then return). When ``produce`` returns, the
consumer receives :data:`END`; when it raises, the consumer's :meth:`Producer.get` re-raises the
exception.

Neither side can block forever: ``emit`` waits for room in short slices and gives up as soon as
:meth:`Producer.stop` was called, and :meth:`Producer.get` notices a producer thread that ended
without a last item.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

Emit = Callable[[Any], bool]

END = object()
"""Marker item: the producer finished normally."""

POLL_S = 0.05
"""How long one wait on the queue lasts before the stop flag / the thread is checked again."""


class _Failure:
    """An exception raised by the producer, on its way to the consumer."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class Producer:
    """Run ``produce(emit)`` in a daemon thread named ``name``, at most ``depth`` items ahead.

    Parameters
    ----------
    produce : callable
        Called once in the thread with ``emit``; emits the items in order.
    depth : int
        The most items produced and not yet consumed (at least 1).
    name : str
        The thread's name.

    Examples
    --------
    >>> p = Producer(lambda emit: [emit(i) for i in range(3)] and None, depth=2, name="demo")
    >>> [p.get() for _ in range(3)], p.get() is END
    ([0, 1, 2], True)
    >>> p.stop()

    Stopping a producer that waits for room in a full queue ends it:

    >>> def forever(emit):
    ...     while emit("item"):
    ...         pass
    >>> p = Producer(forever, depth=1, name="demo")
    >>> p.get()
    'item'
    >>> p.stop(); p.alive
    False
    """

    def __init__(self, produce: Callable[[Emit], None], depth: int, name: str) -> None:
        self._produce = produce
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, depth))
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    # --- the producer thread -------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._produce(self.emit)
        except BaseException as exc:  # delivered to the consumer, re-raised there
            self.emit(_Failure(exc))
        else:
            self.emit(END)

    def emit(self, item: Any) -> bool:
        """Queue ``item``, waiting for room; False (item dropped) once the consumer stopped."""
        stopped, put = self._stopped, self._queue.put
        while not stopped.is_set():
            try:
                put(item, timeout=POLL_S)
            except queue.Full:
                continue
            return not stopped.is_set()
        return False

    # --- the consumer --------------------------------------------------------------------
    def get(self) -> Any:
        """The next item, :data:`END` at the end; re-raises an exception of the producer."""
        q = self._queue
        while True:
            try:
                item = q.get(timeout=POLL_S)
                break
            except queue.Empty:
                if self._thread.is_alive():
                    continue
            try:  # the thread ended: take its last item, if it left one
                item = q.get_nowait()
            except queue.Empty:
                return END
            break
        if type(item) is _Failure:
            raise item.exc
        return item

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called (a producer may check it between items)."""
        return self._stopped.is_set()

    @property
    def alive(self) -> bool:
        """Whether the producer thread is still running."""
        return self._thread.is_alive()

    def stop(self) -> None:
        """Stop the producer, wait for its thread to end and drop queued items (idempotent).

        Called from the producer thread itself, it only sets the stop flag.
        """
        self._stopped.set()
        if threading.current_thread() is self._thread:
            return
        while self._thread.is_alive():
            self._drain()
            self._thread.join(timeout=POLL_S)
        self._drain()

    def _drain(self) -> None:
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass


__all__ = ["END", "Emit", "Producer"]
