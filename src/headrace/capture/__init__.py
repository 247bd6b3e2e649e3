"""Capture mode: trace the first step of a loop, then run it as a prefetching pipeline.

Use ``reader.next_epoch(batch_size=N, capture=True)`` or ``ExternalSource.captured(N)``;
``ndd.capture.invariant(x)`` marks a value as the same on every step.
``ndd.capture.is_captured(value)`` and ``ndd.capture.stats(source)`` show what capture did:
whether the loop replays from its pipeline or fell back to eager execution, and which calls of
the body ran eagerly, where and why.

Which calls are captured. A call is recorded on the traced step when each tensor input and
tensor argument comes from the loop's source, a feeder or another recorded call, and every other
argument is a value that can be compared (numbers, strings, dtypes, small arrays, lists of
those) or is marked ``invariant``. Unlike the reference, headrace records such calls even when
an argument comes from a local list, an attribute (``self.prob``) or a repeated (chained) call
at one line: on every later step it compares the call's arguments with the traced ones and
returns the pipeline's result only when they are equal; otherwise that run of the call goes
eager (counted in ``stats``), so results are always those of eager execution. Random calls
keep the user's generator exactly where eager execution would leave it (``rng.state`` read in
the body equals eager's; bare ``rng()`` draws are allowed); a step that draws a different
number of words than the traced one, or a generator touched outside the loop between steps
or epochs, raises ``RuntimeError``.

The package: :mod:`._entry` (how readers and ``ExternalSource`` enter capture mode),
:mod:`._loop` (the loop, bound to dispatch through :mod:`headrace._dispatch.hooks`),
:mod:`._tracing` (recording the first step), :mod:`._replay` (call-site lookups on later steps),
:mod:`._pipeline` (the producer thread computing steps ahead), :mod:`._graph` (recorded calls),
:mod:`._sites` (call-site keys), :mod:`._invariant` (the invariant marker).

Examples
--------
>>> import headrace as ndd
>>> ndd.capture.invariant(3) == 3
True
"""

from headrace.capture._invariant import invariant, is_invariant, unwrap, unwrap_all
from headrace.capture._stats import CaptureStats, EagerCall, is_captured, stats

__all__ = [
    "CaptureStats",
    "EagerCall",
    "invariant",
    "is_captured",
    "is_invariant",
    "stats",
    "unwrap",
    "unwrap_all",
]
