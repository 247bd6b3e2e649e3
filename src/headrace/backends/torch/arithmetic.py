"""Torch kernel of the element-wise arithmetic operator: its function table and cast (same rules
as the CPU one), bound to the generic kernel of :mod:`headrace.backends.shared.arithmetic`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace.backends.shared.arithmetic import arithmetic_kernel
from headrace.backends.shared.numpy_arithmetic import NUMPY_FUNCS, np_cast


def _div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # (integers by zero: x // 0 = x and x % 0 = 0 here, where the CPU operator raises as the
    # reference's does: checking would make the host wait for the device)
    if a.is_floating_point():
        return a / b
    return torch.div(a, torch.where(b == 0, torch.ones_like(b), b), rounding_mode="trunc")


def _mod(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.is_floating_point():
        return torch.fmod(a, b)
    return torch.fmod(a, torch.where(b == 0, torch.ones_like(b), b))


def _pow(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.is_floating_point() or b.is_floating_point():
        return torch.pow(a, b)
    # integers: a negative exponent gives 0, whatever the base, as the reference (torch
    # refuses it); chosen per element on the device, without reading the exponents back
    out = torch.pow(a, b.clamp_min(0))
    return torch.where(b < 0, torch.zeros_like(out), out)


TORCH_FUNCS: dict[str, Callable[..., Any]] = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "fdiv": torch.true_divide,
    "div": _div,
    "mod": _mod,
    "pow": _pow,
    "fpow": torch.pow,
    "minus": torch.neg,
    "bitand": torch.bitwise_and,
    "bitor": torch.bitwise_or,
    "bitxor": torch.bitwise_xor,
    "bitnot": torch.bitwise_not,
    "lshift": torch.bitwise_left_shift,
    "rshift": torch.bitwise_right_shift,
    "eq": torch.eq,
    "neq": torch.ne,
    "lt": torch.lt,
    "leq": torch.le,
    "gt": torch.gt,
    "geq": torch.ge,
    "abs": torch.abs,
    "fabs": torch.abs,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "cbrt": lambda a: torch.sign(a) * a.abs().pow(1 / 3),
    "exp": torch.exp,
    "log": torch.log,
    "log2": torch.log2,
    "log10": torch.log10,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "sin": torch.sin,
    "cos": torch.cos,
    "tan": torch.tan,
    "asin": torch.asin,
    "acos": torch.acos,
    "atan": torch.atan,
    "sinh": torch.sinh,
    "cosh": torch.cosh,
    "tanh": torch.tanh,
    "asinh": torch.asinh,
    "acosh": torch.acosh,
    "atanh": torch.atanh,
    "min": torch.minimum,
    "max": torch.maximum,
    "atan2": torch.atan2,
    "clamp": lambda v, lo, hi: torch.minimum(torch.maximum(v, lo), hi),
}


def _cast(a: torch.Tensor, dt: _dt.DType) -> torch.Tensor:
    return a.to(_dt.to_torch_dtype(dt))


_torch_kernel = arithmetic_kernel(TORCH_FUNCS, _cast)
_host_kernel = arithmetic_kernel(NUMPY_FUNCS, np_cast)
#: Types torch has few arithmetic kernels for (``add``, ``gt``, ``fmod``... raise on them).
_WIDE_UNSIGNED = (_dt.uint32, _dt.uint64)


def arithmetic_generic_op(kc: Any, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
    """The batch kernel of ``arithmetic_generic_op`` (found by name). Operands of uint32 /
    uint64, which torch cannot compute on, are computed on the host with the CPU kernel's
    functions (exactly) and the results moved back."""
    if not any(b._dtype in _WIDE_UNSIGNED for b in ins):
        return _torch_kernel(kc, ins, v)
    host = [
        Batch._wrap([s.cpu().numpy() for s in b._samples], b._dtype, b._layout, CPU)
        for b in ins
    ]
    (out,) = _host_kernel(kc, host, v)
    dev = ins[0]._samples[0].device if ins[0]._samples else torch.device("cpu")
    back = [torch.from_numpy(np.ascontiguousarray(s)).to(dev) for s in out._samples]
    return (Batch._wrap(back, out._dtype, out._layout, ins[0].device),)
