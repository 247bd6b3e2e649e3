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

from headrace.pytorch.loader import Loader

__all__ = ["Loader"]
