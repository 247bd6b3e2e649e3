"""Torch resize kernels (any torch device): ``resize`` and ``tensor_resize``.

Same signatures and plans as :mod:`headrace.backends.cpu.resize`; ``resize_batched`` (from
:mod:`headrace.backends.torch.batched_resize`) does whole batches in a few kernels. Each spatial
axis is resampled by a dense ``(out, in)`` matrix built from DALI's own coefficients
(:func:`headrace.backends.shared.common.axis_matrix`) and applied with a matmul, so the result
equals the CPU generic path up to float32 summation order: uint8 max abs diff 1 against the
CPU kernel and against DALI, float32 ~1e-4 relative. Nearest neighbour is bit-exact.

Examples
--------
>>> import torch
>>> from headrace.ops._resize_params import AxisFilter
>>> x = torch.zeros(40, 60, 3, dtype=torch.uint8)
>>> lin = AxisFilter("triangular", 4.0)
>>> resize(x, "HWC", out_size=(20, 30), roi_lo=(0, 0), roi_hi=(40, 60), filters=(lin, lin)).shape
torch.Size([20, 30, 3])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace._core.layout import spatial_axes
from headrace.backends.shared.common import Filter, axis_matrix, nn_indices
from headrace.backends.torch.batched_resize import resize_batched
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload


def resize(
    x: torch.Tensor,
    layout: str,
    *,
    out_size: Sequence[int],
    roi_lo: Sequence[float],
    roi_hi: Sequence[float],
    filters: Sequence[Filter],
    dtype: np.dtype | None = None,
) -> torch.Tensor:
    """Resample the spatial axes of one sample on its device (plan from ``resize_params``).

    Examples
    --------
    >>> from headrace.ops._resize_params import AxisFilter
    >>> lin = AxisFilter("triangular", 2.0)
    >>> x = torch.arange(4.0).reshape(1, 4, 1)
    >>> resize(x, "HWC", out_size=(1, 2), roi_lo=(0, 0), roi_hi=(1, 4),
    ...        filters=(lin, lin)).ravel().tolist()
    [0.5, 2.5]
    """
    out_dtype = x.dtype if dtype is None else _dt.to_torch_dtype(dtype)
    sp = spatial_axes(layout)
    if any(int(v) == 0 for v in out_size) or x.numel() == 0:
        shape = list(x.shape)
        for d, a in enumerate(sp):
            shape[a] = int(out_size[d])
        return torch.zeros(shape, dtype=out_dtype, device=x.device)
    if all(f.kind == "nn" for f in filters):
        arr = x
        for d, a in enumerate(sp):
            idx = nn_indices(x.shape[a], int(out_size[d]), roi_lo[d], roi_hi[d], d < len(sp) - 1)
            arr = arr.index_select(a, upload(idx, x.device))
        return arr.to(out_dtype)
    arr = x.to(torch.float32)
    for d, a in enumerate(sp):
        mat = axis_matrix(x.shape[a], int(out_size[d]), roi_lo[d], roi_hi[d], filters[d])
        m = upload(mat, x.device)
        arr = torch.movedim(torch.tensordot(m, arr, dims=([1], [a])), 0, a)
    return saturate(arr, out_dtype)


def tensor_resize(
    x: torch.Tensor, layout: str | None, *, kernel_layout: str, **plan: Any
) -> torch.Tensor:
    """``tensor_resize``: :func:`resize` on the plan's stand-in layout ``kernel_layout``.

    Examples
    --------
    >>> from headrace.ops._resize_params import AxisFilter
    >>> nn = AxisFilter("nn", 1.0)
    >>> tensor_resize(torch.arange(4).reshape(4, 1), None, kernel_layout="WC", out_size=(2,),
    ...               roi_lo=(0.0,), roi_hi=(4.0,), filters=(nn,)).ravel().tolist()
    [1, 3]
    """
    return resize(x, kernel_layout, **plan)


__all__ = ["resize", "resize_batched", "tensor_resize"]
