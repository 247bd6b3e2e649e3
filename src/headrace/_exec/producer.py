"""A bounded producer thread: one read-ahead mechanism for readers and capture-mode loops.

A :class:`Producer` runs ``produce(emit)`` in a daemon thread. ``produce`` hands items to
``emit``, which waits while the queue holds ``depth`` items and returns ``False`` once the
consumer stopped the producer (``produce`` should then return). When ``produce`` returns, the
consumer receives :data:`END`; when it raises, the consumer's :meth:`Producer.get` re-raises the
exception.

Neither side can block forever: ``emit`` waits for room in short slices and gives up as soon as
:meth:`Producer.stop` was called, and :meth:`Producer.get` notices a producer thread that ended
without a last item. The hand-off survives a ``KeyboardInterrupt`` between any two bytecodes of
the consumer: items travel in a ``deque`` (atomic ``append``/``popleft``), wake-ups are plain
locks used as binary signals (a lost wake-up only costs one poll slice), and no lock is held
across Python code. The thread holds no reference to its :class:`Producer`: a producer dropped
without :meth:`~Producer.stop` (its consumer interrupted at the wrong moment) stops its thread
when collected.
"""

from __future__ import annotations

import collections
import threading
import weakref
from collections.abc import Callable
from typing import Any

from headrace._exec.shutdown import register

END = object()
"""Marker item: the producer finished normally."""

POLL_S = 0.05
"""How long one wait lasts before the stop flag / the thread is checked again."""


class _Failure:
    """An exception raised by the producer, on its way to the consumer."""

    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


class _Signal:
    """A binary wake-up signal on a bare lock: ``set`` releases, ``wait`` re-acquires."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        try:
            self._lock.release()
        except RuntimeError:  # set already
            pass

    def wait(self, timeout: float) -> None:
        self._lock.acquire(timeout=timeout)


class Channel:
    """The producer's side: ``emit(item)`` (call the channel) and the ``stopped`` flag."""

    __slots__ = ("__weakref__", "depth", "item_ready", "items", "room", "stopped")

    def __init__(self, depth: int) -> None:
        self.items: collections.deque[Any] = collections.deque()
        self.depth = max(1, depth)
        self.stopped = False
        self.item_ready = _Signal()
        self.room = _Signal()

    def __call__(self, item: Any) -> bool:
        """Queue ``item``, waiting for room; False (item dropped) once the consumer stopped."""
        items, depth = self.items, self.depth
        while not self.stopped:
            if len(items) < depth:
                items.append(item)
                self.item_ready.set()
                return not self.stopped
            self.room.wait(POLL_S)
        return False

    def stop(self) -> None:
        self.stopped = True
        self.room.set()


Emit = Callable[[Any], bool]
"""What ``produce`` receives (a :class:`Channel`): call it with an item."""


def _run(produce: Callable[[Channel], None], emit: Channel) -> None:
    try:
        produce(emit)
    except BaseException as exc:  # delivered to the consumer, re-raised there
        emit(_Failure(exc))
    else:
        emit(END)
    finally:
        emit.item_ready.set()


class Producer:
    """Run ``produce(emit)`` in a daemon thread named ``name``, at most ``depth`` items ahead.

    Parameters
    ----------
    produce : callable
        Called once in the thread with ``emit``; emits the items in order. It should not
        reference the :class:`Producer` (so that a dropped producer can end its thread).
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

    def __init__(self, produce: Callable[[Channel], None], depth: int, name: str) -> None:
        self._channel = ch = Channel(depth)
        self._thread = threading.Thread(target=_run, args=(produce, ch), name=name, daemon=True)
        weakref.finalize(self, ch.stop)
        self._thread.start()
        register(self._thread, ch.stop)  # stopped before the interpreter finalizes

    def get(self) -> Any:
        """The next item, :data:`END` at the end; re-raises an exception of the producer."""
        ch = self._channel
        items = ch.items
        while True:
            try:
                item = items.popleft()
                break
            except IndexError:
                pass
            if not self._thread.is_alive():
                try:  # the thread ended: take its last item, if it left one
                    item = items.popleft()
                    break
                except IndexError:
                    return END
            ch.item_ready.wait(POLL_S)
        ch.room.set()
        if type(item) is _Failure:
            raise item.exc
        return item

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called (a producer may check it between items)."""
        return self._channel.stopped

    @property
    def alive(self) -> bool:
        """Whether the producer thread is still running."""
        return self._thread.is_alive()

    def stop(self) -> None:
        """Stop the producer, wait for its thread to end and drop queued items (idempotent).

        Called from the producer thread itself, it only sets the stop flag. Interrupted
        (``KeyboardInterrupt``), the thread still ends on its own: the flag is set first.
        """
        ch = self._channel
        ch.stop()
        if threading.current_thread() is self._thread:
            return
        while self._thread.is_alive():
            ch.items.clear()
            ch.room.set()
            self._thread.join(timeout=POLL_S)
        ch.items.clear()


__all__ = ["END", "Channel", "Emit", "Producer"]
