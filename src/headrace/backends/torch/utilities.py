"""Torch kernels of the batch and type utilities (``ops/utilities.py``): the generic kernels of
:mod:`headrace.backends.shared.utilities` bound to :class:`TorchUtilityXP`.

``batch_permutation`` runs on the CPU only (as in the reference), so it has no kernel here.

Examples
--------
>>> TorchUtilityXP.view(torch.arange(4, dtype=torch.uint8), _dt.int16, (2,)).tolist()
[256, 770]
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from headrace._core import dtype as _dt
from headrace.backends.shared import host
from headrace.backends.shared import utilities as U
from headrace.backends.shared.misc import bind
from headrace.backends.torch.misc import TorchXP
from headrace.backends.torch.transfer import upload


class TorchUtilityXP(TorchXP):
    """:class:`~headrace.backends.shared.utilities.UtilityOps` for torch tensors."""

    @staticmethod
    def view(a: torch.Tensor, dt: _dt.DType, shape: tuple[int, ...]) -> torch.Tensor:
        return a.contiguous().reshape(-1).view(_dt.to_torch_dtype(dt)).reshape(shape)

    @staticmethod
    def take(a: torch.Tensor, index: Sequence[int]) -> torch.Tensor:
        return a[upload(list(index), a.device, torch.int64)]


permute_batch = bind(U.permute_batch, TorchUtilityXP)
cast_like = bind(U.cast_like, TorchUtilityXP)
zeros_like = bind(U.zeros_like, TorchUtilityXP)
ones_like = bind(U.ones_like, TorchUtilityXP)
full_like = bind(U.full_like, TorchUtilityXP)
reinterpret = bind(U.reinterpret, TorchUtilityXP)
dump_image = host.on_host(host.dump_image)
get_property = bind(U.get_property, TorchUtilityXP)
element_extract = bind(U.element_extract, TorchUtilityXP)
sequence_rearrange = bind(U.sequence_rearrange, TorchUtilityXP)
