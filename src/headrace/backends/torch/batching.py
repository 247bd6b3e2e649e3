"""Helpers for whole-batch torch kernels (``<kernel>_batched``): find or make one tensor that
holds every sample, and give per-sample outputs back as views of one result.

* :func:`dense_base` recognises samples that are consecutive views of one ``(N, ...)`` tensor
  (what dense batches hold), so a kernel can work on that tensor with no copy;
* :func:`flat_pixels` concatenates samples of any shapes into one ``(pixels, channels)`` tensor
  (one ``cat`` kernel) with each pixel's sample index on the device, for per-pixel maths whose
  parameters differ per sample;
* :func:`unflatten` cuts such a result back into samples (views).

Examples
--------
>>> x = torch.arange(12).reshape(2, 3, 2)
>>> d = dense_base(list(x.unbind(0)))
>>> torch.equal(d, x), d.data_ptr() == x.data_ptr()
(True, True)
>>> flat, sid = flat_pixels([torch.zeros(2, 2, 3), torch.ones(1, 1, 3)])
>>> tuple(flat.shape), sid.tolist()
((5, 3), [0, 0, 0, 0, 1])
>>> [tuple(s.shape) for s in unflatten(flat, [(2, 2, 3), (1, 1, 3)])]
[(2, 2, 3), (1, 1, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from headrace.backends.torch.transfer import upload


def dense_base(samples: Sequence[torch.Tensor]) -> torch.Tensor | None:
    """One ``(N, ...)`` view of ``samples`` when they lie at equal steps in one storage (as the
    samples of a dense batch do), else ``None``."""
    first = samples[0]
    n = len(samples)
    if n < 2:
        return None
    ptr, size = first.untyped_storage().data_ptr(), first.element_size()
    step = (samples[1].data_ptr() - first.data_ptr()) // size
    if step < first.numel():
        return None  # overlapping or out-of-order samples
    for i, s in enumerate(samples):
        if (s.untyped_storage().data_ptr() != ptr or s.shape != first.shape
                or s.stride() != first.stride() or s.dtype != first.dtype
                or s.data_ptr() != first.data_ptr() + i * step * size):  # fmt: skip
            return None
    if not first.is_contiguous():
        return None
    return first.as_strided((n, *first.shape), (step, *first.stride()), first.storage_offset())


def stacked(samples: Sequence[torch.Tensor]) -> torch.Tensor | None:
    """All samples as one ``(N, ...)`` tensor (no copy when they already are), or ``None`` when
    their shapes differ."""
    base = dense_base(samples)
    if base is not None:
        return base
    shape = samples[0].shape
    if any(s.shape != shape for s in samples[1:]):
        return None
    return torch.stack(list(samples))


def flat_pixels(samples: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(pixels, channels)`` concatenation of channels-last samples, and each row's sample."""
    c = samples[0].shape[-1]
    counts = np.array([s.numel() // c for s in samples], np.int64)
    flat = torch.cat([s.reshape(-1, c) for s in samples])
    ids = upload(np.arange(len(samples), dtype=np.int64), flat.device)
    sid = torch.repeat_interleave(ids, upload(counts, flat.device), output_size=int(counts.sum()))
    return flat, sid


def unflatten(flat: torch.Tensor, shapes: Sequence[Sequence[int]]) -> list[torch.Tensor]:
    """Cut the rows of ``flat`` back into samples of ``shapes`` (views)."""
    c = flat.shape[-1]
    sizes = [int(np.prod(s[:-1], dtype=np.int64)) for s in shapes]
    return [p.view(*s[:-1], c) for p, s in zip(torch.split(flat, sizes), shapes)]


__all__ = ["dense_base", "flat_pixels", "stacked", "unflatten"]
