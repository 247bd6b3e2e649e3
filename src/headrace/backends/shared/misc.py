"""Kernels of the basic operators (``ops/misc.py``), written once over an array namespace.

Every kernel here is ``kernel(xp, kc, inputs, args) -> tuple[Batch]``, where ``xp`` is the
backend's :class:`ArrayOps` (``NumpyXP`` in ``backends/cpu/misc.py``, ``TorchXP`` in
``backends/torch/misc.py``). Each backend module lists its batch kernels under the op names,
bound to its namespace with :func:`bind`.

Examples
--------
>>> reshape_shape((2, 3), {"shape": [3, -1], "rel_shape": None, "src_dims": None}, 6)
(3, 2)
>>> reshape_shape((2, 3), {"shape": None, "rel_shape": [0.5, 2], "src_dims": None}, 6)
(1, 6)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import indexing as _ix
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import Device
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext

Vals = dict[str, Any]
Kernel = Callable[[KernelContext, list[Batch], Vals], tuple[Batch]]


class ReshapeError(ShapeError):
    """A reshape to an incompatible number of elements."""


class ArrayOps(Protocol):
    """The array operations the generic kernels need from a backend."""

    @staticmethod
    def cast(a: Any, dt: _dt.DType) -> Any:
        """``a`` converted to ``dt`` (floats round to nearest, integers saturate)."""

    @staticmethod
    def reshape(a: Any, shape: tuple[int, ...]) -> Any:
        """``a`` with a new shape."""

    @staticmethod
    def transpose(a: Any, perm: Sequence[int]) -> Any:
        """``a`` with permuted dims, contiguous."""

    @staticmethod
    def stack(xs: Sequence[Any], axis: int) -> Any:
        """``xs`` joined along a new ``axis``."""

    @staticmethod
    def concat(xs: Sequence[Any], axis: int) -> Any:
        """``xs`` joined along an existing ``axis``."""

    @staticmethod
    def copy(a: Any) -> Any:
        """A copy of ``a``."""

    @staticmethod
    def full(shape: tuple[int, ...], value: Any, dt: _dt.DType) -> Any:
        """An array of ``shape`` filled with ``value``."""

    @staticmethod
    def one_hot(labels: Any, n: int, on: float, off: float, dt: _dt.DType) -> Any:
        """One-hot encoding of ``labels`` along a new last axis of ``n`` classes."""

    @staticmethod
    def from_numpy(a: np.ndarray, dev: Device, dt: _dt.DType) -> Any:
        """The numpy array ``a`` as an array of this backend on ``dev``."""


GenericKernel = Callable[[ArrayOps, KernelContext, list[Batch], Vals], tuple[Batch]]


def bind(fn: GenericKernel, xp: ArrayOps) -> Kernel:
    """The batch kernel ``fn`` for the array namespace ``xp`` (named like ``fn``)."""

    def kernel(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
        return fn(xp, kc, ins, v)

    functools.update_wrapper(kernel, fn)
    return kernel


# --- helpers ------------------------------------------------------------------------------------
def out_batch(
    kc: KernelContext, outs: list[Any], dt: _dt.DType, layout: str | None
) -> tuple[Batch]:
    """The output Batch of ``outs`` (``layout`` dropped when its rank does not fit)."""
    if layout is not None and outs and len(layout) != outs[0].ndim:
        layout = None
    return (Batch._wrap(outs, dt, layout, kc.device),)


def per_sample_vals(vals: Vals, n: int) -> list[Vals]:
    """The arguments of each of ``n`` samples (one shared dict when none varies)."""
    if has_per_sample(vals):
        return [sample_args(vals, i) for i in range(n)]
    return [vals] * n


def _scalar(a: Any) -> Any:
    return a.reshape(()).item() if hasattr(a, "reshape") else a


def _ints(v: Any) -> list[int]:
    return [int(d) for d in np.atleast_1d(v)]


def reshape_shape(shape: tuple[int, ...], a: Vals, size: int) -> tuple[int, ...]:
    """The output shape of ``reshape`` for a sample of ``shape`` (``size`` elements)."""
    if a["shape"] is not None and a["rel_shape"] is not None:
        raise InvalidArgumentError("reshape: pass shape or rel_shape, not both.")
    if a["src_dims"] is not None:
        return tuple(1 if d == -1 else shape[d] for d in _ints(a["src_dims"]))
    if a["rel_shape"] is not None:
        rel = np.atleast_1d(np.asarray(a["rel_shape"], dtype=np.float64))
        out = [round(r * shape[i]) if r >= 0 else -1 for i, r in enumerate(rel)]
    elif a["shape"] is not None:
        out = _ints(a["shape"])
    else:
        return shape
    if out.count(-1) > 1:
        raise ReshapeError("reshape: at most one extent may be -1.")
    if -1 in out:
        known = math.prod(v for v in out if v != -1)
        if known == 0 or size % known:
            raise ReshapeError(f"reshape: cannot infer the -1 extent of {out} for {size} elements.")
        out[out.index(-1)] = size // known
    if math.prod(out) != size:
        raise ReshapeError(
            f"reshape: cannot reshape a sample of shape {shape} ({size} elements) to "
            f"{tuple(out)} ({math.prod(out)} elements)."
        )
    return tuple(out)


# --- kernels ------------------------------------------------------------------------------------
def copy(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``copy``: the samples (copied when ``_force``), keeping their sources."""
    x = ins[0]
    s = x._samples
    outs = kc.map_samples(xp.copy, s) if v["_force"] else list(s)
    b = Batch._wrap(outs, x._dtype, x._layout, kc.device)
    b._sources = x._sources
    return (b,)


def cast(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``cast``: every sample converted to ``dtype``."""
    x, dt = ins[0], v["dtype"]
    src = x._dtype
    if src is not _dt.bfloat16 and dt is not _dt.bfloat16:
        return out_batch(kc, kc.map_samples(lambda a: xp.cast(a, dt), x._samples), dt, x._layout)

    def one(a: Any) -> Any:
        if not isinstance(a, np.ndarray):  # torch storage holds real bfloat16
            return xp.cast(a, dt)
        # the host stores bfloat16 as its bits: through float32 values
        f = _st.bf16_to_float32(a) if src is _dt.bfloat16 else a
        if dt is _dt.bfloat16:
            return _st.float32_to_bf16(f.astype(np.float32, copy=False))
        return xp.cast(f, dt)

    return out_batch(kc, kc.map_samples(one, x._samples), dt, x._layout)


def reshape(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``reshape``: per-sample ``shape``/``rel_shape``/``src_dims``."""
    x = ins[0]
    outs = []
    for i, (a, av) in enumerate(zip(x._samples, per_sample_vals(v, kc.n))):
        try:
            outs.append(xp.reshape(a, reshape_shape(tuple(a.shape), av, math.prod(a.shape))))
        except ReshapeError as e:
            raise ReshapeError(f"{e} (sample {i})") from None
    lay = v["layout"]
    if lay and outs and len(lay) != outs[0].ndim:
        raise InvalidArgumentError(
            f"reshape: layout {lay!r} has {len(lay)} letters for {outs[0].ndim}-D output samples "
            f"(shape {tuple(outs[0].shape)}). Give one letter per output dimension."
        )
    if lay is None and outs and outs[0].ndim == x.ndim and v["src_dims"] is None:
        lay = x._layout
    return out_batch(kc, outs, x._dtype, lay or None)


def transpose(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``transpose``: dims permuted by ``perm`` (and the layout, unless told otherwise)."""
    x = ins[0]
    perm = list(range(x.ndim))[::-1] if v["perm"] is None else _ints(v["perm"])  # default: reverse
    if sorted(perm) != list(range(x.ndim)):
        raise InvalidArgumentError(
            f"transpose: perm {perm} is not a permutation of 0..{x.ndim - 1}."
        )
    lay = v["output_layout"]
    if lay is None and x._layout:  # permuted with the dims, or else copied as it is
        lay = "".join(x._layout[p] for p in perm) if v["transpose_layout"] else x._layout
    outs = kc.map_samples(lambda a: xp.transpose(a, perm), x._samples)
    return out_batch(kc, outs, x._dtype, lay)


def expand_dims(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``expand_dims``: unit dims inserted at ``axes``."""
    x = ins[0]
    axes = sorted(_ints(v["axes"]))
    names = v["new_axis_names"]
    if names is not None and len(names) != len(axes):
        raise InvalidArgumentError(
            f"expand_dims: new_axis_names {names!r} must have one letter per axis {axes}."
        )
    outs = []
    for a in x._samples:
        shape = list(a.shape)
        for ax in axes:
            if ax < 0 or ax > len(shape):
                raise InvalidArgumentError(f"expand_dims: axis {ax} is out of range.")
            shape.insert(ax, 1)
        outs.append(xp.reshape(a, tuple(shape)))
    lay = None
    if names is not None and (x._layout or x.ndim == 0):
        lst = list(x._layout or "")
        for ax, ch in zip(axes, names):
            lst.insert(ax, ch)
        lay = "".join(lst)
    return out_batch(kc, outs, x._dtype, lay)


def squeeze(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``squeeze``: unit dims removed (``axes``, ``axis_names`` or all of them)."""
    x = ins[0]
    lay = x._layout
    axes: list[int] | None
    if v["axis_names"] is not None:
        if not lay:
            raise InvalidArgumentError("squeeze: axis_names needs an input layout.")
        axes = [lay.index(ch) for ch in v["axis_names"]]
    elif v["axes"] is not None:
        axes = [a % max(x.ndim, 1) for a in _ints(v["axes"])]
    else:
        axes = None
    outs = []
    for i, a in enumerate(x._samples):
        drop = axes if axes is not None else [d for d, e in enumerate(a.shape) if e == 1]
        for d in drop:
            if a.shape[d] != 1:
                raise ShapeError(
                    f"squeeze: dimension {d} of sample {i} has extent {a.shape[d]}, not 1."
                )
        outs.append(xp.reshape(a, tuple(e for d, e in enumerate(a.shape) if d not in drop)))
    drop0 = axes if axes is not None else []
    new_lay = "".join(c for d, c in enumerate(lay) if d not in drop0) if lay else None
    return out_batch(kc, outs, x._dtype, new_lay or None)


def _fill_shape(v: Vals) -> tuple[int, ...]:
    return tuple(_ints(v["shape"])) if v["shape"] is not None else ()


def _constant(xp: ArrayOps, kc: KernelContext, v: Vals, value: int) -> tuple[Batch]:
    dt = v["dtype"] or _dt.int32  # (the reference's default)
    shape = _fill_shape(v)
    return out_batch(kc, [xp.full(shape, value, dt) for _ in range(kc.n)], dt, v["layout"])


def zeros(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``zeros``: ``shape`` filled with 0 (int32 by default, as the reference)."""
    return _constant(xp, kc, v, 0)


def ones(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``ones``: ``shape`` filled with 1 (int32 by default, as the reference)."""
    return _constant(xp, kc, v, 1)


def full(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``full``: each fill value broadcast to ``shape`` (or cast when it is an array)."""
    shape = _fill_shape(v)
    fill = ins[0]
    dt = v["dtype"] or fill._dtype
    outs = []
    for f in fill._samples:
        if f.ndim == 0:
            outs.append(xp.full(shape, _scalar(f), dt))
        elif shape:  # an array fill value broadcast to the shape
            out = xp.full(shape, 0, dt)
            out[...] = xp.cast(f, dt)
            outs.append(out)
        else:
            outs.append(xp.cast(f, dt))
    return out_batch(kc, outs, dt, v["layout"])


def shapes(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``shapes``: each sample's shape as a 1-D array (int64 by default)."""
    dt = v["dtype"] or _dt.int64
    outs = [
        xp.from_numpy(np.asarray(a.shape, dtype=dt.numpy), kc.device, dt) for a in ins[0]._samples
    ]
    return out_batch(kc, outs, dt, None)


def _join(
    xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals, new_axis: bool
) -> tuple[Batch]:
    if not ins:
        raise InvalidArgumentError("stack/cat: at least one input is required.")
    first = ins[0]
    for j, b in enumerate(ins[1:], 1):
        if b._dtype != first._dtype:
            raise InvalidArgumentError(
                f"{kc.name}: input {j} is {b._dtype}, input 0 is {first._dtype}."
            )
    axis = v["axis"]
    ndim = first.ndim + (1 if new_axis else 0)
    name = v.get("axis_name")
    if not new_axis and name:  # cat: the named axis of the inputs' layout
        lay = first._layout or ""
        if len(name) != 1 or name not in lay:
            raise InvalidArgumentError(
                f"{kc.name}: axis_name {name!r} is not an axis of the input layout {lay!r}."
            )
        axis = lay.index(name)
    if axis < 0:
        axis += ndim
    if not 0 <= axis < max(ndim, 1):
        raise InvalidArgumentError(f"{kc.name}: axis {v['axis']} is out of range.")
    join = xp.stack if new_axis else xp.concat

    def one(i: int) -> Any:
        try:
            return join([b._samples[i] for b in ins], axis)
        except (ValueError, RuntimeError) as e:
            raise ShapeError(f"{kc.name}: shapes do not fit ({e}).") from None

    outs = kc.map(one, kc.worth_parallel(first._samples), chunked=True)
    lay = first._layout
    if new_axis:
        name = v["axis_name"]
        lay = (
            (lay[:axis] + name + lay[axis:])
            if (lay and name)
            else (name if (name and first.ndim == 0) else None)
        )
    return out_batch(kc, outs, first._dtype, lay)


def stack(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``stack``: the inputs' samples joined along a new ``axis``."""
    return _join(xp, kc, ins, v, new_axis=True)


def cat(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``cat``: the inputs' samples joined along an existing ``axis``."""
    return _join(xp, kc, ins, v, new_axis=False)


def one_hot(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``one_hot``: labels encoded along a new ``axis`` of ``num_classes``.

    The reference's rules: when ``axis`` is not given and every sample holds exactly one
    element (shape ``()``, ``(1,)``, ``(1, 1)``...), the samples are read as scalars and each
    output is ``(num_classes,)``, with layout ``axis_name`` alone. Otherwise the new axis goes
    at ``axis`` (the last place when not given), which must lie in ``[-1, ndim]``
    (:class:`InvalidArgumentError` otherwise); ``axis_name`` then needs an input layout of
    ``ndim`` letters, the new letter inserted at the new axis.
    """
    x = ins[0]
    n = v["num_classes"]
    if n <= 0:
        raise InvalidArgumentError(f"one_hot: num_classes must be positive (got {n}).")
    dt = v["dtype"] or _dt.float32
    on, off, name = v["on_value"], v["off_value"], v["axis_name"]
    axis = v["axis"]
    samples = x._samples
    if axis is None and samples and all(math.prod(a.shape) == 1 for a in samples):
        outs = [xp.one_hot(xp.reshape(a, ()), n, on, off, dt) for a in samples]
        return out_batch(kc, outs, dt, name)
    nd = x.ndim
    axis = -1 if axis is None else axis
    if not -1 <= axis <= nd:
        raise InvalidArgumentError(
            f"one_hot: axis {axis} is out of range [-1, {nd}] for {nd}-D input samples."
        )
    lay = None
    if name is not None:
        base = x._layout or ""
        if len(base) != nd:
            raise InvalidArgumentError(
                f"one_hot: axis_name needs an input layout of one letter per dimension"
                f" ({nd}), got {base!r}."
            )
        ax = axis % (nd + 1)
        lay = base[:ax] + name + base[ax:]
    outs = []
    for a in samples:
        o = xp.one_hot(a, n, on, off, dt)
        if axis != -1 and axis != o.ndim - 1:
            perm = list(range(o.ndim - 1))
            perm.insert(axis, o.ndim - 1)
            o = xp.transpose(o, perm)
        outs.append(o)
    return out_batch(kc, outs, dt, lay)


def per_frame(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``per_frame``: the samples unchanged, the layout starting with ``F``."""
    x = ins[0]
    lay = x._layout
    if x.ndim == 0:
        raise ShapeError("per_frame: the input needs at least one dimension (frames).")
    if lay and lay[0] == "F":
        new = lay
    elif lay and v["replace"]:
        new = "F" + lay[1:]
    elif lay:
        raise InvalidArgumentError(
            f"per_frame: layout {lay!r} does not start with 'F'; pass replace=True."
        )
    else:
        new = "F" + "*" * (x.ndim - 1)
    return out_batch(kc, list(x._samples), x._dtype, new)


def _subscript_index(spec: Sequence[Any], av: Vals) -> tuple[Any, ...]:
    comps: list[Any] = []
    d = 0
    for c in spec:
        if c is Ellipsis:
            comps.append(Ellipsis)
            continue
        if c == "i":
            comps.append(av[f"at_{d}"])
        else:
            comps.append(slice(av[f"lo_{d}"], av[f"hi_{d}"], av[f"step_{d}"]))
        d += 1
    return _ix.normalize(tuple(comps))


def tensor_subscript(xp: ArrayOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``_tensor_subscript``: per-sample indexing described by ``_spec`` and its bounds."""
    x = ins[0]
    spec = v["_spec"]
    outs = []
    full0: tuple[Any, ...] = ()
    for i, (a, av) in enumerate(zip(x._samples, per_sample_vals(v, kc.n))):
        full = _ix.expand(_subscript_index(spec, av), a.ndim)
        _ix.check_bounds(full, tuple(a.shape))
        outs.append(_ix.apply(a, full))
        if i == 0:
            full0 = full
    lay = _ix.result_layout(full0, x._layout) if outs else x._layout
    return out_batch(kc, outs, x._dtype, lay)
