"""A bounded read-ahead thread for one reader epoch.

The producer function runs in a daemon thread and hands items to ``emit``; ``emit`` blocks while
the queue holds ``depth`` items and returns ``False`` once the consumer stopped the prefetcher,
which tells the producer to return. An exception in the producer is delivered to the consumer,
which re-raises it from :meth:`Prefetcher.get`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

Emit = Callable[[Any], bool]

END = object()
"""Marker item: the producer finished normally."""


class _Failure:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class Prefetcher:
    """Run ``produce(emit)`` in a thread, reading at most ``depth`` items ahead.

    Examples
    --------
    >>> p = Prefetcher(lambda emit: [emit(i) for i in range(3)] and None, depth=2, name="demo")
    >>> [p.get() for _ in range(3)], p.get() is END
    ([0, 1, 2], True)
    >>> p.stop()
    """

    def __init__(self, produce: Callable[[Emit], None], depth: int, name: str) -> None:
        self._produce = produce
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(1, depth))
        self._stopped = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"headrace-reader-{name}", daemon=True
        )
        self._thread.start()

    def _emit(self, item: Any) -> bool:
        if self._stopped.is_set():
            return False
        self._queue.put(item)  # stop() drains the queue, so this cannot block forever
        return not self._stopped.is_set()

    def _run(self) -> None:
        try:
            self._produce(self._emit)
        except BaseException as exc:  # delivered to the consumer, re-raised there
            self._emit(_Failure(exc))
        else:
            self._emit(END)

    def get(self) -> Any:
        """The next item, :data:`END` at the end; re-raises a producer exception."""
        item = self._queue.get()
        if isinstance(item, _Failure):
            raise item.exc
        return item

    @property
    def alive(self) -> bool:
        """Whether the producer thread is still running."""
        return self._thread.is_alive()

    def stop(self) -> None:
        """Stop the producer and wait for its thread to end (idempotent)."""
        self._stopped.set()
        if threading.current_thread() is self._thread:
            return
        while self._thread.is_alive():
            self._drain()
            self._thread.join(timeout=0.01)
        self._drain()

    def _drain(self) -> None:
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass
