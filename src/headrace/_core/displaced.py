"""Errors re-raised where a lazily computed result is consumed.

When an operator fails in ``eager`` or ``deferred`` mode, the exception raised at the point of
consumption has the **same type** as the one ``sync_cpu`` would raise at the call; it is also an
instance of :class:`AsynchronousExecutionError` or :class:`DeferredEvaluationError`. Its
``__cause__`` is the original error, whose traceback ends at the user's call line.
"""

from __future__ import annotations

import functools

from headrace._core import callsite as _callsite


class DisplacedEvaluationError(Exception):
    """Base of errors raised away from the call that caused them."""


class DeferredEvaluationError(DisplacedEvaluationError):
    """An error happened during deferred evaluation."""


class AsynchronousExecutionError(DisplacedEvaluationError):
    """An error happened during asynchronous execution."""


@functools.cache
def _displaced_class(orig: type[BaseException], base: type[Exception]) -> type[BaseException]:
    try:
        return type(orig.__name__, (orig, base), {"__module__": orig.__module__})
    except TypeError:  # layout conflict: fall back to the wrapper type alone
        return base


def displaced(error: BaseException, site: _callsite.CallSite, deferred: bool) -> BaseException:
    """Build the exception to raise at consumption for ``error`` raised by a call at ``site``."""
    base = DeferredEvaluationError if deferred else AsynchronousExecutionError
    cls = _displaced_class(type(error), base)
    try:  # the error type's own __new__ (OSError and its subclasses have one)
        new = cls.__new__(cls, *error.args)
    except TypeError:
        new = BaseException.__new__(cls)
    new.args = error.args
    try:
        new.__dict__.update(error.__dict__)
    except AttributeError:
        pass
    return new


def attach_callsite(error: BaseException, site: _callsite.CallSite) -> None:
    """Make ``error``'s traceback end at the user's call line (the inner one becomes a note)."""
    if getattr(error, "_headrace_site_attached", False):
        return
    inner = _callsite.format_inner(error)
    tb = _callsite.make_traceback(_callsite.complete(site))
    if inner:
        error.add_note(
            f"The call at {_callsite.describe(site)} failed inside headrace:\n{inner.rstrip()}"
        )
    error.__traceback__ = tb
    try:
        error._headrace_site_attached = True  # type: ignore[attr-defined]
    except AttributeError:
        pass


__all__ = [
    "AsynchronousExecutionError",
    "DeferredEvaluationError",
    "DisplacedEvaluationError",
]
