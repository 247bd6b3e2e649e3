"""Output helpers of the readers whose element types come from the files (``readers.Numpy``,
``experimental.readers.Fits``): batches typed by their samples, optionally uploaded to a GPU.

Examples
--------
>>> import numpy as np
>>> (b,) = wrap_arrays("readers.X", [(np.zeros(2, np.int16),)], ["a"], True, CPU)
>>> str(b.dtype), b._sources
('i16', ['a'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import handoff as _ho
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU, Device
from headrace._core.errors import InvalidArgumentError
from headrace._core.tensor import Tensor


def output_device(op: str, device: Any) -> Device:
    """The device a reader's outputs go to: ``"cpu"`` or ``"gpu"`` (read on the host, uploaded)."""
    dev = device if isinstance(device, Device) else Device(str(device))
    if dev.device_type not in ("cpu", "gpu"):
        raise InvalidArgumentError(f"Invalid device {device!r} for {op}: 'cpu' or 'gpu'.")
    return dev


def shuffle_seed(kwargs: dict[str, Any], shuffle_after_epoch: Any, seed: Any) -> None:
    """Use ``shuffle_after_epoch_seed`` as the reader's seed when it shuffles after every epoch
    and no ``seed`` is given (without either, the base class picks a fixed seed)."""
    if shuffle_after_epoch and seed is not None and kwargs.get("seed") is None:
        kwargs["seed"] = seed


def wrap_arrays(
    op: str,
    samples: Sequence[tuple[np.ndarray, ...]],
    sources: Sequence[str | None],
    batch: bool,
    device: Device,
) -> tuple[Any, ...]:
    """Tensors (``batch=False``: the one sample) or Batches of each output, typed by the
    arrays; every sample of an output must share its element type and number of dimensions."""
    out: list[Any] = []
    on_gpu = device.device_type != "cpu"
    for j in range(len(samples[0])):
        arrays = [s[j] for s in samples]
        first = arrays[0]
        for i, a in enumerate(arrays):
            if a.dtype != first.dtype or a.ndim != first.ndim:
                raise InvalidArgumentError(
                    f"{op}: all samples of a batch need the same element type and number of "
                    f"dimensions; {sources[0]!r} gives {first.dtype} {first.ndim}-D, "
                    f"{sources[i]!r} gives {a.dtype} {a.ndim}-D."
                )
        dt = _dt.from_numpy(first.dtype)
        ready = None
        if on_gpu:  # uploaded on this thread's current stream: consumers on theirs wait for it
            arrays = [_st.move(a, device, dt) for a in arrays]
            ready = _ho.mark(arrays[0])
        if not batch:
            t = Tensor._wrap(arrays[0], dt, None, device if on_gpu else CPU, ready=ready)
            t._source = sources[0]
            out.append(t)
        else:
            b = Batch._wrap(arrays, dt, None, device if on_gpu else CPU, ready=ready)
            b._sources = sources  # (immutable: shared by the outputs)
            out.append(b)
    return tuple(out)


__all__ = ["output_device", "shuffle_seed", "wrap_arrays"]
