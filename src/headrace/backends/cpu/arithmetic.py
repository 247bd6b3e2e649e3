"""Kernel of the element-wise arithmetic operator, generic over numpy and torch.

Integer ``//`` and ``%`` follow C (truncate toward zero; the remainder has the dividend's sign);
for floats ``//`` is plain division and ``%`` is ``fmod``, as in the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._dispatch.kernel_context import KernelContext
from headrace.ops.arithmetic import ARITH, result_dtype


def _np_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return a / b
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.trunc(a.astype(np.float64) / np.where(b == 0, 1, b))
    return q.astype(a.dtype)


def _np_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.fmod(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, np.where(b == 0, 1, b)).astype(a.dtype)


def _np_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and np.any(b < 0):
        return np.trunc(np.power(a.astype(np.float64), b.astype(np.float64))).astype(a.dtype)
    return np.power(a, b)


NUMPY_FUNCS: dict[str, Callable[..., Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "fdiv": np.true_divide,
    "div": _np_div,
    "mod": _np_mod,
    "pow": _np_pow,
    "fpow": np.power,
    "minus": np.negative,
    "bitand": np.bitwise_and,
    "bitor": np.bitwise_or,
    "bitxor": np.bitwise_xor,
    "bitnot": np.invert,
    "lshift": np.left_shift,
    "rshift": np.right_shift,
    "eq": np.equal,
    "neq": np.not_equal,
    "lt": np.less,
    "leq": np.less_equal,
    "gt": np.greater,
    "geq": np.greater_equal,
    "abs": np.abs,
    "fabs": np.abs,
    "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "cbrt": np.cbrt,
    "exp": np.exp,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "floor": np.floor,
    "ceil": np.ceil,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "min": np.minimum,
    "max": np.maximum,
    "atan2": np.arctan2,
    "clamp": lambda v, lo, hi: np.minimum(np.maximum(v, lo), hi),
}


def make_kernel(
    funcs: dict[str, Callable[..., Any]], cast: Callable[[Any, _dt.DType], Any]
) -> Callable[..., tuple[Batch]]:
    """The batch kernel for one backend's function table and cast."""

    def kern(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        name = v["expression"]
        fn = funcs[name]
        ct, ot = result_dtype(name, [b._dtype for b in ins])
        outs = []
        for i in range(kc.n):
            args = [_as(b._samples[i], b._dtype, ct, cast) for b in ins]
            r = fn(*args)
            if ot is not ct or _dtype_mismatch(r, ot):
                r = cast(r, ot)
            outs.append(r)
        nd = outs[0].ndim if outs else 0
        lay = next((b._layout for b in ins if b._layout and len(b._layout) == nd), None)
        return (Batch._wrap(outs, ot, lay, kc.device),)

    return kern


def _as(a: Any, have: _dt.DType, want: _dt.DType, cast: Callable[[Any, _dt.DType], Any]) -> Any:
    return a if have is want else cast(a, want)


def _dtype_mismatch(r: Any, ot: _dt.DType) -> bool:
    if isinstance(r, np.ndarray):
        return r.dtype != ot.numpy
    if isinstance(r, np.generic):
        return True
    return False


def _np_cast(a: Any, dt: _dt.DType) -> Any:
    return np.asarray(a).astype(dt.numpy, copy=False)


ARITH.legacy_kernel("cpu")(make_kernel(NUMPY_FUNCS, _np_cast))
