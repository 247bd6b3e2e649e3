"""Pixel conversions applied after decoding, with the reference decoder's arithmetic.

* Type conversion normalises to the dynamic range of the target type: ``uint16 -> uint8``
  is ``round(v / 257)``, ``uint8 -> uint16`` is ``v * 257``, floats are ``v / max``.
* Colour conversion runs in float32 on the decoded values (8 or 16 bit) with the range
  scaling folded into the coefficients, and rounds half up (the reference's saturating
  conversion, :func:`headrace._core.saturate.saturate`): YCbCr is ITU-R BT.601 *studio*
  range (Y in 16..235, Cb/Cr in 16..240 for ``uint8``) and a gray image becomes
  ``(g * 219/255 + 16, 128, 128)``. Gray that a codec computes itself (TIFF, CMYK JPEG) is
  ``0.299 R + 0.587 G + 0.114 B`` at the file's depth, scaled to the output type afterwards.
* EXIF orientation and region of interest are numpy views, so the one copy is made by
  whichever conversion runs last (see :func:`finish`).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from headrace._core.saturate import saturate

__all__ = [
    "SUPPORTED_DTYPES",
    "cmyk_to_rgb",
    "finish",
    "gray_to_ycbcr",
    "inverse_orientation",
    "normalize_dtype",
    "orient",
    "rgb_to_gray",
    "rgb_to_ycbcr",
    "YCBCR_COEFFS",
]

#: Output element types :func:`normalize_dtype` (and so ``decode``) supports.
SUPPORTED_DTYPES: Final = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))

_F32 = np.float32
# ITU-R BT.601 studio-range rows (Y, Cb, Cr) for RGB in the output type's full range; the
# offsets are fractions of 2**bits (16/256 and 128/256 for uint8).
_YCBCR_ROWS: Final = (
    ((_F32(0.25678823529), _F32(0.50412941176), _F32(0.09790588235)), 0.0625),
    ((_F32(-0.14822289945), _F32(-0.29099278682), _F32(0.43921568627)), 0.5),
    ((_F32(0.43921568627), _F32(-0.36778831435), _F32(-0.07142737192)), 0.5),
)
#: The (Y, Cb, Cr) coefficient rows alone: the colour operators' kernels use the same values.
YCBCR_COEFFS: Final = tuple(row for row, _ in _YCBCR_ROWS)
_GRAY_ROW: Final = (_F32(0.299), _F32(0.587), _F32(0.114))


def orient(img: np.ndarray, orientation: int) -> np.ndarray:
    """Return a view of an ``HWC`` image with an EXIF orientation (1-8) applied.

    Examples
    --------
    >>> a = np.arange(6).reshape(2, 3, 1)
    >>> orient(a, 6)[..., 0].tolist()  # rotate 90 degrees clockwise
    [[3, 0], [4, 1], [5, 2]]
    """
    if orientation == 2:
        return img[:, ::-1]
    if orientation == 3:
        return img[::-1, ::-1]
    if orientation == 4:
        return img[::-1]
    if orientation >= 5:
        t = img.swapaxes(0, 1)
        if orientation == 6:
            return t[:, ::-1]
        if orientation == 7:
            return t[::-1, ::-1]
        if orientation == 8:
            return t[::-1]
        return t
    return img


def inverse_orientation(orientation: int) -> int:
    """The EXIF orientation that undoes ``orientation`` (the two 90-degree turns swap).

    Examples
    --------
    >>> [inverse_orientation(k) for k in range(1, 9)]
    [1, 2, 3, 4, 5, 8, 7, 6]
    """
    return {6: 8, 8: 6}.get(orientation, orientation)


def normalize_dtype(img: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Convert to ``dtype``, scaling to its dynamic range (may return ``img`` itself).

    Examples
    --------
    >>> normalize_dtype(np.array([0, 32896, 65535], np.uint16), np.dtype(np.uint8)).tolist()
    [0, 128, 255]
    """
    src = img.dtype
    if src == dtype:
        return img
    if dtype == np.float32:
        return img.astype(np.float32) / _F32(np.iinfo(src).max)
    if src == np.uint8 and dtype == np.uint16:
        return img.astype(np.uint16) * np.uint16(257)
    if src == np.uint16 and dtype == np.uint8:
        return ((img.astype(np.uint32) + 128) // 257).astype(np.uint8)
    raise TypeError(f"cannot convert {src} pixels to {dtype}")


def _max(dtype: np.dtype) -> float:
    return 1.0 if dtype == np.float32 else float(np.iinfo(dtype).max)


def _scale(src: np.dtype, dst: np.dtype) -> np.float32:
    """Factor from the dynamic range of ``src`` to that of ``dst``."""
    return _F32(_max(dst) / _max(src))


def _bias(dtype: np.dtype, fraction: float) -> np.float32:
    return _F32(fraction if dtype == np.float32 else fraction * (np.iinfo(dtype).max + 1))


def _dot(row: tuple[np.float32, ...], planes: tuple[np.ndarray, ...], scale: np.float32):
    r, g, b = (p.astype(np.float32) for p in planes)
    acc = r * (row[0] * scale)
    acc += g * (row[1] * scale)
    acc += b * (row[2] * scale)
    return acc


def rgb_to_gray(planes: tuple[np.ndarray, ...], *, floor: bool = False) -> np.ndarray:
    """Gray (full range) from R, G, B planes of one type; returns ``HxWx1`` of that type.

    This is the gray a codec computes at the file's bit depth (TIFF, CMYK JPEG); the caller
    scales it to the output type afterwards. ``floor=True`` truncates instead of rounding
    (what the reference does for CMYK JPEGs).

    Examples
    --------
    >>> px = [np.full((1, 1), v, np.uint8) for v in (255, 0, 0)]
    >>> rgb_to_gray(tuple(px))[0, 0, 0]
    np.uint8(76)
    """
    dtype = planes[0].dtype
    y = _dot(_GRAY_ROW, planes, _F32(1))
    if floor and dtype != np.float32:
        np.floor(y, out=y)
    return saturate(y, dtype, overwrite=True)[..., None]


def rgb_to_ycbcr(planes: tuple[np.ndarray, ...], dtype: np.dtype) -> np.ndarray:
    """BT.601 studio-range YCbCr of ``dtype`` from R, G, B planes; returns ``HxWx3``.

    The planes keep the file's bit depth; the conversion to ``dtype`` is folded into the
    coefficients, as the reference does.

    Examples
    --------
    >>> px = [np.full((1, 1), 255, np.uint8)] * 3
    >>> rgb_to_ycbcr(tuple(px), np.dtype(np.uint8))[0, 0].tolist()
    [235, 128, 128]
    """
    scale = _scale(planes[0].dtype, dtype)
    out = np.empty((*planes[0].shape, 3), dtype)
    for c, (row, offset) in enumerate(_YCBCR_ROWS):
        v = _dot(row, planes, scale)
        v += _bias(dtype, offset)
        out[..., c] = saturate(v, dtype, overwrite=True)
    return out


def gray_to_ycbcr(gray: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """BT.601 studio-range YCbCr of ``dtype`` from an ``HxWx1`` gray image (chroma mid-range).

    Examples
    --------
    >>> gray_to_ycbcr(np.array([[[0], [255]]], np.uint8), np.dtype(np.uint8))[0].tolist()
    [[16, 128, 128], [235, 128, 128]]
    """
    scale = _F32(_F32(219) * _scale(gray.dtype, dtype)) / _F32(255)
    y = gray[..., 0].astype(np.float32) * scale
    y += _bias(dtype, 0.0625)
    out = np.empty((*gray.shape[:2], 3), dtype)
    out[..., 0] = saturate(y, dtype, overwrite=True)
    out[..., 1:] = 0.5 if dtype == np.float32 else (np.iinfo(dtype).max + 1) // 2
    return out


def cmyk_to_rgb(cmyk: np.ndarray) -> tuple[np.ndarray, ...]:
    """R, G, B planes (``uint8``) of an Adobe (inverted) CMYK image: ``C * K // 255``.

    Examples
    --------
    >>> [p[0, 0] for p in cmyk_to_rgb(np.array([[[255, 128, 0, 255]]], np.uint8))]
    [np.uint8(255), np.uint8(128), np.uint8(0)]
    """
    k = cmyk[..., 3].astype(np.uint16)
    return tuple(((cmyk[..., c] * k) // 255).astype(np.uint8) for c in range(3))


def finish(img: np.ndarray) -> np.ndarray:
    """Make the final copy of a view (no-op when ``img`` already is a C-contiguous array)."""
    return np.ascontiguousarray(img)
