"""Helpers shared by the parameter modules: argument checks (layouts: :mod:`headrace._core.layout`).

A *plan* (:class:`headrace._dispatch.planned.KernelPlan`, re-exported here for the parameter
modules of other families) is what a parameter function returns for one sample.

Examples
--------
>>> as_float_list("resize", "size", [3, 4], 2)
[3.0, 4.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.planned import KernelPlan as KernelPlan
from headrace.types import DALIInterpType, interp_type


def as_float_list(op: str, name: str, value: Any, n: int) -> list[float]:
    """Broadcast a scalar or check a length-``n`` sequence, returning floats.

    Examples
    --------
    >>> as_float_list("resize", "size", 3, 2)
    [3.0, 3.0]
    """
    arr = np.asarray(value, dtype=np.float64).ravel()
    if arr.size == 1:
        return [float(arr[0])] * n
    if arr.size != n:
        raise InvalidArgumentError(
            f"{op}: `{name}` needs 1 or {n} values (got {arr.size}: {arr.tolist()}). "
            f"Give one value per spatial axis."
        )
    return [float(v) for v in arr]


def check_choice(op: str, name: str, value: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise InvalidArgumentError.

    Examples
    --------
    >>> check_choice("crop", "rounding", "round", ("round", "truncate"))
    'round'
    """
    if value not in choices:
        raise InvalidArgumentError(
            f"{op}: `{name}` must be one of {list(choices)} (got {value!r}). "
            "Pick one of the listed values."
        )
    return value


def nn_or_linear(op: str, value: Any) -> str:
    """``"nn"`` or ``"linear"`` for an interpolation type, the only two that warps support.

    Examples
    --------
    >>> nn_or_linear("rotate", DALIInterpType.INTERP_NN)
    'nn'
    """
    try:
        kind = interp_type(value)
    except ValueError as e:
        raise InvalidArgumentError(f"{op}: {e}") from None
    if kind not in (DALIInterpType.INTERP_NN, DALIInterpType.INTERP_LINEAR):
        raise InvalidArgumentError(
            f"{op}: only nearest and linear interpolation are supported (got {kind.name}). "
            "Use INTERP_NN or INTERP_LINEAR."
        )
    return "nn" if kind == DALIInterpType.INTERP_NN else "linear"
