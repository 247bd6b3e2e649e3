"""Values that stand in for another value, and how the data model sees through them.

Capture mode marks loop-invariant values with proxies that behave like the value they wrap.
The data model and the dispatcher unwrap any :class:`Proxy` without knowing who made it.

Examples
--------
>>> class Box(Proxy):
...     __slots__ = ("v",)
...     def __init__(self, v): self.v = v
...     def __headrace_unwrap__(self): return self.v
>>> unwrap(Box(3)), unwrap(4)
(3, 4)
"""

from __future__ import annotations

from typing import Any


class Proxy:
    """Base class of stand-in values; subclasses return the wrapped value from
    ``__headrace_unwrap__``."""

    __slots__ = ()

    def __headrace_unwrap__(self) -> Any:
        raise NotImplementedError


def is_proxy(value: Any) -> bool:
    """Whether ``value`` is a stand-in (checked on its real type, not ``__class__``)."""
    return issubclass(type(value), Proxy)


def unwrap(value: Any) -> Any:
    """The value behind a proxy; anything else unchanged."""
    if issubclass(type(value), Proxy):
        return value.__headrace_unwrap__()
    return value
