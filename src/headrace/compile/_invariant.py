"""``ndd.compile._invariant``: where older revisions kept the invariant marker and its helpers
(now :mod:`headrace.capture._invariant`).

Examples
--------
>>> from headrace.compile._invariant import invariant, is_invariant, unwrap_invariants
>>> marked = invariant(1)
>>> is_invariant(marked), unwrap_invariants([marked, (marked,)])
(True, [1, (1,)])
"""

from headrace.capture._invariant import (
    invariant,
    is_invariant,
    unwrap,
    unwrap_all,
    unwrap_invariant,
    unwrap_invariants,
)

__all__ = [
    "invariant",
    "is_invariant",
    "unwrap",
    "unwrap_all",
    "unwrap_invariant",
    "unwrap_invariants",
]
