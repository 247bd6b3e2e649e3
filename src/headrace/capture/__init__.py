"""Capture mode: trace the first step of a loop, then run it as a prefetching pipeline.

Use ``reader.next_epoch(batch_size=N, capture=True)`` or ``ExternalSource.captured(N)``;
``ndd.capture.invariant(x)`` marks a value as the same on every step.

Examples
--------
>>> import headrace as ndd
>>> ndd.capture.invariant(3) == 3
True
"""

from headrace.capture._invariant import invariant, is_invariant, unwrap, unwrap_all

_unwrap = unwrap

__all__ = ["invariant", "is_invariant", "unwrap", "unwrap_all"]
