"""The reference's saturating conversion for torch tensors (on their device).

The same rule, working type and limits as the numpy :func:`headrace._core.saturate.saturate`
(halves away from zero, clamp to the target's range, NaN through the plain cast), so CPU and
torch kernels convert alike, bit for bit.

Examples
--------
>>> import numpy as np
>>> saturate(torch.tensor([-2.5, 0.5, 300.0]), np.dtype("int8")).tolist()
[-3, 1, 127]
>>> saturate(torch.tensor([-1, 70000]), torch.uint16).tolist()
[0, 65535]
"""

from __future__ import annotations

from typing import Any

import torch

from headrace._core import dtype as _dt
from headrace._core import saturate as _sat


def saturate(v: torch.Tensor, dtype: Any) -> torch.Tensor:
    """``v`` converted to ``dtype`` with the reference's rounding and saturation.

    Parameters
    ----------
    v : torch.Tensor
        Values of any numeric or bool type.
    dtype : DType, numpy dtype or torch.dtype
        The output type.

    Returns
    -------
    torch.Tensor
        A new tensor, or ``v`` itself when it already has type ``dtype``.

    Examples
    --------
    >>> saturate(torch.tensor([-3.0, 2.5, 300.0]), torch.uint8).tolist()
    [0, 3, 255]
    """
    target = _dt.to_torch_dtype(dtype)
    if v.dtype == target:
        return v
    if target == torch.bool:  # (float: rounded first, as the reference; NaN is true)
        return ~(v.abs() < 0.5) if v.dtype.is_floating_point else v != 0
    if target.is_floating_point or v.dtype == torch.bool:
        return v.to(target)
    dst = _dt.dtype(target).numpy
    if not v.is_floating_point():
        bounds = _sat.int_clamp_range(_dt.dtype(v.dtype).numpy, dst)
        if bounds is None:
            return v.to(target)
        if v.element_size() < 8:  # torch has few kernels for uint16/32: clamp in int64
            return v.to(torch.int64).clamp(*bounds).to(target)
        return v.clamp(*bounds).to(target)
    work = _sat.work_dtype(_dt.dtype(v.dtype).numpy, dst)
    r = v.to(_dt.to_torch_dtype(work))
    lo, hi = _sat.int_limits(dst, work)
    h = _sat.half(work)
    r = (
        r + h
        if lo == 0
        else r + torch.copysign(torch.full((), h, dtype=r.dtype, device=r.device), r)
    )
    return r.clamp_(lo, hi).to(target)


__all__ = ["saturate"]
