"""The reference's saturating conversion (DALI's ``ConvertSat``), written once for numpy.

Every kernel that turns computed values into an output type goes through :func:`saturate`
(the torch kernels through :func:`headrace.backends.torch.cast.saturate`, which shares
:func:`work_dtype`, :func:`half` and :func:`int_limits` with it):

* float → integer: round to nearest, halves away from zero (C's ``std::round``, exactly:
  ``trunc(v + copysign(nextafter(0.5, 0), v))`` never rounds the addition across an integer),
  then clamp to the target's range; NaN goes through the plain cast, as it always did;
* integer → narrower integer: clamp in the integer domain (exact);
* float → bool: rounded first (``|v| >= 0.5``, NaN true); integer → bool: ``v != 0``;
  anything → float: a plain cast.

The arithmetic runs in :func:`work_dtype`: float64 for float64 data and for 32/64-bit targets
(float32 cannot hold their limits), float32 otherwise. 64-bit targets saturate at the largest
float64 below their maximum (``2**63 - 1024`` for int64).

:func:`round_half_away` is the same rule for one Python number (sizes and anchors in plans).

Examples
--------
>>> saturate(np.array([-2.5, 0.5, 0.49999997, 300.0], np.float32), np.dtype(np.int8)).tolist()
[-3, 1, 0, 127]
>>> saturate(np.array([-1, 70000]), np.dtype(np.uint16)).tolist()
[0, 65535]
>>> round_half_away(-2.5), round_half_away(2.4)
(-3, 2)
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np

Rounding = Literal["half_away", "half_even"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def work_dtype(src: np.dtype, dst: np.dtype) -> np.dtype:
    """The float type a float → ``dst`` conversion of ``src`` data computes in.

    Examples
    --------
    >>> work_dtype(np.dtype("float16"), np.dtype("uint8")), work_dtype(_F32, np.dtype("int32"))
    (dtype('float32'), dtype('float64'))
    """
    return _F64 if src.itemsize >= 8 or dst.itemsize >= 4 else _F32


@functools.cache
def half(work: np.dtype) -> float:
    """The largest ``work`` value below 0.5: adding it rounds halves away exactly.

    Examples
    --------
    >>> half(np.dtype("float32")) < 0.5
    True
    """
    return float(np.nextafter(work.type(0.5), work.type(0)))


@functools.cache
def int_limits(dst: np.dtype, work: np.dtype) -> tuple[float, float]:
    """``(lo, hi)``: the integer type ``dst``'s range as the nearest ``work`` values inside it.

    Examples
    --------
    >>> int_limits(np.dtype("int8"), _F32)
    (-128.0, 127.0)
    >>> int_limits(np.dtype("int64"), _F64)[1] == 2.0**63 - 1024
    True
    """
    info = np.iinfo(dst)
    hi = work.type(info.max)
    if int(hi) > info.max:
        hi = np.nextafter(hi, work.type(0))
    return float(info.min), float(hi)


def int_clamp_range(src: np.dtype, dst: np.dtype) -> tuple[int, int] | None:
    """The bounds to clamp integer ``src`` data to before casting to ``dst`` (``None``: none).

    Examples
    --------
    >>> int_clamp_range(np.dtype("int16"), np.dtype("uint8")), int_clamp_range(
    ...     np.dtype("uint8"), np.dtype("int32"))
    ((0, 255), None)
    """
    s, d = np.iinfo(src), np.iinfo(dst)
    if s.min >= d.min and s.max <= d.max:
        return None
    return max(s.min, d.min), min(s.max, d.max)


def saturate(
    v: np.ndarray,
    dtype: np.dtype,
    *,
    rounding: Rounding = "half_away",
    overwrite: bool = False,
) -> np.ndarray:
    """``v`` converted to ``dtype`` with the reference's rounding and saturation.

    Parameters
    ----------
    v : numpy.ndarray
        Values of any numeric or bool type.
    dtype : numpy.dtype
        The output type.
    rounding : {"half_away", "half_even"}
        Float → integer rounding: the reference's halves away from zero (default), or
        ``numpy.rint``'s halves to even (kept for :func:`headrace.pipelines.denormalize`).
    overwrite : bool
        ``v`` is a temporary that may serve as scratch space (saves a copy).

    Returns
    -------
    numpy.ndarray
        A new array, or ``v`` itself when it already has type ``dtype``.

    Examples
    --------
    >>> saturate(np.array([-3.0, 2.5, 300.0]), np.dtype(np.uint8)).tolist()
    [0, 3, 255]
    >>> saturate(np.array([0.5, 1.5, 2.5]), np.dtype(np.uint8), rounding="half_even").tolist()
    [0, 2, 2]
    """
    dtype = np.dtype(dtype)
    src = v.dtype
    if src == dtype:
        return v
    if dtype.kind == "b":
        return ~(np.abs(v) < 0.5) if src.kind in "fc" else v != 0
    if dtype.kind not in "iu" or src.kind == "b":
        return v.astype(dtype)
    if src.kind in "iu":
        bounds = int_clamp_range(src, dtype)
        return (v if bounds is None else np.clip(v, *bounds)).astype(dtype)
    work = work_dtype(src, dtype)
    if overwrite and src == work and v.flags.writeable:
        r = v
    else:
        r = v.astype(work)
    lo, hi = int_limits(dtype, work)
    if rounding == "half_even":
        np.rint(r, out=r)
    elif lo == 0:  # negative values clamp to 0 anyway
        r += work.type(half(work))
    else:
        r += np.copysign(work.type(half(work)), r)
    np.clip(r, lo, hi, out=r)
    return r.astype(dtype)


def c_cast(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The plain C conversion the reference gives fill values (``crop``, ``slice``, ``pad``,
    ``erase``, ``paste``, ``crop_mirror_normalize``): to an integer type, floats are truncated
    toward zero and every value wraps around (300 -> 44 as uint8, 171.5 -> -85 as int8; NaN ->
    0); to bool, ``v != 0``; to a float type, a plain cast.

    Examples
    --------
    >>> c_cast(np.array([300.0, -5.0, 171.5, -0.7]), np.dtype(np.uint8)).tolist()
    [44, 251, 171, 0]
    >>> c_cast(np.array([1e19, -1.0]), np.dtype(np.uint64)).tolist()
    [10000000000000000000, 18446744073709551615]
    """
    dtype = np.dtype(dtype)
    v = np.asarray(v)
    if dtype.kind == "b":
        return v != 0
    if dtype.kind not in "iu" or v.dtype.kind in "iub":
        return v.astype(dtype)
    with np.errstate(invalid="ignore"):
        t = np.nan_to_num(np.trunc(v.astype(np.float64)), nan=0.0)
        if dtype == np.uint64:  # (values past int64's range: through uint64, as C)
            big = np.clip(t, 0.0, 2.0**64 - 2048).astype(np.uint64)
            low = np.clip(t, -(2.0**63), 0.0).astype(np.int64).astype(np.uint64)
            return np.where(t >= 0, big, low)
        wide = np.clip(t, -(2.0**63), 2.0**63 - 1024).astype(np.int64)
    return wide.astype(dtype)


def round_half_away(v: float) -> int:
    """One number rounded to the nearest integer, halves away from zero (C's ``round``).

    Examples
    --------
    >>> round_half_away(0.5), round_half_away(-0.5), round_half_away(-0.2)
    (1, -1, 0)
    """
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


__all__ = [
    "c_cast",
    "half",
    "int_clamp_range",
    "int_limits",
    "round_half_away",
    "saturate",
    "work_dtype",
]
