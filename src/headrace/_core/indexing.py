"""Index grammar shared by ``Tensor.__getitem__`` and ``Batch.slice[...]``.

Allowed: ints (negative too), slices whose bounds/steps are ints or 0-D tensors, and one
``Ellipsis``. Not allowed: ``None``/newaxis, boolean or integer-array indexing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError, InvalidTypeError


def _scalar(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        raise InvalidTypeError("Boolean indices are not supported. Use integers or slices.")
    if isinstance(v, (int, np.integer)):
        return int(v)
    item = getattr(v, "item", None)
    shape = getattr(v, "shape", None)
    if item is not None and shape is not None and tuple(shape) == ():
        return int(item())
    raise InvalidTypeError(
        f"Unsupported index {v!r}: use ints, slices and one Ellipsis (fancy, boolean and "
        "None indices are not supported)."
    )


def normalize(index: Any) -> tuple[Any, ...]:
    """Turn an index into a tuple of ``int | slice | Ellipsis`` with scalar bounds."""
    if not isinstance(index, tuple):
        index = (index,)
    out: list[Any] = []
    ellipses = 0
    for c in index:
        if c is Ellipsis:
            ellipses += 1
            if ellipses > 1:
                raise InvalidArgumentError("Only one Ellipsis is allowed.")
            out.append(Ellipsis)
        elif isinstance(c, slice):
            step = _scalar(c.step)
            if step == 0:
                raise InvalidArgumentError("slice step cannot be zero")
            out.append(slice(_scalar(c.start), _scalar(c.stop), step))
        elif c is None:
            raise InvalidTypeError("Indexing with None (newaxis) is not supported.")
        else:
            out.append(_scalar(c))
    return tuple(out)


def is_identity(index: tuple[Any, ...]) -> bool:
    """True when every component is a full slice or ``...`` (the object itself is returned)."""
    for c in index:
        if c is Ellipsis:
            continue
        if not isinstance(c, slice):
            return False
        if c.start not in (None, 0) or c.stop is not None or c.step not in (None, 1):
            return False
    return True


def expand(index: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    """Replace the Ellipsis by full slices; check the number of ranges."""
    n = sum(1 for c in index if c is not Ellipsis)
    if n > ndim:
        raise InvalidArgumentError(
            f"Number of ranges ({n}) is greater than the number of dimensions ({ndim})."
        )
    if Ellipsis in index:
        i = index.index(Ellipsis)
        return index[:i] + (slice(None),) * (ndim - n) + index[i + 1 :]
    return index + (slice(None),) * (ndim - n)


def check_bounds(index: tuple[Any, ...], shape: tuple[int, ...]) -> None:
    """Raise IndexError for an integer index outside its dimension."""
    for d, c in enumerate(index):
        if isinstance(c, int) and not -shape[d] <= c < shape[d]:
            raise IndexError(f"Index {c} is out of bounds for dimension {d} with size {shape[d]}")


def result_layout(index: tuple[Any, ...], layout: str | None) -> str | None:
    """Layout after indexing: integer components drop their dimension's letter."""
    if layout is None:
        return None
    kept = "".join(ch for ch, c in zip(layout, index) if not isinstance(c, int))
    return kept or None


def apply(arr: Any, index: tuple[Any, ...]) -> Any:
    """Index a numpy array or torch tensor (torch: negative steps via flip)."""
    if isinstance(arr, np.ndarray):
        return arr[index + (Ellipsis,)]  # the Ellipsis keeps 0-d results arrays (views)
    fixed: list[Any] = []
    flip_dims: list[int] = []
    out_dim = 0
    for d, c in enumerate(index):
        if isinstance(c, int):
            fixed.append(c)
            continue
        start, stop, step = c.indices(arr.shape[d])
        if step < 0:
            # elements start, start+step, ... (> stop): take them in ascending order, then flip
            count = max(0, (stop - start + step + 1) // step) if step else 0
            lo = start + step * (count - 1) if count else 0
            fixed.append(slice(lo, lo + (-step) * (count - 1) + 1 if count else 0, -step))
            flip_dims.append(out_dim)
        else:
            fixed.append(slice(start, stop, step))
        out_dim += 1
    out = arr[tuple(fixed)]
    if flip_dims:
        out = out.flip(flip_dims)
    return out
