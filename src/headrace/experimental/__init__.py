"""``ndd.experimental``: the reference's experimental names.

Examples
--------
>>> import headrace as ndd
>>> ndd.experimental.readers.Fits.__name__
'Fits'
"""

from __future__ import annotations

from headrace.experimental import readers

__all__ = ["readers"]
