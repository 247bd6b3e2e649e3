"""Torch (GPU) batch kernels of the filter and noise operators: the generic kernels of
``backends/cpu/filters_ops.py`` registered with the torch pixel kernels."""

from __future__ import annotations

from headrace.backends.cpu.filters_ops import register
from headrace.backends.torch import filters as _torch_filters

register("gpu", _torch_filters)
