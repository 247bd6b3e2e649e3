"""What capture did: ``ndd.capture.is_captured(value)`` and ``ndd.capture.stats(source)``.

A loop that is no faster than eager usually runs some of its calls eagerly on every step; the
statistics say which calls (by the line of the loop body), how often and why.
"""

from __future__ import annotations

import threading
import types
import weakref
from typing import Any, NamedTuple

_pipeline_values: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def mark_captured(value: Any) -> None:
    """Remember ``value`` (or each item of a tuple) as produced by a capture graph."""
    items = value if type(value) is tuple else (value,)
    with _lock:
        for v in items:
            try:
                _pipeline_values[id(v)] = v
            except TypeError:  # not weak-referenceable: not a Batch
                pass


def is_captured(value: Any) -> bool:
    """Whether ``value`` comes from the graph of a capture-mode loop.

    True for the batches of the loop's source and feeders and the outputs of recorded operator
    calls: on the traced step, the calls that later steps replay; on later steps, the results
    the background pipeline computed. False for anything the loop body computed eagerly (a call
    capture could not record, or one whose arguments differed from the traced call on this
    step).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> src = ndd.ExternalSource([np.zeros((2, 2), np.float32)] * 3)
    >>> flags = []
    >>> for i, b in enumerate(src.captured(batch_size=2)):
    ...     dtype = ndd.capture.invariant(ndd.uint8 if i != 1 else ndd.int32)
    ...     x = ndd.cast(b, dtype=dtype)
    ...     flags.append(ndd.capture.is_captured(x))
    >>> flags
    [True, False, True]
    >>> ndd.capture.is_captured(ndd.cast(np.zeros(2), dtype=ndd.uint8))
    False
    """
    hit = _pipeline_values.get(id(value))
    return hit is not None and hit is value


class EagerCall(NamedTuple):
    """Calls of one loop-body line that ran eagerly: where, which operator, why, how often."""

    site: str
    op: str
    reason: str
    count: int


# reasons found while tracing: the call is never captured
NOT_CAPTURABLE = "the operator is never captured (stateful or not pure)"
UNKNOWN_INPUT = "an input comes from neither the loop's source, a feeder nor a captured call"
UNKNOWN_TENSOR_ARG = (
    "argument {!r} is a tensor from neither the source, a feeder nor a captured call"
)
NOT_CONSTANT = "argument {!r} is not a value that can be compared across steps"
NOT_PROVABLE = (
    "argument {!r} is not provably constant from the source (mark it ndd.capture.invariant)"
)
REPEAT_DIFFERS = "a later run of the call site in a step has other inputs than its first"
BAD_OUTPUT = "its outputs are not batches of the loop's batch size"
REPEATED_RANDOM = "a random call repeated at one call site in a step (only the first is captured)"
SINGLE_SAMPLE_RANDOM = "a random call producing one sample (no batch_size, no batch input)"
# reasons found on a replayed step: this run of a captured call goes eager
NOT_TRACED = "the call site was not seen while tracing"
INPUTS_DIFFER = "its inputs are not the traced ones"
ARGS_DIFFER = "its arguments differ from the traced call's"
RANDOM_RERUN = "a random call ran again at its call site in this step"


def site_label(key: Any) -> str:
    """``file:line`` of a call-site key (see :mod:`._sites`); the innermost user frame."""
    pos = key[0] if key else ()
    if pos and isinstance(pos[0], tuple):  # a chain: innermost first
        pos = pos[0]
    if not pos:
        return "<unknown>"
    code, lasti = pos
    return f"{code.co_filename}:{_line(code, lasti)}"


def _line(code: types.CodeType, lasti: int) -> int | None:
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return line
    return code.co_firstlineno


class CaptureStats:
    """Statistics of one capture-mode loop (see :func:`stats`).

    Attributes
    ----------
    mode : str
        ``"tracing"`` (the first step runs), ``"captured"`` (later steps replay the recorded
        calls from the background pipeline), ``"eager"`` (nothing was captured: the loop went
        on eagerly) or ``"torn down"`` (left early or failed; the next loop traces again or,
        for a reader that had consumed feeders or random calls ahead, cannot run).
    captured_calls : list of str
        The recorded operator calls, in order (operator names).
    feeders : int
        ``ExternalSource`` instances read in the body and polled by the pipeline.
    steps_traced, steps_replayed, steps_eager : int
        Steps run while tracing, from the pipeline, and eagerly after an empty trace.
    calls_replayed : int
        Calls of the body answered by the pipeline (a lookup instead of running).
    calls_eager : int
        Calls of the body that ran eagerly (all steps, the traced one included).
    eager_calls : list of EagerCall
        The eager calls grouped by line, operator and reason, most frequent first.
    """

    def __init__(self) -> None:
        self.mode = "tracing"
        self.captured_calls: list[str] = []
        self.feeders = 0
        self.steps_traced = 0
        self.steps_replayed = 0
        self.steps_eager = 0
        self.calls_replayed = 0
        self._eager: dict[tuple[Any, str, str], int] = {}

    def note_eager(self, key: Any, op: str, reason: str) -> None:
        """Count one eager call of ``op`` at call-site ``key`` for ``reason``."""
        k = (key[0] if key else (), op, reason)
        self._eager[k] = self._eager.get(k, 0) + 1

    @property
    def calls_eager(self) -> int:
        return sum(self._eager.values())

    @property
    def eager_calls(self) -> list[EagerCall]:
        calls = [EagerCall(site_label((k[0],)), k[1], k[2], n) for k, n in self._eager.items()]
        return sorted(calls, key=lambda c: -c.count)

    def __repr__(self) -> str:
        return (
            f"CaptureStats(mode={self.mode!r}, captured_calls={len(self.captured_calls)}, "
            f"feeders={self.feeders}, steps_traced={self.steps_traced}, "
            f"steps_replayed={self.steps_replayed}, steps_eager={self.steps_eager}, "
            f"calls_replayed={self.calls_replayed}, calls_eager={self.calls_eager})"
        )

    def __str__(self) -> str:
        lines = [
            f"capture-mode loop: {self.mode}",
            f"  captured calls: {', '.join(self.captured_calls) or '(none)'}",
            f"  feeders: {self.feeders}",
            f"  steps: {self.steps_traced} traced, {self.steps_replayed} replayed, "
            f"{self.steps_eager} eager",
            f"  calls: {self.calls_replayed} replayed, {self.calls_eager} eager",
        ]
        for c in self.eager_calls:
            lines.append(f"    {c.count:6d} x {c.op} at {c.site}: {c.reason}")
        return "\n".join(lines)


def stats(source: Any) -> CaptureStats:
    """What the capture-mode loop of ``source`` (a reader or an ``ExternalSource``) did.

    The statistics of its latest loop: whether it replays from the pipeline or fell back to
    eager execution, how many steps and calls were replayed, and every call that ran eagerly,
    with its line and the reason. Use it to learn why a captured loop is not faster.

    Raises ``ValueError`` for a source never used with capture mode.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> src = ndd.ExternalSource([np.zeros((2, 2), np.float32)] * 4)
    >>> for b in src.captured(batch_size=2):
    ...     x = ndd.cast(b, dtype=ndd.uint8)
    >>> s = ndd.capture.stats(src)
    >>> s.mode, s.captured_calls, s.steps_traced, s.steps_replayed, s.calls_eager
    ('captured', ['cast'], 1, 3, 0)
    """
    st = getattr(source, "_capture_stats", None)
    if st is None:
        raise ValueError(f"{source!r} was never used in a capture-mode loop.")
    return st
