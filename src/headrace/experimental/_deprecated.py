"""Deprecated names: the same operator under an old path, warning on every call.

The warning names the dynamic API's paths, the way the reference's dynamic mode does
(``WARNING: `nvidia.dali.experimental.dynamic.<old>` is now deprecated. Use ... instead.``),
so that code written for the reference sees the text it expects.

Examples
--------
>>> import warnings
>>> def double(x):
...     '''Twice ``x``.'''
...     return 2 * x
>>> old = deprecated_alias(double, "experimental.double", "double", "Moved out of experimental.")
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     old(3)
6
>>> first, note = str(caught[0].message).splitlines()
>>> first.split(" Use ")
['WARNING: `nvidia.dali.experimental.dynamic.experimental.double` is now deprecated.', \
'`nvidia.dali.experimental.dynamic.double` instead.']
>>> note
'Moved out of experimental.'
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

#: The package path the warnings name (the reference's dynamic API).
API = "nvidia.dali.experimental.dynamic"


def deprecation_message(old: str, new: str, note: str) -> str:
    """The warning text for ``old`` (a path inside the API) replaced by ``new`` (may be "")."""
    msg = f"WARNING: `{API}.{old}` is now deprecated."
    if new:
        msg += f" Use `{API}.{new}` instead."
    return f"{msg}\n{note}" if note else msg


def deprecated_alias(
    fn: Callable[..., Any], old: str, new: str, note: str = ""
) -> Callable[..., Any]:
    """``fn`` under the deprecated path ``old``: same signature and result, and a
    ``DeprecationWarning`` pointing at the caller's line on every call."""
    message = deprecation_message(old, new, note)

    @functools.wraps(fn)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return fn(*args, **kwargs)

    alias.__name__ = old.rsplit(".", 1)[-1]
    alias.__qualname__ = alias.__name__
    alias.__doc__ = f"Deprecated: use ``ndd.{new}``. {note}\n\n{fn.__doc__ or ''}"
    return alias
