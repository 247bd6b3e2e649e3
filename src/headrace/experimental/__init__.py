"""``ndd.experimental``: the reference's experimental names.

``dilate``, ``erode``, ``median_blur``, ``remap`` and ``warp_perspective`` are declared in
:mod:`headrace.ops.experimental`. ``resize`` is the same operator as ``ndd.resize`` (the
reference documents the same parameters and semantics); ``peek_image_shape`` is
``ndd.peek_image_shape`` under a deprecated name (every call warns, as in the reference);
``decoders`` holds the deprecated experimental names of the image decoders and ``readers`` the
experimental readers.

Examples
--------
>>> import headrace as ndd
>>> ndd.experimental.resize is ndd.resize, callable(ndd.experimental.decoders.image)
(True, True)
>>> ndd.experimental.readers.Fits.__name__
'Fits'
"""

from __future__ import annotations

from headrace.decoders.image import peek_image_shape as _peek_image_shape
from headrace.experimental import _deprecated, decoders, readers
from headrace.ops.experimental import dilate, erode, median_blur, remap, warp_perspective
from headrace.ops.geometry import resize

peek_image_shape = _deprecated.deprecated_alias(
    _peek_image_shape,
    "experimental.peek_image_shape",
    "peek_image_shape",
    "The main module's peek_image_shape is the same operator; this name is an alias.",
)

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
