"""GPU (torch) batch kernels of the geometry operators: the batch kernels of
``backends/cpu/geometry_ops.py`` registered with the torch per-sample kernels."""

from __future__ import annotations

from headrace.backends.cpu.geometry_ops import register
from headrace.backends.torch import geometry, resize

register("gpu", geometry, resize)
