"""``ndd.experimental``: the reference's experimental names.

``dilate``, ``erode``, ``median_blur``, ``remap`` and ``warp_perspective`` are declared in
:mod:`headrace.ops.experimental`. ``resize`` and ``peek_image_shape`` are the same operators as
``ndd.resize`` and ``ndd.peek_image_shape`` (the reference documents the same parameters and
semantics); ``decoders`` holds the experimental names of the image decoders and ``readers``
the experimental readers.

Examples
--------
>>> import headrace as ndd
>>> ndd.experimental.resize is ndd.resize, callable(ndd.experimental.decoders.image)
(True, True)
>>> ndd.experimental.readers.Fits.__name__
'Fits'
"""

from __future__ import annotations

from headrace.decoders.image import peek_image_shape
from headrace.experimental import decoders, readers
from headrace.ops.experimental import dilate, erode, median_blur, remap, warp_perspective
from headrace.ops.geometry import resize

__all__ = [
    "decoders",
    "dilate",
    "erode",
    "median_blur",
    "peek_image_shape",
    "readers",
    "remap",
    "resize",
    "warp_perspective",
]
