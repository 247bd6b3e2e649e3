"""The largest image the decoders agree to decode, checked on the header before any allocation.

A few hundred bytes can declare a 65535 x 65535 JPEG or a 2^31-pixel-wide PNG; decoding it
would allocate gigabytes (a "decompression bomb"). Every decoder and ``peek_image_shape`` read
the size from the header first and raise :class:`~headrace.DecodeError` naming the file when
``height * width`` exceeds the limit.

The default, :data:`DEFAULT_MAX_IMAGE_PIXELS` (178,956,970 pixels, e.g. 13,377 x 13,377), is
where Pillow refuses an image (twice its ``Image.MAX_IMAGE_PIXELS``): at most about 0.5 GB for an
RGB image at 8 bits, 1.4 GB for RGBA at 16 bits. Change it with the environment variable
``HEADRACE_MAX_IMAGE_PIXELS`` (read at import; ``0`` or ``none``: no limit) or
:func:`set_max_image_pixels`. For the formats whose header Pillow reads (PNM, JPEG 2000, BigTIFF)
Pillow's own limit applies as well.

Examples
--------
>>> from headrace import codecs
>>> codecs.max_image_pixels()
178956970
>>> previous = codecs.set_max_image_pixels(1000)
>>> import cv2, numpy as np
>>> png = cv2.imencode(".png", np.zeros((40, 30), np.uint8))[1]
>>> codecs.decode(png)
Traceback (most recent call last):
...
headrace._core.errors.DecodeError: decoders.image: cannot decode sample: the png header declares \
30 x 40 = 1,200 pixels, more than the limit of 1,000 (raise it with \
headrace.codecs.set_max_image_pixels or HEADRACE_MAX_IMAGE_PIXELS).
>>> _ = codecs.set_max_image_pixels(previous)
"""

from __future__ import annotations

import os
from typing import Final

from headrace._core.errors import DecodeError, InvalidArgumentError

__all__ = [
    "DEFAULT_MAX_IMAGE_PIXELS",
    "check_pixels",
    "max_image_pixels",
    "set_max_image_pixels",
]

#: Pillow's decompression-bomb error threshold (``2 * PIL.Image.MAX_IMAGE_PIXELS``).
DEFAULT_MAX_IMAGE_PIXELS: Final = 178_956_970
ENV_VAR: Final = "HEADRACE_MAX_IMAGE_PIXELS"


def _parse(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "none", "0", "off"):
            return None
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise InvalidArgumentError(
                f"{where}: expected a positive number of pixels, 0 or 'none' (got {value!r})."
            ) from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(
            f"{where}: expected a positive int number of pixels or None (got {value!r})."
        )
    return value or None


def _from_env() -> int | None:
    raw = os.environ.get(ENV_VAR)
    if raw is None:
        return DEFAULT_MAX_IMAGE_PIXELS
    return _parse(raw, ENV_VAR)


_limit: int | None = _from_env()


def max_image_pixels() -> int | None:
    """The current limit on ``height * width`` of a decoded image (``None``: no limit)."""
    return _limit


def set_max_image_pixels(pixels: int | None) -> int | None:
    """Set the limit on ``height * width``; ``None`` (or 0) removes it. Returns the previous one.

    Examples
    --------
    >>> from headrace import codecs
    >>> old = codecs.set_max_image_pixels(None)
    >>> codecs.max_image_pixels() is None
    True
    >>> codecs.set_max_image_pixels(old) is None
    True
    """
    global _limit
    previous = _limit
    _limit = _parse(pixels, "set_max_image_pixels")
    return previous


def check_pixels(fmt: str, height: int, width: int, op: str) -> None:
    """Raise :class:`DecodeError` when a header declares more pixels than the limit allows."""
    limit = _limit
    if limit is not None and height * width > limit:
        raise DecodeError(
            f"{op}: cannot decode sample: the {fmt} header declares {width} x {height} = "
            f"{height * width:,} pixels, more than the limit of {limit:,} (raise it with "
            f"headrace.codecs.set_max_image_pixels or {ENV_VAR})."
        )
