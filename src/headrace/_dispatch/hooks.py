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


class ParamsHook:
    """The reference's per-call hook ``Operator._process_params`` (a classmethod of
    :class:`headrace._ops.Operator`, registered here by that module): while someone has
    replaced it (the reference's tests spy on it), every operator call passes it its backend,
    device, batch size, inputs and given arguments; otherwise it costs one lookup per call."""

    owner: Any = None  # the class holding the hook
    original: Any = None  # its own ``_process_params`` (as stored in the class)

    @classmethod
    def replaced(cls) -> Any:
        """The replacement (bound to the owner), or None while the original is in place."""
        owner = cls.owner
        if owner is None or owner.__dict__.get("_process_params") is cls.original:
            return None
        return owner._process_params


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
