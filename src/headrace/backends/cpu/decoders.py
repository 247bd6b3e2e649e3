"""CPU decoder kernels: image decoding (with optional per-sample windows), ``.npy`` decoding,
decompression, header peeking and whole-file reads.

``image``, ``numpy`` and ``inflate`` are host kernels of :mod:`headrace.backends.shared.host` (the
torch backend runs them too, then uploads); the decoders' arguments, windows and error policy
come from the ops layer (:mod:`headrace.decoders`).

Examples
--------
>>> import headrace as ndd
>>> from headrace._dispatch.schema import REGISTRY
>>> REGISTRY["decoders.image_crop"].kernel, REGISTRY["io.file.read"].kernel
('image', 'file_read')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace import codecs
from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.host import image, inflate, numpy


def peek_image_shape(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> tuple[Batch]:
    """The ``(H, W, C)`` of every encoded sample, read from its header."""
    samples = ins[0]._samples
    assert samples is not None
    dt = v["dtype"] or _dt.int64
    kw: dict[str, Any] = {"adjust_orientation": v["adjust_orientation"], "op": kc.name}
    if v["image_type"] is not None:
        kw["output_type"] = v["image_type"]
    outs = kc.map(lambda i: np.asarray(codecs.peek_shape(samples[i], **kw), dtype=dt.numpy))
    return (Batch._wrap(outs, dt, None, kc.device),)


def file_read(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> tuple[Batch]:
    """The bytes of the files named by UTF-8 encoded paths; the paths become the sources."""
    samples = ins[0]._samples
    assert samples is not None
    paths = [bytes(np.asarray(s, dtype=np.uint8)).decode("utf-8") for s in samples]

    def one(i: int) -> np.ndarray:
        try:
            return np.fromfile(paths[i], dtype=np.uint8)
        except OSError as e:
            raise FileNotFoundError(f"io.file.read: cannot read {paths[i]!r}: {e}") from None

    out = Batch._wrap(kc.map(one), _dt.uint8, None, kc.device)
    out._sources = paths
    return (out,)


__all__ = ["file_read", "image", "inflate", "numpy", "peek_image_shape"]
