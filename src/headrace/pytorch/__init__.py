"""PyTorch integration: :class:`Loader` (reader + per-batch function -> torch tensors) and,
when torchdata is installed, the ``headrace.pytorch.nodes`` module.

Importing this package does not import torch; the loader does, on first use.

Examples
--------
>>> import headrace as ndd
>>> from headrace.pytorch import Loader
>>> reader = ndd.readers.File(files=[__file__] * 2, labels=[1, 2])
>>> [t.tolist() for t in Loader(reader, lambda data, label: label, batch_size=2)]
[[[1], [2]]]
"""

from __future__ import annotations

import importlib
from types import ModuleType

from headrace.pytorch.loader import Loader

__all__ = ["Loader"]


def __getattr__(name: str) -> ModuleType:
    """``ndd.pytorch.nodes`` without an explicit import (it needs torch and torchdata)."""
    if name == "nodes":
        try:
            module = importlib.import_module(f"{__name__}.nodes")
        except ImportError as e:  # no torchdata: absent, as in the reference (hasattr is False)
            raise AttributeError(str(e)) from e
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
