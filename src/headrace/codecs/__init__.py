"""Byte-level image codecs: format sniffing, header peeking and per-sample decoding.

Examples
--------
>>> import cv2, numpy as np
>>> from headrace import codecs
>>> png = cv2.imencode(".png", np.zeros((4, 6, 3), np.uint8))[1]
>>> codecs.detect_format(png), codecs.peek_shape(png), codecs.decode(png).shape
('png', (4, 6, 3), (4, 6, 3))
"""

from __future__ import annotations

from importlib import metadata

from headrace.codecs.headers import FORMATS, ImageInfo, detect_format, probe
from headrace.codecs.image import decode, peek_shape
from headrace.codecs.limits import DEFAULT_MAX_IMAGE_PIXELS, max_image_pixels, set_max_image_pixels

__all__ = [
    "DEFAULT_MAX_IMAGE_PIXELS",
    "FORMATS",
    "ImageInfo",
    "available_codecs",
    "decode",
    "detect_format",
    "max_image_pixels",
    "peek_shape",
    "probe",
    "set_max_image_pixels",
]

# Distribution name -> name reported by available_codecs (first found wins).
_CODEC_PACKAGES = {
    "simplejpeg": "simplejpeg",  # libjpeg-turbo: JPEG
    "opencv-python-headless": "opencv",  # PNG, TIFF, BMP, WebP, GIF, PNM, JPEG 2000
    "opencv-python": "opencv",
    "pillow": "pillow",  # headers of the less common formats
    "soundfile": "soundfile",  # audio
    "nvidia-nvimgcodec-cu12": "nvimgcodec",  # GPU decode, CPU window decode ("jpeg-roi")
}


def available_codecs() -> dict[str, str]:
    """Installed codec libraries and their versions, for ``headrace info``.

    Returns
    -------
    dict[str, str]
        Short name (``"simplejpeg"``, ``"opencv"``, ``"pillow"``, ...) -> version string;
        libraries that are not installed are left out.

    Examples
    --------
    >>> "simplejpeg" in available_codecs()
    True
    """
    found: dict[str, str] = {}
    for dist, name in _CODEC_PACKAGES.items():
        if name in found:
            continue
        try:
            found[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found
