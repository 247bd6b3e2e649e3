"""``Tensor._storage`` and ``Batch._storage``: the data as the reference's backend objects show it.

The reference keeps a sample in a backend ``TensorCPU``/``TensorGPU`` and a batch in a
``TensorListCPU``/``TensorListGPU``, reachable as ``._storage``. Code and tests written against
it read that attribute: ``np.array(t._storage)``, ``torch.from_dlpack(t._storage)``,
``t._storage.dtype == ndd.int32.type_id``, ``b._storage.layout()``, ``t._storage.data_ptr()``,
iterating over a batch's samples, or passing ``_storage`` back to ``ndd.tensor``/``ndd.batch``.
:class:`TensorStorage` and :class:`BatchStorage` give those reads over headrace's own data
(NumPy arrays, torch tensors) without a copy; given back to headrace they stand for the tensor
or batch they came from.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> t = ndd.tensor(np.arange(6, dtype=np.int32).reshape(2, 3), layout="AB")
>>> s = t._storage
>>> s.shape(), s.layout(), s.dtype == ndd.int32.type_id, np.array(s).sum()
([2, 3], 'AB', True, np.int64(15))
>>> ndd.as_tensor(s)._storage.data_ptr() == s.data_ptr()
True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.proxy import Proxy

if TYPE_CHECKING:
    from headrace._core.batch import Batch
    from headrace._core.tensor import Tensor
    from headrace.types import DALIDataType


def data_ptr(arr: Any) -> int:
    """The address of the first element of a NumPy array or torch tensor."""
    if isinstance(arr, np.ndarray):
        return int(arr.__array_interface__["data"][0])
    return int(arr.data_ptr())


class TensorStorage(Proxy):
    """One sample's data with the reference's backend-tensor reads (see the module)."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self._tensor = tensor.evaluate()

    def __headrace_unwrap__(self) -> Tensor:
        return self._tensor

    @property
    def dtype(self) -> DALIDataType:
        """The element type's reference type id (``ndd.float32.type_id`` ...)."""
        return _dt.type_id(self._tensor.dtype)

    def shape(self) -> list[int]:
        """The shape, as a list."""
        return list(self._tensor.shape)

    def ndim(self) -> int:
        """The number of dimensions."""
        return self._tensor.ndim

    def layout(self) -> str:
        """The layout (``""`` when there is none, as the reference's backend)."""
        return self._tensor.layout or ""

    def data_ptr(self) -> int:
        """The address of the data (equal for views of the same memory)."""
        return data_ptr(self._tensor._resolved_data())

    def device_id(self) -> int:
        """The GPU ordinal (``-1`` for CPU data)."""
        dev = self._tensor.device
        return -1 if dev.device_id is None else dev.device_id

    def as_cpu(self) -> TensorStorage:
        """The data copied to the host (itself for CPU data)."""
        return TensorStorage(self._tensor.cpu())

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self._tensor.__array__(dtype, copy)

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self._tensor.__dlpack__(stream, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._tensor.__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return self._tensor.__cuda_array_interface__

    def __repr__(self) -> str:
        return f"TensorStorage(shape={self.shape()}, dtype={self._tensor.dtype})"


class BatchStorage(Proxy):
    """A batch's samples with the reference's backend tensor-list reads (see the module)."""

    __slots__ = ("_batch",)

    def __init__(self, batch: Batch) -> None:
        self._batch = batch.evaluate()

    def __headrace_unwrap__(self) -> Batch:
        return self._batch

    @property
    def dtype(self) -> DALIDataType:
        """The element type's reference type id."""
        return _dt.type_id(self._batch.dtype)

    def shape(self) -> list[tuple[int, ...]]:
        """The samples' shapes."""
        return list(self._batch.shape)

    def layout(self) -> str:
        """The samples' layout (``""`` when there is none)."""
        return self._batch.layout or ""

    def is_dense_tensor(self) -> bool:
        """Whether every sample has the same shape."""
        return len(set(self._batch.shape)) <= 1

    def __len__(self) -> int:
        return self._batch.batch_size

    def __getitem__(self, i: int) -> TensorStorage:
        return TensorStorage(self._batch.tensors[i])

    def __iter__(self) -> Iterator[TensorStorage]:
        return (TensorStorage(t) for t in self._batch.tensors)

    def __repr__(self) -> str:
        return f"BatchStorage(batch_size={len(self)}, dtype={self._batch.dtype})"


__all__ = ["BatchStorage", "TensorStorage", "data_ptr"]
