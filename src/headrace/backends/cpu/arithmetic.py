"""NumPy kernel of the element-wise arithmetic operator: the function table and cast of
:mod:`headrace.backends.shared.numpy_arithmetic`, bound to the generic kernel of
:mod:`headrace.backends.shared.arithmetic` (bfloat16 computed as float32 values)."""

from __future__ import annotations

from typing import Any

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.storage import bf16_to_float32, cast
from headrace.backends.shared.arithmetic import arithmetic_kernel
from headrace.backends.shared.numpy_arithmetic import NUMPY_FUNCS, np_cast

_numpy_kernel = arithmetic_kernel(NUMPY_FUNCS, np_cast)


def arithmetic_generic_op(kc: Any, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
    """The batch kernel of ``arithmetic_generic_op`` (found by name). bfloat16 data, stored on
    the host as its bits, is computed on as float32 values and rounded back to bfloat16.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> t = ndd.cast(ndd.tensor(np.array([1.5, -3.25], np.float32)), dtype=ndd.bfloat16)
    >>> r = t * 2
    >>> r.dtype is ndd.bfloat16, r.torch().tolist()
    (True, [3.0, -6.5])
    """
    if not any(b._dtype is _dt.bfloat16 for b in ins):
        return _numpy_kernel(kc, ins, v)
    _, ot = _dt.arithmetic_types(v["expression"], [b._dtype for b in ins])
    values = [
        Batch._wrap([bf16_to_float32(s) for s in b._samples], _dt.float32, b._layout, b.device)
        if b._dtype is _dt.bfloat16
        else b
        for b in ins
    ]
    (out,) = _numpy_kernel(kc, values, v)
    if out._dtype is ot:
        return (out,)
    samples = [cast(s, ot, out._dtype) for s in out._samples]
    return (Batch._wrap(samples, ot, out._layout, out.device),)
