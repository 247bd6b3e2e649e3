"""Kernels of the basic operators (``ops/misc.py``), written once over an array namespace.

``register(device, xp)`` registers every kernel for one backend; this module registers the
numpy (CPU) ones, ``backends/torch/misc.py`` the torch ones with the same code.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import indexing as _ix
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.ops import misc as M


class ReshapeError(ShapeError):
    """A reshape to an incompatible number of elements."""


class NumpyXP:
    """The array operations the generic kernels need, for numpy."""

    @staticmethod
    def cast(a: Any, dt: _dt.DType) -> Any:
        return cast_saturate_np(a, dt)

    reshape = staticmethod(lambda a, s: a.reshape(s))
    transpose = staticmethod(lambda a, p: np.ascontiguousarray(np.transpose(a, p)))
    stack = staticmethod(lambda xs, axis: np.stack(xs, axis))
    concat = staticmethod(lambda xs, axis: np.concatenate(xs, axis))
    copy = staticmethod(lambda a: a.copy())

    @staticmethod
    def full(shape: tuple[int, ...], value: Any, dt: _dt.DType, like: Any = None) -> Any:
        return np.full(shape, value, dtype=dt.numpy)

    @staticmethod
    def one_hot(labels: Any, n: int, on: float, off: float, dt: _dt.DType) -> Any:
        hot = labels.astype(np.int64)[..., None] == np.arange(n)
        return np.where(hot, on, off).astype(dt.numpy)


def cast_saturate_np(a: np.ndarray, dt: _dt.DType) -> np.ndarray:
    """numpy cast with the reference's rules: round-to-nearest from floats, then saturate."""
    target = dt.numpy
    if dt.kind in (_dt.DType.Kind.signed, _dt.DType.Kind.unsigned):
        info = np.iinfo(target)
        if a.dtype.kind == "f":
            return np.clip(round_half_away(a), info.min, info.max).astype(target)
        if (
            (a.dtype.kind in "iu" and np.iinfo(a.dtype).max > info.max)
            or (a.dtype.kind == "i" and info.min == 0)
            or (a.dtype.kind in "iu" and np.iinfo(a.dtype).min < info.min)
        ):
            return np.clip(a, info.min, info.max).astype(target)
    if dt is _dt.bool_:
        return a != 0
    return a.astype(target)


def round_half_away(a: np.ndarray) -> np.ndarray:
    """Round to nearest, halves away from zero (the reference's float → int rule)."""
    return np.where(a >= 0, np.floor(a + 0.5), np.ceil(a - 0.5))


def _out(kc: KernelContext, outs: list[Any], dt: _dt.DType, layout: str | None) -> tuple[Batch]:
    if layout is not None and outs and len(layout) != outs[0].ndim:
        layout = None
    return (Batch._wrap(outs, dt, layout, kc.device),)


def _per(vals: dict[str, Any], n: int) -> list[dict[str, Any]]:
    if has_per_sample(vals):
        return [sample_args(vals, i) for i in range(n)]
    return [vals] * n


def _reshape_shape(shape: tuple[int, ...], a: dict[str, Any], size: int) -> tuple[int, ...]:
    if a["shape"] is not None and a["rel_shape"] is not None:
        raise InvalidArgumentError("reshape: pass shape or rel_shape, not both.")
    if a["src_dims"] is not None:
        src = [int(d) for d in np.atleast_1d(a["src_dims"])]
        return tuple(1 if d == -1 else shape[d] for d in src)
    if a["rel_shape"] is not None:
        rel = np.atleast_1d(np.asarray(a["rel_shape"], dtype=np.float64))
        out = [round(r * shape[i]) if r >= 0 else -1 for i, r in enumerate(rel)]
    elif a["shape"] is not None:
        out = [int(v) for v in np.atleast_1d(a["shape"])]
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


def register(device: str, xp: Any) -> None:
    """Register the basic kernels for ``device`` using the array namespace ``xp``."""

    @M.COPY.legacy_kernel(device)
    def _copy(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x = ins[0]
        s = x._samples
        outs = [xp.copy(a) for a in s] if v["_force"] else list(s)
        b = Batch._wrap(outs, x._dtype, x._layout, kc.device)
        b._sources = x._sources
        return (b,)

    @M.CAST.legacy_kernel(device)
    def _cast(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x, dt = ins[0], v["dtype"]
        return _out(kc, [xp.cast(a, dt) for a in x._samples], dt, x._layout)

    @M.RESHAPE.legacy_kernel(device)
    def _reshape(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x = ins[0]
        outs = []
        for i, (a, av) in enumerate(zip(x._samples, _per(v, kc.n))):
            try:
                outs.append(xp.reshape(a, _reshape_shape(tuple(a.shape), av, math.prod(a.shape))))
            except ReshapeError as e:
                raise ReshapeError(f"{e} (sample {i})") from None
        lay = v["layout"]
        if lay is None and outs and outs[0].ndim == x.ndim and v["src_dims"] is None:
            lay = x._layout
        return _out(kc, outs, x._dtype, lay or None)

    @M.TRANSPOSE.legacy_kernel(device)
    def _transpose(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x = ins[0]
        perm = [int(p) for p in np.atleast_1d(v["perm"])]
        if sorted(perm) != list(range(x.ndim)):
            raise InvalidArgumentError(
                f"transpose: perm {perm} is not a permutation of 0..{x.ndim - 1}."
            )
        lay = v["output_layout"]
        if lay is None and v["transpose_layout"] and x._layout:
            lay = "".join(x._layout[p] for p in perm)
        return _out(kc, [xp.transpose(a, perm) for a in x._samples], x._dtype, lay)

    @M.EXPAND_DIMS.legacy_kernel(device)
    def _expand(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x = ins[0]
        axes = sorted(int(a) for a in np.atleast_1d(v["axes"]))
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
        return _out(kc, outs, x._dtype, lay)

    @M.SQUEEZE.legacy_kernel(device)
    def _squeeze(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x = ins[0]
        lay = x._layout
        if v["axis_names"] is not None:
            if not lay:
                raise InvalidArgumentError("squeeze: axis_names needs an input layout.")
            axes = [lay.index(ch) for ch in v["axis_names"]]
        elif v["axes"] is not None:
            axes = [int(a) % max(x.ndim, 1) for a in np.atleast_1d(v["axes"])]
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
        return _out(kc, outs, x._dtype, new_lay or None)

    def _fill(value: Any, name: str) -> Any:
        def k(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
            shape = (
                tuple(int(s) for s in np.atleast_1d(v["shape"])) if v["shape"] is not None else ()
            )
            if value is None:
                fv = ins[0]._samples
                dt = v["dtype"] or ins[0]._dtype
                outs = [
                    xp.full(shape or tuple(f.shape), _scalar(f), dt)
                    if f.ndim == 0 or shape
                    else xp.cast(f, dt)
                    for f in fv
                ]
            else:
                dt = v["dtype"] or _dt.float32
                outs = [xp.full(shape, value, dt) for _ in range(kc.n)]
            return _out(kc, outs, dt, v["layout"])

        return k

    M.ZEROS.legacy_kernel(device)(_fill(0, "zeros"))
    M.ONES.legacy_kernel(device)(_fill(1, "ones"))
    M.FULL.legacy_kernel(device)(_fill(None, "full"))

    @M.SHAPES.legacy_kernel(device)
    def _shapes(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        dt = v["dtype"] or _dt.int64
        outs = [np.asarray(a.shape, dtype=dt.numpy) for a in ins[0]._samples]
        if device != "cpu":
            outs = [_st.move(o, kc.device, dt) for o in outs]
        return _out(kc, outs, dt, None)

    def _join(stack: bool) -> Any:
        def k(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
            if not ins:
                raise InvalidArgumentError("stack/cat: at least one input is required.")
            first = ins[0]
            for j, b in enumerate(ins[1:], 1):
                if b._dtype != first._dtype:
                    raise InvalidArgumentError(
                        f"{kc.name}: input {j} is {b._dtype}, input 0 is {first._dtype}."
                    )
            axis = v["axis"]
            ndim = first.ndim + (1 if stack else 0)
            if axis < 0:
                axis += ndim
            if not 0 <= axis < max(ndim, 1):
                raise InvalidArgumentError(f"{kc.name}: axis {v['axis']} is out of range.")
            outs = []
            for i in range(kc.n):
                parts = [b._samples[i] for b in ins]
                try:
                    outs.append(xp.stack(parts, axis) if stack else xp.concat(parts, axis))
                except (ValueError, RuntimeError) as e:
                    raise ShapeError(f"{kc.name}: sample {i}: shapes do not fit ({e}).") from None
            lay = first._layout
            if stack:
                name = v["axis_name"]
                lay = (
                    (lay[:axis] + name + lay[axis:])
                    if (lay and name)
                    else (name if (name and first.ndim == 0) else None)
                )
            return _out(kc, outs, first._dtype, lay)

        return k

    M.STACK.legacy_kernel(device)(_join(True))
    M.CAT.legacy_kernel(device)(_join(False))

    @M.ONE_HOT.legacy_kernel(device)
    def _one_hot(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x = ins[0]
        n = v["num_classes"]
        if n <= 0:
            raise InvalidArgumentError(f"one_hot: num_classes must be positive (got {n}).")
        dt = v["dtype"] or _dt.float32
        outs = []
        for a in x._samples:
            o = xp.one_hot(a, n, v["on_value"], v["off_value"], dt)
            axis = v["axis"]
            if axis != -1 and axis != o.ndim - 1:
                perm = list(range(o.ndim - 1))
                perm.insert(axis % o.ndim, o.ndim - 1)
                o = xp.transpose(o, perm)
            outs.append(o)
        lay = None
        if v["axis_name"] is not None:
            base = x._layout or ""
            if len(base) == x.ndim:
                ax = v["axis"] % (x.ndim + 1)
                lay = base[:ax] + v["axis_name"] + base[ax:]
        return _out(kc, outs, dt, lay)

    @M.PER_FRAME.legacy_kernel(device)
    def _per_frame(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
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
        return _out(kc, list(x._samples), x._dtype, new)

    @M.SUBSCRIPT.legacy_kernel(device)
    def _subscript(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        x = ins[0]
        spec = v["_spec"]
        outs = []
        full0: tuple[Any, ...] = ()
        for i, (a, av) in enumerate(zip(x._samples, _per(v, kc.n))):
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
            idx = _ix.normalize(tuple(comps))
            full = _ix.expand(idx, a.ndim)
            _ix.check_bounds(full, tuple(a.shape))
            outs.append(_ix.apply(a, full))
            if i == 0:
                full0 = full
        lay = _ix.result_layout(full0, x._layout) if outs else x._layout
        return _out(kc, outs, x._dtype, lay)


def _scalar(a: Any) -> Any:
    return a.reshape(()).item() if hasattr(a, "reshape") else a


register("cpu", NumpyXP)
