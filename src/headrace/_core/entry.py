"""Operators the data model itself calls (``x + 1``, ``batch.slice[...]``, ``.gpu()``).

The data model sits below the operators, so it cannot import them; the operator modules hand
their public functions over with :func:`provide`, and the data model finds them by name with
:func:`op`. ``import headrace`` imports every operator module, so they are always provided.

Examples
--------
>>> import headrace  # provides the operators
>>> op("arithmetic").__name__
'arithmetic'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
_ENTRIES: dict[str, Callable[..., Any]] = {}


def provide(name: str) -> Callable[[F], F]:
    """Decorator: make ``fn`` the operator the data model calls as ``name``."""

    def deco(fn: F) -> F:
        _ENTRIES[name] = fn
        return fn

    return deco


def op(name: str) -> Callable[..., Any]:
    """The operator function provided as ``name``."""
    try:
        return _ENTRIES[name]
    except KeyError:
        raise RuntimeError(
            f"headrace: operator {name!r} is not available; import headrace first."
        ) from None
