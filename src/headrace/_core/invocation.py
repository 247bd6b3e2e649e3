"""A pending operator call and the machinery that runs it exactly once.

An :class:`Invocation` may be run by the context's background executor (``eager``), by the first
thread that needs its result (``deferred``, or work stealing when the executor has not started it
yet), or at the call (``sync_*``). Whoever claims it first runs it; others wait.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from headrace._core import callsite as _callsite
from headrace._core import displaced as _exceptions

_local = threading.local()


def in_worker() -> bool:
    """True inside a thread that is running an invocation (nested calls then run inline)."""
    return getattr(_local, "depth", 0) > 0


class Invocation:
    """One operator call: a function producing a tuple of outputs, run at most once."""

    __slots__ = ("deferred", "done", "error", "fn", "lock", "meta", "name", "results", "site")

    def __init__(
        self,
        fn: Callable[[], tuple[Any, ...]],
        name: str,
        site: _callsite.CallSite | None,
        meta: tuple[Any, ...] | None = None,
        deferred: bool = False,
    ) -> None:
        self.fn: Callable[[], tuple[Any, ...]] | None = fn
        self.name = name
        self.site = site
        self.meta = meta
        self.deferred = deferred
        self.lock = threading.Lock()
        self.done = False
        self.results: tuple[Any, ...] | None = None
        self.error: BaseException | None = None

    def run_claimed(self) -> None:
        """Run after a successful claim (``lock`` held by the caller); releases the claim."""
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            self.results = self.fn()  # type: ignore[misc]
        except BaseException as e:  # re-raised at consumption
            if self.site is None:  # running inside the user's call: its frames are live
                self.site = _callsite.capture(1)
            _exceptions.attach_callsite(e, self.site)
            self.error = e
        finally:
            _local.depth -= 1
            self.fn = None
            self.done = True
            if self.error is None:
                self.site = ()
            self.lock.release()

    def try_run(self) -> bool:
        """Run now if nobody has claimed it. Returns True when this thread ran it."""
        if self.done or not self.lock.acquire(blocking=False):
            return False
        if self.done:
            self.lock.release()
            return False
        self.run_claimed()
        return True

    def wait(self) -> tuple[Any, ...]:
        """The outputs, running the call here if nobody has started it (work stealing)."""
        if not self.done:
            if not self.try_run():
                self.lock.acquire()  # wait for the running thread
                self.lock.release()
        if self.error is not None:
            raise _exceptions.displaced(self.error, self.site, self.deferred) from self.error
        return self.results  # type: ignore[return-value]

    @classmethod
    def failed(cls, error: BaseException, name: str) -> Invocation:
        """A finished invocation holding ``error``, raised by a call running in the user's
        thread (called from inside that call, so the user's frames are still live)."""
        inv = cls(None, name, _callsite.capture(1))  # type: ignore[arg-type]
        _exceptions.attach_callsite(error, inv.site)
        inv.error = error
        inv.done = True
        return inv
