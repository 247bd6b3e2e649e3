"""``ndd.math``: element-wise math functions on Tensors and Batches.

Unary functions of integers return float32 (``abs`` keeps the type); binary ones promote their
operands like the arithmetic operators.

Examples
--------
>>> import headrace as ndd
>>> ndd.math.sqrt(ndd.tensor([4, 9])).torch().tolist()
[2.0, 3.0]
>>> ndd.math.clamp(ndd.tensor([1, 5, 9]), 2, 6).torch().tolist()
[2, 5, 6]
"""

from __future__ import annotations

from typing import Any

from headrace.ops.arithmetic import arithmetic


def _unary(name: str, doc: str) -> Any:
    def fn(input: Any) -> Any:
        return arithmetic(name, input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{doc}, element-wise.\n\nParameters\n----------\ninput : Tensor or Batch\n"
    return fn


sqrt = _unary("sqrt", "Square root")
rsqrt = _unary("rsqrt", "Reciprocal square root")
cbrt = _unary("cbrt", "Cube root")
exp = _unary("exp", "Exponential")
log = _unary("log", "Natural logarithm")
log2 = _unary("log2", "Base-2 logarithm")
log10 = _unary("log10", "Base-10 logarithm")
abs = _unary("abs", "Absolute value (keeps the type)")
fabs = _unary("fabs", "Absolute value as float")
floor = _unary("floor", "Floor")
ceil = _unary("ceil", "Ceiling")
sin = _unary("sin", "Sine")
cos = _unary("cos", "Cosine")
tan = _unary("tan", "Tangent")
asin = _unary("asin", "Arc sine")
acos = _unary("acos", "Arc cosine")
atan = _unary("atan", "Arc tangent")
sinh = _unary("sinh", "Hyperbolic sine")
cosh = _unary("cosh", "Hyperbolic cosine")
tanh = _unary("tanh", "Hyperbolic tangent")
asinh = _unary("asinh", "Inverse hyperbolic sine")
acosh = _unary("acosh", "Inverse hyperbolic cosine")
atanh = _unary("atanh", "Inverse hyperbolic tangent")


def min(left: Any, right: Any) -> Any:
    """Element-wise minimum."""
    return arithmetic("min", left, right)


def max(left: Any, right: Any) -> Any:
    """Element-wise maximum."""
    return arithmetic("max", left, right)


def pow(base: Any, exponent: Any) -> Any:
    """``base ** exponent`` with the operands' promoted type."""
    return arithmetic("pow", base, exponent)


def fpow(base: Any, exponent: Any) -> Any:
    """``base ** exponent`` computed in floating point."""
    return arithmetic("fpow", base, exponent)


def atan2(x: Any, y: Any) -> Any:
    """Arc tangent of ``x / y`` using the signs of both."""
    return arithmetic("atan2", x, y)


def clamp(value: Any, lo: Any, hi: Any) -> Any:
    """``value`` limited to ``[lo, hi]``."""
    return arithmetic("clamp", value, lo, hi)


__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "clamp",
    "cos",
    "cosh",
    "exp",
    "fabs",
    "floor",
    "fpow",
    "log",
    "log10",
    "log2",
    "max",
    "min",
    "pow",
    "rsqrt",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
]
