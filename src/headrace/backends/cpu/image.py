"""CPU image kernels (OpenCV): ``clahe``, ``equalize``, ``debayer``, ``filter``,
``jpeg_compression_distortion``.

Plans come from :mod:`headrace.ops._image_params`. Against DALI 2.4 (CPU): ``equalize``,
``clahe``, ``debayer`` and ``jpeg_compression_distortion`` are exact (the same OpenCV calls);
``filter`` is exact on integer outputs and within 2e-4 on float32 (summation order).

``clahe``, ``debayer`` and ``jpeg_compression_distortion`` are the host pixel kernels of
:mod:`headrace.backends.shared.host_pixels` (the torch backend runs them too, then uploads).

Examples
--------
>>> x = np.array([[10, 20], [20, 30]], np.uint8)
>>> equalize(x, "HW", perm=(0, 1)).tolist()
[[0, 170], [170, 255]]
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from headrace._core.saturate import saturate
from headrace.backends.shared.common import equalize_lut, padded_indices
from headrace.backends.shared.host_pixels import clahe, debayer, jpeg_compression_distortion


def to_planes(x: np.ndarray, perm: tuple[int, ...], layout: str | None) -> np.ndarray:
    """``x`` as ``(frames, channels, H, W)`` (a view when possible)."""
    v = np.transpose(x, perm)
    lead = 1 if layout and "F" in layout else 0
    f = v.shape[0] if lead else 1
    return v.reshape(f, int(np.prod(v.shape[lead:-2])), *v.shape[-2:])


def from_planes(v: np.ndarray, perm: tuple[int, ...], shape: Sequence[int]) -> np.ndarray:
    """Undo :func:`to_planes` for planes of (possibly new) height and width."""
    t = [shape[p] for p in perm]
    t[-2:] = v.shape[-2:]
    return np.ascontiguousarray(np.transpose(v.reshape(t), np.argsort(perm)))


def equalize(x: np.ndarray, layout: str | None, *, perm: tuple[int, ...]) -> np.ndarray:
    """OpenCV's ``equalizeHist`` on every channel of every frame.

    Examples
    --------
    >>> equalize(np.array([[5, 5], [9, 9]], np.uint8), "HW", perm=(0, 1)).tolist()
    [[0, 0], [255, 255]]
    """
    p = to_planes(x, perm, layout)
    out = np.empty(p.shape, np.uint8)
    for f in range(p.shape[0]):
        for c in range(p.shape[1]):
            plane = p[f, c]
            if plane.size:
                out[f, c] = equalize_lut(np.bincount(plane.ravel(), minlength=256))[plane]
    return from_planes(out, perm, x.shape)


def pad_plane(v: np.ndarray, pads: tuple[int, int, int, int], border: str,
              fill: float) -> np.ndarray:  # fmt: skip
    """Pad the last two axes of ``v`` by ``(top, bottom, left, right)`` with ``border``."""
    top, bottom, left, right = pads
    if not any(pads):
        return v
    if border == "constant":
        width = [(0, 0)] * (v.ndim - 2) + [(top, bottom), (left, right)]
        return np.pad(v, width, constant_values=fill)
    iy = padded_indices(v.shape[-2], top, bottom, border)
    ix = padded_indices(v.shape[-1], left, right, border)
    return v[..., iy[:, None], ix[None, :]]


def filter(
    x: np.ndarray,
    layout: str | None,
    *,
    perm: tuple[int, ...],
    kernels: Sequence[np.ndarray],
    pads: tuple[int, int, int, int],
    border: str,
    fill: float,
    dtype: np.dtype,
) -> np.ndarray:
    """Correlate every plane with its frame's filter (float32), then convert to ``dtype``.

    Examples
    --------
    >>> x = np.arange(5, dtype=np.float32).reshape(1, 5)
    >>> k = np.array([[0.0, 0.0, 1.0]], np.float32)
    >>> filter(x, "HW", perm=(0, 1), kernels=[k], pads=(0, 0, 1, 1), border="replicate",
    ...        fill=0.0, dtype=np.dtype("float32")).tolist()
    [[1.0, 2.0, 3.0, 4.0, 4.0]]
    """
    p = to_planes(x, perm, layout).astype(np.float32)
    kh, kw = kernels[0].shape
    f, c, h, w = p.shape
    ho, wo = h + pads[0] + pads[1] - kh + 1, w + pads[2] + pads[3] - kw + 1
    out = np.zeros((f, c, ho, wo), np.float32)
    if p.size and ho > 0 and wo > 0:
        padded = pad_plane(p, pads, border, fill)
        for i in range(f):
            k = kernels[i if len(kernels) > 1 else 0]
            img = np.ascontiguousarray(np.moveaxis(padded[i], 0, -1))  # HWC for OpenCV
            r = cv2.filter2D(img, cv2.CV_32F, k, anchor=(0, 0), borderType=cv2.BORDER_CONSTANT)
            r = r.reshape(*r.shape[:2], c)[:ho, :wo]
            out[i] = np.moveaxis(r, -1, 0)
    return from_planes(saturate(out, dtype, overwrite=True), perm, x.shape)


__all__ = ["clahe", "debayer", "equalize", "filter", "from_planes", "jpeg_compression_distortion",
           "pad_plane", "to_planes"]  # fmt: skip
