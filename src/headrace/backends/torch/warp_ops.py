"""Torch (GPU) batch kernels of ``rotate`` and ``warp_affine``: the generic kernels of
``backends/cpu/warp_ops.py`` registered with the torch pixel kernels."""

from __future__ import annotations

from headrace.backends.cpu.warp_ops import register
from headrace.backends.torch import warp as _torch_warp

register("gpu", _torch_warp)
