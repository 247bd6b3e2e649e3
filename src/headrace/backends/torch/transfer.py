"""Host-to-device uploads of operator parameters that never make the host wait for the GPU.

A blocking copy (``tensor.to(device)``) waits for the stream's earlier work, so an operator that
uploads a parameter that way stalls the host until the GPU catches up. :func:`upload` copies
asynchronously on the current stream (``non_blocking=True``). Parameters are small, so they are
copied from pageable memory, which CUDA stages at once (the source may be freed right away);
pinning each one instead went through the caching host allocator on every call, whose blocks
stay busy while the GPU runs behind the host (see the issue notes: the H200 run with pinned
uploads was slower). On the CPU (and in fake-GPU mode) it is a zero-copy ``torch.from_numpy``.

Examples
--------
>>> import numpy as np
>>> upload(np.arange(3, dtype=np.float32), torch.device("cpu")).tolist()
[0.0, 1.0, 2.0]
>>> upload([1, 2], torch.device("cpu"), torch.int64).dtype
torch.int64
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def upload(data: Any, device: torch.device, dtype: torch.dtype | None = None) -> torch.Tensor:
    """``data`` (numpy array, scalar or nested list) as a tensor on ``device``, asynchronously.

    Parameters
    ----------
    data : array-like or torch.Tensor
        Host values.
    device : torch.device
        Where the tensor goes.
    dtype : torch.dtype, optional
        Element type (default: numpy's for ``data``).
    """
    if isinstance(data, torch.Tensor):
        t = data if dtype is None else data.to(dtype)
    elif dtype is None:
        t = torch.from_numpy(np.ascontiguousarray(data))
    else:
        t = torch.as_tensor(np.ascontiguousarray(data), dtype=dtype)
    if device.type != "cuda":
        return t
    return t.to(device, non_blocking=True)


__all__ = ["upload"]
