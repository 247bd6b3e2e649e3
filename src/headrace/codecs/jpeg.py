"""JPEG decoding through libjpeg-turbo (``simplejpeg``), configured like the reference CPU decoder.

The reference CPU decoder uses the accurate integer IDCT (``use_fast_idct=False``) and libjpeg's
"fancy" (triangular) chroma upsampling; ``simplejpeg`` defaults to the same, and it releases the
GIL while decoding, so a thread pool scales with the number of cores.

Partial decoding (``image_crop``/``image_random_crop``/``image_slice``): the reference decodes
only the window. ``simplejpeg`` has no region decode (and ``PyTurboJPEG`` needs a system
``libturbojpeg``), so windows go through nvImageCodec's libjpeg-turbo CPU backend when it is
installed (:mod:`headrace.codecs.jpeg_region`, same pixels); otherwise the whole image is decoded
and sliced (a view, copied only when it would pin a much larger buffer).
"""

from __future__ import annotations

import cv2
import numpy as np
import simplejpeg

from headrace.codecs.headers import ImageInfo
from headrace.types import DALIImageType

__all__ = ["decode_jpeg", "round_trip_jpeg"]


def decode_jpeg(
    buf: np.ndarray, info: ImageInfo, output_type: DALIImageType, *, fast_idct: bool = False
) -> tuple[np.ndarray, str]:
    """Decode a JPEG into the cheapest layout that serves ``output_type``.

    Parameters
    ----------
    buf : numpy.ndarray
        The encoded stream (1-D ``uint8``).
    info : ImageInfo
        Its header, from :func:`headrace.codecs.headers.probe`.
    output_type : DALIImageType
        The colour space the caller will convert to.
    fast_idct : bool
        Use libjpeg-turbo's fast (less accurate) IDCT.

    Returns
    -------
    tuple[numpy.ndarray, str]
        ``HxWxC`` ``uint8`` pixels (unoriented) and their layout: ``"GRAY"``, ``"RGB"``,
        ``"BGR"`` or ``"CMYK"`` (Adobe, inverted).

    Raises
    ------
    ValueError
        libjpeg-turbo rejected the stream (corrupt or truncated data).

    Examples
    --------
    >>> import cv2
    >>> from headrace.codecs.headers import probe
    >>> jpg = cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1]
    >>> img, layout = decode_jpeg(jpg, probe(jpg), DALIImageType.RGB)
    >>> img.shape, layout
    ((8, 8, 3), 'RGB')
    """
    if info.channels == 4:
        colorspace = "CMYK"
    elif info.channels == 1 or output_type == DALIImageType.GRAY:
        colorspace = "GRAY"
    elif output_type == DALIImageType.BGR:
        colorspace = "BGR"
    else:
        colorspace = "RGB"
    try:
        img = simplejpeg.decode_jpeg(
            buf, colorspace=colorspace, fastdct=fast_idct, fastupsample=False, strict=True
        )
    except ValueError as exc:
        raise ValueError(f"libjpeg-turbo: {exc}") from None
    return img, colorspace


def round_trip_jpeg(rgb: np.ndarray, quality: int) -> np.ndarray:
    """Encode an ``HxWx3`` ``uint8`` RGB image as a baseline JPEG of ``quality`` (1..100, 4:2:0
    chroma) and decode it back, as the reference CPU operator does (OpenCV's libjpeg).

    Examples
    --------
    >>> x = np.full((16, 16, 3), 128, np.uint8)
    >>> bool((round_trip_jpeg(x, 50) == 128).all())
    True
    """
    ok, buf = cv2.imencode(".jpg", np.ascontiguousarray(rgb[..., ::-1]),
                           (cv2.IMWRITE_JPEG_QUALITY, int(quality)))  # fmt: skip
    if not ok:
        raise ValueError(f"JPEG encoding failed for an image of shape {rgb.shape}")
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)[..., ::-1]
