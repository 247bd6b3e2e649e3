"""NumPy kernels of the batch and type utilities (``ops/utilities.py``): the generic kernels of
:mod:`headrace.backends.shared.utilities` bound to :class:`NumpyUtilityXP`.

Examples
--------
>>> NumpyUtilityXP.view(np.arange(4, dtype=np.uint8), _dt.uint16, (2,)).tolist()
[256, 770]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from headrace._core import dtype as _dt
from headrace.backends.cpu.misc import NumpyXP
from headrace.backends.shared import host
from headrace.backends.shared import utilities as U
from headrace.backends.shared.misc import bind


class NumpyUtilityXP(NumpyXP):
    """:class:`~headrace.backends.shared.utilities.UtilityOps` for numpy arrays."""

    @staticmethod
    def view(a: np.ndarray, dt: _dt.DType, shape: tuple[int, ...]) -> np.ndarray:
        return np.ascontiguousarray(a).reshape(-1).view(dt.numpy).reshape(shape)

    @staticmethod
    def take(a: np.ndarray, index: Sequence[int]) -> np.ndarray:
        return a[np.asarray(index, np.intp)]


batch_permutation = bind(U.batch_permutation, NumpyUtilityXP)
permute_batch = bind(U.permute_batch, NumpyUtilityXP)
cast_like = bind(U.cast_like, NumpyUtilityXP)
zeros_like = bind(U.zeros_like, NumpyUtilityXP)
ones_like = bind(U.ones_like, NumpyUtilityXP)
full_like = bind(U.full_like, NumpyUtilityXP)
reinterpret = bind(U.reinterpret, NumpyUtilityXP)
dump_image = host.dump_image
get_property = bind(U.get_property, NumpyUtilityXP)
element_extract = bind(U.element_extract, NumpyUtilityXP)
sequence_rearrange = bind(U.sequence_rearrange, NumpyUtilityXP)
