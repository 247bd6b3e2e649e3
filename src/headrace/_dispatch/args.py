"""Operator arguments: declaration (:class:`Arg`), converters and per-sample values.

Examples
--------
>>> a = Arg("scale", to_float, 1.0, doc="Factor.")
>>> a.convert("2"), a.default
(2.0, 1.0)
>>> sample_args({"x": PerSample([1, 2]), "y": 5}, 1)
{'x': 2, 'y': 5}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace._core import dtype as _dt

#: Default of a required argument.
REQUIRED: Any = object()


class PerSample(list):  # type: ignore[type-arg]
    """Argument values, one per sample."""

    __slots__ = ()


class ArgDict(dict):  # type: ignore[type-arg]
    """The argument values of one call; ``per_sample`` tells whether any is a ``PerSample``."""

    __slots__ = ("per_sample",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.per_sample = False


@dataclass(frozen=True)
class Arg:
    """One operator argument.

    Parameters
    ----------
    name : str
        Keyword name (the reference's spelling).
    convert : callable
        Turns one user value (scalar, list, numpy array) into what kernels expect.
    default : object
        Value used when the argument is omitted (:data:`REQUIRED` for required ones).
    per_sample : bool
        Whether a ``Tensor``/``Batch`` may give one value per sample.
    doc : str
        One-line description.
    """

    name: str
    convert: Callable[[Any], Any]
    default: Any = None
    per_sample: bool = False
    doc: str = ""


def sample_args(vals: dict[str, Any], i: int) -> dict[str, Any]:
    """The arguments of sample ``i`` (per-sample values picked)."""
    return {k: (v[i] if type(v) is PerSample else v) for k, v in vals.items()}


def has_per_sample(vals: dict[str, Any]) -> bool:
    """True when any argument varies per sample."""
    flag = getattr(vals, "per_sample", None)
    if flag is not None:
        return flag  # type: ignore[no-any-return]
    return any(type(v) is PerSample for v in vals.values())


def forward_args(loc: dict[str, Any], *inputs: str) -> dict[str, Any]:
    """A public operator function's keyword arguments: its ``locals()`` minus the named inputs,
    without the ``None`` values (they mean "operator default")."""
    return {k: v for k, v in loc.items() if v is not None and k not in inputs}


# --- converters ----------------------------------------------------------------------------------
def to_float(v: Any) -> float:
    """A scalar float argument."""
    return float(np.asarray(v).reshape(()))


def to_int(v: Any) -> int:
    """A scalar int argument."""
    a = np.asarray(v).reshape(())
    if a.dtype.kind == "f" and float(a) != int(a):
        raise ValueError(f"expected an integer, got {float(a)}")
    return int(a)


def to_bool(v: Any) -> bool:
    """A scalar bool argument: ``bool``/``np.bool_``, or an integer 0 or 1 (also as a
    one-element array); anything else (``"no"``, ``0.5``, ``None``) is refused.

    >>> to_bool(True), to_bool(np.array([1]))
    (True, True)
    >>> to_bool("no")
    Traceback (most recent call last):
    TypeError: expected a bool (True/False or 0/1), got str 'no'
    """
    a = None
    if isinstance(v, (bool, np.bool_, int, np.integer, np.ndarray, list, tuple)):
        a = np.asarray(v)
        if a.size != 1:
            raise ValueError(f"expected one bool, got {a.size} values")
    if a is not None and a.dtype.kind in "biu":
        x = a.reshape(()).item()
        if x in (0, 1):
            return bool(x)
        raise ValueError(f"expected a bool (True/False or 0/1), got {x!r}")
    raise TypeError(f"expected a bool (True/False or 0/1), got {type(v).__name__} {v!r}")


def to_floats(v: Any) -> np.ndarray:
    """A float32 array argument (scalar or vector)."""
    return np.asarray(v, dtype=np.float32)


def to_ints(v: Any) -> np.ndarray:
    """An int64 array argument (scalar or vector)."""
    a = np.asarray(v)
    if a.dtype.kind == "f":
        if not np.all(a == np.round(a)):
            raise ValueError(f"expected integers, got {a.tolist()}")
    return a.astype(np.int64)


def to_shape(v: Any) -> np.ndarray:
    """A shape argument: non-negative integers (int64 array)."""
    a = to_ints(v)
    if (a < 0).any():
        raise ValueError(f"a shape needs non-negative extents, got {a.tolist()}")
    return a


def to_str(v: Any) -> str:
    """A string argument."""
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {type(v).__name__}")
    return v


def to_dtype(v: Any) -> _dt.DType:
    """A dtype argument."""
    return _dt.dtype(v)


def to_layout(v: Any) -> str:
    """A layout string argument."""
    if not isinstance(v, str):
        raise TypeError(f"expected a layout string, got {type(v).__name__}")
    return v


def to_any(v: Any) -> Any:
    """Pass the value through."""
    return v
