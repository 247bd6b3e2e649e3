"""Decoding of PNG, TIFF, BMP, WebP, GIF, PNM and JPEG 2000 through OpenCV's ``imdecode``.

``cv2.imdecode`` releases the GIL. Pixels come back at the file's bit depth (8 or 16) and in
the file's channels, in OpenCV's BGR(A) order. EXIF orientation is left to the caller,
except for TIFF, whose orientation tag OpenCV always applies.

8-bit TIFFs with alpha go through Pillow instead where OpenCV's libtiff RGBA interface differs
from the reference, which reads the stored samples: that interface premultiplies colour by an
unassociated alpha, and drops the alpha of gray + alpha. OpenCV keeps an RGB file with
unassociated alpha and an orientation tag when the caller applies the orientation (the reference
decodes those premultiplied too); a 16-bit file keeps OpenCV's exact 16-bit samples.
"""

from __future__ import annotations

import io

import cv2
import numpy as np

from headrace.codecs import convert
from headrace.codecs.headers import tiff_samples
from headrace.types import DALIImageType

__all__ = ["decode_opencv"]

_GRAY_FLAGS = cv2.IMREAD_GRAYSCALE | cv2.IMREAD_ANYDEPTH | cv2.IMREAD_IGNORE_ORIENTATION
_LAYOUTS = {1: "GRAY", 3: "BGR", 4: "BGRA"}
_UNASSOCIATED_ALPHA = 2
_ORIENTATION_TAG = 0x0112
# Pillow's modes for the TIFFs it decodes here: stored samples, RGB order (La: associated alpha)
_PIL_MODES = {"RGBA": ("RGBA",), "GA": ("LA", "La")}


def decode_opencv(
    buf: np.ndarray, fmt: str, output_type: DALIImageType, *, adjust_orientation: bool = True
) -> tuple[np.ndarray, str]:
    """Decode a non-JPEG image with OpenCV (an 8-bit TIFF with alpha: with Pillow).

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
    adjust_orientation : bool
        Whether the caller wants the TIFF orientation applied (the pixels come back oriented
        either way): an 8-bit RGB TIFF with unassociated alpha and an orientation other than 1
        is decoded premultiplied, as the reference does, only when it is true.

    Returns
    -------
    tuple[numpy.ndarray, str]
        ``HxWxC`` ``uint8``/``uint16`` pixels (unoriented, but for TIFF) and their layout:
        ``"GRAY"``, ``"BGR"``, ``"BGRA"``, or, for an 8-bit TIFF with alpha, ``"RGBA"`` (the
        stored colour, not premultiplied) and ``"GA"`` (gray + alpha, with ``ANY_DATA``; the
        gray alone, ``"GRAY"``, otherwise).

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
    if fmt == "tiff":
        decoded = _tiff_with_alpha(buf, output_type, adjust_orientation)
        if decoded is not None:
            return decoded
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


def _tiff_with_alpha(
    buf: np.ndarray, output_type: DALIImageType, adjust_orientation: bool
) -> tuple[np.ndarray, str] | None:
    """An 8-bit gray + alpha (associated or not) or RGB + unassociated alpha TIFF with
    interleaved samples decoded by Pillow, oriented as OpenCV would; ``None`` for any other
    TIFF, and where Pillow cannot decode the file (OpenCV then decodes it or reports the
    error, as for every TIFF)."""
    s = tiff_samples(buf)
    if s is None or s.bits != 8 or s.extra is None or s.planar != 1:
        return None  # (planes apart: the reference premultiplies, as OpenCV does)
    if s.photometric == 1 and s.samples == 2 and s.extra in (1, _UNASSOCIATED_ALPHA):
        layout = "GA"
    elif s.photometric == 2 and s.samples == 4 and s.extra == _UNASSOCIATED_ALPHA:
        if s.orientation != 1 and adjust_orientation:
            return None  # the reference's oriented decode premultiplies, as OpenCV does
        layout = "RGBA"
    else:
        return None
    from PIL import Image  # lazy: only these files need it

    try:
        with Image.open(io.BytesIO(buf)) as im:
            if im.mode not in _PIL_MODES[layout]:
                return None
            im.load()  # (Pillow releases the GIL while it decodes)
            # Pillow >= 13 applies the orientation itself, and then drops the tag
            oriented = _ORIENTATION_TAG not in im.tag_v2
            img = np.array(im)  # writable (asarray: a read-only view)
    except Exception:  # corrupt, truncated or unsupported: OpenCV's path and errors apply
        return None
    if not oriented:
        img = convert.orient(img, s.orientation)  # as OpenCV does for every TIFF
    if layout == "GA" and output_type != DALIImageType.ANY_DATA:
        return img[..., :1], "GRAY"
    return img, layout
