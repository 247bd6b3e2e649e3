"""``ndd.decoders``: image and ``.npy`` decoders.

Examples
--------
>>> import headrace as ndd
>>> callable(ndd.decoders.image)
True
"""

from headrace.decoders.image import image, image_crop, image_random_crop, skipped_count
from headrace.decoders.npy import numpy

__all__ = ["image", "image_crop", "image_random_crop", "numpy", "skipped_count"]
