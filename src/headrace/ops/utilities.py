"""Batch and type utilities: batch_permutation, permute_batch, cast_like, full_like, ones_like,
zeros_like, element_extract, get_property, reinterpret and sequence_rearrange.

Kernels: ``backends/shared/utilities.py``, bound in ``backends/<backend>/utilities.py``.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> b = ndd.batch([np.array([1, 2]), np.array([3])])
>>> [t.tolist() for t in ndd.permute_batch(b, indices=[1, 0]).torch(pad=True)]
[[3, 0], [1, 2]]
>>> ndd.cast_like(ndd.tensor([1.6, 300.0]), ndd.tensor(np.uint8(0))).torch().tolist()
[2, 255]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError
from headrace._core.tensor import Tensor
from headrace._dispatch.args import (
    REQUIRED,
    Arg,
    forward_args,
    to_bool,
    to_dtype,
    to_floats,
    to_int,
    to_ints,
    to_layout,
    to_str,
)
from headrace._dispatch.schema import OpSchema
from headrace._rng import RNG

TensorOrBatch = Tensor | Batch
#: The properties ``get_property`` knows.
PROPERTY_KEYS = ("source_info", "layout")


def _schema(name: str, **kw: Any) -> OpSchema:
    """A utility op: batch kernels named ``name`` in ``backends/<backend>/utilities.py``."""
    return OpSchema(name, "utilities", **kw)


def _check_key(vals: dict[str, Any]) -> None:
    if vals["key"] not in PROPERTY_KEYS:
        raise InvalidArgumentError(
            f"get_property: unknown key {vals['key']!r}. Use one of {list(PROPERTY_KEYS)}."
        )


BATCH_PERMUTATION = _schema(
    "batch_permutation",
    inputs=(),
    args=(
        Arg("allow_repetitions", to_bool, False, doc="Draw indices independently."),
        Arg("no_fixed_points", to_bool, False, doc="Never map a sample to itself."),
    ),
    devices=("cpu",),
    random=True,
)
PERMUTE_BATCH = _schema(
    "permute_batch",
    args=(Arg("indices", to_ints, REQUIRED, per_sample=True, doc="Source sample of each."),),
)
CAST_LIKE = _schema("cast_like", inputs=("input_0", "input_1"))
FULL_LIKE = _schema("full_like", inputs=("data_like", "fill_value"))
_LIKE_DTYPE = (Arg("dtype", to_dtype, None, doc="Output type (default: the input's)."),)
ONES_LIKE = _schema("ones_like", inputs=("data_like",), args=_LIKE_DTYPE)
ZEROS_LIKE = _schema("zeros_like", inputs=("data_like",), args=_LIKE_DTYPE)
ELEMENT_EXTRACT = _schema(
    "element_extract", args=(Arg("element_map", to_int, REQUIRED, doc="Frame to extract."),)
)
GET_PROPERTY = _schema(
    "get_property", args=(Arg("key", to_str, REQUIRED, doc="Property name."),), check=_check_key
)
DUMP_IMAGE = _schema(
    "dump_image",
    args=(
        Arg("input_layout", to_layout, "HWC", doc="Layout of the images: 'HWC' or 'CHW'."),
        Arg("suffix", to_str, "", doc="Added to the file names."),
    ),
    inline_bytes=0,
    capture=False,  # a side effect: it runs at its call, never ahead in a capture pipeline
)
REINTERPRET = _schema(
    "reinterpret",
    inputs=("data", "shape_input"),
    min_inputs=1,
    args=(
        Arg("dtype", to_dtype, None, doc="Type to read the bytes as."),
        Arg("layout", to_layout, None, doc="Output layout."),
        Arg("rel_shape", to_floats, None, per_sample=True, doc="Shape relative to the input."),
        Arg("shape", to_ints, None, per_sample=True, doc="Output shape; -1 is inferred."),
        Arg("src_dims", to_ints, None, per_sample=True, doc="Input dims to keep (-1: new)."),
    ),
)
SEQUENCE_REARRANGE = _schema(
    "sequence_rearrange",
    args=(Arg("new_order", to_ints, REQUIRED, per_sample=True, doc="Source frame of each."),),
)


def batch_permutation(
    *,
    allow_repetitions: bool | None = None,
    no_fixed_points: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Random indices into a batch: one int32 scalar per sample, for :func:`permute_batch`.

    Parameters
    ----------
    allow_repetitions : bool, optional
        Draw every index independently (repetitions and omissions); default False: a
        permutation.
    no_fixed_points : bool, optional
        Never give sample ``i`` the index ``i`` (ignored for a batch of one).
    device : optional
        ``"cpu"`` only, as in the reference.
    batch_size : int
        Required: the number of samples (there is no input to take it from).
    rng : random.RNG, optional
        Generator to draw from (default: the thread's default generator); the same state
        gives the same indices.

    Returns
    -------
    Batch
        ``batch_size`` int32 scalars.

    Raises
    ------
    InvalidArgumentError
        Without ``batch_size``.

    Examples
    --------
    >>> import headrace as ndd
    >>> p = ndd.batch_permutation(batch_size=4, rng=ndd.random.RNG(seed=1))
    >>> sorted(int(t.item()) for t in p.tensors)
    [0, 1, 2, 3]
    """
    if batch_size is None:
        raise InvalidArgumentError(
            "batch_permutation: batch_size must be given: batch_permutation has no input to "
            "take the batch size from (e.g. batch_permutation(batch_size=len(images)))."
        )
    return BATCH_PERMUTATION.call((), **forward_args(locals()))


def permute_batch(
    input: Any, /, *, indices: Any, device: Any = None, batch_size: int | None = None
) -> Any:
    """Reorder the samples of a batch: ``out[i] = input[indices[i]]``.

    Parameters
    ----------
    input : Batch
        Any data.
    indices : list of int or Batch of int scalars
        One index per sample, in ``[0, batch_size)``; repetitions and omissions are allowed
        (for example the output of :func:`batch_permutation`).
    device, batch_size
        As for every operator.

    Returns
    -------
    Batch
        The selected samples (their sources follow them).

    Raises
    ------
    InvalidArgumentError
        For an index out of range, or a list whose length is not the batch size.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> b = ndd.batch([np.array(1), np.array(2), np.array(3)])
    >>> [t.item() for t in ndd.permute_batch(b, indices=[2, 2, 0]).tensors]
    [3, 3, 1]
    """
    return PERMUTE_BATCH.call((input,), **forward_args(locals(), "input"))


def cast_like(
    input_0: Any, input_1: Any, /, *, device: Any = None, batch_size: int | None = None
) -> Any:
    """Convert ``input_0`` to the type of ``input_1`` (floats round half away from zero and
    integers saturate, as :func:`~headrace.cast`).

    Parameters
    ----------
    input_0 : Tensor or Batch
        The data to convert (its shape and layout are kept).
    input_1 : Tensor or Batch
        Gives the type; its values are not used.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        ``input_0`` converted to ``input_1``'s type.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> like = ndd.tensor(np.zeros(1, np.int8))
    >>> ndd.cast_like(ndd.tensor([1.5, -2.5, 300.0]), like).torch().tolist()
    [2, -3, 127]
    """
    return CAST_LIKE.call((input_0, input_1), **forward_args(locals(), "input_0", "input_1"))


def full_like(
    data_like: Any, fill_value: Any, /, *, device: Any = None, batch_size: int | None = None
) -> Any:
    """Data of ``data_like``'s shape, type and layout, filled with ``fill_value``.

    Parameters
    ----------
    data_like : Tensor or Batch
        Gives the shape, type and layout; its values are not used.
    fill_value : scalar, array, Tensor or Batch
        The value, broadcast NumPy-style to the shape (a Batch gives one per sample);
        converted to the type with saturation.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The filled data.

    Raises
    ------
    ShapeError
        When the fill value does not broadcast to a sample's shape.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.zeros((2, 3), np.uint8))
    >>> ndd.full_like(x, np.array([[7], [300]])).torch().tolist()
    [[7, 7, 7], [255, 255, 255]]
    """
    return FULL_LIKE.call(
        (data_like, fill_value), **forward_args(locals(), "data_like", "fill_value")
    )


def ones_like(
    data_like: Any, /, *, dtype: Any = None, device: Any = None, batch_size: int | None = None
) -> Any:
    """Ones of ``data_like``'s shape and layout (its type unless ``dtype`` is given).

    Parameters
    ----------
    data_like : Tensor or Batch
        Gives the shape, type and layout.
    dtype : DType, optional
        Output type.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The ones.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.ones_like(ndd.tensor(np.zeros(2, np.uint8)), dtype=ndd.float32).torch().tolist()
    [1.0, 1.0]
    """
    return ONES_LIKE.call((data_like,), **forward_args(locals(), "data_like"))


def zeros_like(
    data_like: Any, /, *, dtype: Any = None, device: Any = None, batch_size: int | None = None
) -> Any:
    """Zeros of ``data_like``'s shape and layout (its type unless ``dtype`` is given).

    Parameters
    ----------
    data_like : Tensor or Batch
        Gives the shape, type and layout.
    dtype : DType, optional
        Output type.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The zeros.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.zeros_like(ndd.tensor([5, 6])).torch().tolist()
    [0, 0]
    """
    return ZEROS_LIKE.call((data_like,), **forward_args(locals(), "data_like"))


def element_extract(
    input: Any, /, *, element_map: Any, device: Any = None, batch_size: int | None = None
) -> Any:
    """Extract frames of sequences: one output per entry of ``element_map``.

    Parameters
    ----------
    input : Tensor or Batch
        Sequences: the outermost axis holds the frames (a layout, if any, starts with ``F``).
    element_map : int or list of int
        The frames to extract, each in ``[0, frames)``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor, Batch or tuple of them
        Frame ``element_map[k]`` of every sequence for each ``k`` (one output alone when
        ``element_map`` has one entry), with the layout minus its ``F``.

    Raises
    ------
    ShapeError
        For a layout that does not start with ``F``.
    InvalidArgumentError
        For a frame out of range, or an empty ``element_map``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> seq = ndd.tensor(np.arange(6).reshape(3, 2), layout="FX")
    >>> first, last = ndd.element_extract(seq, element_map=[0, 2])
    >>> first.torch().tolist(), last.torch().tolist(), last.layout
    ([0, 1], [4, 5], 'X')
    """
    elems = [int(e) for e in np.atleast_1d(np.asarray(element_map))]
    if not elems:
        raise InvalidArgumentError("element_extract: element_map is empty; name a frame.")
    outs = tuple(
        ELEMENT_EXTRACT.call((input,), device=device, batch_size=batch_size, element_map=e)
        for e in elems
    )
    return outs[0] if len(outs) == 1 else outs


def dump_image(
    input: Any,
    /,
    *,
    input_layout: str | None = None,
    suffix: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Save each image to a plain-text PPM file in the working directory (for debugging).

    Sample ``i`` goes to ``{i}-{suffix}-0.ppm`` (``P3`` for 3 channels, ``P2`` for 1), as the
    reference names them; a later call overwrites the files. The input is returned unchanged.

    Parameters
    ----------
    input : Tensor or Batch
        uint8 images, ``HWC`` (or ``CHW`` with ``input_layout="CHW"``), 1 or 3 channels.
    input_layout : str, optional
        ``"HWC"`` (default) or ``"CHW"``.
    suffix : str, optional
        Added to the file names (default ``""``).
    device : str or Device, optional
        ``"cpu"`` or ``"gpu"`` (GPU images are copied to the host to be written).
    batch_size : int, optional
        Broadcast a Tensor input to a batch of this size.

    Returns
    -------
    Tensor or Batch
        The input.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> import headrace as ndd
    >>> old = os.getcwd(); os.chdir(tempfile.mkdtemp())
    >>> _ = ndd.dump_image(ndd.batch([np.zeros((1, 2, 3), np.uint8)], layout="HWC"), suffix="a")
    >>> open("0-a-0.ppm").read().splitlines()[:3]
    ['P3', '2 1', '255']
    >>> os.chdir(old)
    """
    out = DUMP_IMAGE.call((input,), **forward_args(locals(), "input"))
    out.evaluate()  # the files are the point: write them now, whatever the eval mode
    return out


def get_property(input: Any, /, *, key: str, device: Any = None,
                 batch_size: int | None = None) -> Any:  # fmt: skip
    """A property of each sample, as UTF-8 bytes (a 1-D uint8 tensor).

    Parameters
    ----------
    input : Tensor or Batch
        Any data.
    key : {"source_info", "layout"}
        ``"source_info"``: where the sample came from (the file path for samples of a reader
        or decoder; empty when unknown); ``"layout"``: the sample's layout (empty when none).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        uint8 bytes per sample.

    Raises
    ------
    InvalidArgumentError
        For an unknown key.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.zeros((2, 2, 3), np.uint8), layout="HWC")
    >>> bytes(np.asarray(ndd.get_property(x, key="layout")))
    b'HWC'
    """
    return GET_PROPERTY.call((input,), **forward_args(locals(), "input"))


def reinterpret(
    data: Any,
    shape_input: Any = None,
    /,
    *,
    dtype: Any = None,
    layout: str | None = None,
    rel_shape: Any = None,
    shape: Any = None,
    src_dims: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Read the bytes of each sample as another type, shape and/or layout (no conversion).

    Parameters
    ----------
    data : Tensor or Batch
        Any data.
    shape_input : 1-D integer Tensor or Batch, optional
        The output shape, as ``shape``.
    dtype : DType, optional
        Type to read the bytes as. Without a shape, the innermost extent is rescaled (its
        byte size must be a multiple of the new element size).
    layout : str, optional
        Output layout (default: the input's when the rank is unchanged, else none).
    rel_shape, shape, src_dims : optional
        The output shape, as for :func:`~headrace.reshape` (``-1`` takes the remaining
        elements); may vary per sample. The byte size must stay the same.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The reinterpreted data.

    Raises
    ------
    ShapeError
        When the byte sizes do not match.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 0, 2, 0]], np.uint8), layout="HW")
    >>> y = ndd.reinterpret(x, dtype=ndd.uint16)
    >>> y.torch().tolist(), y.layout
    ([[1, 2]], 'HW')
    """
    return REINTERPRET.call((data, shape_input), **forward_args(locals(), "data", "shape_input"))


def sequence_rearrange(
    input: Any, /, *, new_order: Any, device: Any = None, batch_size: int | None = None
) -> Any:
    """Reorder the frames of sequences: ``out[i] = input[new_order[i]]``.

    Parameters
    ----------
    input : Tensor or Batch
        Sequences: the outermost axis holds the frames (a layout, if any, starts with ``F``).
    new_order : list of int or Batch of 1-D int
        Source frame of each output frame (repetitions and omissions allowed, not empty);
        may vary per sample.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The rearranged sequences (same layout).

    Raises
    ------
    InvalidArgumentError
        For an empty order or a frame out of range.
    ShapeError
        For a layout that does not start with ``F``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> seq = ndd.tensor(np.array([10, 20, 30]), layout="F")
    >>> ndd.sequence_rearrange(seq, new_order=[2, 0, 0]).torch().tolist()
    [30, 10, 10]
    """
    return SEQUENCE_REARRANGE.call((input,), **forward_args(locals(), "input"))


__all__ = [
    "batch_permutation",
    "cast_like",
    "dump_image",
    "element_extract",
    "full_like",
    "get_property",
    "ones_like",
    "permute_batch",
    "reinterpret",
    "sequence_rearrange",
    "zeros_like",
]
