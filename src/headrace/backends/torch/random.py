"""GPU random operators: parameters are drawn on the CPU (same values as the CPU kernels) and
uploaded once, so CPU and GPU results are identical for the same RNG state."""

from __future__ import annotations

from typing import Any

from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._dispatch.kernel_context import KernelContext
from headrace.random import COIN_FLIP, NORMAL, UNIFORM


def _uploading(schema: Any) -> None:
    cpu_kernel = schema.kernels["cpu"]

    def kern(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        cpu_ins = [
            None
            if b is None
            else Batch._wrap(
                [_st.move(s, CPU, b._dtype) for s in b._samples], b._dtype, b._layout, CPU
            )
            for b in ins
        ]
        (out,) = cpu_kernel(kc, cpu_ins, v)
        moved = [_st.move(s, kc.device, out._dtype) for s in out._samples]
        return (Batch._wrap(moved, out._dtype, out._layout, kc.device),)

    schema.legacy_kernel("gpu")(kern)


for _s in (UNIFORM, NORMAL, COIN_FLIP):
    _uploading(_s)
