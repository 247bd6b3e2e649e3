"""``ndd.transforms``: affine transform matrices (see :mod:`headrace.ops.transforms`).

Examples
--------
>>> import headrace as ndd
>>> ndd.transforms.translation(offset=[1]).torch().tolist()
[[1.0, 1.0]]
"""

from headrace.ops.transforms import *  # noqa: F403
from headrace.ops.transforms import __all__ as __all__
