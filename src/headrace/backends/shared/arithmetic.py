"""The element-wise arithmetic kernel, written once for any array backend.

Each backend module (``backends/cpu/arithmetic.py``, ``backends/torch/arithmetic.py``) binds it
to its own function table and cast with :func:`arithmetic_kernel`. Types follow
:func:`headrace._core.dtype.arithmetic_types`.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> kc = type("KC", (), {"n": 1, "device": ndd.device("cpu"),
...                       "map": lambda self, f, *a, **k: [f(i) for i in range(self.n)],
...                       "worth_parallel": lambda self, samples: False})()
>>> kern = arithmetic_kernel({"add": np.add}, lambda a, t: np.asarray(a).astype(t.numpy))
>>> x = ndd.batch([np.array([1, 2], np.uint8)])
>>> (out,) = kern(kc, [x, x], {"expression": "add"})
>>> out.dtype is ndd.uint8, out.select(0).torch().tolist()
(True, [2, 4])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._dispatch.kernel_context import KernelContext

Cast = Callable[[Any, _dt.DType], Any]
Kernel = Callable[[KernelContext, list[Batch], dict[str, Any]], tuple[Batch]]


def arithmetic_kernel(funcs: Mapping[str, Callable[..., Any]], cast: Cast) -> Kernel:
    """The batch kernel of ``arithmetic_generic_op`` for one backend.

    Parameters
    ----------
    funcs : mapping of str to callable
        The backend's function of each expression name (``"add"``, ``"sqrt"``…).
    cast : callable
        ``cast(array, dtype)``: the backend's plain type conversion.
    """

    def arithmetic_generic_op(
        kc: KernelContext, ins: list[Batch], v: dict[str, Any]
    ) -> tuple[Batch]:
        name = v["expression"]
        fn = funcs[name]
        ct, ot = _dt.arithmetic_types(name, [b._dtype for b in ins])
        # a numpy ufunc computing in ct: it converts each operand on the fly (in blocks that stay
        # in the cache), the same values as converting them first, one full-size pass less
        direct = ot is ct and ct is not _dt.bool_ and isinstance(fn, np.ufunc) and fn.nout == 1
        reuse = ot is ct and isinstance(fn, np.ufunc) and ins[0]._dtype is not ct

        def one(i: int) -> Any:
            if direct:
                try:
                    r = fn(*[b._samples[i] for b in ins], dtype=ct.numpy, casting="unsafe")
                except TypeError:  # (no loop of that type: convert first, as below)
                    pass
                else:
                    return r if not _dtype_mismatch(r, ot) else cast(r, ot)
            args = [_as(b._samples[i], b._dtype, ct, cast) for b in ins]
            if (
                reuse
                and args[0] is not ins[0]._samples[i]  # (a conversion, never the input itself)
                and all(a.shape == args[0].shape or not a.ndim for a in args[1:])
            ):
                r = fn(*args, out=args[0])  # into the first operand's fresh converted copy
            else:
                r = fn(*args)
            if ot is not ct or _dtype_mismatch(r, ot):
                r = cast(r, ot)
            return r

        outs = kc.map(one, kc.worth_parallel(ins[0]._samples), chunked=True)
        nd = outs[0].ndim if outs else 0
        lay = next((b._layout for b in ins if b._layout and len(b._layout) == nd), None)
        return (Batch._wrap(outs, ot, lay, kc.device),)

    return arithmetic_generic_op


def _as(a: Any, have: _dt.DType, want: _dt.DType, cast: Cast) -> Any:
    return a if have is want else cast(a, want)


def _dtype_mismatch(r: Any, ot: _dt.DType) -> bool:
    if isinstance(r, np.ndarray):
        return r.dtype != ot.numpy
    return isinstance(r, np.generic)
