"""``ndd.experimental.decoders``: the image decoders under their experimental names (the same
operators as ``ndd.decoders.image``, ``image_crop``, ``image_random_crop`` and ``image_slice``).

Examples
--------
>>> import headrace as ndd
>>> ndd.experimental.decoders.image_crop is ndd.decoders.image_crop
True
"""

from __future__ import annotations

from typing import Any

from headrace.decoders.image import image, image_crop, image_random_crop
from headrace.decoders.image_slice import image_slice as _image_slice


def image_slice(input_0: Any, input_1: Any = None, input_2: Any = None, /, **kwargs: Any) -> Any:
    """:func:`headrace.decoders.image_slice` under the reference's experimental spelling, whose
    positional inputs are named ``input_0`` (encoded data), ``input_1`` (anchor) and ``input_2``
    (shape); the keyword arguments are the same.

    Examples
    --------
    >>> import numpy as np, cv2
    >>> import headrace as ndd
    >>> png = np.frombuffer(cv2.imencode(".png", np.zeros((8, 6, 3), np.uint8))[1], np.uint8)
    >>> ndd.experimental.decoders.image_slice(png, start=[2, 1], end=[6, 5]).shape
    (4, 4, 3)
    """
    return _image_slice(input_0, input_1, input_2, **kwargs)


__all__ = ["image", "image_crop", "image_random_crop", "image_slice"]
