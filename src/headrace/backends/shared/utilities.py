"""Kernels of the batch and type utilities (``ops/utilities.py``), written once over an array
namespace, as :mod:`headrace.backends.shared.misc` does for the basic operators.

Every kernel here is ``kernel(xp, kc, inputs, args) -> tuple[Batch]``; ``xp`` is the backend's
:class:`UtilityOps` (``backends/cpu/utilities.py``, ``backends/torch/utilities.py``), bound
with :func:`headrace.backends.shared.misc.bind`.

Examples
--------
>>> reinterpret_shape((2, 3, 4), 1, 4, {"shape": None, "rel_shape": None, "src_dims": None})
(2, 3, 1)
>>> permutation(np.random.default_rng(0), 4, allow_repetitions=False, no_fixed_points=True)
array([3, 2, 1, 0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.args import PerSample
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.misc import (
    ArrayOps,
    ReshapeError,
    out_batch,
    per_sample_vals,
    reshape_shape,
)

Vals = dict[str, Any]


class UtilityOps(ArrayOps, Protocol):
    """The array operations of :class:`~headrace.backends.shared.misc.ArrayOps` plus two more."""

    @staticmethod
    def view(a: Any, dt: _dt.DType, shape: tuple[int, ...]) -> Any:
        """``a``'s bytes read as ``dt`` elements of ``shape`` (no copy where possible)."""

    @staticmethod
    def take(a: Any, index: Sequence[int]) -> Any:
        """The slices ``a[i]`` of the outermost axis for ``i`` in ``index``, stacked."""


def _host_ints(a: Any) -> np.ndarray:
    """A per-sample integer argument given as an input sample, as a numpy int64 vector."""
    arr = np.asarray(_st.move(a, CPU, _st.dtype_of(a)))
    if arr.dtype.kind not in "iu":
        raise InvalidArgumentError(f"expected integers, got {arr.dtype}")
    return arr.astype(np.int64)


def _frames_layout(op: str, layout: str | None) -> None:
    if layout and layout[0] != "F":
        raise ShapeError(
            f"{op}: expects sequences, whose layout starts with 'F' (frames), got layout "
            f"{layout!r}. Give the data a layout such as 'FHWC', or none."
        )


def _check_frame(op: str, i: int, n_frames: int, what: str) -> None:
    if not 0 <= i < n_frames:
        raise InvalidArgumentError(
            f"{op}: {what} {i} is out of range for a sequence of {n_frames} frames. "
            f"Use indices in [0, {n_frames})."
        )


# --- batch order ---------------------------------------------------------------------------
def permutation(
    gen: np.random.Generator, n: int, *, allow_repetitions: bool, no_fixed_points: bool
) -> np.ndarray:
    """``n`` indices into a batch of ``n``: a permutation, or independent draws with
    ``allow_repetitions``; ``no_fixed_points`` keeps ``out[i] != i`` (ignored for ``n == 1``)."""
    derange = no_fixed_points and n > 1
    if allow_repetitions:
        if not derange:
            return gen.integers(0, n, n)
        v = gen.integers(0, n - 1, n)
        return v + (v >= np.arange(n))  # one of the n - 1 other indices, uniformly
    while True:  # rejection: a random permutation is a derangement with probability ~1/e
        p = gen.permutation(n)
        if not derange or not (p == np.arange(n)).any():
            return p


def batch_permutation(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals
                      ) -> tuple[Batch]:  # fmt: skip
    """``batch_permutation``: one int32 scalar per sample, drawn from the call's generator."""
    p = permutation(
        kc.generator(),
        kc.n,
        allow_repetitions=v["allow_repetitions"],
        no_fixed_points=v["no_fixed_points"],
    ).astype(np.int32)
    outs = [xp.from_numpy(p[i : i + 1].reshape(()), kc.device, _dt.int32) for i in range(kc.n)]
    return out_batch(kc, outs, _dt.int32, None)


def permute_batch(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``permute_batch``: sample ``i`` of the output is sample ``indices[i]`` of the input."""
    x, ind, n = ins[0], v["indices"], kc.n
    if type(ind) is PerSample:
        idx = []
        for i, a in enumerate(ind):
            a = np.asarray(a)
            if a.size != 1:
                raise InvalidArgumentError(
                    f"permute_batch: sample {i}: a per-sample index must be a scalar, got shape "
                    f"{a.shape}."
                )
            idx.append(int(a.reshape(())))
    else:
        idx = [int(i) for i in np.atleast_1d(ind)]
        if len(idx) != n:
            raise InvalidArgumentError(
                f"permute_batch: got {len(idx)} indices for a batch of {n} samples. Pass one "
                "index per sample."
            )
    for i, j in enumerate(idx):
        if not 0 <= j < n:
            raise InvalidArgumentError(
                f"permute_batch: index {j} (output sample {i}) is out of range for a batch of {n} "
                f"samples. Use indices in [0, {n})."
            )
    s = x._samples
    assert s is not None
    b = Batch._wrap([s[j] for j in idx], x._dtype, x._layout, kc.device)
    if x._sources is not None:
        b._sources = [x._sources[j] for j in idx]
    return (b,)


# --- types and shapes ----------------------------------------------------------------------
def cast_like(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``cast_like``: the first input converted (saturating) to the second input's type."""
    x, dt = ins[0], ins[1]._dtype
    return out_batch(kc, [xp.cast(a, dt) for a in x._samples], dt, x._layout)  # type: ignore[union-attr]


def _like(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals, value: int
          ) -> tuple[Batch]:  # fmt: skip
    x = ins[0]
    dt = v["dtype"] or x._dtype
    outs = [xp.full(tuple(a.shape), value, dt) for a in x._samples]  # type: ignore[union-attr]
    return out_batch(kc, outs, dt, x._layout)


def zeros_like(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``zeros_like``: zeros of each sample's shape (its type unless ``dtype``)."""
    return _like(xp, kc, ins, v, 0)


def ones_like(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``ones_like``: ones of each sample's shape (its type unless ``dtype``)."""
    return _like(xp, kc, ins, v, 1)


def full_like(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``full_like``: each sample's shape, type and layout, filled with the fill value
    (converted with saturation, broadcast NumPy-style)."""
    x, fill = ins[0], ins[1]
    dt = x._dtype
    outs = []
    for i, (a, f) in enumerate(zip(x._samples, fill._samples)):  # type: ignore[arg-type]
        shape = tuple(a.shape)
        try:
            ok = np.broadcast_shapes(tuple(f.shape), shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ShapeError(
                f"full_like: sample {i}: the fill value of shape {tuple(f.shape)} does not "
                f"broadcast to the shape {shape}. Pass a scalar or a broadcastable array."
            )
        out = xp.full(shape, 0, dt)
        out[...] = xp.cast(f, dt)
        outs.append(out)
    return out_batch(kc, outs, dt, x._layout)


def reinterpret_shape(shape: tuple[int, ...], in_size: int, out_size: int, a: Vals
                      ) -> tuple[int, ...]:  # fmt: skip
    """The output shape of ``reinterpret`` for a sample of ``shape`` (``in_size``-byte
    elements) read as ``out_size``-byte elements."""
    nbytes = math.prod(shape) * in_size
    if a["shape"] is None and a["rel_shape"] is None and a["src_dims"] is None:
        if in_size == out_size:
            return shape
        inner = (shape[-1] if shape else 1) * in_size
        if inner % out_size:
            raise ShapeError(
                f"reinterpret: the innermost extent ({inner} bytes) is not a multiple of the "
                f"output element size ({out_size} bytes). Pass a shape."
            )
        return (*shape[:-1], inner // out_size) if shape else ()
    if nbytes % out_size:
        raise ShapeError(
            f"reinterpret: the sample's {nbytes} bytes are not a whole number of "
            f"{out_size}-byte elements."
        )
    return reshape_shape(shape, a, nbytes // out_size)


def reinterpret(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``reinterpret``: each sample's bytes read as ``dtype`` with a new shape and layout."""
    x = ins[0]
    shape_in = ins[1] if len(ins) > 1 else None
    dt = v["dtype"] or x._dtype
    out_size, in_size = dt.bytes, x._dtype.bytes
    outs = []
    for i, (a, av) in enumerate(zip(x._samples, per_sample_vals(v, kc.n))):  # type: ignore[arg-type]
        if shape_in is not None:
            av = {**av, "shape": _host_ints(shape_in._samples[i])}  # type: ignore[index]
        try:
            shape = reinterpret_shape(tuple(a.shape), in_size, out_size, av)
        except ReshapeError as e:
            raise ReshapeError(str(e).replace("reshape:", "reinterpret:", 1)) from None
        outs.append(xp.view(a, dt, shape))
    lay = v["layout"]
    if lay is not None and outs and len(lay) != outs[0].ndim:
        raise InvalidArgumentError(
            f"reinterpret: layout {lay!r} does not match the {outs[0].ndim}-D output. Pass a "
            "layout naming every output axis."
        )
    if lay is None:
        lay = x._layout if outs and outs[0].ndim == x.ndim else None
    return out_batch(kc, outs, dt, lay or None)


def get_property(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``get_property``: each sample's source (its file path) or layout, as UTF-8 bytes."""
    x, key = ins[0], v["key"]
    outs = []
    for i in range(kc.n):
        text = (kc.source(i) or "") if key == "source_info" else (x._layout or "")
        raw = np.frombuffer(text.encode(), np.uint8).copy()
        outs.append(xp.from_numpy(raw, kc.device, _dt.uint8))
    return out_batch(kc, outs, _dt.uint8, None)


# --- sequences -----------------------------------------------------------------------------
def element_extract(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals
                    ) -> tuple[Batch]:  # fmt: skip
    """``element_extract`` (one element): frame ``element_map`` of every sequence."""
    x, e = ins[0], v["element_map"]
    _frames_layout(kc.name, x._layout)
    outs = []
    for a in x._samples:  # type: ignore[union-attr]
        if a.ndim == 0:
            raise ShapeError("element_extract: expects sequences, got a 0-D sample.")
        _check_frame(kc.name, e, a.shape[0], "element")
        outs.append(a[e])
    return out_batch(kc, outs, x._dtype, x._layout[1:] if x._layout else None)


def sequence_rearrange(xp: UtilityOps, kc: KernelContext, ins: list[Batch], v: Vals
                       ) -> tuple[Batch]:  # fmt: skip
    """``sequence_rearrange``: frame ``i`` of the output is frame ``new_order[i]``."""
    x = ins[0]
    _frames_layout(kc.name, x._layout)
    outs = []
    for a, av in zip(x._samples, per_sample_vals(v, kc.n)):  # type: ignore[arg-type]
        order = [int(i) for i in np.atleast_1d(av["new_order"])]
        if a.ndim == 0:
            raise ShapeError("sequence_rearrange: expects sequences, got a 0-D sample.")
        if not order:
            raise InvalidArgumentError(
                "sequence_rearrange: new_order is empty; an output sequence needs a frame."
            )
        for j in order:
            _check_frame(kc.name, j, a.shape[0], "new_order index")
        outs.append(xp.take(a, order))
    return out_batch(kc, outs, x._dtype, x._layout)
