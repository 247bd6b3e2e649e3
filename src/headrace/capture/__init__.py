"""Capture mode: trace the first step of a loop, then run it as a prefetching pipeline.

Use ``reader.next_epoch(batch_size=N, capture=True)`` or ``ExternalSource.captured(N)``;
``ndd.capture.invariant(x)`` marks a value as the same on every step.

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

__all__ = ["invariant", "is_invariant", "unwrap", "unwrap_all"]
