"""Per-sample image decoding: the byte-level layer under ``decoders.image`` and friends.

``decode`` and ``peek_shape`` are pure, thread-safe functions of one encoded sample. JPEGs go
through libjpeg-turbo (``simplejpeg``), every other format through OpenCV (but 8-bit TIFFs with
alpha, through Pillow: see :mod:`headrace.codecs.opencv`); all release the GIL.
Results match the reference CPU decoder (see ``headrace.codecs.convert`` for the arithmetic):

========== ============================================================================
output     channels and values
========== ============================================================================
RGB, BGR   3; gray files replicated, alpha dropped (not composited), CMYK JPEGs as
           ``C * K // 255``
GRAY       1; JPEG luma straight from the codec, PNG/BMP/PNM/WebP/JPEG 2000 the codec's
           own gray, TIFF and CMYK ``0.299 R + 0.587 G + 0.114 B``
YCbCr      3; ITU-R BT.601 studio range computed from RGB
ANY_DATA   the file's channels (gray 1, gray+alpha 2, colour 3, with alpha 4, CMYK 4), RGB
           order; a palette is expanded to 3 channels
========== ============================================================================

16-bit PNG/TIFF/PNM are decoded at 16 bit and scaled to ``dtype`` (``round(v / 257)`` for
``uint8``), so ``dtype=np.uint16`` keeps the full precision. GIF and WebP-with-EXIF files,
which the reference cannot decode, are decoded too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace.codecs import convert
from headrace.codecs.headers import (
    ImageInfo,
    as_buffer,
    check_declared_size,
    check_png_chunks,
    detect_format,
    exif_orientation,
    probe,
    probe_known,
    unknown_format_error,
)
from headrace.codecs.jpeg import decode_jpeg
from headrace.codecs.jpeg_region import decode_region, region_decoding
from headrace.codecs.opencv import decode_opencv
from headrace.types import DALIDataType, DALIImageType, image_type

__all__ = ["decode", "peek_shape"]

_DALI_DTYPES = {
    DALIDataType.UINT8: np.uint8,
    DALIDataType.UINT16: np.uint16,
    DALIDataType.FLOAT: np.float32,
}
_WINDOW_WORTH = 1.0  # decode a JPEG window alone when it costs at most what a full decode does
_RGB_PLANES = {"RGB": (0, 1, 2), "RGBA": (0, 1, 2), "BGR": (2, 1, 0), "BGRA": (2, 1, 0)}


def decode(
    data: object,
    *,
    output_type: object = "RGB",
    adjust_orientation: bool = True,
    roi: Sequence[int] | None = None,
    dtype: object = np.uint8,
    use_fast_idct: bool = False,
    op: str = "decoders.image",
) -> np.ndarray:
    """Decode one encoded image to an ``HWC`` array.

    Parameters
    ----------
    data : bytes, memoryview or numpy.ndarray
        The encoded file (a 1-D ``uint8`` array is used without copying).
    output_type : DALIImageType, int or str
        ``RGB`` (default), ``BGR``, ``GRAY`` (1 channel), ``YCbCr`` or ``ANY_DATA`` (the
        file's own channels).
    adjust_orientation : bool
        Apply the EXIF orientation (JPEG, PNG, TIFF, WebP), swapping H and W for 5-8.
    roi : sequence of 4 int, optional
        ``(y, x, h, w)`` window in the coordinates of the oriented image. The result equals
        decoding the whole image and cropping it.
    dtype : numpy dtype or DALIDataType
        ``uint8`` (default), ``uint16`` or ``float32`` (values in ``[0, 1]``); values are
        scaled to the type's dynamic range.
    use_fast_idct : bool
        Use libjpeg-turbo's fast IDCT (JPEG only; less accurate).
    op : str
        Operator name used in error messages.

    Returns
    -------
    numpy.ndarray
        A C-contiguous ``HxWxC`` array of ``dtype``.

    Raises
    ------
    DecodeError
        The data is empty, not an image, corrupt or truncated.
    InvalidArgumentError
        A bad ``output_type``, ``dtype`` or ``roi``.

    Examples
    --------
    >>> import cv2
    >>> png = cv2.imencode(".png", np.full((4, 6, 3), (255, 0, 0), np.uint8))[1]  # BGR blue
    >>> img = decode(png)
    >>> img.shape, img[0, 0].tolist()
    ((4, 6, 3), [0, 0, 255])
    >>> decode(png, output_type="GRAY", roi=(1, 2, 2, 3)).shape
    (2, 3, 1)
    """
    buf = as_buffer(data)
    ot = _output_type(output_type, op)
    dt = _dtype(dtype, op)
    fmt = detect_format(buf)
    if fmt == "unknown":
        raise unknown_format_error(buf, op)
    try:
        info = probe_known(buf, fmt, op=op) if fmt == "jpeg" else None
        if roi is not None and info is not None and not use_fast_idct:
            window = _jpeg_window(buf, info, roi, ot, adjust_orientation)
            if window is not None:
                return _to_output(*window, ot, dt)
        img, layout, info = _decode_raw(buf, fmt, ot, use_fast_idct, op, info, adjust_orientation)
    except DecodeError:
        raise
    except Exception as exc:  # codec errors: ValueError from the backends, cv2.error, ...
        raise DecodeError(f"{op}: cannot decode sample: {exc}") from exc
    if fmt == "tiff":  # OpenCV applies the TIFF orientation tag itself
        if not adjust_orientation:
            img = convert.orient(img, convert.inverse_orientation(exif_orientation(buf, fmt)))
    elif adjust_orientation:
        orientation = info.orientation if info is not None else exif_orientation(buf, fmt)
        img = convert.orient(img, orientation)
    if roi is None:
        return _to_output(img, layout, ot, dt)
    out = _to_output(_crop(img, roi, op), layout, ot, dt)
    # A crop that happens to be contiguous (whole rows) is still a view: never pin the full image.
    base = out.base
    return out.copy() if isinstance(base, np.ndarray) and base.nbytes > out.nbytes else out


def peek_shape(
    data: object,
    *,
    output_type: object = "RGB",
    adjust_orientation: bool = True,
    op: str = "peek_image_shape",
) -> tuple[int, int, int]:
    """Shape ``(H, W, C)`` that :func:`decode` would return, read from the header only.

    Parameters
    ----------
    data : bytes, memoryview or numpy.ndarray
        The encoded file.
    output_type : DALIImageType, int or str
        Colour space of the decode the shape is for: 3 channels for ``RGB``/``BGR``/``YCbCr``,
        1 for ``GRAY``, the file's channels for ``ANY_DATA``.
    adjust_orientation : bool
        Swap H and W when the EXIF orientation transposes the image.
    op : str
        Operator name used in error messages.

    Returns
    -------
    tuple[int, int, int]

    Examples
    --------
    >>> import cv2
    >>> png = cv2.imencode(".png", np.zeros((4, 6), np.uint8))[1]
    >>> peek_shape(png), peek_shape(png, output_type="ANY_DATA")
    ((4, 6, 3), (4, 6, 1))
    """
    ot = _output_type(output_type, op)
    info = probe(data, op=op)
    h, w = info.height, info.width
    if adjust_orientation and info.swaps_axes:
        h, w = w, h
    if ot == DALIImageType.GRAY:
        c = 1
    elif ot == DALIImageType.ANY_DATA:
        c = info.channels
    else:
        c = 3
    return h, w, c


def _jpeg_window(
    buf: np.ndarray, info: ImageInfo, roi: Sequence[int], ot: DALIImageType,
    adjust_orientation: bool,
) -> tuple[np.ndarray, str] | None:  # fmt: skip
    """Only the window of a JPEG, when :mod:`headrace.codecs.jpeg_region` can decode it and
    the window is valid in stored coordinates (no orientation to apply); else None."""
    if not region_decoding():
        return None
    if info.channels not in (1, 3) or (adjust_orientation and info.orientation != 1):
        return None
    try:
        y, x, h, w = (int(v) for v in roi)
    except (TypeError, ValueError):
        return None
    height, width = info.height, info.width
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > height or x + w > width:
        return None
    # Cost against a full decode and crop (simplejpeg), measured on the sample images, one
    # thread, windows reaching the bottom: ~0.82 of it for the rows down to the window's bottom
    # (entropy decoding) + ~0.29 for the window's share of the pixels (area 1.0: 1167 against
    # 990 us; 0.6: 1025 / 1043; 0.36: 898 / 1041). The earlier estimate (0.87, 0.30, at most
    # 0.95) decoded whole images for such windows; the train pipeline did not measurably move.
    if 0.82 * (y + h) / height + 0.29 * (h * w) / (height * width) > _WINDOW_WORTH:
        return None
    gray = info.channels == 1 or ot == DALIImageType.GRAY
    img = decode_region(buf, (y, x, h, w), gray)
    return None if img is None else (img, "GRAY" if gray else "RGB")


def _decode_raw(
    buf: np.ndarray, fmt: str, ot: DALIImageType, fast_idct: bool, op: str,
    info: ImageInfo | None = None, adjust_orientation: bool = True,
) -> tuple[np.ndarray, str, ImageInfo | None]:  # fmt: skip
    """Decode unoriented pixels (TIFF: oriented); returns them, their layout and the header
    when it was read (``info``: the header, already read; ``adjust_orientation``: whether the
    caller applies the orientation, which picks the decode of some TIFFs with alpha)."""
    if fmt == "jpeg":
        info = info or probe_known(buf, fmt, op=op)
        img, layout = decode_jpeg(buf, info, ot, fast_idct=fast_idct)
        return img, layout, info
    info = probe_known(buf, fmt, op=op) if fmt == "png" else None
    if info is None:
        check_declared_size(buf, fmt, op=op)  # before the codec allocates anything
    else:
        check_png_chunks(buf, op=op)
    img, layout = decode_opencv(buf, fmt, ot, adjust_orientation=adjust_orientation)
    if ot == DALIImageType.ANY_DATA and layout == "BGRA":
        stored = info.channels if info is not None else (3 if fmt == "gif" else 4)
        if stored == 2:  # gray + alpha, expanded to BGRA by the codec
            img, layout = img[..., 0::3], "GA"
        elif stored == 3:  # palette or colour key (tRNS) turned into alpha by the codec
            img, layout = img[..., :3], "BGR"
    return img, layout, info


def _to_output(img: np.ndarray, layout: str, ot: DALIImageType, dt: np.dtype) -> np.ndarray:
    if ot == DALIImageType.ANY_DATA or (layout == "GRAY" and ot == DALIImageType.GRAY):
        if layout in ("BGR", "BGRA"):
            img = img[..., [2, 1, 0, 3][: img.shape[2]]]
        return convert.finish(convert.normalize_dtype(img, dt))
    if layout == "GRAY":
        if ot == DALIImageType.YCbCr:
            return convert.gray_to_ycbcr(img, dt)
        gray = convert.normalize_dtype(img, dt)
        return convert.finish(np.broadcast_to(gray, (*gray.shape[:2], 3)))
    if ot in (DALIImageType.RGB, DALIImageType.BGR) and layout != "CMYK":
        same = layout.startswith("RGB") == (ot == DALIImageType.RGB)
        img = img[..., :3] if same else img[..., 2::-1]
        return convert.finish(convert.normalize_dtype(img, dt))
    if layout == "CMYK":
        planes = convert.cmyk_to_rgb(img)
    else:
        planes = tuple(img[..., c] for c in _RGB_PLANES[layout])
    if ot == DALIImageType.GRAY:  # the codec's gray, at the file's depth
        gray = convert.rgb_to_gray(planes, floor=layout == "CMYK")
        return convert.normalize_dtype(gray, dt)
    if ot == DALIImageType.YCbCr:
        return convert.rgb_to_ycbcr(planes, dt)
    planes = tuple(convert.normalize_dtype(p, dt) for p in planes)
    order = (0, 1, 2) if ot == DALIImageType.RGB else (2, 1, 0)
    return np.stack([planes[c] for c in order], axis=-1)


def _crop(img: np.ndarray, roi: Sequence[int], op: str) -> np.ndarray:
    try:
        y, x, h, w = (int(v) for v in roi)
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"{op}: roi must be 4 integers (y, x, h, w) (got {roi!r})."
        ) from None
    height, width = img.shape[:2]
    if y < 0 or x < 0 or h < 0 or w < 0 or y + h > height or x + w > width:
        raise InvalidArgumentError(
            f"{op}: roi (y={y}, x={x}, h={h}, w={w}) does not fit in the decoded image of "
            f"size {height}x{width}. Keep the window inside the (oriented) image."
        )
    return img[y : y + h, x : x + w]


def _output_type(value: object, op: str) -> DALIImageType:
    try:
        return image_type(value)
    except ValueError as exc:
        raise InvalidArgumentError(f"{op}: {exc}") from None


def _dtype(value: object, op: str) -> np.dtype:
    try:
        dt = np.dtype(_DALI_DTYPES.get(value, value))  # type: ignore[call-overload, arg-type]
    except TypeError:
        dt = None
    if dt not in convert.SUPPORTED_DTYPES:
        names = ", ".join(str(d) for d in convert.SUPPORTED_DTYPES)
        raise InvalidArgumentError(f"{op}: unsupported dtype {value!r}. Use one of {names}.")
    return dt
