"""Capture mode: trace the first step of a loop, then run it as a prefetching pipeline.

Use ``reader.next_epoch(batch_size=N, capture=True)`` or ``ExternalSource.captured(N)``;
``ndd.capture.invariant(x)`` marks a value as the same on every step.
``ndd.capture.is_captured(value)`` and ``ndd.capture.stats(source)`` show what capture did:
whether the loop replays from its pipeline or fell back to eager execution, and which calls of
the body ran eagerly, where and why.

Which calls are captured. A call is recorded on the traced step when each tensor input and
tensor argument comes from the loop's source, a feeder or another recorded call, and every other
argument is marked ``invariant`` or is a constant the source of the calling function proves
(:mod:`._provable`): literals, inline tuples/lists and expressions of constants, DALI constants
(``ndd.int32``), names bound once inside a function to such an immutable value, and parameters
the live caller passed such a value for (or left at such a default). Module globals, mutable
locals, names bound more than once (branches, ``+=``, ``for`` targets), call results and
attributes of user objects are not provable; without source (REPL, ``exec``) only marked values
count. A later run of a call site in the traced step is recorded only when its inputs and
arguments equal its first run's (a loop feeding a call its own output is not). Other calls run
eagerly, now and on every later step, without warning; ``stats`` counts them with the reason.
On later steps a recorded call uses the pipeline's result only when its inputs are the traced
producers' current outputs and its arguments equal the traced ones (a marked value may change);
otherwise that run goes eager, so results are always those of eager execution. Random calls
keep the user's generator exactly where eager execution would leave it (``rng.state`` read in
the body equals eager's; bare ``rng()`` draws are allowed); a step that draws a different
number of words than the traced one, or a generator touched outside the loop between steps
or epochs, raises ``RuntimeError``.

Worker processes. ``next_epoch(..., capture=True, num_workers=N)`` and
``ExternalSource.captured(..., num_workers=N)`` compute the steps in N processes (default: 0
below 8 usable CPUs, else one per two CPUs), bit-identical to one process: :mod:`._workers`.

The package: :mod:`._entry` (how readers and ``ExternalSource`` enter capture mode),
:mod:`._loop` (the loop, bound to dispatch through :mod:`headrace._dispatch.hooks`),
:mod:`._tracing` (recording the first step), :mod:`._replay` (call-site lookups on later steps),
:mod:`._pipeline` (the producer thread computing steps ahead), :mod:`._steps` (one step's
recorded calls), :mod:`._workers` (steps in worker processes), :mod:`._graph` (recorded calls),
:mod:`._sites` (call-site keys), :mod:`._provable` (which arguments the source proves
constant), :mod:`._invariant` (the invariant marker).

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
