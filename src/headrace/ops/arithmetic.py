"""Element-wise arithmetic behind the Tensor/Batch operators and ``ndd.math``.

Operands may be ``Tensor``, ``Batch``, Python scalars/lists or arrays; samples broadcast
NumPy-style. Result types follow the reference's promotion table
(:func:`headrace._core.dtype.promote`): ``/`` of integers gives float32, comparisons give
bool. CPU and GPU operands cannot be mixed.

Examples
--------
>>> import headrace as ndd
>>> b = ndd.batch([[1, 2, 3], [4, 5]])
>>> [t.torch().tolist() for t in b + ndd.batch([[5], [42]])]
[[6, 7, 8], [46, 47]]
>>> (ndd.tensor([1, 2], dtype=ndd.uint8) + 1).dtype is ndd.int32
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.entry import provide
from headrace._core.errors import InvalidArgumentError
from headrace._core.proxy import is_proxy
from headrace._core.proxy import unwrap as unwrap_proxy
from headrace._core.tensor import Tensor
from headrace._dispatch.args import Arg, to_str
from headrace._dispatch.schema import OpSchema

#: Element-wise ``expression`` of the inputs, typed by ``_core.dtype.arithmetic_types``; kernels
#: ``arithmetic_generic_op`` in ``backends/<backend>/arithmetic.py``. It runs eagerly (capture
#: mode does not record it).
ARITH = OpSchema(
    "arithmetic_generic_op",
    "arithmetic",
    inputs=("inputs",),
    variadic=True,
    args=(Arg("expression", to_str, "add"),),
    capture=False,
)

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_const_cache: dict[tuple[type, Any], Tensor] = {}


def _constant(v: Any) -> Tensor:
    key = (type(v), v)
    t = _const_cache.get(key)
    if t is not None:
        return t
    if isinstance(v, bool):
        arr, dt = np.asarray(v, np.bool_), _dt.bool_
    elif isinstance(v, int):
        if not _INT32_MIN <= v <= _INT32_MAX:
            raise OverflowError(
                f"The integer constant {v} does not fit in int32. Wrap it in a tensor of a wider "
                "type, e.g. ndd.tensor(np.int64(v))."
            )
        arr, dt = np.asarray(v, np.int32), _dt.int32
    else:
        arr, dt = np.asarray(v, np.float32), _dt.float32
    t = Tensor._wrap(arr, dt, None, _cpu())
    if len(_const_cache) < 4096:
        _const_cache[key] = t
    return t


def _cpu() -> Any:
    from headrace._core.device import CPU

    return CPU


def _operand(v: Any) -> Tensor | Batch:
    if isinstance(v, (Tensor, Batch)):
        return v
    if isinstance(v, (bool, int, float)) and not isinstance(v, np.generic):
        return _constant(v)
    if is_proxy(v):
        return _operand(unwrap_proxy(v))
    return Tensor(v)


@provide("arithmetic")
def arithmetic(name: str, *operands: Any) -> Any:
    """Apply the element-wise operation ``name`` to the operands."""
    ops = []
    kinds = set()
    for v in operands:
        o = _operand(v)
        if not isinstance(v, (bool, int, float, list, tuple)):
            kinds.add(o.device.device_type)
        ops.append(o)
    if len(kinds) > 1:
        where = ", ".join(f"operand {i}: {o.device}" for i, o in enumerate(ops))
        raise InvalidArgumentError(
            f"Cannot mix GPU and CPU inputs. Operator `{name}`: an operand is not on the "
            f"requested device ({where}); move them with .gpu() or .cpu()."
        )
    # on the GPU: the first GPU operand's device (not the current one, which may differ)
    device = next((o.device for o in ops if o.device.device_type == "gpu"), None)
    return ARITH.call(ops, device=device, expression=name)
