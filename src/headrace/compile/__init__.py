"""``ndd.compile``: the older name of :mod:`headrace.capture` (``ndd.compile.invariant``).

Examples
--------
>>> import headrace as ndd
>>> ndd.compile.invariant(1) == ndd.capture.invariant(1)
True
"""

from headrace.capture import invariant, is_invariant, unwrap, unwrap_all

__all__ = ["invariant", "is_invariant", "unwrap", "unwrap_all"]
