"""Devices: :class:`Device`, :func:`device` and the thread-local current-device stack.

GPU storage is a torch tensor. In **fake-GPU mode** (environment ``HEADRACE_FAKE_GPU=1``) the
``"gpu"`` device exists on machines without CUDA and is backed by torch *CPU* tensors, so every
GPU code path can run on CI.

Examples
--------
>>> import headrace as ndd
>>> ndd.Device("cpu")
Device(device_type='cpu')
>>> str(ndd.Device("cuda:0")) if ndd.Device.gpu_count() else "gpu:0"
'gpu:0'
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from typing import Any

from headrace._core.errors import BackendUnavailableError

_VALID_TYPES = ("cpu", "gpu")


@functools.cache
def fake_gpu() -> bool:
    """True when ``HEADRACE_FAKE_GPU`` is set to a non-empty value other than ``0`` (read once)."""
    v = os.environ.get("HEADRACE_FAKE_GPU", "")
    return v not in ("", "0", "false", "False")


@functools.cache
def _real_gpu_count() -> int:
    if "torch" not in sys.modules and not os.path.exists("/dev/nvidiactl"):
        return 0  # no NVIDIA driver: do not pay for importing torch
    try:
        import torch
    except ImportError:
        return 0
    try:
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except Exception:  # a broken driver means no GPU
        return 0


class Device:
    """A device: ``"cpu"``, ``"gpu"``, ``"gpu:N"``, ``"cuda"`` or ``"cuda:N"``.

    Parameters
    ----------
    name : str
        Device type, optionally with ``:id``. ``cuda`` is an alias of ``gpu``.
    device_id : int, optional
        GPU ordinal; defaults to the current CUDA device. Omitted (or 0) for the CPU.

    Examples
    --------
    >>> Device("cpu").device_type
    'cpu'
    >>> Device("cpu:0") == Device("cpu")
    True
    """

    __slots__ = ("_hash", "device_id", "device_type")
    CPU: Device

    def __init__(self, name: str, device_id: int | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"Device name must be a string (got {type(name).__name__}).")
        dev_type, _, id_part = name.partition(":")
        if id_part:
            if device_id is not None:
                raise ValueError(
                    f"Invalid device name {name!r}: the id is given both in the name and as "
                    f"device_id={device_id}."
                )
            try:
                device_id = int(id_part)
            except ValueError:
                raise ValueError(f"Invalid device name {name!r}.") from None
        if dev_type == "cuda":
            dev_type = "gpu"
        if dev_type not in _VALID_TYPES:
            raise ValueError(
                f"Invalid device type {dev_type!r}. Use 'cpu', 'gpu' (alias 'cuda') or 'gpu:N'."
            )
        if dev_type == "cpu":
            if device_id not in (None, 0):  # ("cpu:0" is the CPU, as in the reference)
                raise ValueError(
                    f"Invalid device id {device_id} for the CPU: it takes no id (or 0)."
                )
            device_id = None
        else:
            if device_id is None:
                device_id = Device.default_device_id("gpu")
            count = Device.gpu_count()
            if not isinstance(device_id, int) or device_id < 0 or device_id >= max(count, 1):
                raise ValueError(
                    f"Invalid device id {device_id}: this machine has {count} GPU(s)"
                    + (" (set HEADRACE_FAKE_GPU=1 to emulate one)." if count == 0 else ".")
                )
        self.device_type = dev_type
        self.device_id = device_id
        self._hash = hash((dev_type, device_id))

    # --- identity ----------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Device):
            return self.device_type == other.device_type and self.device_id == other.device_id
        if isinstance(other, str):
            try:
                return self == Device(other)
            except (ValueError, TypeError):
                return False
        return NotImplemented

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return "cpu" if self.device_type == "cpu" else f"gpu:{self.device_id}"

    def __repr__(self) -> str:
        if self.device_id is None:  # a CPU device has no id; the reference leaves it out
            return f"Device(device_type={self.device_type!r})"
        return f"Device(device_type={self.device_type!r}, device_id={self.device_id!r})"

    @property
    def is_gpu(self) -> bool:
        """True for a GPU device."""
        return self.device_type == "gpu"

    # --- torch bridge ---------------------------------------------------------------------
    def torch_device(self) -> Any:
        """The torch device holding this device's data (CPU in fake-GPU mode)."""
        import torch

        if self.device_type == "cpu":
            return torch.device("cpu")
        if _real_gpu_count() == 0:
            if fake_gpu():
                return torch.device("cpu")
            raise BackendUnavailableError(
                f"Cannot access accelerator device when none is available: {self} needs a CUDA "
                "GPU and this machine has none (torch.cuda.is_available() is False). Use "
                "device='cpu', or set HEADRACE_FAKE_GPU=1 to emulate a GPU on the CPU."
            )
        return torch.device("cuda", self.device_id)

    # --- static helpers ------------------------------------------------------------------
    @staticmethod
    def gpu_count() -> int:
        """Number of GPUs (1 in fake-GPU mode on a machine without CUDA)."""
        n = _real_gpu_count()
        if n == 0 and fake_gpu():
            return 1
        return n

    @staticmethod
    def default_device_id(device_type: str) -> int | None:
        """``None`` for the CPU; the current CUDA device for the GPU."""
        if device_type == "cpu":
            return None
        if _real_gpu_count():
            import torch

            return int(torch.cuda.current_device())
        return 0

    @staticmethod
    def current() -> Device:
        """The innermost device entered in this thread, else GPU if one exists, else CPU."""
        stack = _stack()
        if stack:
            return stack[-1]
        return Device("gpu") if Device.gpu_count() else CPU

    @staticmethod
    def type_from_dlpack(dev_type: int) -> str:
        """Device type for a DLPack device code."""
        if dev_type in (1, 3):  # kDLCPU, kDLCUDAHost
            return "cpu"
        if dev_type in (2, 13):  # kDLCUDA, kDLCUDAManaged
            return "gpu"
        raise ValueError(f"Unsupported DLPack device type {dev_type}.")

    @staticmethod
    def from_dlpack(dlpack_device: tuple[int, int]) -> Device:
        """The device named by a ``__dlpack_device__()`` tuple."""
        dev_type, dev_id = dlpack_device
        kind = Device.type_from_dlpack(int(dev_type))
        return CPU if kind == "cpu" else Device("gpu", int(dev_id))

    # --- context manager -----------------------------------------------------------------
    def __enter__(self) -> Device:
        prev = None
        if self.device_type == "gpu" and _real_gpu_count():
            import torch

            prev = torch.cuda.current_device()
            torch.cuda.set_device(self.device_id)
        _stack().append(self)
        _prev_cuda().append(prev)
        return self

    def __exit__(self, *exc: object) -> None:
        _stack().pop()
        prev = _prev_cuda().pop()
        if prev is not None:
            import torch

            torch.cuda.set_device(prev)


_local = threading.local()


def _stack() -> list[Device]:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _prev_cuda() -> list[int | None]:
    s = getattr(_local, "prev", None)
    if s is None:
        s = _local.prev = []
    return s


CPU = Device("cpu")
Device.CPU = CPU

_parsed: dict[str, Device] = {"cpu": CPU}


def device(obj: Any, id: int | None = None) -> Device | None:
    """Convert ``obj`` (``None``, :class:`Device`, ``str`` or ``torch.device``) to a Device.

    Examples
    --------
    >>> device("cpu") == device(Device("cpu"))
    True
    >>> device(None) is None
    True
    """
    if obj is None:
        return None
    if isinstance(obj, Device):
        if id is not None:
            raise ValueError("Invalid device id: cannot override the id of a Device object.")
        return obj
    if isinstance(obj, str):
        if id is None:
            cached = _parsed.get(obj)
            if cached is not None:
                return cached
            d = Device(obj)
            if ":" in obj:
                _parsed[obj] = d
            return d
        return Device(obj, id)
    if type(obj).__name__ == "device" and hasattr(obj, "type") and hasattr(obj, "index"):
        kind = "gpu" if obj.type == "cuda" else obj.type
        idx = obj.index if id is None else id
        return Device(kind, idx if kind == "gpu" else None)
    raise TypeError(f"Cannot convert {obj!r} to Device")
