"""``ndd.experimental.decoders``: the image decoders under their experimental names (the same
operators as ``ndd.decoders.image``, ``image_crop`` and ``image_random_crop``).

Examples
--------
>>> import headrace as ndd
>>> ndd.experimental.decoders.image_crop is ndd.decoders.image_crop
True
"""

from headrace.decoders.image import image, image_crop, image_random_crop

__all__ = ["image", "image_crop", "image_random_crop"]
