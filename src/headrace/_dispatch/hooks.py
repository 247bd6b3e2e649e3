"""Where capture mode attaches to dispatch: the capture loop bound to each thread.

The dispatcher asks :func:`active_loop` before running an operator; the capture package binds
its loop with :func:`set_loop`. Nothing here imports capture, so dispatch stays below it.
"""

from __future__ import annotations

import threading
from typing import Any

_local = threading.local()
#: Returned by a loop's ``on_call`` when it leaves the call to normal dispatch.
NOT_CAPTURED = object()


def active_loop() -> Any:
    """The capture loop whose body runs in this thread, or None."""
    loop = getattr(_local, "loop", None)
    if loop is None or loop.suspended:
        return None
    return loop


def set_loop(loop: Any) -> None:
    """Bind ``loop`` (or None) to this thread."""
    _local.loop = loop


def current_loop() -> Any:
    """The loop bound to this thread, even while suspended."""
    return getattr(_local, "loop", None)
