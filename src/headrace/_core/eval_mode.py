"""``EvalMode``: when operator calls run (deferred < eager < sync_cpu < sync_full).

Examples
--------
>>> import headrace as ndd
>>> ndd.EvalMode.current() is ndd.EvalMode.eager
True
>>> with ndd.EvalMode.sync_cpu:
...     ndd.EvalMode.current().name
'sync_cpu'
"""

from __future__ import annotations

import enum
import threading


class EvalMode(enum.Enum):
    """Evaluation modes, in increasing order of synchronicity.

    Each member is a context manager that pushes itself on a thread-local stack.

    - ``deferred``: run only when a result is needed.
    - ``eager`` (default, alias ``default``): queued to a background worker at once.
    - ``sync_cpu``: run in the calling thread before the call returns.
    - ``sync_full``: like ``sync_cpu``, then also wait for the GPU stream.
    """

    deferred = 0
    eager = 1
    default = 1
    sync_cpu = 2
    sync_full = 3

    def __enter__(self) -> EvalMode:
        _stack().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _stack().pop()

    def __lt__(self, other: EvalMode) -> bool:
        return self.value < other.value

    def __le__(self, other: EvalMode) -> bool:
        return self.value <= other.value

    def __gt__(self, other: EvalMode) -> bool:
        return self.value > other.value

    def __ge__(self, other: EvalMode) -> bool:
        return self.value >= other.value

    @staticmethod
    def current() -> EvalMode:
        """The innermost mode entered in this thread (``eager`` when none)."""
        s = getattr(_local, "stack", None)
        return s[-1] if s else EvalMode.eager


_local = threading.local()


def _stack() -> list[EvalMode]:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s
