"""Thread-local capture state shared by the operator dispatcher and the capture loop."""

from __future__ import annotations

import threading

_local = threading.local()
NOT_CAPTURED = object()


def active_loop():  # type: ignore[no-untyped-def]
    """The capture loop whose body runs in this thread, or None."""
    loop = getattr(_local, "loop", None)
    if loop is None or loop.suspended:
        return None
    return loop


def set_loop(loop) -> None:  # type: ignore[no-untyped-def]
    """Bind ``loop`` (or None) to this thread."""
    _local.loop = loop


def current_loop():  # type: ignore[no-untyped-def]
    """The loop bound to this thread, even while suspended."""
    return getattr(_local, "loop", None)
