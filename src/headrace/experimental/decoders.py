"""``ndd.experimental.decoders``: the image decoders under their experimental names (the same
operators as ``ndd.decoders.image``, ``image_crop``, ``image_random_crop`` and ``image_slice``).

Examples
--------
>>> import headrace as ndd
>>> ndd.experimental.decoders.image_crop is ndd.decoders.image_crop
True
"""

from headrace.decoders.image import image, image_crop, image_random_crop
from headrace.decoders.image_slice import image_slice

__all__ = ["image", "image_crop", "image_random_crop", "image_slice"]
