"""What is known of a result before it is computed: its type, number of dimensions and layout.

An operator whose schema declares a ``meta`` rule gives its pending outputs a :class:`Meta`,
so that reading ``dtype``, ``ndim`` or ``layout`` of a deferred (or still running) result does
not compute it, as in the reference. A rule sees the inputs' metadata (:func:`of`) and the
call's arguments; where it cannot tell, the output has none and those reads wait for the
result, as before. When the result arrives, its own values replace the prediction (and, with
:data:`CHECK` set, as the test-suite does, a prediction that differs raises).

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> m = of(ndd.tensor(np.zeros((2, 3), np.uint8), layout="HW"))
>>> m.dtype is ndd.uint8, m.ndim, m.layout
(True, 2, 'HW')
"""

from __future__ import annotations

from typing import Any, NamedTuple

from headrace._core.dtype import DType

#: Raise when a computed result differs from its predicted metadata (set by the test-suite).
CHECK = False


class Meta(NamedTuple):
    """A result's element type, per-sample number of dimensions and layout."""

    dtype: DType
    ndim: int
    layout: str | None


def of(x: Any) -> Meta | None:
    """The metadata of a ``Tensor`` or ``Batch`` without computing it (``None``: not known)."""
    src = getattr(x, "_src", None)
    if src is not None:  # pending: its prediction, if any
        return src[-1]  # type: ignore[no-any-return]
    if getattr(type(x), "_is_batch", False):
        samples = x._samples
        if not samples:
            return None
        return Meta(x._dtype, samples[0].ndim, x._layout)
    data = getattr(x, "_data", None)
    if data is None:
        return None
    return Meta(x._dtype, data.ndim, x._layout)


def check(predicted: Meta | None, dtype: DType, ndim: int, layout: str | None, what: str) -> None:
    """With :data:`CHECK` set, raise if a result's metadata differs from its prediction."""
    if CHECK and predicted is not None and predicted != (dtype, ndim, layout):
        raise AssertionError(
            f"{what}: predicted metadata {predicted} differs from the result's "
            f"{Meta(dtype, ndim, layout)}."
        )


__all__ = ["CHECK", "Meta", "check", "of"]
