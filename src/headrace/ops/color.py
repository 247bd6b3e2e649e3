"""Colour operators: brightness/contrast, colour twist, HSV, hue, saturation, colour-space
conversion, normalisation and lookup tables.

The images are channel-last (``HWC``, ``FHWC``, ``DHWC``; a 3-D input without a layout is taken
as ``HWC``). Integer outputs round half away from zero and saturate.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> img = ndd.tensor(np.full((2, 2, 3), 100, np.uint8), layout="HWC")
>>> int(ndd.brightness_contrast(img, brightness=1.5).cpu().torch()[0, 0, 0])
150
"""

from __future__ import annotations

from typing import Any

from headrace import types as _types
from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._core.tensor import Tensor
from headrace._dispatch import meta_rules as _meta
from headrace._dispatch.args import (
    REQUIRED,
    Arg,
    PerSample,
    forward_args,
    to_bool,
    to_dtype,
    to_float,
    to_floats,
    to_int,
    to_ints,
    to_layout,
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema, Planned
from headrace.ops import _color_params as P
from headrace.ops._enum_args import to_image_type

TensorOrBatch = Tensor | Batch
Scalar = float | TensorOrBatch
_IMAGE = {3: "HWC", 4: "FHWC"}


def _schema(name: str, *args: Arg, planned: Planned | None = None, kernel: str = "") -> OpSchema:
    """A colour op: per-sample plans from ``_color_params`` (``<kernel>_params``), pixel kernels
    named ``kernel`` (default: ``name``) in ``backends/<backend>/color.py``."""
    kernel = kernel or name
    if planned is None:
        planned = Planned(getattr(P, f"{kernel}_params"), layouts=_IMAGE)
    return OpSchema(name, "color", args=args, planned=planned, kernel=kernel)


def _f(name: str, default: float, doc: str) -> Arg:
    return Arg(name, to_float, default, per_sample=True, doc=doc)


_DTYPE = Arg("dtype", to_dtype, None, doc="Output type (default: the input's).")
_IMAGE_TYPE = Arg("image_type", to_image_type, _types.RGB, doc="Colour space of the input.")
_HUE = _f("hue", 0.0, "Hue rotation in degrees.")
_SAT = _f("saturation", 1.0, "Saturation factor (0: grey).")

_BRIGHTNESS = (
    _f("brightness", 1.0, "Brightness multiplier."),
    _f("brightness_shift", 0.0, "Brightness shift, in units of the output type's range."),
)
_CONTRAST = (
    _f("contrast", 1.0, "Contrast multiplier (0: flat grey at contrast_center)."),
    Arg("contrast_center", to_float, None, per_sample=True, doc="Value kept by contrast."),
)
BRIGHTNESS_CONTRAST = _schema("brightness_contrast", *_BRIGHTNESS, *_CONTRAST, _DTYPE)
BRIGHTNESS = _schema("brightness", *_BRIGHTNESS, _DTYPE, kernel="brightness_contrast")
CONTRAST = _schema("contrast", *_CONTRAST, _DTYPE, kernel="brightness_contrast")
COLOR_TWIST = _schema(
    "color_twist",
    _f("brightness", 1.0, "Brightness multiplier."),
    _f("contrast", 1.0, "Contrast multiplier."),
    _HUE,
    _SAT,
    _IMAGE_TYPE,
    _DTYPE,
)
HSV = _schema(
    "hsv",
    _HUE,
    _SAT,
    _f("value", 1.0, "Value (brightness) factor."),
    Arg("dtype", to_dtype, None, doc="Output type (default uint8)."),
)
HUE = _schema("hue", _HUE, _IMAGE_TYPE, _DTYPE)
SATURATION = _schema("saturation", _SAT, _IMAGE_TYPE, _DTYPE)
COLOR_SPACE_CONVERSION = _schema(
    "color_space_conversion",
    Arg("image_type", to_image_type, REQUIRED, doc="Colour space of the input."),
    Arg("output_type", to_image_type, REQUIRED, doc="Colour space of the output."),
)


# What a pending call's outputs are, before they are computed (``headrace._core.meta``).
for _s in (BRIGHTNESS_CONTRAST, BRIGHTNESS, CONTRAST, COLOR_TWIST, HUE, SATURATION,
           COLOR_SPACE_CONVERSION):  # fmt: skip
    _s.meta = _meta.with_dtype()
HSV.meta = _meta.with_dtype(_dt.uint8)  # (uint8 unless ``dtype`` says otherwise)


def _one_value(vals: dict[str, Any], name: str) -> Any:
    """The single value of a statistic given to a ``batch=True`` normalisation."""
    v = vals[name]
    if type(v) is not PerSample:
        return v
    first = v[0] if v else None
    if any(x is None or first is None or x.shape != first.shape or (x != first).any() for x in v):
        raise InvalidArgumentError(
            f"normalize: `{name}` cannot vary per sample with batch=True (got "
            f"{[None if x is None else x.tolist() for x in v]}). Pass one value or set "
            "batch=False."
        )
    return first


def _batch_stats(vals: dict[str, Any]) -> bool:
    return bool(vals["batch"]) and (vals["mean"] is None or vals["stddev"] is None)


def _normalize_prepare(kc: KernelContext, ins: Any, vals: dict[str, Any]) -> dict[str, Any]:
    """With ``batch=True`` and computed statistics, the given statistics are one value."""
    if not _batch_stats(vals):
        return vals
    return {**vals, "mean": _one_value(vals, "mean"), "stddev": _one_value(vals, "stddev")}


def _normalize_batch(kc: KernelContext, x: Batch, lay: Any, plans: Any, vals: Any) -> Any:
    """``batch=True`` with computed statistics: one set of statistics over the whole batch;
    else, where the backend has it, the per-sample statistics of a uniform batch at once."""
    if not _batch_stats(vals):
        stacked = getattr(kc.module, "normalize_stacked", None)
        samples = x._samples
        if stacked is None or not samples or len(samples) < 2:
            return None
        res = stacked(list(samples), lay, plans)
        return None if res is None else res[0]
    samples = x._samples
    if not samples:
        return []
    axes = plans[0].kwargs["axes"]

    def kept(i: int) -> tuple[int, ...]:
        return tuple(e for d, e in enumerate(samples[i].shape) if d not in axes)

    for i in range(len(samples)):
        if plans[i].kwargs["axes"] != axes or kept(i) != kept(0):
            raise ShapeError(
                f"normalize: with batch=True all samples must agree outside the reduced "
                f"axes {list(axes)} (got shapes {tuple(samples[0].shape)} and "
                f"{tuple(samples[i].shape)} for samples 0 and {i}). Reduce those axes too "
                "or set batch=False."
            )
    return kc.module.normalize_batch(list(samples), lay, **plans[0].kwargs)  # type: ignore[union-attr]


NORMALIZE = _schema(
    "normalize",
    Arg("mean", to_floats, None, per_sample=True, doc="Mean (computed when omitted)."),
    Arg("stddev", to_floats, None, per_sample=True, doc="Deviation (computed when omitted)."),
    Arg("axes", to_ints, None, doc="Reduced axes (default: all)."),
    Arg("axis_names", to_layout, None, doc="Reduced axes as layout letters."),
    Arg("batch", to_bool, False, doc="Compute statistics over the whole batch."),
    Arg("scale", to_float, 1.0, doc="Factor applied after normalising."),
    Arg("shift", to_float, 0.0, doc="Value added after scaling."),
    Arg("epsilon", to_float, 0.0, doc="Added to the variance."),
    Arg("ddof", to_int, 0, doc="Delta degrees of freedom of the variance."),
    Arg("dtype", to_dtype, None, doc="Output type (default float32)."),
    planned=Planned(
        P.normalize_params,
        prepare=_normalize_prepare,
        whole_batch=_normalize_batch,
        chainable=lambda vals: not _batch_stats(vals),  # per-sample statistics
    ),
)
LOOKUP_TABLE = _schema(
    "lookup_table",
    Arg("keys", to_ints, None, doc="Input values in [0, 65535]."),
    Arg("values", to_floats, None, doc="Output value of each key."),
    Arg("default_value", to_float, 0.0, doc="Output value of every other input value."),
    Arg("dtype", to_dtype, None, doc="Output type (default float32)."),
    Arg("output_dtype", to_dtype, None, doc="Deprecated alias of dtype."),
    planned=Planned(P.lookup_table_params),
)


def brightness_contrast(
    input: Any,
    /,
    *,
    brightness: Scalar | None = None,
    brightness_shift: Scalar | None = None,
    contrast: Scalar | None = None,
    contrast_center: Scalar | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Adjust brightness and contrast.

    ``out = brightness_shift * R + brightness * (contrast_center + contrast * (in -
    contrast_center))`` where ``R`` is 1 for float outputs and the type's maximum otherwise.

    Parameters
    ----------
    input : Tensor or Batch
        Channel-last images (``HWC``, ``FHWC``, ``DHWC``), any numeric type.
    brightness, brightness_shift, contrast : float, scalar or Batch, optional
        Defaults 1, 0 and 1; may vary per sample.
    contrast_center : float, scalar or Batch, optional
        Default: half the input type's positive range (128 for uint8, 0.5 for floats).
    dtype : DType, optional
        Output type (default: the input's).
    device : str or Device, optional
        ``"cpu"`` or ``"gpu"`` (default: where the input lives).
    batch_size : int, optional
        Broadcast a Tensor input to a batch of this size.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[[0, 128, 255]]], np.uint8), layout="HWC")
    >>> np.asarray(ndd.brightness_contrast(x, contrast=0.5).cpu()).ravel().tolist()
    [64, 128, 192]
    """
    return BRIGHTNESS_CONTRAST.call((input,), **forward_args(locals(), "input"))


def brightness(
    input: Any,
    /,
    *,
    brightness: Scalar | None = None,
    brightness_shift: Scalar | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Adjust brightness: ``out = brightness * in + brightness_shift * R``.

    ``R`` is 1 for float outputs and the output type's maximum otherwise; integer outputs round
    and saturate. The same as :func:`brightness_contrast` with its contrast left at 1.

    Parameters
    ----------
    input : Tensor or Batch
        Channel-last images (``HWC``, ``FHWC``, ``DHWC``), any numeric type.
    brightness : float, scalar or Batch, optional
        Multiplier (default 1); may vary per sample.
    brightness_shift : float, scalar or Batch, optional
        Shift in units of the output range (default 0); may vary per sample.
    dtype : DType, optional
        Output type (default: the input's).
    device : str or Device, optional
        ``"cpu"`` or ``"gpu"`` (default: where the input lives).
    batch_size : int, optional
        Broadcast a Tensor input to a batch of this size.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[[10, 100, 200]]], np.uint8), layout="HWC")
    >>> np.asarray(ndd.brightness(x, brightness=1.5).cpu()).ravel().tolist()
    [15, 150, 255]
    """
    return BRIGHTNESS.call((input,), **forward_args(locals(), "input"))


def contrast(
    input: Any,
    /,
    *,
    contrast: Scalar | None = None,
    contrast_center: Scalar | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Adjust contrast: ``out = contrast_center + contrast * (in - contrast_center)``.

    Integer outputs round and saturate. The same as :func:`brightness_contrast` with its
    brightness left at 1 and no shift.

    Parameters
    ----------
    input : Tensor or Batch
        Channel-last images (``HWC``, ``FHWC``, ``DHWC``), any numeric type.
    contrast : float, scalar or Batch, optional
        Multiplier of the distance from the centre (default 1; 0 gives a flat image); may vary
        per sample.
    contrast_center : float, scalar or Batch, optional
        Value kept unchanged. Default: half the input type's positive range (128 for uint8,
        0.5 for floats).
    dtype : DType, optional
        Output type (default: the input's).
    device : str or Device, optional
        ``"cpu"`` or ``"gpu"`` (default: where the input lives).
    batch_size : int, optional
        Broadcast a Tensor input to a batch of this size.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[[0, 128, 255]]], np.uint8), layout="HWC")
    >>> np.asarray(ndd.contrast(x, contrast=2.0).cpu()).ravel().tolist()
    [0, 128, 255]
    >>> np.asarray(ndd.contrast(x, contrast=0.5, contrast_center=0).cpu()).ravel().tolist()
    [0, 64, 128]
    """
    return CONTRAST.call((input,), **forward_args(locals(), "input"))


def color_twist(
    input: Any,
    /,
    *,
    brightness: Scalar | None = None,
    contrast: Scalar | None = None,
    hue: Scalar | None = None,
    saturation: Scalar | None = None,
    image_type: Any = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Adjust hue, saturation, brightness and contrast of RGB images in one pass.

    Parameters
    ----------
    input : Tensor or Batch
        3-channel, channel-last images (``HWC``, ``FHWC``, ``DHWC``).
    brightness, contrast, saturation : float, scalar or Batch, optional
        Multipliers (default 1, non-negative); may vary per sample.
    hue : float, scalar or Batch, optional
        Hue rotation in degrees (default 0).
    image_type : types.DALIImageType, optional
        Accepted for compatibility; the data is treated as RGB.
    dtype : DType, optional
        Output type (default: the input's).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Raises
    ------
    ShapeError
        When the images do not have 3 channels last.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[[10, 200, 30]]], np.uint8), layout="HWC")
    >>> np.asarray(ndd.color_twist(x, contrast=0.0).cpu()).ravel().tolist()
    [128, 128, 128]
    """
    return COLOR_TWIST.call((input,), **forward_args(locals(), "input"))


def hsv(
    input: Any,
    /,
    *,
    hue: Scalar | None = None,
    saturation: Scalar | None = None,
    value: Scalar | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Adjust hue (degrees), saturation and value of RGB images.

    Parameters
    ----------
    input : Tensor or Batch
        3-channel, channel-last RGB images.
    hue, saturation, value : float, scalar or Batch, optional
        Defaults 0, 1 and 1; may vary per sample.
    dtype : DType, optional
        Output type; **uint8 by default**, whatever the input type (as the reference).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.full((1, 1, 3), 0.5, np.float32), layout="HWC")
    >>> ndd.hsv(x, value=0.5).dtype == ndd.uint8
    True
    """
    return HSV.call((input,), **forward_args(locals(), "input"))


def hue(
    input: Any,
    /,
    *,
    hue: Scalar | None = None,
    image_type: Any = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Rotate the hue of RGB images by ``hue`` degrees.

    Parameters
    ----------
    input : Tensor or Batch
        3-channel, channel-last images.
    hue : float, scalar or Batch, optional
        Degrees (default 0); may vary per sample.
    image_type : types.DALIImageType, optional
        Accepted for compatibility; the data is treated as RGB.
    dtype : DType, optional
        Output type (default: the input's).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.full((1, 1, 3), 77, np.uint8), layout="HWC")
    >>> np.asarray(ndd.hue(x, hue=120.0).cpu()).ravel().tolist()  # grey stays grey
    [77, 77, 77]
    """
    return HUE.call((input,), **forward_args(locals(), "input"))


def saturation(
    input: Any,
    /,
    *,
    saturation: Scalar | None = None,
    image_type: Any = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Scale the saturation of RGB images (0 gives grey, 1 keeps them).

    Parameters
    ----------
    input : Tensor or Batch
        3-channel, channel-last images.
    saturation : float, scalar or Batch, optional
        Factor (default 1, non-negative); may vary per sample.
    image_type : types.DALIImageType, optional
        Accepted for compatibility; the data is treated as RGB.
    dtype : DType, optional
        Output type (default: the input's).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[[200, 10, 10]]], np.uint8), layout="HWC")
    >>> out = np.asarray(ndd.saturation(x, saturation=0.0).cpu()).ravel()
    >>> int(out.max()) - int(out.min()) <= 1
    True
    """
    return SATURATION.call((input,), **forward_args(locals(), "input"))


def color_space_conversion(
    input: Any,
    /,
    *,
    image_type: Any,
    output_type: Any,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Convert uint8 images between RGB, BGR, GRAY and YCbCr (ITU-R BT.601).

    Parameters
    ----------
    input : Tensor or Batch
        uint8 channel-last images with the channel count of ``image_type`` (1 or 3).
    image_type, output_type : types.DALIImageType or str
        Source and target colour spaces (``types.RGB``, ``"gray"``, ...).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        uint8 images with the channel count of ``output_type``.

    Raises
    ------
    InvalidTypeError
        For non-uint8 input.
    ShapeError
        When the channel count does not match ``image_type``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[[255, 0, 0]]], np.uint8), layout="HWC")
    >>> y = ndd.color_space_conversion(x, image_type=ndd.types.RGB, output_type=ndd.types.GRAY)
    >>> y.shape, int(np.asarray(y.cpu()).ravel()[0])
    ((1, 1, 1), 76)
    """
    return COLOR_SPACE_CONVERSION.call((input,), **forward_args(locals(), "input"))


def normalize(
    input: Any,
    /,
    *,
    mean: Any = None,
    stddev: Any = None,
    axes: Any = None,
    axis_names: str | None = None,
    batch: bool | None = None,
    scale: float | None = None,
    shift: float | None = None,
    epsilon: float | None = None,
    ddof: int | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """``out = scale * (in - mean) / sqrt(stddev**2 + epsilon) + shift``.

    Statistics that are not given are computed over the reduced ``axes`` (all axes by default),
    per sample, or over the whole batch with ``batch=True``. A zero deviation gives 0.

    Parameters
    ----------
    input : Tensor or Batch
        Any layout; integer or float data.
    mean, stddev : float, array, scalar or Batch, optional
        Scalars or arrays with extent 1 in the reduced axes; may vary per sample.
    axes : list of int, optional
        Reduced axes (not with ``axis_names``).
    axis_names : str, optional
        Reduced axes as layout letters, e.g. ``"HW"``.
    batch : bool, optional
        Share computed statistics over the batch (default False).
    scale, shift, epsilon : float, optional
        Defaults 1, 0 and 0.
    ddof : int, optional
        Delta degrees of freedom of a computed variance (default 0).
    dtype : DType, optional
        Output type (default float32).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Raises
    ------
    InvalidArgumentError
        For contradictory arguments (``axes`` with ``axis_names``; per-sample or non-scalar
        statistics with ``batch=True``).
    ShapeError
        When ``mean``/``stddev`` do not fit the reduced axes, or samples of a ``batch=True``
        call differ in their non-reduced extents.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([1.0, 3.0], np.float32))
    >>> np.asarray(ndd.normalize(x).cpu()).tolist()
    [-1.0, 1.0]
    """
    return NORMALIZE.call((input,), **forward_args(locals(), "input"))


def lookup_table(
    input: Any,
    /,
    *,
    keys: Any = None,
    values: Any = None,
    default_value: float | None = None,
    dtype: Any = None,
    output_dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Map integer values through a table: ``out = values[i]`` where ``in == keys[i]``.

    Parameters
    ----------
    input : Tensor or Batch
        Integer data of any shape and layout.
    keys : list of int
        Keys in [0, 65535]; with duplicates the last one wins.
    values : list of float
        One output value per key.
    default_value : float, optional
        Output for every value that is not a key (default 0).
    dtype : DType, optional
        Output type (default float32).
    output_dtype : DType, optional
        Deprecated alias of ``dtype``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Raises
    ------
    InvalidTypeError
        For non-integer input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([0, 1, 2], np.uint8))
    >>> y = ndd.lookup_table(x, keys=[1, 2], values=[10, 20], dtype=ndd.uint8)
    >>> np.asarray(y.cpu()).tolist()
    [0, 10, 20]
    """
    return LOOKUP_TABLE.call((input,), **forward_args(locals(), "input"))


__all__ = [
    "brightness",
    "brightness_contrast",
    "color_space_conversion",
    "color_twist",
    "contrast",
    "hsv",
    "hue",
    "lookup_table",
    "normalize",
    "saturation",
]
