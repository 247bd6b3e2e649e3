"""Batch kernels of ``rotate`` and ``warp_affine`` (``ops/warp.py``), written once for any
backend: ``register(device, module)`` uses the pixel kernels of ``module``."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import PerSample
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends import _planned as pl
from headrace.backends.cpu import warp as _cpu_warp
from headrace.ops import _warp_params as P
from headrace.ops import warp as W

_LAYOUTS = {2: "HW", 3: "HWC", 4: "FHWC"}


def matrix_input(kc: KernelContext, ins: list[Batch | None], vals: dict[str, Any]) -> dict:
    """Take the matrix from the optional second input ``mtx``, or insist on ``matrix=``."""
    mtx = ins[1] if len(ins) > 1 else None
    if mtx is None:
        if vals["matrix"] is None:
            raise InvalidArgumentError(
                "warp_affine: no transform is given (got neither `matrix` nor the `mtx` input). "
                "Pass matrix=[[m11, m12, m13], [m21, m22, m23]]."
            )
        return vals
    if vals["matrix"] is not None:
        raise InvalidArgumentError(
            "warp_affine: the matrix is given twice (got both the `mtx` input and `matrix=`). "
            "Pass only one of them."
        )
    host = [np.asarray(_st.move(m, CPU, mtx._dtype), np.float64) for m in mtx._samples]
    return {**vals, "matrix": PerSample(host)}


SPECS = (
    (W.ROTATE, pl.Planned(P.rotate_params, "rotate", layouts=_LAYOUTS)),
    (
        W.WARP_AFFINE,
        pl.Planned(P.warp_affine_params, "warp_affine", layouts=_LAYOUTS, prepare=matrix_input),
    ),
)


def register(device: str, module: ModuleType) -> None:
    """Register the warp batch kernels for ``device`` with the pixel kernels of ``module``."""
    for schema, spec in SPECS:
        schema.legacy_kernel(device)(pl.planned_kernel(spec, module))


register("cpu", _cpu_warp)
