"""``ndd.decoders``: image, audio, video and ``.npy`` decoders, and ``inflate``.

Examples
--------
>>> import headrace as ndd
>>> callable(ndd.decoders.image)
True
"""

from headrace.decoders.audio import audio
from headrace.decoders.image import image, image_crop, image_random_crop, skipped_count
from headrace.decoders.image_slice import image_slice
from headrace.decoders.inflate import inflate
from headrace.decoders.npy import numpy
from headrace.decoders.video import video

__all__ = [
    "audio",
    "image",
    "image_crop",
    "image_random_crop",
    "image_slice",
    "inflate",
    "numpy",
    "skipped_count",
    "video",
]
