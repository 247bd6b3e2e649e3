"""Torch resize kernels (any torch device): ``resize`` and ``tensor_resize``.

Same signatures and plans as :mod:`headrace.backends.cpu.resize`. Each spatial axis is
resampled by a dense ``(out, in)`` matrix built from DALI's own coefficients
(:func:`headrace.backends.common.axis_matrix`) and applied with a matmul, so the result
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

from headrace.backends.common import Filter, axis_matrix, nn_indices, spatial_axes

_TORCH_DTYPES = {
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int8): torch.int8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.float16): torch.float16,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
}


def torch_dtype(dtype: np.dtype | torch.dtype | None, default: torch.dtype) -> torch.dtype:
    """Map a numpy dtype (or ``None``) to a torch dtype.

    Examples
    --------
    >>> torch_dtype(np.dtype(np.float32), torch.uint8)
    torch.float32
    """
    if dtype is None:
        return default
    if isinstance(dtype, torch.dtype):
        return dtype
    return _TORCH_DTYPES[np.dtype(dtype)]


def cast_round(v: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Float results to ``dtype`` with DALI's resampler rounding (+0.5, saturate, truncate).

    Examples
    --------
    >>> cast_round(torch.tensor([-1.0, 2.5, 300.0]), torch.uint8).tolist()
    [0, 3, 255]
    """
    if dtype.is_floating_point:
        return v.to(dtype)
    info = torch.iinfo(dtype)
    return (v + 0.5).clamp_(info.min, info.max).to(dtype)


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
    out_dtype = torch_dtype(dtype, x.dtype)
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
            arr = arr.index_select(a, torch.from_numpy(idx).to(x.device))
        return arr.to(out_dtype)
    arr = x.to(torch.float32)
    for d, a in enumerate(sp):
        mat = axis_matrix(x.shape[a], int(out_size[d]), roi_lo[d], roi_hi[d], filters[d])
        m = torch.from_numpy(mat).to(x.device)
        arr = torch.movedim(torch.tensordot(m, arr, dims=([1], [a])), 0, a)
    return cast_round(arr, out_dtype)


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
