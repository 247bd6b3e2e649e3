"""NumPy kernel of the element-wise arithmetic operator: its function table and cast, bound to
the generic kernel of :mod:`headrace.backends.shared.arithmetic`.

Integer ``//`` and ``%`` follow C (truncate toward zero; the remainder has the dividend's sign);
for floats ``//`` is plain division and ``%`` is ``fmod``, as in the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace.backends.shared.arithmetic import arithmetic_kernel


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


def _np_cast(a: Any, dt: _dt.DType) -> Any:
    return np.asarray(a).astype(dt.numpy, copy=False)


#: The batch kernel of ``arithmetic_generic_op`` (found by name).
arithmetic_generic_op = arithmetic_kernel(NUMPY_FUNCS, _np_cast)
