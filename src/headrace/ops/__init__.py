"""The operator declarations and functions, one module per family (``ops.geometry``, ...).

``ndd.ops.<Name>`` (``ndd.ops.Resize``, ``ndd.ops.random.Uniform``) is also the reference's older
spelling of its class-style operators, ``ndd._ops``: a name that is not one of these modules is
looked up there.

Examples
--------
>>> import headrace as ndd
>>> ndd.ops.random.Uniform is ndd._ops.random.Uniform
True
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any


def __getattr__(name: str) -> Any:
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # one of the family modules
    class_ops = importlib.import_module("headrace._ops")
    try:
        return getattr(class_ops, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
