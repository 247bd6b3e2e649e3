"""``ndd.capture.invariant(value)``: mark a value as the same on every step of a capture loop.

The proxy compares equal to the value, passes ``isinstance`` checks for the value's type,
forwards attributes, operators (with arguments unwrapped), calls, indexing and iteration, and is
accepted transparently by every headrace entry point.
"""

from __future__ import annotations

import operator
from typing import Any

from headrace._core.proxy import Proxy


class _InvariantProxy(Proxy):
    __slots__ = ("_value",)

    def __headrace_unwrap__(self) -> Any:
        return object.__getattribute__(self, "_value")

    def __init__(self, value: Any) -> None:
        object.__setattr__(self, "_value", value)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return type(object.__getattribute__(self, "_value"))

    def __getattr__(self, name: str) -> Any:
        attr = getattr(object.__getattribute__(self, "_value"), name)
        if name.startswith("__"):  # protocols (__array_struct__, ...) see the real value
            return attr
        if callable(attr):  # arguments passed as given (as the reference); result marked
            return lambda *a, **k: invariant(attr(*a, **k))
        return invariant(attr)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_value"), name, value)  # stored as given

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, "_value"), name)

    def __repr__(self) -> str:
        return f"invariant({object.__getattribute__(self, '_value')!r})"

    def __hash__(self) -> int:
        return hash(object.__getattribute__(self, "_value"))

    def __bool__(self) -> bool:
        return bool(object.__getattribute__(self, "_value"))

    def __len__(self) -> int:
        return len(object.__getattribute__(self, "_value"))

    def __iter__(self) -> Any:
        return iter(object.__getattribute__(self, "_value"))

    def __call__(self, *a: Any, **k: Any) -> Any:  # as the reference: arguments as given
        return object.__getattribute__(self, "_value")(*a, **k)

    def __array__(self, *a: Any, **k: Any) -> Any:
        import numpy as np

        return np.asarray(object.__getattribute__(self, "_value"), *a, **k)

    def __index__(self) -> int:
        return operator.index(object.__getattribute__(self, "_value"))

    def __int__(self) -> int:
        return int(object.__getattribute__(self, "_value"))

    def __float__(self) -> float:
        return float(object.__getattribute__(self, "_value"))


def _forward(name: str, reflected: bool = False) -> Any:
    op = getattr(operator, name, None)

    def fn(self: _InvariantProxy, *args: Any) -> Any:
        v = object.__getattribute__(self, "_value")
        a = [unwrap(x) for x in args]
        if reflected:
            return getattr(v, f"__{name}__")(*a)
        return op(v, *a) if op is not None else getattr(v, f"__{name}__")(*a)

    return fn


for _n in (
    "add sub mul truediv floordiv mod pow and or xor lshift rshift eq ne lt le gt ge "
    "getitem contains neg pos abs invert"
).split():
    setattr(_InvariantProxy, f"__{_n}__", _forward(_n))
for _n in "radd rsub rmul rtruediv rfloordiv rmod rpow rand ror rxor".split():
    setattr(_InvariantProxy, f"__{_n}__", _forward(_n, reflected=True))


def invariant(value: Any) -> Any:
    """Mark ``value`` as invariant across the steps of a capture-mode loop (idempotent).

    Examples
    --------
    >>> import headrace as ndd
    >>> x = ndd.capture.invariant(2)
    >>> x + ndd.capture.invariant(3) == 5, isinstance(x, int)
    (True, True)
    """
    if type(value) is _InvariantProxy:
        return value
    return _InvariantProxy(value)


def is_invariant(value: Any) -> bool:
    """True for a value wrapped by :func:`invariant`."""
    return type(value) is _InvariantProxy


def unwrap(value: Any) -> Any:
    """The wrapped value (or ``value`` itself)."""
    if type(value) is _InvariantProxy:
        return object.__getattribute__(value, "_value")
    return value


def unwrap_all(value: Any) -> Any:
    """Recursively unwrap exact lists, tuples and dicts (the same container if nothing changed)."""
    t = type(value)
    if t is _InvariantProxy:
        return unwrap(value)
    if t in (list, tuple):
        items = [unwrap_all(v) for v in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return t(items)
    if t is dict:
        items = [(unwrap_all(k), unwrap_all(v)) for k, v in value.items()]
        if all(a is k and b is v for (a, b), (k, v) in zip(items, value.items())):
            return value
        return dict(items)
    return value


# the reference's names for the helpers of this module
unwrap_invariant = unwrap
unwrap_invariants = unwrap_all
