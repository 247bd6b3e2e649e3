"""What crosses between a loader and its worker processes, besides the shared-memory slots.

* :func:`pickle_function` / :func:`unpickle_function`: the per-batch function and the data set
  for ``spawn``/``forkserver`` workers, with every :class:`~headrace.random.RNG` they reach
  replaced by a key (its index), so that worker and parent agree on which generator is which.
* :func:`stateful_foreign_rng`: finds generators whose draws workers cannot reproduce (numpy's,
  Python's ``random``, torch's) among what the function holds.
* :func:`to_torch`: one pipeline output (or a structure of them) as torch tensors on a device.
* :func:`split_outputs` / :func:`join_outputs`: a result structure (tuple, list, dict) with its
  tensors taken out, and put back.

Examples
--------
>>> import torch
>>> spec, tensors = split_outputs((torch.zeros(2), {"y": torch.ones(1)}, None))
>>> join_outputs(spec, [t + 1 for t in tensors])
(tensor([1., 1.]), {'y': tensor([2.])}, None)
"""

from __future__ import annotations

import io
import pickle
import random
import types
from collections.abc import Mapping
from typing import Any

from headrace._core.errors import InvalidTypeError
from headrace._rng import RNG


# --- the function and data set for spawn/forkserver workers ----------------------------------
class _Pickler(pickle.Pickler):
    def __init__(self, buf: io.BytesIO) -> None:
        super().__init__(buf, protocol=pickle.HIGHEST_PROTOCOL)
        self.rngs: list[RNG] = []

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is RNG:
            for k, r in enumerate(self.rngs):
                if r is obj:
                    return ("rng", k, dict(obj.get_state()))
            self.rngs.append(obj)
            return ("rng", len(self.rngs) - 1, dict(obj.get_state()))
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, buf: io.BytesIO) -> None:
        super().__init__(buf)
        self.rngs: dict[int, RNG] = {}

    def persistent_load(self, pid: Any) -> Any:
        _, key, state = pid
        r = self.rngs.get(key)
        if r is None:
            r = self.rngs[key] = RNG(state=state)
        return r


def pickle_function(obj: Any, method: str) -> tuple[bytes, list[RNG]]:
    """Pickle ``obj``; returns the bytes and the generators it reaches (key = list index)."""
    buf = io.BytesIO()
    p = _Pickler(buf)
    try:
        p.dump(obj)
    except Exception as e:
        raise TypeError(
            f"Loader: with the {method!r} start method the per-batch function and the reader's "
            f"data set are pickled to reach the worker processes, and pickling failed ({e}). "
            "Define the function at module level (not a lambda or a local function; "
            "functools.partial is fine), or use multiprocessing_context='fork' when CUDA is not "
            "initialised in this process."
        ) from e
    return buf.getvalue(), p.rngs


def unpickle_function(data: bytes) -> tuple[Any, dict[int, RNG]]:
    """The object pickled by :func:`pickle_function` and its generators by key."""
    u = _Unpickler(io.BytesIO(data))
    obj = u.load()
    return obj, u.rngs


# --- stateful generators that cannot be scheduled --------------------------------------------
def _foreign(obj: Any) -> str | None:
    import numpy as np

    if isinstance(obj, (np.random.Generator, np.random.RandomState, random.Random)):
        return f"{type(obj).__module__}.{type(obj).__qualname__}"
    t = type(obj)
    if t.__module__.startswith("torch") and t.__name__ == "Generator":
        return "torch.Generator"
    return None


_ATOMS = (str, bytes, int, float, type, types.ModuleType)


def stateful_foreign_rng(fn: Any, depth: int = 4) -> str | None:
    """The kind of the first numpy/Python/torch random generator object that ``fn`` holds
    (closure, defaults, ``functools.partial`` arguments, bound instance, referenced globals),
    or None.

    Examples
    --------
    >>> import numpy as np
    >>> g = np.random.default_rng(0)
    >>> stateful_foreign_rng(lambda x: g.random()), stateful_foreign_rng(lambda x: x)
    ('numpy.random._generator.Generator', None)
    """
    seen: set[int] = set()

    def walk(o: Any, d: int) -> str | None:
        if d < 0 or id(o) in seen or isinstance(o, _ATOMS):
            return None
        seen.add(id(o))
        kind = _foreign(o)
        if kind is not None:
            return kind
        children: list[Any] = []
        if isinstance(o, types.FunctionType):
            children += [c.cell_contents for c in o.__closure__ or () if _filled(c)]
            children += list(o.__defaults__ or ()) + list((o.__kwdefaults__ or {}).values())
            g = o.__globals__
            children += [g[n] for n in _names(o.__code__) if n in g]
        elif isinstance(o, types.MethodType):
            children += [o.__func__, o.__self__]
        elif hasattr(o, "func") and hasattr(o, "args") and hasattr(o, "keywords"):  # partial
            children += [o.func, *o.args, *o.keywords.values()]
        elif isinstance(o, (list, tuple, set, frozenset)):
            children += list(o)[:64]
        elif isinstance(o, Mapping):
            children += list(o.values())[:64]
        elif hasattr(o, "__dict__") and not isinstance(o, types.BuiltinFunctionType):
            children += list(vars(o).values())[:64]
        for c in children:
            found = walk(c, d - 1)
            if found is not None:
                return found
        return None

    return walk(fn, depth)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _names(c)
    return names


# --- result structures ------------------------------------------------------------------------
class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return _Leaf, (self.index,)


def split_outputs(value: Any) -> tuple[Any, list[Any]]:
    """``value`` with each torch tensor replaced by a placeholder, and the tensors in order."""
    import torch

    tensors: list[Any] = []

    def walk(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            tensors.append(v)
            return _Leaf(len(tensors) - 1)
        if isinstance(v, Mapping):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, (tuple, list)):
            return type(v)(walk(x) for x in v)
        return v

    return walk(value), tensors


def join_outputs(spec: Any, tensors: list[Any]) -> Any:
    """Inverse of :func:`split_outputs`."""
    if isinstance(spec, _Leaf):
        return tensors[spec.index]
    if isinstance(spec, Mapping):
        return {k: join_outputs(x, tensors) for k, x in spec.items()}
    if isinstance(spec, (tuple, list)):
        return type(spec)(join_outputs(x, tensors) for x in spec)
    return spec


__all__ = [
    "join_outputs",
    "pickle_function",
    "split_outputs",
    "stateful_foreign_rng",
    "unpickle_function",
]


def to_torch(value: Any, device: Any, non_blocking: bool) -> Any:
    """Convert one pipeline output (Batch, Tensor, numpy, torch, or a tuple/list/dict of them)."""
    import numpy as np
    import torch

    from headrace._core.batch import Batch
    from headrace._core.tensor import Tensor

    if isinstance(value, Mapping):
        return {k: to_torch(v, device, non_blocking) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_torch(v, device, non_blocking) for v in value)
    if isinstance(value, (Batch, Tensor)):
        t = value.torch()
    elif isinstance(value, np.ndarray):
        t = torch.from_numpy(value)
    elif isinstance(value, torch.Tensor):
        t = value
    elif value is None:
        return None
    else:
        raise InvalidTypeError(
            f"Loader: the per-batch function returned a {type(value).__name__}; return "
            "headrace Batches/Tensors, numpy arrays or torch tensors (or a tuple/dict of them)."
        )
    if device is not None and t.device != device:
        t = t.to(device, non_blocking=non_blocking and device.type == "cuda")
    return t
