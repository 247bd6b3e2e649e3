"""``ndd.experimental.readers``: readers the reference files under experimental.

Examples
--------
>>> from headrace.experimental import readers
>>> readers.Fits.__module__
'headrace.readers.fits'
"""

from __future__ import annotations

from headrace.readers.fits import Fits
from headrace.readers.video_experimental import Video

__all__ = ["Fits", "Video"]
