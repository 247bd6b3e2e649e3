"""Pixel kernels computed with OpenCV on the host for every backend: ``clahe``, ``debayer``
and ``jpeg_compression_distortion``.

They are the CPU kernels (``backends/cpu/image.py`` re-exports them); the torch backend runs
them on the host copy of each sample and uploads the result, so both devices give the same
pixels (exactly the reference's CPU results: the same OpenCV calls).

Examples
--------
>>> debayer(np.full((2, 2), 9, np.uint8), "HW", pattern="BG", algorithm="bilinear").shape
(2, 2, 3)
"""

from __future__ import annotations

import cv2
import numpy as np

from headrace.codecs.jpeg import round_trip_jpeg


def clahe(x: np.ndarray, layout: str | None, *, clip_limit: float, tiles: tuple[int, int],
          luma: bool) -> np.ndarray:  # fmt: skip
    """OpenCV's CLAHE; RGB with ``luma``: on the L channel of CIE Lab.

    Examples
    --------
    >>> x = np.full((8, 8, 1), 7, np.uint8)
    >>> clahe(x, "HWC", clip_limit=2.0, tiles=(2, 2), luma=False).shape
    (8, 8, 1)
    """
    if x.size == 0:
        return x.copy()
    op = cv2.createCLAHE(clipLimit=clip_limit, tileGridSize=tiles)
    if luma:
        lab = cv2.cvtColor(np.ascontiguousarray(x), cv2.COLOR_RGB2Lab)
        lab[..., 0] = op.apply(np.ascontiguousarray(lab[..., 0]))
        return cv2.cvtColor(lab, cv2.COLOR_Lab2RGB)
    if x.ndim == 2:
        return op.apply(np.ascontiguousarray(x))
    chans = [op.apply(np.ascontiguousarray(x[..., c])) for c in range(x.shape[2])]
    return np.stack(chans, axis=-1)


_BAYER_SUFFIX = {"bilinear": "2RGB", "edgeaware": "2RGB_EA", "vng": "2RGB_VNG", "gray": "2GRAY"}


def debayer(x: np.ndarray, layout: str | None, *, pattern: str, algorithm: str) -> np.ndarray:
    """OpenCV's demosaicing of a ``HW``/``HWC``/``FHW``/``FHWC`` one-channel mosaic.

    Examples
    --------
    >>> debayer(np.full((2, 2), 9, np.uint8), "HW", pattern="BG", algorithm="bilinear").shape
    (2, 2, 3)
    """
    code = getattr(cv2, f"COLOR_Bayer{pattern}{_BAYER_SUFFIX[algorithm]}")
    frames = layout is not None and layout.startswith("F")
    imgs = x if frames else x[None]
    out = []
    for img in imgs:
        m = np.ascontiguousarray(img.reshape(img.shape[0], img.shape[1]))
        o = cv2.cvtColor(m, code)
        out.append(o.reshape(*o.shape[:2], -1))
    res = np.stack(out) if out else np.zeros((0, *x.shape[1:3], 3), x.dtype)
    return res if frames else res[0]


def jpeg_compression_distortion(x: np.ndarray, layout: str | None, *, quality: int) -> np.ndarray:
    """A JPEG round trip of every RGB image (frame) at ``quality``.

    Examples
    --------
    >>> x = np.full((8, 8, 3), 200, np.uint8)
    >>> int(jpeg_compression_distortion(x, "HWC", quality=90)[0, 0, 0])
    200
    """
    if x.size == 0:
        return x.copy()
    if x.ndim == 4:
        return np.stack([round_trip_jpeg(f, quality) for f in x])
    return round_trip_jpeg(x, quality)


__all__ = ["clahe", "debayer", "jpeg_compression_distortion"]
