"""``ndd.experimental.decoders``: the image decoders under their experimental names (the same
operators as ``ndd.decoders.image``, ``image_crop``, ``image_random_crop`` and ``image_slice``),
deprecated as in the reference: every call warns (``DeprecationWarning``). ``video`` is the
older spelling of ``ndd.decoders.video`` (also warned about).

Examples
--------
>>> import warnings
>>> import numpy as np, cv2
>>> import headrace as ndd
>>> png = np.frombuffer(cv2.imencode(".png", np.zeros((8, 6, 3), np.uint8))[1], np.uint8)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     ndd.experimental.decoders.image(png).shape
(8, 6, 3)
>>> str(caught[0].message).split(" Use ")[0]
'WARNING: `nvidia.dali.experimental.dynamic.experimental.decoders.image` is now deprecated.'
"""

from __future__ import annotations

from typing import Any

from headrace.decoders.image import image as _main_image
from headrace.decoders.image import image_crop as _image_crop
from headrace.decoders.image import image_random_crop as _image_random_crop
from headrace.decoders.image_slice import image_slice as _image_slice
from headrace.decoders.video import video as _video
from headrace.experimental import _deprecated

#: Why the experimental decoders are deprecated (the text after the warning's first line).
_NOTE = "The main decoders have the experimental decoders' features; this name is an alias."


def _experimental_image_slice(
    input_0: Any, input_1: Any = None, input_2: Any = None, /, **kwargs: Any
) -> Any:
    """:func:`headrace.decoders.image_slice` under the reference's experimental spelling, whose
    positional inputs are named ``input_0`` (encoded data), ``input_1`` (anchor) and ``input_2``
    (shape); the keyword arguments are the same.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np, cv2
    >>> import headrace as ndd
    >>> png = np.frombuffer(cv2.imencode(".png", np.zeros((8, 6, 3), np.uint8))[1], np.uint8)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     ndd.experimental.decoders.image_slice(png, start=[2, 1], end=[6, 5]).shape
    (4, 4, 3)
    """
    return _image_slice(input_0, input_1, input_2, **kwargs)


image = _deprecated.deprecated_alias(
    _main_image, "experimental.decoders.image", "decoders.image", _NOTE
)
image_crop = _deprecated.deprecated_alias(
    _image_crop, "experimental.decoders.image_crop", "decoders.image_crop", _NOTE
)
image_random_crop = _deprecated.deprecated_alias(
    _image_random_crop,
    "experimental.decoders.image_random_crop",
    "decoders.image_random_crop",
    _NOTE,
)
image_slice = _deprecated.deprecated_alias(
    _experimental_image_slice, "experimental.decoders.image_slice", "decoders.image_slice", _NOTE
)
video = _deprecated.deprecated_alias(
    _video, "experimental.decoders.video", "decoders.video", "The video decoder left experimental."
)


__all__ = ["image", "image_crop", "image_random_crop", "image_slice", "video"]
