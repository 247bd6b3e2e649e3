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
_POLL_S = 0.05
_RECOMPUTE = threading.RLock()  # dropped results computed again one call at a time


def _alive(ident: int) -> bool:
    """Whether the thread ``ident`` is still running."""
    return any(t.ident == ident for t in threading.enumerate())


def in_worker() -> bool:
    """True inside a thread that is running an invocation (nested calls then run inline)."""
    return getattr(_local, "depth", 0) > 0


class Invocation:
    """One operator call: a function producing a tuple of outputs, run at most once.

    Safe against a ``KeyboardInterrupt`` between any two bytecodes: the claim is one atomic
    ``dict.setdefault`` (no lock to give back), waiters poll ``done`` in short slices, and a
    claim its thread abandoned (interrupted before finishing) is taken over by that thread's
    next wait, or by any thread once the claiming thread has ended.
    """

    __slots__ = (
        "_claim", "_dropped", "_finished", "deferred", "done", "error", "fn", "meta", "name",
        "results", "site", "stage",
    )  # fmt: skip

    def __init__(
        self,
        fn: Callable[[], tuple[Any, ...]],
        name: str,
        site: _callsite.CallSite | None,
        meta: tuple[Any, ...] | None = None,
        deferred: bool = False,
        stage: Any = None,
    ) -> None:
        self.fn: Callable[[], tuple[Any, ...]] | None = fn
        self.stage = stage  # a chainable planned call (``_dispatch.chain.Stage``), else None
        self.name = name
        self.site = site
        self.meta = meta
        self.deferred = deferred
        self._claim: dict[int, int] = {}
        self._finished = threading.Lock()  # held until done: waiters sleep on it
        self._finished.acquire()
        self.done = False
        self.results: tuple[Any, ...] | None = None
        self.error: BaseException | None = None
        self._dropped = False  # finished without keeping its results (see complete_dropped)

    def _claimed_here(self) -> bool:
        """Claim the run for this thread (atomic); True when this thread may run it."""
        me = threading.get_ident()
        owner = self._claim.setdefault(0, me)
        if owner == me:
            return True
        if not _alive(owner):  # the claiming thread ended without finishing: take over
            self._claim[0] = me
            return True
        return False

    def _run(self) -> None:
        _local.depth = getattr(_local, "depth", 0) + 1
        try:
            fn = self.fn
            if fn is None:  # finished meanwhile
                return
            try:
                results, error = fn(), None
            except BaseException as e:  # re-raised at consumption
                results, error = None, e
                if self.site is None:  # running inside the user's call: its frames are live
                    self.site = _callsite.capture(1)
                _exceptions.attach_callsite(e, self.site)
            self.results, self.error = results, error
            self.done = True
            self.fn = None
            self.stage = None
            if error is None:
                self.site = ()
        finally:
            _local.depth -= 1
            if self.done:
                try:
                    self._finished.release()
                except RuntimeError:  # released already
                    pass

    def claim(self) -> bool:
        """Claim the run for this thread without running it (a chain runs it: see
        ``_dispatch.chain``); the claimer must then call :meth:`complete` or
        :meth:`run_claimed`. False when done or claimed elsewhere."""
        return not self.done and self._claimed_here()

    def unclaim(self) -> None:
        """Give up a claim this thread holds on a call it has not run (an interrupted chain),
        so that whoever needs the result next runs it."""
        if not self.done and self._claim.get(0) == threading.get_ident():
            self._claim.pop(0, None)

    def run_claimed(self) -> None:
        """Run a call this thread claimed."""
        if not self.done:
            self._run()

    def complete(self, results: tuple[Any, ...]) -> None:
        """Finish a call this thread claimed with ``results`` computed elsewhere."""
        self.results, self.error = results, None
        self.fn = None
        self._finish_claimed()

    def complete_dropped(self) -> None:
        """Finish a call this thread claimed without keeping its results: a chain consumed
        them and nobody else could ask for them (see ``_dispatch.chain``). Should they be
        asked for all the same, :meth:`wait` computes them again (the call is deterministic:
        its random draws were fixed when it was made)."""
        self._dropped = True
        self._finish_claimed()

    def _finish_claimed(self) -> None:
        self.done = True
        self.stage = None
        self.site = ()
        try:
            self._finished.release()
        except RuntimeError:  # released already
            pass

    def _recompute(self) -> None:
        with _RECOMPUTE:
            if not self._dropped:
                return
            fn = self.fn
            try:
                self.results, self.error = fn(), None  # type: ignore[misc]
            except BaseException as e:
                self.results, self.error = None, e
                _exceptions.attach_callsite(e, _callsite.capture(1))
            self.fn = None
            self._dropped = False

    def try_run(self) -> bool:
        """Run now if nobody has claimed it. Returns True when this thread ran it."""
        if self.done or not self._claimed_here():
            return False
        self._run()
        return True

    def wait(self) -> tuple[Any, ...]:
        """The outputs, running the call here if nobody has started it (work stealing)."""
        while not self.done:
            if self.try_run():
                continue
            if self._finished.acquire(timeout=_POLL_S):  # wait for the running thread
                self._finished.release()
        if self._dropped:
            self._recompute()
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


class InvocationResult:
    """What ``Tensor._invocation_result`` / ``Batch._invocation_result`` show, as the
    reference's tests read them: ``._invocation._results`` is ``None`` until the call that makes
    the value has run (then its results; a value that is not pending counts as computed)."""

    __slots__ = ("_owner",)

    def __init__(self, owner: Any) -> None:
        self._owner = owner

    @property
    def _invocation(self) -> InvocationResult:
        return self

    @property
    def _results(self) -> tuple[Any, ...] | None:
        src = self._owner._src
        if src is None:
            return (self._owner,)
        inv: Invocation = src[0]
        return inv.results if inv.done else None
