"""The reference's older private module of compiled (now: capture) mode: ``CompiledBatch``.

Its compiled loops returned ``CompiledBatch`` objects, and programs (and its tests) tell a
value computed by the loop's pipeline by ``isinstance(x, CompiledBatch)``. Here that check is
:func:`headrace.capture.is_captured`; nothing is an instance in any other sense.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> from headrace._compile import CompiledBatch
>>> src = ndd.ExternalSource([np.zeros((2, 2), np.float32)] * 2)
>>> [isinstance(ndd.cast(b, dtype=ndd.uint8), CompiledBatch) for b in src.compiled(2)]
[True, True]
>>> isinstance(ndd.batch([[1]]), CompiledBatch)
False
"""

from __future__ import annotations

from typing import Any

from headrace.capture import is_captured


class _IsCaptured(type):
    def __instancecheck__(cls, value: Any) -> bool:
        return is_captured(value)


class CompiledBatch(metaclass=_IsCaptured):
    """``isinstance(x, CompiledBatch)``: whether ``x`` comes from a compiled (capture-mode)
    loop's graph; see the module."""

    def __new__(cls, *args: Any, **kwargs: Any) -> CompiledBatch:
        raise TypeError("CompiledBatch is a check (isinstance), not a type to create.")


__all__ = ["CompiledBatch"]
