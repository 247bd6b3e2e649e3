"""The element-wise arithmetic functions on numpy arrays, by expression name: the CPU backend's
table, also used by the torch backend for integer types torch has few kernels for.

Integer ``//`` and ``%`` follow C (truncate toward zero; the remainder has the dividend's sign);
for floats ``//`` is plain division and ``%`` is ``fmod``, as in the reference.

Examples
--------
>>> import numpy as np
>>> NUMPY_FUNCS["div"](np.array([-7, 7], np.int64), np.array([2, 2], np.int64)).tolist()
[-3, 3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.errors import InvalidArgumentError


def _np_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        with np.errstate(divide="ignore", invalid="ignore"):  # (inf and nan, as the reference)
            return a / b
    _no_zero_divisor(b)
    # integers: the quotient rounded toward zero, exactly (through float64 it was off past 2**53)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.floor_divide(a, b)
        if q.dtype.kind == "i":  # floor -> toward zero where the signs differ and it is inexact
            q += (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    return q.astype(a.dtype, copy=False)


def _np_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.fmod(a, b)
    _no_zero_divisor(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b).astype(a.dtype)


def _no_zero_divisor(b: np.ndarray) -> None:
    """Integer ``//`` and ``%`` by zero raise, as the reference's CPU operator does."""
    if b.dtype.kind in "iub" and not np.all(b):
        raise InvalidArgumentError("Integer division by zero.")


def _np_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and b.dtype.kind == "i" and np.any(b < 0):
        # a negative integer exponent gives 0, whatever the base, as the reference; the others
        # wrap on overflow as integer powers do
        with np.errstate(over="ignore"):
            return np.where(b < 0, 0, np.power(a, np.maximum(b, 0))).astype(a.dtype)
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


def np_cast(a: Any, dt: _dt.DType) -> Any:
    return np.asarray(a).astype(dt.numpy, copy=False)


__all__ = ["NUMPY_FUNCS", "np_cast"]
