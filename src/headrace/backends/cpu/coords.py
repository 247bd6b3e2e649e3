"""CPU kernels of ``coord_flip`` and ``coord_transform`` (``ops/coords.py``), in float32 as the
reference computes them.

Examples
--------
>>> import headrace as ndd
>>> ndd.coord_flip(ndd.tensor(np.float32([[0.1, 0.2]])), flip_y=1).torch().tolist()
[[0.8999999761581421, 0.800000011920929]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.saturate import saturate
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.common import affine_mt, check_coord_input, coord_flip_centers

Vals = dict[str, Any]


def coord_flip(kc: KernelContext, ins: list[Batch], args: Vals) -> tuple[Batch]:
    """``coord_flip``: ``2 * center - c`` on the flipped components (float32)."""
    x = ins[0]
    check_coord_input(kc.name, (0, 2), x._dtype.numpy, None)
    per = has_per_sample(args)
    shared: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # dims -> (flip, 2 * centre)

    def centres(i: int, dims: int) -> tuple[np.ndarray, np.ndarray]:
        got = None if per else shared.get(dims)
        if got is None:
            c = coord_flip_centers(dims, args["layout"], sample_args(args, i) if per else args)
            got = (~np.isnan(c), np.float32(2) * c)
            if not per:
                shared[dims] = got
        return got

    def one(i: int) -> np.ndarray:
        s = x._samples[i]
        check_coord_input(kc.name, s.shape, s.dtype, None)
        flip, twice = centres(i, s.shape[1])
        return np.where(flip, twice - s, s)  # 2 * centre - c on the flipped components

    return (Batch._wrap(kc.map(one, chunked=True), x._dtype, x._layout, kc.device),)


def coord_transform(kc: KernelContext, ins: list[Batch], args: Vals) -> tuple[Batch]:
    """``coord_transform``: ``M @ v + T`` on every vector of the last axis (float32)."""
    x = ins[0]
    in_dt = x._dtype.numpy
    out_dt = args["dtype"].numpy if args["dtype"] is not None else np.dtype(np.float32)
    check_coord_input(kc.name, (0, 0), in_dt, out_dt)

    def one(i: int) -> np.ndarray:
        s = x._samples[i]
        check_coord_input(kc.name, s.shape, in_dt, out_dt)
        m, t = affine_mt(sample_args(args, i), s.shape[-1])
        v = s.reshape(-1, s.shape[-1]).astype(np.float32)
        r = (v @ m.T + t).reshape(*s.shape[:-1], m.shape[0])
        return r if out_dt == np.float32 else saturate(r, out_dt)

    out_dtype = _dt.from_numpy(out_dt)
    return (Batch._wrap(kc.map(one, chunked=True), out_dtype, x._layout, kc.device),)
