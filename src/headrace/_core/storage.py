"""Array-level helpers shared by Tensor and Batch.

CPU samples are numpy arrays; GPU samples are torch tensors (CUDA, or CPU tensors in fake-GPU
mode). Nothing here knows about lazy evaluation.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.device import CPU, Device, fake_gpu
from headrace._core.errors import BackendUnavailableError, InvalidArgumentError, InvalidTypeError

Array = Any  # np.ndarray | torch.Tensor

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_UINT32_MAX = 2**32 - 1


def is_torch(x: Any) -> bool:
    """True for a torch tensor, without importing torch."""
    if type(x).__module__ == "torch":
        return True
    # ``Tensor`` is missing while another thread is still importing torch: nothing can be a
    # torch tensor of a module that has not finished loading
    tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    return tensor is not None and isinstance(x, tensor)


def require_torch() -> Any:
    """The torch module, or a clear error when it is not installed."""
    try:
        import torch
    except ImportError:
        raise BackendUnavailableError(
            "This needs PyTorch, which is not installed. Install it with `pip install torch` "
            "(or `pip install headrace[torch]`)."
        ) from None
    return torch


def python_to_numpy(data: Any, dtype: _dt.DType | None) -> np.ndarray:
    """Python scalars and nested lists → numpy, narrowing 64-bit types as the reference does."""
    if dtype is not None:
        target = np.dtype(dtype.numpy)
        if target.kind in "iu" and dtype is not _dt.bfloat16:
            check_int_range(data, target)
        return np.array(data, dtype=target)
    if isinstance(data, (list, tuple)) and any(x is None for x in data):
        idx = next(i for i, x in enumerate(data) if x is None)
        raise InvalidTypeError(f"Cannot convert None to a tensor. Got `None` at index {idx}.")
    enum_t = _enum_dtype(data)
    try:
        arr = np.array(data)
    except ValueError as e:
        raise InvalidArgumentError(f"Cannot convert {type(data).__name__} to a tensor: {e}") from e
    if enum_t is not None:
        return arr.astype(np.int32)
    kind = arr.dtype.kind
    if kind in "iu" and arr.dtype.itemsize == 8:
        # as the reference: int32 when every value fits, else uint32, else OverflowError
        if arr.size == 0 or (kind == "i" and arr.min() >= _INT32_MIN and arr.max() <= _INT32_MAX):
            return arr.astype(np.int32)
        if (kind == "u" or arr.min() >= 0) and arr.max() <= _UINT32_MAX:
            return arr.astype(np.uint32)
        signed = kind == "i" and arr.min() < 0
        top = int(arr.max())
        worst = top if top > (_INT32_MAX if signed else _UINT32_MAX) else int(arr.min())
        target = "int32" if signed else "uint32"
        raise OverflowError(f"Python integer {worst} out of range for {target}.")
    if kind == "f" and arr.dtype.itemsize == 8:
        return arr.astype(np.float32)
    if kind in "biuf":
        return arr
    if kind == "O":
        if arr.size == 0:
            raise InvalidArgumentError("Cannot infer the element type of an empty object array.")
        raise InvalidTypeError(f"Cannot convert {type(data).__name__} to a tensor.")
    if kind in "SU":
        raise InvalidTypeError(
            "Cannot convert a string to a tensor. Encode it first, e.g. "
            "np.frombuffer(s.encode(), dtype=np.uint8)."
        )
    raise InvalidTypeError(f"Unsupported element type {arr.dtype} for a tensor.")


def check_int_range(data: Any, target: np.dtype) -> None:
    """Python numbers that do not fit an integer type raise ``OverflowError`` (floats are
    truncated toward zero first), as the reference does, instead of wrapping around.

    Examples
    --------
    >>> check_int_range([1.7, 255], np.dtype(np.uint8))
    >>> check_int_range([-1.7], np.dtype(np.uint8))
    Traceback (most recent call last):
    OverflowError: Python integer -1 out of bounds for uint8
    """
    try:
        values = np.asarray(data)
    except (ValueError, TypeError):
        return  # (np.array below says what is wrong)
    if values.size == 0 or values.dtype.kind not in "iuf":
        return
    if values.dtype.kind == "f":
        finite = values[np.isfinite(values)]
        values = np.trunc(finite)
    info = np.iinfo(target)
    bad = (values < info.min) | (values > info.max)
    if np.count_nonzero(bad):
        first = values[bad].flat[0]
        raise OverflowError(f"Python integer {int(first)} out of bounds for {target}")


def _enum_dtype(data: Any) -> _dt.DType | None:
    from headrace import types as _types

    probe = data
    while isinstance(probe, (list, tuple)) and probe:
        probe = probe[0]
    if isinstance(probe, _types.DALIInterpType):
        return _dt.InterpType
    if isinstance(probe, _types.DALIImageType):
        return _dt.ImageType
    if isinstance(probe, _types.DALIDataType):
        return _dt.DataType
    return None


def enum_dtype_of(data: Any) -> _dt.DType | None:
    """The enum DType for Python data made of reference enum values, else None."""
    return _enum_dtype(data)


def dtype_of(arr: Array) -> _dt.DType:
    """The headrace dtype of a numpy array or torch tensor."""
    if isinstance(arr, np.ndarray):
        return _dt.from_numpy(arr.dtype)
    return _dt.DType.from_fw_type(arr.dtype)


def gpu_device_of_torch(t: Any) -> Device:
    """The GPU device of torch storage (a CPU torch tensor is the fake GPU 0)."""
    idx = t.device.index if t.device.type == "cuda" else 0
    dev = _GPU_DEVICES.get(idx)
    if dev is None:
        dev = _GPU_DEVICES[idx] = Device("gpu", idx)
    return dev


_GPU_DEVICES: dict[int, Device] = {}


def to_numpy_view(t: Any) -> np.ndarray:
    """A numpy view of a CPU torch tensor (bfloat16 as uint16 bits)."""
    import torch

    t = t.detach()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.uint16)
    return t.numpy()


def for_display(arr: Any, dtype: _dt.DType) -> np.ndarray:
    """A host numpy array of ``arr``'s values for printing (bfloat16 as float32 values, not
    their bits; GPU data copied to the host).

    Examples
    --------
    >>> for_display(np.array([16320], np.uint16), _dt.bfloat16).tolist()
    [1.5]
    """
    if not isinstance(arr, np.ndarray):  # torch (GPU or fake-GPU) storage
        t = arr.detach()
        if t.dtype == sys.modules["torch"].bfloat16:
            t = t.float()
        return np.asarray(t.cpu().numpy())
    return bf16_to_float32(arr) if dtype is _dt.bfloat16 else arr


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """The values of bfloat16 data stored on the host as its bits (uint16): exact, float32.

    Examples
    --------
    >>> bf16_to_float32(np.array([16320, 49152], np.uint16)).tolist()
    [1.5, -2.0]
    """
    return (bits.astype(np.uint32) << 16).view(np.float32)


def float32_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 ``values`` rounded to bfloat16 (to nearest, ties to even; NaN stays NaN), as the
    bits the host stores (uint16), the rounding torch uses.

    Examples
    --------
    >>> float32_to_bf16(np.array([1.5, 1.00390625, 1.01171875], np.float32)).tolist()
    [16320, 16256, 16258]
    """
    f = np.ascontiguousarray(values, np.float32)
    u = f.view(np.uint32)
    bits = ((u + (0x7FFF + ((u >> 16) & 1))) >> 16).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        bits[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)  # quiet NaN, sign kept
    return bits


def numpy_to_torch(arr: np.ndarray, dtype: _dt.DType | None = None) -> Any:
    """A torch view of a numpy array (read-only arrays are shared with the warning silenced)."""
    torch = require_torch()

    if any(st < 0 for st in arr.strides):  # (a reversed view: torch has no negative strides)
        arr = np.ascontiguousarray(arr)
    if arr.flags.writeable:
        t = torch.from_numpy(arr)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            t = torch.from_numpy(arr)
    if dtype is _dt.bfloat16:
        t = t.view(torch.bfloat16)
    return t


def move(arr: Array, dev: Device, dtype: _dt.DType, *, copy: bool = False) -> Array:
    """Return ``arr`` stored on ``dev`` (a copy when the device changes)."""
    on_gpu = not isinstance(arr, np.ndarray)
    if dev.device_type == "cpu":
        if not on_gpu:
            return arr.copy() if copy else arr
        out = arr.detach()
        out = out.cpu()
        if fake_gpu() or copy:
            out = out.clone()
        return to_numpy_view(out)
    if on_gpu:
        target = dev.torch_device()
        if arr.device == target:
            return arr.clone() if copy else arr
        return arr.to(target)
    # np.ascontiguousarray would make a 0-d array 1-d
    t = numpy_to_torch(arr if arr.flags.c_contiguous else np.ascontiguousarray(arr), dtype)
    target = dev.torch_device()
    if target.type == "cpu":
        return t.clone()
    # staged through pinned memory (torch's host cache keeps it until the copy is done), so the
    # upload is queued on the current stream without waiting for the host or for the stream
    return t.pin_memory().to(target, non_blocking=True)


def samples_to_host(samples: list[Any], dtype: Any) -> list[Any]:
    """Samples on the host: GPU samples as numpy arrays with one device-to-host copy (one
    wait) for all of them; host samples as they are."""
    if len(samples) > 1 and all(getattr(s, "is_cuda", False) for s in samples):
        import torch

        flat = move(torch.cat([s.reshape(-1) for s in samples]), CPU, dtype)
        out, start = [], 0
        for s in samples:
            size = s.numel()
            out.append(flat[start : start + size].reshape(tuple(s.shape)))
            start += size
        return out
    return [move(s, CPU, dtype) for s in samples]


def cast(arr: Array, dtype: _dt.DType, src: _dt.DType | None = None) -> Array:
    """``arr`` (of type ``src``, default: as its storage says) converted to ``dtype`` by value
    (always a new array). bfloat16 is stored on the host as its bits (uint16): converting to or
    from it goes through float32 values.

    Examples
    --------
    >>> cast(np.array([1.5, 2.0], np.float32), _dt.bfloat16).tolist()  # (the bits)
    [16320, 16384]
    >>> cast(np.array([16320], np.uint16), _dt.float32, _dt.bfloat16).tolist()
    [1.5]
    """
    if isinstance(arr, np.ndarray):
        if src is _dt.bfloat16 and dtype is not _dt.bfloat16:
            arr = bf16_to_float32(arr)
        elif dtype is _dt.bfloat16 and src is not _dt.bfloat16:
            return float32_to_bf16(arr.astype(np.float32))
        return arr.astype(dtype.numpy)
    return arr.to(_dt.to_torch_dtype(dtype))


def source_dtype(data: Any, arr: Array) -> _dt.DType:
    """The type of ``arr``, imported from ``data`` by :func:`import_data` (a torch bfloat16
    tensor imported to the host is stored as its bits)."""
    if is_torch(data) and str(data.dtype) == "torch.bfloat16":
        return _dt.bfloat16
    return dtype_of(arr)


def copy_array(arr: Array) -> Array:
    """An independent copy."""
    return arr.copy() if isinstance(arr, np.ndarray) else arr.clone()


def import_data(data: Any, dtype: _dt.DType | None) -> tuple[Array, bool]:
    """Turn user data into storage. Returns (array, copied)."""
    if isinstance(data, np.ndarray):
        if data.dtype.kind not in "biuf":
            raise InvalidTypeError(f"Unsupported numpy dtype {data.dtype} for a tensor.")
        return data, False
    if is_torch(data):
        if data.device.type == "cuda":
            return data.detach(), False
        return to_numpy_view(data), False
    if hasattr(data, "__dlpack_device__") and not isinstance(data, (list, tuple)):
        dev = Device.from_dlpack(data.__dlpack_device__())
        if dev.device_type == "cpu":
            return np.from_dlpack(data), False
        import torch

        return torch.from_dlpack(data), False
    if hasattr(data, "__array__") and not isinstance(data, (list, tuple)):
        return np.asarray(data), False
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, dtype=np.uint8), False
    return python_to_numpy(data, dtype), True
