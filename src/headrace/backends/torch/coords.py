"""Torch kernels of ``coord_flip`` and ``coord_transform`` (``ops/coords.py``), in float32.

Examples
--------
>>> import headrace as ndd
>>> from headrace._dispatch.schema import REGISTRY
>>> kern = REGISTRY["coord_flip"].kernel_for(ndd.Device("gpu"))
>>> kern.__name__
'coord_flip'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._dispatch.args import sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.common import affine_mt, check_coord_input, coord_flip_centers
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload

Vals = dict[str, Any]


def coord_flip(kc: KernelContext, ins: list[Batch], args: Vals) -> tuple[Batch]:
    """``coord_flip``: ``2 * center - c`` on the flipped components (float32)."""
    x = ins[0]
    check_coord_input(kc.name, (0, 2), x._dtype.numpy, None)

    def one(i: int) -> torch.Tensor:
        s = x._samples[i]
        check_coord_input(kc.name, tuple(s.shape), x._dtype.numpy, None)
        c = coord_flip_centers(s.shape[1], args["layout"], sample_args(args, i))
        flip = np.flatnonzero(~np.isnan(c)).tolist()
        out = s.clone()
        if flip:
            cen = upload(np.float32(2) * c[flip], s.device)
            out[:, flip] = cen - s[:, flip]
        return out

    return (Batch._wrap(kc.map(one, parallel=False), x._dtype, x._layout, kc.device),)


def coord_transform(kc: KernelContext, ins: list[Batch], args: Vals) -> tuple[Batch]:
    """``coord_transform``: ``M @ v + T`` on every vector of the last axis (float32)."""
    x = ins[0]
    in_dt = x._dtype.numpy
    out_dt = args["dtype"].numpy if args["dtype"] is not None else np.dtype(np.float32)
    check_coord_input(kc.name, (0, 0), in_dt, out_dt)
    out_dtype = _dt.from_numpy(out_dt)

    def one(i: int) -> torch.Tensor:
        s = x._samples[i]
        check_coord_input(kc.name, tuple(s.shape), in_dt, out_dt)
        m, t = affine_mt(sample_args(args, i), s.shape[-1])
        v = s.reshape(-1, s.shape[-1]).to(torch.float32)
        mt = upload(m.T, s.device)
        r = (v @ mt + upload(t, s.device)).reshape(*s.shape[:-1], m.shape[0])
        return r if out_dt == np.float32 else saturate(r, out_dtype)

    return (Batch._wrap(kc.map(one, parallel=False), out_dtype, x._layout, kc.device),)
