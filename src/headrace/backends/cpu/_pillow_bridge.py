"""Pillow's resampler on numpy images without per-sample Python copies.

``Image.fromarray`` and ``np.asarray(image)`` copy every pixel while holding the GIL (Pillow's
raw decoder and encoder); at ~0.2 ms per 500x375 image that capped a thread pool near 2k img/s.
Here the pixels cross the boundary without copies:

* **in**: Pillow stores 8-bit colour as 4 bytes per pixel, so the image is converted to RGBA
  with OpenCV (which releases the GIL) and *mapped* by ``Image.core.map_buffer`` (zero-copy,
  the numpy array stays alive as the image's buffer);
* **resample**: the C resampler (``ImagingCore.resize``) releases the GIL for both passes;
* **out**: the result is read through Pillow's Arrow C data export (Pillow >= 11.2) as a
  numpy view of Pillow's own buffer, kept alive by the view, and turned into a contiguous
  ``HWC`` array by one OpenCV conversion. Images Pillow cannot export in one block (multi-block
  images above its 16 MiB block size) take ``tobytes``.

The result is bit-identical to ``Image.fromarray(x).resize(size, filter, box=box)`` (tested).

Examples
--------
>>> import numpy as np
>>> x = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
>>> pillow_resize(x, (2, 3), 2, (0.0, 0.0, 6.0, 4.0)).shape
(2, 3, 3)
"""

from __future__ import annotations

import ctypes

import cv2
import numpy as np
from PIL import Image

__all__ = ["pillow_resize"]

_core = Image.core
# channels -> (Pillow mode mapped onto a 4-byte (or 1-byte) buffer, conversion into it)
_MAP_MODES = {1: ("L", None), 3: ("RGB", cv2.COLOR_RGB2RGBA), 4: ("RGBX", None)}


class _ArrowArray(ctypes.Structure):
    pass


# the Arrow C data interface (a stable ABI): struct ArrowArray
_ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(_ArrowArray))),
    ("dictionary", ctypes.c_void_p),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Buffer:
    """Exposes Pillow's exported pixels to numpy; owns the capsule (its destructor releases
    the export, which frees Pillow's image once no view is left)."""

    __slots__ = ("__array_interface__", "_capsule")


def _export(im: object, channels: int) -> np.ndarray | None:
    """A view of the pixels of the ``ImagingCore`` ``im`` (``H x W`` or ``H x W x 4``)."""
    try:
        capsule = im.__arrow_c_array__()  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # old Pillow, or an image of several blocks
        return None
    arr = _ArrowArray.from_address(_capsule_pointer(capsule, b"arrow_array"))
    w, h = im.size  # type: ignore[attr-defined]
    if arr.offset != 0 or arr.length != w * h:
        return None
    if channels == 1:
        if arr.n_buffers != 2:
            return None
        ptr, shape = arr.buffers[1], (h, w)
    else:
        if arr.n_children != 1:
            return None
        child = arr.children[0].contents
        if child.offset != 0 or child.length != 4 * w * h or child.n_buffers != 2:
            return None
        ptr, shape = child.buffers[1], (h, w, 4)
    if not ptr:
        return None
    buf = _Buffer()
    buf.__array_interface__ = {"data": (ptr, False), "shape": shape, "typestr": "|u1",
                               "version": 3}  # fmt: skip
    buf._capsule = capsule
    return np.asarray(buf)


def _from_pillow(im: object, channels: int) -> np.ndarray:
    view = _export(im, channels)
    if view is None:  # fallback: a copy through Pillow's encoder
        pil = Image.new(im.mode, im.size)  # type: ignore[attr-defined]
        pil.im = im  # type: ignore[assignment]
        view = np.asarray(pil)
        if channels == 3:
            return view
    if channels == 1:
        return view[..., None]
    if channels == 3:
        return cv2.cvtColor(view, cv2.COLOR_RGBA2RGB)
    return view


def pillow_resize(
    x: np.ndarray,
    size: tuple[int, int],
    resample: int,
    box: tuple[float, float, float, float],
) -> np.ndarray:
    """``x`` (uint8 ``HxWxC``, C in 1, 3, 4) resampled by Pillow to ``size = (H, W)``.

    ``resample`` is a ``PIL.Image.Resampling`` filter and ``box = (x0, y0, x1, y1)`` the input
    region, as in ``Image.resize``. 4-channel images are resampled band by band (no alpha
    premultiplication). The result is C-contiguous ``HxWxC`` uint8.
    """
    c = x.shape[-1]
    mode, conversion = _MAP_MODES[c]
    src = x[..., 0] if c == 1 else x
    src = cv2.cvtColor(src, conversion) if conversion is not None else np.ascontiguousarray(src)
    h, w = src.shape[:2]
    im = _core.map_buffer(src, (w, h), "raw", 0, (mode, 0, 1))
    out = im.resize((int(size[1]), int(size[0])), resample, box)
    return _from_pillow(out, c)
