"""``Tensor``: one sample, on the CPU (numpy storage) or a GPU (torch storage).

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> t = ndd.as_tensor(np.arange(6, dtype=np.int32).reshape(2, 3), layout="HW")
>>> t.shape, t.dtype, t.layout
((2, 3), DType(kind=Kind.signed, bits=32, exponent_bits=None, significand_bits=None), 'HW')
>>> np.shares_memory(np.asarray(t), np.asarray(t[1:]))
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from headrace import types as _types
from headrace._core import dtype as _dt
from headrace._core import handoff as _ho
from headrace._core import indexing as _ix
from headrace._core import meta as _meta
from headrace._core import storage as _st
from headrace._core.device import CPU, Device
from headrace._core.device import device as _to_device
from headrace._core.entry import provide
from headrace._core.errors import InvalidArgumentError
from headrace._core.invocation import InvocationResult
from headrace._core.layout import validate as validate_layout
from headrace._core.operators import ArithmeticMixin, DeviceMixin
from headrace._core.proxy import unwrap as unwrap_proxy
from headrace._core.storage_view import TensorStorage, data_ptr

if TYPE_CHECKING:
    from headrace._core.batch import Batch
    from headrace._core.invocation import Invocation


class Tensor(ArithmeticMixin, DeviceMixin):
    """A single sample (an n-dimensional array) with a dtype, a layout and a device.

    Use :func:`tensor` (copies) or :func:`as_tensor` (wraps) to create one.
    """

    __slots__ = (
        "__weakref__",
        "_data",
        "_device",
        "_dtype",
        "_external",
        "_layout",
        "_ready",
        "_source",
        "_src",
    )

    def __init__(
        self,
        data: Any = None,
        dtype: Any = None,
        device: Any = None,
        layout: str | None = None,
        batch: Any = None,
        index_in_batch: int | None = None,
        invocation_result: Any = None,
        copy: bool = False,
    ) -> None:
        self._src: tuple[Invocation, int, int, _meta.Meta | None] | None = None
        self._ready: _ho.Ready | None = None  # CUDA data: when its producer stream wrote it
        self._external = False
        self._source: str | None = None  # where the sample came from (a file), when known
        if batch is not None:
            t = batch.select(index_in_batch or 0)
            self._set_from(t._resolved_data(), t.dtype, t.layout, t.device)
            self._ready = t._ready
            return
        if invocation_result is not None:
            inv, out_idx, sample_idx, meta, dev = invocation_result
            self._src = (inv, out_idx, sample_idx, meta)
            self._data = None
            self._dtype = meta.dtype if meta is not None else None
            self._layout = meta.layout if meta is not None else None
            self._device = dev
            return
        want_dtype = _dt.dtype(dtype) if dtype is not None else None
        want_device = _to_device(device)
        data = unwrap_proxy(data)
        if isinstance(data, Tensor):
            arr = data._resolved_data()
            _ho.wait_on_current(data._ready, [arr])  # copies below run on the current stream
            src_dtype, src_layout = data._dtype, data._layout
            copied = False
            self._external = data._external
        elif data is None:
            raise InvalidArgumentError("Tensor: data is required.")
        else:
            data = _types.native(data)
            if getattr(type(data), "_is_batch", False):
                raise InvalidArgumentError(
                    "Use ndd.as_tensor(batch, pad=...) to convert a Batch to a Tensor."
                )
            if want_dtype is not None and _dt.DType.Kind.enum is want_dtype.kind:
                arr = _st.python_to_numpy(data, want_dtype)
                copied = True
            else:
                if (
                    want_dtype is not None
                    and want_dtype is not _dt.bfloat16
                    and isinstance(data, (list, tuple, int, float))
                    and np.dtype(want_dtype.numpy).kind in "iu"
                ):  # Python numbers that do not fit raise, as the reference (no wrap-around)
                    _st.check_int_range(data, np.dtype(want_dtype.numpy))
                arr, copied = _st.import_data(data, None)
            src_dtype = _enum_or(data, arr)
            src_layout = None
            self._external = not copied
        if want_device is not None and want_device != _device_of(arr):
            arr = _st.move(arr, want_device, src_dtype)
            copied = True
        if want_dtype is not None and want_dtype != src_dtype:
            if want_dtype.kind is not _dt.DType.Kind.enum:
                arr = _st.cast(arr, want_dtype, src_dtype)
                copied = True
            src_dtype = want_dtype
        if copy and not copied:
            arr = _st.copy_array(arr)
            copied = True
        if copied:
            self._external = False
        lay = layout if layout is not None else src_layout
        self._set_from(arr, src_dtype, validate_layout(lay, arr.ndim), _device_of(arr))
        self._ready = _ho.mark(arr)  # imported or copied on the current stream

    def _set_from(self, arr: Any, dtype: _dt.DType, layout: str | None, dev: Device) -> None:
        self._data = arr
        self._dtype = dtype
        self._layout = layout
        self._device = dev

    @classmethod
    def _wrap(
        cls,
        arr: Any,
        dtype: _dt.DType,
        layout: str | None,
        dev: Device,
        external: bool = False,
        ready: _ho.Ready | None = None,
    ) -> Tensor:
        """Fast internal constructor from storage (no checks); ``ready``: see :mod:`.handoff`."""
        t = cls.__new__(cls)
        t._ready = ready
        t._data = arr
        t._dtype = dtype
        t._layout = layout
        t._device = dev
        t._src = None
        t._external = external
        t._source = None
        return t

    # --- lazy evaluation -------------------------------------------------------------------
    def _resolved_data(self) -> Any:
        if self._data is None:
            self._resolve()
        return self._data

    def _resolve(self) -> None:
        src = self._src
        if src is None:
            return
        inv, out_idx, sample_idx, meta = src
        out = inv.wait()[out_idx]
        self._data = out._samples[sample_idx]
        if meta is not None:
            _meta.check(meta, out._dtype, self._data.ndim, out._layout, inv.name)
        self._ready = out._ready
        self._dtype = out._dtype
        self._layout = out._layout
        self._src = None

    @property
    def _is_lazy(self) -> bool:
        return self._data is None

    @property
    def _invocation_result(self) -> InvocationResult:
        """Whether the call making this value has run (the reference's tests read it)."""
        return InvocationResult(self)

    @property
    def _storage(self) -> TensorStorage:
        """The data with the reference's backend-tensor reads (``headrace._core.storage_view``)."""
        return TensorStorage(self)

    def _is_same_tensor(self, other: Tensor) -> bool:
        """Whether ``other`` holds this very data (same memory, shape and type), not a copy."""
        a, b = self._resolved_data(), other._resolved_data()
        return (
            a is b
            or (a.shape == b.shape and a.dtype == b.dtype and data_ptr(a) == data_ptr(b))
        )

    def _consumable(self) -> Any:
        """The data, safe to use on torch's current stream (waits there for its producer)."""
        arr = self._resolved_data()
        if not isinstance(arr, np.ndarray):
            _ho.wait_on_current(self._ready, [arr])
        return arr

    def evaluate(self) -> Tensor:
        """Run the pending computation (a no-op for concrete data); returns ``self``."""
        if self._data is None:
            self._resolve()
        return self

    # --- properties ------------------------------------------------------------------------
    @property
    def device(self) -> Device:
        """Where the data lives (known without evaluating)."""
        return self._device

    @property
    def dtype(self) -> _dt.DType:
        """Element type."""
        if self._dtype is None:
            self._resolve()
        return self._dtype

    @property
    def layout(self) -> str | None:
        """Layout string such as ``"HWC"``, or None."""
        if self._data is None and self._src is not None and self._src[3] is None:
            self._resolve()
        return self._layout

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape (``()`` for scalars)."""
        return tuple(self._resolved_data().shape)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        if self._data is None and self._src is not None and self._src[3] is not None:
            return self._src[3].ndim
        return self._resolved_data().ndim

    @property
    def size(self) -> int:
        """Number of elements (1 for a scalar)."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.bytes

    @property
    def nbytes(self) -> int:
        """Bytes of data."""
        return self.size * self.dtype.bytes

    # --- conversions -------------------------------------------------------------------------
    def item(self) -> Any:
        """The single element as a Python scalar."""
        arr = self._consumable()
        n = self.size
        if n != 1:
            raise ValueError(f"Tensor has {n} elements, expected 1")
        return arr.reshape(()).item()

    def torch(self, copy: bool = False) -> Any:
        """A ``torch.Tensor`` on the same device, sharing memory unless ``copy=True``.

        Examples
        --------
        >>> import headrace as ndd
        >>> ndd.tensor([1, 2]).torch().tolist()
        [1, 2]

        For GPU data, torch's current stream waits (on the GPU, through an event) for the stream
        that produced the data, and the memory stays valid for work queued on that stream.
        """
        arr = self._consumable()
        t = _st.numpy_to_torch(arr, self._dtype) if isinstance(arr, np.ndarray) else arr
        return t.clone() if copy else t

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if self._device.device_type != "cpu":
            raise TypeError("This is not a CPU tensor. Use `.cpu()` to get a CPU copy first.")
        arr = self._resolved_data()
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        return arr

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        if self._device.device_type != "gpu":
            raise AttributeError("__cuda_array_interface__ is only available for GPU tensors.")
        arr = self._consumable()
        try:
            return arr.__cuda_array_interface__  # type: ignore[no-any-return]
        except (AttributeError, RuntimeError) as e:
            raise AttributeError(
                f"__cuda_array_interface__ is unavailable for this GPU tensor ({e})."
            ) from None

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        arr = self._resolved_data()
        if isinstance(arr, np.ndarray):
            if not arr.flags.writeable or any(st < 0 for st in arr.strides):
                arr = arr.copy()  # (DLPack: no read-only flag; torch takes no negative strides)
            return arr.__dlpack__(**({"stream": stream} if stream is not None else {}), **kwargs)
        if not arr.is_cuda:  # fake-GPU data (torch CPU tensors)
            return arr.__dlpack__(**kwargs)
        consumer = _ho.dlpack_consumer(stream, arr)
        if consumer is not None:
            _ho.wait(self._ready, [arr], consumer)
        import torch

        with torch.cuda.device(arr.device):  # torch exports only from the current device
            return arr.__dlpack__(stream=-1, **kwargs)  # synchronised above

    def __dlpack_device__(self) -> tuple[int, int]:
        arr = self._resolved_data()
        return arr.__dlpack_device__()  # type: ignore[no-any-return]

    # --- indexing ------------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Tensor:
        idx = _ix.normalize(index)
        if _ix.is_identity(idx):
            if sum(1 for c in idx if c is not Ellipsis) > self.ndim:
                _ix.expand(idx, self.ndim)
            return self
        arr = self._resolved_data()
        full = _ix.expand(idx, arr.ndim)
        _ix.check_bounds(full, tuple(arr.shape))
        ready = self._ready
        if ready is not None:  # CUDA: index on the current stream, after the producer
            _ho.wait_on_current(ready, [arr])
        out = _ix.apply(arr, full)
        if ready is not None:
            ready = _ho.mark(out)
        return Tensor._wrap(
            out,
            self._dtype,
            _ix.result_layout(full, self._layout),
            self._device,
            self._external,
            ready,
        )

    def __iter__(self) -> Any:
        arr = self._resolved_data()
        if arr.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(arr.shape[0]):
            yield self[i]

    def __int__(self) -> int:
        return int(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __index__(self) -> int:
        if not self.dtype.is_integer:
            raise TypeError("Only integer tensors can be used as an index.")
        return int(self.item())

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """Pickling and copying: the data once written (a GPU result is waited for on the
        current stream), without its ready mark (CUDA events do not pickle) or producer."""
        data = self._consumable()
        state = {k: getattr(self, k) for k in self.__slots__ if k != "__weakref__"}
        state.update(_data=data, _ready=None, _src=None)
        return None, state

    def __repr__(self) -> str:
        arr = self._consumable()
        body = np.array2string(
            _st.for_display(arr, self._dtype),
            separator=", ",
            prefix="    ",
        )
        parts = [f"    {body}", f"    dtype={self.dtype}"]
        if self._layout:
            parts.append(f'    layout="{self._layout}"')
        parts.append(f'    device="{self._device}"')
        parts.append(f"    shape={self.shape}")
        return "Tensor(\n" + ",\n".join(parts) + ")"


def _device_of(arr: Any) -> Device:
    """CPU storage is always numpy; torch storage is always a GPU (CPU tensors in fake mode)."""
    if isinstance(arr, np.ndarray):
        return CPU
    return _st.gpu_device_of_torch(arr)


def _enum_or(data: Any, arr: Any) -> _dt.DType:
    e = _st.enum_dtype_of(data) if isinstance(data, (list, tuple, int)) else None
    return e if e is not None else _st.source_dtype(data, arr)


@provide("tensor")
def tensor(
    data: Any,
    dtype: Any = None,
    device: Any = None,
    layout: str | None = None,
    pad: bool = False,
) -> Tensor:
    """Create a Tensor holding an independent copy of ``data``.

    Parameters
    ----------
    data : array-like, Tensor, torch tensor, DLPack object, list or scalar
        The values. Python ints become int32 and floats float32; arrays keep their dtype.
    dtype : DType or dtype-like, optional
        Element type to convert to.
    device : str or Device, optional
        ``"cpu"`` or ``"gpu"``; default: where ``data`` lives.
    layout : str, optional
        Layout such as ``"HWC"``; its length must equal the number of dimensions.
    pad : bool
        For a :class:`Batch` of samples of different shapes: zero-pad them to the largest shape
        (as :func:`as_tensor`); otherwise such a batch raises.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.tensor([[1, 2], [3, 4]]).dtype is ndd.int32
    True
    >>> ndd.tensor(ndd.batch([[1, 2], [3]]), pad=True).torch().tolist()
    [[1, 2], [3, 0]]
    """
    if getattr(type(data), "_is_batch", False):
        data = data._as_one_tensor(pad=pad, device=device)
    t = Tensor(data, dtype=dtype, device=device, layout=layout, copy=True)
    _maybe_sync(t)
    return t


def as_tensor(
    data: Any,
    dtype: Any = None,
    device: Any = None,
    layout: str | None = None,
    pad: bool = False,
) -> Tensor:
    """Wrap ``data`` as a Tensor without copying when possible.

    A :class:`Batch` becomes one tensor with a leading sample dimension; ragged batches need
    ``pad=True`` (zero padding to the largest shape).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> a = np.zeros((2, 2), np.float32)
    >>> np.shares_memory(np.asarray(ndd.as_tensor(a)), a)
    True
    """
    if getattr(type(data), "_is_batch", False):
        t = data._as_one_tensor(pad=pad, device=device)
        if dtype is not None or layout is not None:
            t = Tensor(t, dtype=dtype, layout=layout)
        return t
    if isinstance(data, Tensor) and dtype is None and device is None and layout is None:
        return data
    data = unwrap_proxy(data)
    t = Tensor(data, dtype=dtype, device=device, layout=layout)
    _maybe_sync(t)
    return t


def _maybe_sync(t: Tensor | Batch) -> None:
    from headrace._core.eval_mode import EvalMode

    if EvalMode.current().value >= 2:
        t.evaluate()


__all__ = ["Tensor", "as_tensor", "tensor"]
