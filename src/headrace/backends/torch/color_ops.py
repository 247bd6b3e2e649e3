"""Torch (GPU) batch kernels of the colour operators: the generic kernels of
``backends/cpu/color_ops.py`` registered with the torch pixel kernels."""

from __future__ import annotations

from headrace.backends.cpu.color_ops import register
from headrace.backends.torch import color as _torch_color

register("gpu", _torch_color)
