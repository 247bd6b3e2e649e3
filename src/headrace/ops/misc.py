"""Basic operators: copy, cast, reshape, transpose, expand_dims, squeeze, zeros/ones/full,
shapes, stack, cat, one_hot, per_frame and the per-sample subscript behind ``Batch.slice``.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> x = ndd.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), layout="HW")
>>> ndd.transpose(x, perm=[1, 0]).layout
'WH'
>>> ndd.cast(ndd.tensor([1.6, -0.4]), dtype=ndd.uint8).torch().tolist()
[2, 0]
"""

from __future__ import annotations

from typing import Any

from headrace._core import indexing as _ix
from headrace._core.batch import Batch
from headrace._core.device import device as _to_device
from headrace._core.entry import provide
from headrace._core.errors import InvalidArgumentError
from headrace._core.tensor import Tensor
from headrace._dispatch import meta_rules as _meta
from headrace._dispatch.args import (
    REQUIRED,
    Arg,
    to_any,
    to_bool,
    to_dtype,
    to_float,
    to_int,
    to_ints,
    to_layout,
    to_shape,
)
from headrace._dispatch.schema import OpSchema

TensorOrBatch = Tensor | Batch


def _schema(name: str, **kw: Any) -> OpSchema:
    """A basic op: batch kernels named ``name`` in ``backends/<backend>/misc.py``."""
    return OpSchema(name, "misc", **kw)


COPY = _schema("copy", args=(Arg("_force", to_bool, False),))
CAST = _schema("cast", args=(Arg("dtype", to_dtype, REQUIRED, doc="Output type."),))
RESHAPE = _schema(
    "reshape",
    args=(
        Arg("shape", to_ints, None, per_sample=True, doc="Output shape; -1 is inferred."),
        Arg("rel_shape", to_any, None, per_sample=True, doc="Shape relative to the input."),
        Arg("layout", to_layout, None, doc="Output layout."),
        Arg("src_dims", to_ints, None, doc="Input dims to keep, -1 inserts a unit dim."),
    ),
)
TRANSPOSE = _schema(
    "transpose",
    args=(
        Arg("perm", to_ints, None, doc="Output dim i is input dim perm[i] (default: reversed)."),
        Arg("transpose_layout", to_bool, True, doc="Permute the layout too."),
        Arg("output_layout", to_layout, None, doc="Explicit output layout."),
    ),
)
EXPAND_DIMS = _schema(
    "expand_dims",
    args=(
        Arg("axes", to_ints, REQUIRED, doc="Positions of the new unit dims."),
        Arg("new_axis_names", to_layout, None, doc="Layout letters of the new dims."),
    ),
)
SQUEEZE = _schema(
    "squeeze",
    args=(
        Arg("axes", to_ints, None, doc="Unit dims to remove."),
        Arg("axis_names", to_layout, None, doc="Layout letters of the dims to remove."),
    ),
)
_FILL_ARGS = (
    Arg("shape", to_shape, None, doc="Output shape."),
    Arg("dtype", to_dtype, None, doc="Output type."),
    Arg("layout", to_layout, None, doc="Output layout."),
)
ZEROS = _schema("zeros", inputs=(), args=_FILL_ARGS)
ONES = _schema("ones", inputs=(), args=_FILL_ARGS)
FULL = _schema("full", inputs=("fill_value",), args=_FILL_ARGS)
SHAPES = _schema("shapes", args=(Arg("dtype", to_dtype, None, doc="Output type (int64)."),))
_JOIN_ARGS = (
    Arg("axis", to_int, 0, doc="Axis along which to join."),
    Arg("axis_name", to_layout, None, doc="Layout letter of the axis to join (cat)."),
)
STACK = _schema("stack", inputs=("inputs",), variadic=True, args=_JOIN_ARGS)
CAT = _schema("cat", inputs=("inputs",), variadic=True, args=_JOIN_ARGS)
ONE_HOT = _schema(
    "one_hot",
    args=(
        Arg("num_classes", to_int, 0, doc="Number of classes."),
        Arg(
            "axis",
            to_int,
            None,
            doc="Where the new axis goes, in [-1, ndim] (-1: last; not given and every sample"
            " of one element: the samples are read as scalars).",
        ),
        Arg("dtype", to_dtype, None, doc="Output type (float32)."),
        Arg("on_value", to_float, 1.0, doc="Value at the label's index."),
        Arg("off_value", to_float, 0.0, doc="Value elsewhere."),
        Arg("axis_name", to_layout, None, doc="Layout letter of the new axis."),
    ),
)
PER_FRAME = _schema("per_frame", args=(Arg("replace", to_bool, False),))
MAX_SUBSCRIPT_DIMS = 8
_SUB_ARGS = tuple(
    Arg(f"{kind}_{d}", to_int, None, per_sample=True)
    for d in range(MAX_SUBSCRIPT_DIMS)
    for kind in ("at", "lo", "hi", "step")
) + (Arg("_spec", to_any, None),)
#: ``Batch.slice[...]``: runs eagerly (never recorded by capture mode).
SUBSCRIPT = _schema("_tensor_subscript", args=_SUB_ARGS, kernel="tensor_subscript", capture=False)


# What a pending call's outputs are, before they are computed (``headrace._core.meta``).
CAST.meta = _meta.with_dtype(needs_layout=False)
ZEROS.meta = ONES.meta = FULL.meta = _meta.filled
PER_FRAME.meta = _meta.per_frame
EXPAND_DIMS.meta = _meta.expand_dims
STACK.meta = _meta.stack
SUBSCRIPT.meta = _meta.subscript


@provide("copy")
def copy(input: Any, /, *, device: Any = None, batch_size: int | None = None) -> Any:
    """Copy data, optionally to another device.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.copy(ndd.tensor([1, 2])).torch().tolist()
    [1, 2]
    """
    src_dev = input.device if isinstance(input, (Tensor, Batch)) else None
    dev = _to_device(device) if device is not None else src_dev
    return COPY.call((input,), device=dev, batch_size=batch_size, _force=dev == src_dev or None)


def cast(input: Any, /, *, dtype: Any, device: Any = None, batch_size: int | None = None) -> Any:
    """Convert the element type; floats → integers round to nearest and saturate.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.cast(ndd.tensor([300.0, -5.0]), dtype=ndd.uint8).torch().tolist()
    [255, 0]
    """
    return CAST.call((input,), device=device, batch_size=batch_size, dtype=dtype)


def reshape(
    data: Any,
    shape_input: Any = None,
    /,
    *,
    shape: Any = None,
    rel_shape: Any = None,
    layout: str | None = None,
    src_dims: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Give the data a new shape (same number of elements).

    Parameters
    ----------
    data : Tensor or Batch
    shape_input : Tensor or Batch, optional
        The output shape as a second input (one per sample from a Batch); the same as
        ``shape=``, which it excludes.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.reshape(ndd.tensor([1, 2, 3, 4]), shape=[2, -1]).shape
    (2, 2)
    >>> ndd.reshape(ndd.tensor([1, 2, 3, 4]), ndd.tensor([1, 4])).shape
    (1, 4)
    """
    if shape_input is not None:
        if shape is not None:
            raise InvalidArgumentError(
                "reshape: give the shape either as the shape_input input or as shape=, not both."
            )
        shape = shape_input
    return RESHAPE.call(
        (data,),
        device=device,
        batch_size=batch_size,
        shape=shape,
        rel_shape=rel_shape,
        layout=layout,
        src_dims=src_dims,
    )


def transpose(
    input: Any,
    /,
    *,
    perm: Any = None,
    transpose_layout: bool | None = None,
    output_layout: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Permute the dimensions (``perm``; reversed when not given). The layout is permuted with
    them, or copied as it is with ``transpose_layout=False``; ``output_layout`` sets it.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.transpose(ndd.tensor(np.zeros((2, 3, 4))), perm=[2, 0, 1]).shape
    (4, 2, 3)
    >>> ndd.transpose(ndd.tensor(np.zeros((2, 3, 4)), layout="HWC")).layout
    'CWH'
    """
    return TRANSPOSE.call(
        (input,),
        device=device,
        batch_size=batch_size,
        perm=perm,
        transpose_layout=transpose_layout,
        output_layout=output_layout,
    )


def expand_dims(
    data: Any,
    /,
    *,
    axes: Any,
    new_axis_names: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Insert unit dimensions.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.expand_dims(ndd.tensor([1, 2]), axes=[0]).shape
    (1, 2)
    """
    return EXPAND_DIMS.call(
        (data,), device=device, batch_size=batch_size, axes=axes, new_axis_names=new_axis_names
    )


def squeeze(
    data: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Remove unit dimensions (all of them when no axes are given).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.squeeze(ndd.tensor(np.zeros((1, 3, 1)))).shape
    (3,)
    """
    return SQUEEZE.call(
        (data,), device=device, batch_size=batch_size, axes=axes, axis_names=axis_names
    )


def zeros(
    *,
    shape: Any = None,
    dtype: Any = None,
    layout: str | None = None,
    batch_size: int | None = None,
    device: Any = None,
) -> Any:
    """A tensor of zeros (int32 by default, as the reference).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.zeros(shape=[2]).torch().tolist(), ndd.zeros(shape=[1], dtype=ndd.float32).dtype.name
    ([0, 0], 'f32')
    """
    return ZEROS.call(
        (), device=device, batch_size=batch_size, shape=shape, dtype=dtype, layout=layout
    )


def ones(
    *,
    shape: Any = None,
    dtype: Any = None,
    layout: str | None = None,
    batch_size: int | None = None,
    device: Any = None,
) -> Any:
    """A tensor of ones (int32 by default, as the reference).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.ones(shape=[2], dtype=ndd.int32).torch().tolist()
    [1, 1]
    """
    return ONES.call(
        (), device=device, batch_size=batch_size, shape=shape, dtype=dtype, layout=layout
    )


def full(
    fill_value: Any,
    /,
    *,
    shape: Any = None,
    dtype: Any = None,
    layout: str | None = None,
    batch_size: int | None = None,
    device: Any = None,
) -> Any:
    """A tensor filled with ``fill_value`` (broadcast to ``shape``).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.full(7, shape=[2]).torch().tolist()
    [7, 7]
    """
    return FULL.call(
        (fill_value,), device=device, batch_size=batch_size, shape=shape, dtype=dtype, layout=layout
    )


def shapes(input: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """The shape of each sample as a 1-D tensor (int64 by default).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.shapes(ndd.tensor(np.zeros((4, 5)))).torch().tolist()
    [4, 5]
    """
    return SHAPES.call((input,), device=device, dtype=dtype)


def _shape(
    input: Any, /, *, batch_size: int | None = None, device: Any = None, dtype: Any = None
) -> Any:
    """:func:`shapes` under the reference's internal name (it backs its ``.shape`` of traced
    values), with its ``batch_size`` argument.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd._shape(ndd.tensor(np.zeros((4, 5, 3)))).torch().tolist()
    [4, 5, 3]
    """
    return SHAPES.call((input,), device=device, batch_size=batch_size, dtype=dtype)


def stack(
    input_0: Any,
    /,
    *inputs: Any,
    axis: int | None = None,
    axis_name: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Join tensors along a new axis.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.stack(ndd.tensor([1, 2]), ndd.tensor([3, 4]), axis=1).shape
    (2, 2)
    """
    return STACK.call(
        (input_0, *inputs), device=device, batch_size=batch_size, axis=axis, axis_name=axis_name
    )


def cat(
    input_0: Any,
    /,
    *inputs: Any,
    axis: int | None = None,
    axis_name: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Join tensors along an existing axis.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.cat(ndd.tensor([1, 2]), ndd.tensor([3])).torch().tolist()
    [1, 2, 3]
    """
    return CAT.call(
        (input_0, *inputs), device=device, batch_size=batch_size, axis=axis, axis_name=axis_name
    )


def one_hot(
    input: Any,
    /,
    *,
    num_classes: int | None = None,
    axis: int | None = None,
    dtype: Any = None,
    on_value: float | None = None,
    off_value: float | None = None,
    axis_name: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """One-hot encode integer labels.

    The new axis of ``num_classes`` goes at ``axis`` (in ``[-1, ndim]``; -1, the default, is
    last). As in the reference, when ``axis`` is not given and every sample holds exactly one
    element (shape ``()``, ``(1,)``, ``(1, 1)``...), the samples are read as scalars: each
    output is ``(num_classes,)`` and the layout is ``axis_name``.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.one_hot(ndd.tensor(2), num_classes=4).torch().tolist()
    [0.0, 0.0, 1.0, 0.0]
    """
    return ONE_HOT.call(
        (input,),
        device=device,
        batch_size=batch_size,
        num_classes=num_classes,
        axis=axis,
        dtype=dtype,
        on_value=on_value,
        off_value=off_value,
        axis_name=axis_name,
    )


def per_frame(
    input: Any, /, *, replace: bool | None = None, device: Any = None, batch_size: int | None = None
) -> Any:
    """Mark the outermost dimension as frames (layout ``F...``) for per-frame arguments.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.per_frame(ndd.tensor(np.zeros(3))).layout
    'F'
    """
    return PER_FRAME.call((input,), device=device, batch_size=batch_size, replace=replace)


@provide("subscript")
def subscript(x: TensorOrBatch, index: Any) -> Any:
    """Per-sample indexing (``Batch.slice[...]``); components may be per-sample Batches."""
    comps = index if isinstance(index, tuple) else (index,)
    spec: list[Any] = []
    kw: dict[str, Any] = {}
    d = 0
    for c in comps:
        if c is Ellipsis:
            if Ellipsis in spec:
                raise ValueError("Only one Ellipsis is allowed.")
            spec.append(Ellipsis)
            continue
        if d >= MAX_SUBSCRIPT_DIMS:
            raise ValueError(f"At most {MAX_SUBSCRIPT_DIMS} indexed dimensions are supported.")
        if isinstance(c, slice):
            if c.step is not None and not isinstance(c.step, Batch) and int(c.step) == 0:
                raise ValueError("slice step cannot be zero")
            spec.append("s")
            kw[f"lo_{d}"], kw[f"hi_{d}"], kw[f"step_{d}"] = c.start, c.stop, c.step
        elif c is None:
            raise TypeError("Indexing with None (newaxis) is not supported.")
        else:
            spec.append("i")
            kw[f"at_{d}"] = c
        d += 1
    if not any(isinstance(v, Batch) for v in kw.values()):
        plain = _ix.normalize(comps)
        if _ix.is_identity(plain):
            return x
    return SUBSCRIPT.call((x,), _spec=tuple(spec), **kw)


__all__ = [
    "cast",
    "cat",
    "copy",
    "expand_dims",
    "full",
    "one_hot",
    "ones",
    "per_frame",
    "reshape",
    "shapes",
    "squeeze",
    "stack",
    "transpose",
    "zeros",
]
