"""Decoding of PNG, TIFF, BMP, WebP, GIF, PNM and JPEG 2000 through OpenCV's ``imdecode``.

``cv2.imdecode`` releases the GIL. Pixels come back at the file's bit depth (8 or 16) and in
the file's channels, in OpenCV's BGR(A) order. EXIF orientation is left to the caller,
except for TIFF, whose orientation tag OpenCV always applies.
"""

from __future__ import annotations

import cv2
import numpy as np

from headrace.types import DALIImageType

__all__ = ["decode_opencv"]

_GRAY_FLAGS = cv2.IMREAD_GRAYSCALE | cv2.IMREAD_ANYDEPTH | cv2.IMREAD_IGNORE_ORIENTATION
_LAYOUTS = {1: "GRAY", 3: "BGR", 4: "BGRA"}


def decode_opencv(buf: np.ndarray, fmt: str, output_type: DALIImageType) -> tuple[np.ndarray, str]:
    """Decode a non-JPEG image with OpenCV.

    Parameters
    ----------
    buf : numpy.ndarray
        The encoded stream (1-D ``uint8``).
    fmt : str
        Its format, from :func:`headrace.codecs.headers.detect_format`.
    output_type : DALIImageType
        The colour space the caller will convert to. For ``GRAY`` the codec's own gray
        conversion is used (libpng's for PNG, as the reference does), except for TIFF, whose
        gray the reference computes from RGB.

    Returns
    -------
    tuple[numpy.ndarray, str]
        ``HxWxC`` ``uint8``/``uint16`` pixels (unoriented) and their layout: ``"GRAY"``,
        ``"BGR"`` or ``"BGRA"``.

    Raises
    ------
    ValueError
        OpenCV could not decode the stream, or it holds an unsupported sample type.

    Examples
    --------
    >>> png = cv2.imencode(".png", np.zeros((4, 6, 3), np.uint8))[1]
    >>> img, layout = decode_opencv(png, "png", DALIImageType.RGB)
    >>> img.shape, layout
    ((4, 6, 3), 'BGR')
    """
    gray = output_type == DALIImageType.GRAY and fmt != "tiff"
    img = cv2.imdecode(buf, _GRAY_FLAGS if gray else cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ValueError(f"OpenCV could not decode the {fmt} stream (corrupt or truncated data).")
    if img.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"unsupported {fmt} sample type {img.dtype} (only 8 and 16 bit).")
    if img.ndim == 2:
        img = img[..., None]
    layout = _LAYOUTS.get(img.shape[2])
    if layout is None:
        raise ValueError(f"unsupported {fmt} channel count {img.shape[2]}.")
    return img, layout
