"""``ndd.reductions``: sum, min, max, mean, mean_square, rms, std_dev and variance of each sample.

Each reduces every sample over ``axes`` (or the layout letters ``axis_names``; by default all
axes), dropping the reduced axes unless ``keep_dims``. Output types follow the reference (see
:mod:`headrace.ops._reductions_params`): integer ``sum`` widens to 64 bits, ``min``/``max`` keep
the type, the statistics give float32; integer ``dtype`` choices accumulate in that type and
wrap, as the reference does.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> x = ndd.tensor(np.arange(6, dtype=np.uint8).reshape(2, 3), layout="HW")
>>> ndd.reductions.sum(x, axis_names="W").torch().tolist()
[3, 12]
>>> ndd.reductions.mean(x).torch().item()
2.5
"""

from __future__ import annotations

from typing import Any

from headrace._core.batch import Batch
from headrace._core.tensor import Tensor
from headrace._dispatch.args import (
    Arg,
    ArgDict,
    PerSample,
    forward_args,
    to_any,
    to_bool,
    to_dtype,
    to_int,
    to_ints,
    to_layout,
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema, Planned
from headrace.ops import _reductions_params as P

TensorOrBatch = Tensor | Batch

_AXES = (
    Arg("axes", to_ints, None, doc="Axes to reduce (negative: from the end; none: all)."),
    Arg("axis_names", to_layout, None, doc="Layout letters of the axes to reduce."),
    Arg("keep_dims", to_bool, False, doc="Keep the reduced axes as extent 1."),
)
_DTYPE = Arg("dtype", to_dtype, None, doc="Output (and accumulation) type.")
_DDOF = Arg("ddof", to_int, 0, doc="Delta degrees of freedom: the divisor is N - ddof.")
_MEAN = Arg("_mean", to_any, None)


def _with_mean(kc: KernelContext, ins: list[Batch | None], vals: dict[str, Any]) -> ArgDict:
    """The ``mean`` input's samples as the per-sample argument ``_mean`` of the plans."""
    out = ArgDict(vals)
    out.per_sample = True
    mean = ins[1]
    assert mean is not None and mean._samples is not None
    out["_mean"] = PerSample(mean._samples)
    return out


def _schema(kind: str, *args: Arg) -> OpSchema:
    stats = kind in ("std_dev", "variance")
    planned = Planned(
        P.PLANS[kind], prepare=_with_mean if stats else None, out_layout=P.reduced_layout
    )
    inputs = ("data", "mean") if stats else ("input",)
    return OpSchema(
        f"reductions.{kind}", "reductions", inputs=inputs, args=args, planned=planned,
        kernel="reduce",
    )  # fmt: skip


SUM = _schema("sum", *_AXES, _DTYPE)
MIN = _schema("min", *_AXES)
MAX = _schema("max", *_AXES)
MEAN = _schema("mean", *_AXES, _DTYPE)
MEAN_SQUARE = _schema("mean_square", *_AXES, _DTYPE)
RMS = _schema("rms", *_AXES, _DTYPE)
STD_DEV = _schema("std_dev", *_AXES, _DDOF, _MEAN)
VARIANCE = _schema("variance", *_AXES, _DDOF, _MEAN)


def sum(
    input: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    dtype: Any = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Sum of the elements along ``axes``.

    Parameters
    ----------
    input : Tensor or Batch
        Integers (any width) or float32.
    axes : int or list of int, optional
        Axes to reduce, in ``[-ndim, ndim)``; by default all of them (``[]``: none).
    axis_names : str, optional
        Layout letters of the axes to reduce (instead of ``axes``).
    dtype : DType, optional
        Output and accumulation type: the input's type (wraps around, as the reference),
        its 64-bit widening (the default for integers) or float32.
    keep_dims : bool, optional
        Keep the reduced axes as extent 1 (default False: drop them and their layout letters).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The sums: uint64 for unsigned, int64 for signed integers, float32 for float32.

    Raises
    ------
    InvalidArgumentError
        For ``axes`` with ``axis_names``, an axis out of range or given twice.
    InvalidTypeError
        For an unsupported input type or ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 2, 250], [3, 4, 255]], np.uint8), layout="HW")
    >>> ndd.reductions.sum(x, axes=1).torch().tolist()
    [253, 262]
    >>> ndd.reductions.sum(x, dtype=ndd.uint8).torch().item()
    3
    """
    return SUM.call((input,), **forward_args(locals(), "input"))


def min(
    input: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Smallest element along ``axes``.

    Parameters
    ----------
    input : Tensor or Batch
        Integers (any width) or float32.
    axes, axis_names, keep_dims
        As for :func:`sum`.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The minima, of the input's type (the type's maximum where no element is reduced).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 2, 250], [3, 4, 255]], np.uint8), layout="HW")
    >>> ndd.reductions.min(x, axis_names="H", keep_dims=True).torch().tolist()
    [[1, 2, 250]]
    """
    return MIN.call((input,), **forward_args(locals(), "input"))


def max(
    input: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Largest element along ``axes``.

    Parameters
    ----------
    input : Tensor or Batch
        Integers (any width) or float32.
    axes, axis_names, keep_dims
        As for :func:`sum`.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The maxima, of the input's type (the type's lowest value where no element is reduced).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 2, 250], [3, 4, 255]], np.uint8), layout="HW")
    >>> ndd.reductions.max(x, axes=0).torch().tolist()
    [3, 4, 255]
    """
    return MAX.call((input,), **forward_args(locals(), "input"))


def mean(
    input: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    dtype: Any = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Mean of the elements along ``axes``.

    Parameters
    ----------
    input : Tensor or Batch
        Integers (any width) or float32.
    axes, axis_names, keep_dims
        As for :func:`sum`.
    dtype : DType, optional
        float32 (default) or the input's type; an integer mean accumulates in that type
        (wrapping) and truncates toward zero, as the reference does.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The means (NaN where no element is reduced).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 2, 250], [3, 4, 255]], np.uint8), layout="HW")
    >>> ndd.reductions.mean(x, axes=0).torch().tolist()
    [2.0, 3.0, 252.5]
    """
    return MEAN.call((input,), **forward_args(locals(), "input"))


def mean_square(
    input: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    dtype: Any = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Mean of the squared elements along ``axes``.

    Parameters
    ----------
    input : Tensor or Batch
        Integers (any width) or float32.
    axes, axis_names, keep_dims
        As for :func:`sum`.
    dtype : DType, optional
        float32 (default) or the input's 64-bit widening (then truncated toward zero).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The mean squares.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 2, 250], [3, 4, 255]], np.uint8), layout="HW")
    >>> ndd.reductions.mean_square(x, axes=0).torch().tolist()
    [5.0, 10.0, 63762.5]
    """
    return MEAN_SQUARE.call((input,), **forward_args(locals(), "input"))


def rms(
    input: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    dtype: Any = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Root mean square of the elements along ``axes``.

    Parameters
    ----------
    input : Tensor or Batch
        Integers (any width) or float32.
    axes, axis_names, keep_dims
        As for :func:`sum`.
    dtype : DType, optional
        float32 (default) or the input's type (accumulating in it, truncated toward zero).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The root mean squares.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.reductions.rms(ndd.tensor([3.0, 4.0, 0.0, 5.0, 0.0])).torch().item()
    3.1622776985168457
    """
    return RMS.call((input,), **forward_args(locals(), "input"))


def std_dev(
    data: Any,
    mean: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    ddof: int | None = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Standard deviation of the elements along ``axes``, around a given mean.

    Parameters
    ----------
    data : Tensor or Batch
        Integers (any width) or float32.
    mean : float, Tensor or Batch
        The mean to measure from: a scalar, or one value per output element (the output of
        :func:`mean` with the same axes, with or without ``keep_dims``); may vary per sample.
    axes, axis_names, keep_dims
        As for :func:`sum`.
    ddof : int, optional
        Delta degrees of freedom: the divisor is ``N - ddof`` (default 0), not clamped.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        float32 standard deviations.

    Raises
    ------
    ShapeError
        When ``mean`` has neither one element nor one per output element.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 2, 250], [3, 4, 255]], np.uint8), layout="HW")
    >>> m = ndd.reductions.mean(x, axes=0)
    >>> ndd.reductions.std_dev(x, m, axes=0).torch().tolist()
    [1.0, 1.0, 2.5]
    """
    return STD_DEV.call((data, mean), **forward_args(locals(), "data", "mean"))


def variance(
    data: Any,
    mean: Any,
    /,
    *,
    axes: Any = None,
    axis_names: str | None = None,
    ddof: int | None = None,
    keep_dims: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Variance of the elements along ``axes``, around a given mean.

    Parameters
    ----------
    data : Tensor or Batch
        Integers (any width) or float32.
    mean : float, Tensor or Batch
        The mean to measure from, as for :func:`std_dev`.
    axes, axis_names, keep_dims
        As for :func:`sum`.
    ddof : int, optional
        Delta degrees of freedom: the divisor is ``N - ddof`` (default 0), not clamped.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        float32 variances.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 2, 250], [3, 4, 255]], np.uint8), layout="HW")
    >>> m = ndd.reductions.mean(x, axes=0)
    >>> ndd.reductions.variance(x, m, axes=0, ddof=1).torch().tolist()
    [2.0, 2.0, 12.5]
    """
    return VARIANCE.call((data, mean), **forward_args(locals(), "data", "mean"))


__all__ = ["max", "mean", "mean_square", "min", "rms", "std_dev", "sum", "variance"]
