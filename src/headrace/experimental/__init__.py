"""``ndd.experimental``: the reference's experimental operators.

``dilate``, ``erode``, ``median_blur``, ``remap`` and ``warp_perspective`` are declared in
:mod:`headrace.ops.experimental`. ``resize`` and ``peek_image_shape`` are the same operators as
``ndd.resize`` and ``ndd.peek_image_shape`` (the reference documents the same parameters and
semantics); ``decoders`` holds the experimental names of the image decoders.

Examples
--------
>>> import headrace as ndd
>>> ndd.experimental.resize is ndd.resize, callable(ndd.experimental.decoders.image)
(True, True)
"""

from headrace.decoders.image import peek_image_shape
from headrace.experimental import decoders
from headrace.ops.experimental import dilate, erode, median_blur, remap, warp_perspective
from headrace.ops.geometry import resize

__all__ = [
    "decoders",
    "dilate",
    "erode",
    "median_blur",
    "peek_image_shape",
    "remap",
    "resize",
    "warp_perspective",
]
