"""Geometry operators: resize, crop, crop_mirror_normalize, random_resized_crop, flip, slice,
pad, paste, erase, resize_crop_mirror and tensor_resize.

Arguments, defaults and which of them may vary per sample (given as a ``Batch``) follow DALI
2.4. Image operators read the spatial axes from the layout (``D``, ``H``, ``W``; ``C`` is the
channel axis); a 3-D input without a layout is taken as ``"HWC"`` and a 4-D one as ``"FHWC"``.
Each operator is one schema with a plan function from ``headrace.ops._geometry_params``,
``_resize_params`` or ``_tensor_resize_params``; its pixel kernels are found by name in
``headrace.backends.{cpu,torch}.geometry`` (named after the op) or ``.resize`` (``resize`` and
``tensor_resize``).

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> img = ndd.tensor(np.zeros((480, 640, 3), np.uint8), layout="HWC")
>>> ndd.resize(img, resize_shorter=256).shape
(256, 341, 3)
>>> out = ndd.crop_mirror_normalize(img, crop=(224, 224), mean=[128.0], std=[64.0])
>>> out.shape, out.layout, out.dtype == ndd.float32
((3, 224, 224), 'CHW', True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace import types as _types
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.tensor import Tensor
from headrace._dispatch import meta_rules as _meta
from headrace._dispatch.args import (
    REQUIRED,
    Arg,
    PerSample,
    forward_args,
    to_any,
    to_bool,
    to_dtype,
    to_float,
    to_floats,
    to_int,
    to_ints,
    to_layout,
    to_str,
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema, Planned
from headrace.ops import _geometry_params as GP
from headrace.ops._resize_params import resize_params, restrict_to_window
from headrace.ops._tensor_resize_params import tensor_resize_params

#: An input: a ``Tensor`` (one sample), a ``Batch`` or anything ``ndd.tensor`` accepts.
Input = Any
#: A scalar argument that may be given per sample as a ``Batch``.
Scalar = float | Tensor | Batch | None
#: A vector argument (one value per axis/channel/...) that may be given per sample.
Vector = float | Sequence[float] | np.ndarray | Tensor | Batch | None
#: An interpolation type: ``ndd.types.INTERP_*``, its int value or a name such as ``"cubic"``.
Interp = Any


def to_float32(v: Any) -> float:
    """A scalar float argument, rounded to float32 as the reference stores it."""
    return float(np.float32(to_float(v)))


def to_interp(v: Any) -> _types.DALIInterpType:
    """An interpolation-type argument (enum, int or name)."""
    if isinstance(v, np.ndarray):
        v = v.reshape(()).item()
    return _types.interp_type(v)


# --- argument groups (names, converters and defaults as in the reference) -------------------------
_HINTS = (
    Arg("minibatch_size", to_int, None, doc="Ignored (a GPU batching hint of the reference)."),
    Arg("temp_buffer_hint", to_int, None, doc="Ignored (a memory hint of the reference)."),
)
_FILTER = (
    Arg("antialias", to_bool, True, doc="Antialias when scaling down."),
    Arg("interp_type", to_interp, None, per_sample=True, doc="Interpolation (LINEAR)."),
    Arg("mag_filter", to_interp, None, per_sample=True, doc="Filter when scaling up."),
    Arg("min_filter", to_interp, None, per_sample=True, doc="Filter when scaling down."),
    Arg("dtype", to_dtype, None, doc="Output type: the input's or float32."),
) + _HINTS
_RESIZE_SIZE = (
    Arg("size", to_floats, None, per_sample=True, doc="Output extents (0: keep aspect)."),
    Arg("resize_x", to_float32, None, per_sample=True, doc="Output width."),
    Arg("resize_y", to_float32, None, per_sample=True, doc="Output height."),
    Arg("resize_z", to_float32, None, per_sample=True, doc="Output depth."),
    Arg("resize_shorter", to_float32, None, per_sample=True, doc="Length of the shorter side."),
    Arg("resize_longer", to_float32, None, per_sample=True, doc="Length of the longer side."),
    Arg("image_type", to_any, None, doc="Ignored (deprecated in the reference)."),
    Arg("save_attrs", to_bool, False, doc="Not supported (a testing aid of the reference)."),
)
_RESIZE_ROI = (
    Arg("max_size", to_floats, None, doc="Limit of the output extents."),
    Arg("mode", to_str, None, doc='"default", "stretch", "not_smaller" or "not_larger".'),
    Arg("roi_start", to_floats, None, per_sample=True, doc="Start of the input region."),
    Arg("roi_end", to_floats, None, per_sample=True, doc="End of the input region."),
    Arg("roi_relative", to_bool, False, doc="ROI relative to the input extents."),
    Arg("subpixel_scale", to_bool, True, doc="Keep fractional scales by moving the ROI."),
)
_CROP_WINDOW = (
    Arg("crop", to_floats, None, per_sample=True, doc="Crop extents ([D,] H, W)."),
    Arg("crop_d", to_float32, None, per_sample=True, doc="Crop depth."),
    Arg("crop_h", to_float32, None, per_sample=True, doc="Crop height."),
    Arg("crop_w", to_float32, None, per_sample=True, doc="Crop width."),
    Arg("crop_pos_x", to_float32, 0.5, per_sample=True, doc="Relative x of the window."),
    Arg("crop_pos_y", to_float32, 0.5, per_sample=True, doc="Relative y of the window."),
    Arg("crop_pos_z", to_float32, 0.5, per_sample=True, doc="Relative z of the window."),
    Arg("rounding", to_str, "round", doc='Anchor rounding: "round" or "truncate".'),
)
_OUT_OF_BOUNDS = (
    Arg("fill_values", to_floats, None, doc="Fill for out-of-bounds pixels (per channel)."),
    Arg("out_of_bounds_policy", to_str, "error", doc='"error", "pad" or "trim_to_shape".'),
    Arg("output_dtype", to_dtype, None, doc="Deprecated name of dtype."),
    Arg("image_type", to_any, None, doc="Ignored (deprecated in the reference)."),
)
_DTYPE = Arg("dtype", to_dtype, None, doc="Output type (default: the input's).")

#: Layout assumed (and given to the output) for image inputs without one, as the reference does.
_IMAGE = {3: "HWC", 4: "FHWC"}
#: The input types the resampling operators accept (the reference's resize kernels' types).
_RESIZE_TYPES = tuple(np.dtype(t) for t in (np.uint8, np.int16, np.uint16, np.float32))
Vals = dict[str, Any]


def _slice_inputs(kc: KernelContext, ins: list[Batch | None], vals: Vals) -> Vals:
    """``slice``'s positional ``anchor``/``shape`` inputs as per-sample arguments
    (``anchor_input``/``shape_input``), on the host."""
    extra: Vals = {}
    for name, b in zip(("anchor_input", "shape_input"), ins[1:3]):
        if b is not None:
            extra[name] = PerSample(_st.move(a, CPU, b._dtype) for a in b._samples or ())
    return {**vals, **extra} if extra else vals


def _pad_batch_max(kc: KernelContext, ins: list[Batch | None], vals: Vals) -> Vals:
    """``pad`` extents of -1 mean the batch's largest: pass that as ``batch_max_shape``."""
    x = ins[0]
    shapes = [tuple(s.shape) for s in x._samples] if x is not None and x._samples else []
    return {**vals, "batch_max_shape": tuple(max(col) for col in zip(*shapes))}


def _cmn_layout(layout: str | None, plans: Sequence[Any], vals: Vals) -> str | None:
    """The input layout permuted as the plans say (else ``output_layout``)."""
    if plans and layout:
        return "".join(layout[p] for p in plans[0].kwargs["perm"])
    return vals["output_layout"] or layout


_MIRROR = Arg("mirror", to_int, 0, per_sample=True, doc="Flip horizontally when non-zero.")

RESIZE = OpSchema(
    "resize",
    "resize",
    args=_RESIZE_SIZE + _RESIZE_ROI + _FILTER,
    planned=Planned(
        resize_params, layouts=_IMAGE, in_dtypes=_RESIZE_TYPES, restrict=restrict_to_window
    ),
)
CROP = OpSchema(
    "crop",
    "geometry",
    args=_CROP_WINDOW + _OUT_OF_BOUNDS + (_DTYPE,),
    planned=Planned(GP.crop_params, layouts=_IMAGE, light=True, reads_window=True),
)
CROP_MIRROR_NORMALIZE = OpSchema(
    "crop_mirror_normalize",
    "geometry",
    args=_CROP_WINDOW
    + _OUT_OF_BOUNDS
    + (
        Arg("dtype", to_dtype, None, doc="Output type (float32)."),
        _MIRROR,
        Arg("mean", to_floats, 0.0, per_sample=True, doc="Mean, per channel."),
        Arg("std", to_floats, 1.0, per_sample=True, doc="Standard deviation, per channel."),
        Arg("scale", to_float32, 1.0, doc="Multiplier applied after normalising."),
        Arg("shift", to_float32, 0.0, doc="Value added after scaling."),
        Arg("output_layout", to_layout, "CHW", doc="Output layout."),
        Arg("pad_output", to_bool, False, doc="Pad the channels to a power of two (3 -> 4)."),
    ),
    planned=Planned(
        GP.crop_mirror_normalize_params,
        layouts=_IMAGE,
        out_layout=_cmn_layout,
        light=True,
        dense=True,
        reads_window=True,
    ),
)
RANDOM_RESIZED_CROP = OpSchema(
    "random_resized_crop",
    "resize",
    args=_FILTER
    + (
        Arg("size", to_ints, REQUIRED, doc="Output (H, W)."),
        Arg("random_area", to_floats, (0.08, 1.0), doc="Range of the window's area fraction."),
        Arg("random_aspect_ratio", to_floats, (3 / 4, 4 / 3), doc="Range of the aspect ratio."),
        Arg("num_attempts", to_int, 10, doc="Attempts at drawing a fitting window."),
    ),
    random=True,
    planned=Planned(
        GP.random_resized_crop_sampler, random=True, layouts=_IMAGE, in_dtypes=_RESIZE_TYPES
    ),
    kernel="resize",
)
FLIP = OpSchema(
    "flip",
    "geometry",
    args=(
        Arg("horizontal", to_int, 1, per_sample=True, doc="Flip the W axis."),
        Arg("vertical", to_int, 0, per_sample=True, doc="Flip the H axis."),
        Arg("depthwise", to_int, 0, per_sample=True, doc="Flip the D axis."),
    ),
    planned=Planned(GP.flip_params, layouts=_IMAGE, light=True),
)
SLICE = OpSchema(
    "slice",
    "geometry",
    inputs=("data", "anchor", "shape"),
    min_inputs=1,
    args=(
        Arg("start", to_ints, None, per_sample=True, doc="Absolute start."),
        Arg("end", to_ints, None, per_sample=True, doc="Absolute end."),
        Arg("shape", to_ints, None, per_sample=True, doc="Absolute extent."),
        Arg("rel_start", to_floats, None, per_sample=True, doc="Start relative to the extent."),
        Arg("rel_end", to_floats, None, per_sample=True, doc="End relative to the extent."),
        Arg("rel_shape", to_floats, None, per_sample=True, doc="Extent, relative."),
        Arg("axes", to_ints, None, per_sample=True, doc="Axes the values refer to ([1, 0])."),
        Arg("axis_names", to_layout, None, doc='Axes by layout name ("WH").'),
        Arg("normalized_anchor", to_bool, True, doc="The anchor input is relative."),
        Arg("normalized_shape", to_bool, True, doc="The shape input is relative."),
    )
    + _OUT_OF_BOUNDS
    + (_DTYPE,),
    planned=Planned(GP.slice_params, prepare=_slice_inputs, light=True),
)
PAD = OpSchema(
    "pad",
    "geometry",
    args=(
        Arg("shape", to_ints, None, per_sample=True, doc="Output extents (-1: batch max)."),
        Arg("align", to_ints, None, per_sample=True, doc="Round extents up to a multiple."),
        Arg("axes", to_ints, None, per_sample=True, doc="Padded axes (all)."),
        Arg("axis_names", to_layout, None, doc="Padded axes by layout name."),
        Arg("fill_value", to_float32, 0.0, per_sample=True, doc="Padding value."),
    ),
    planned=Planned(GP.pad_params, prepare=_pad_batch_max, light=True),
)
PASTE = OpSchema(
    "paste",
    "geometry",
    args=(
        Arg("ratio", to_float32, REQUIRED, per_sample=True, doc="Canvas / image size."),
        Arg("fill_value", to_ints, REQUIRED, doc="Canvas colour (per channel)."),
        Arg("paste_x", to_float32, 0.5, per_sample=True, doc="Relative x of the image."),
        Arg("paste_y", to_float32, 0.5, per_sample=True, doc="Relative y of the image."),
        Arg("min_canvas_size", to_float32, 0.0, per_sample=True, doc="Minimum canvas side."),
        Arg("n_channels", to_int, None, doc="Expected number of channels."),
    ),
    planned=Planned(GP.paste_params, layouts=_IMAGE, light=True),
)
ERASE = OpSchema(
    "erase",
    "geometry",
    args=(
        Arg("anchor", to_floats, None, per_sample=True, doc="Region starts, region by region."),
        Arg("shape", to_floats, None, per_sample=True, doc="Region extents, region by region."),
        Arg("axes", to_ints, None, doc="Axes the values refer to."),
        Arg("axis_names", to_layout, None, doc='Axes by layout name ("HW").'),
        Arg("fill_value", to_floats, None, per_sample=True, doc="Fill (per channel)."),
        Arg("normalized", to_bool, None, doc="Sets normalized_anchor and normalized_shape."),
        Arg("normalized_anchor", to_bool, False, doc="Anchors are relative."),
        Arg("normalized_shape", to_bool, False, doc="Extents are relative."),
        Arg("centered_anchor", to_bool, False, doc="Anchors are region centres."),
    ),
    planned=Planned(GP.erase_params, layouts=_IMAGE, light=True),
)
RESIZE_CROP_MIRROR = OpSchema(
    "resize_crop_mirror",
    "resize",
    args=_RESIZE_SIZE[:6] + _RESIZE_ROI + _FILTER + _CROP_WINDOW + (_MIRROR,),
    planned=Planned(GP.resize_crop_mirror_params, layouts=_IMAGE, in_dtypes=_RESIZE_TYPES),
    kernel="resize",
)
TENSOR_RESIZE = OpSchema(
    "tensor_resize",
    "resize",
    args=(
        Arg("sizes", to_floats, None, per_sample=True, doc="Output extents of the axes."),
        Arg("scales", to_floats, None, per_sample=True, doc="Scale factors of the axes."),
        Arg("axes", to_ints, None, doc="Axes the values refer to (all)."),
        Arg("axis_names", to_layout, None, doc="Axes by layout name."),
        Arg("alignment", to_floats, None, per_sample=True, doc="ROI point kept in place (0.5)."),
        Arg("size_rounding", to_str, "round", doc='"round", "truncate" or "ceil".'),
    )
    + _RESIZE_ROI
    + _FILTER,
    planned=Planned(tensor_resize_params, in_dtypes=_RESIZE_TYPES),
)


# --- public functions --------------------------------------------------------------------------
# What a pending call's outputs are, before they are computed (``headrace._core.meta``).
RESIZE.meta = CROP.meta = _meta.with_dtype()
FLIP.meta = _meta.same_as_input()
CROP_MIRROR_NORMALIZE.meta = _meta.crop_mirror_normalize


def resize(
    input: Input,
    /,
    *,
    size: Vector = None,
    resize_x: Scalar = None,
    resize_y: Scalar = None,
    resize_z: Scalar = None,
    resize_shorter: Scalar = None,
    resize_longer: Scalar = None,
    max_size: float | Sequence[float] | None = None,
    mode: str | None = None,
    interp_type: Interp = None,
    min_filter: Interp = None,
    mag_filter: Interp = None,
    antialias: bool | None = None,
    roi_start: Vector = None,
    roi_end: Vector = None,
    roi_relative: bool | None = None,
    subpixel_scale: bool | None = None,
    dtype: Any = None,
    image_type: Any = None,
    minibatch_size: int | None = None,
    save_attrs: bool | None = None,
    temp_buffer_hint: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Resize images, volumes or sequences (spatial axes ``D``/``H``/``W`` of the layout).

    Give the output size in exactly one way: ``size``, ``resize_x``/``resize_y``/``resize_z``,
    ``resize_shorter`` or ``resize_longer``. Extents of 0 (or missing ones) are derived from
    the others according to ``mode``; negative extents flip the axis.

    Parameters
    ----------
    input : Tensor or Batch
        Layouts ``HWC``, ``CHW``, ``FHWC``, ``DHWC``, ... (3-D without layout: ``HWC``);
        any integer or float type; CPU or GPU.
    size : sequence of float, scalar or Batch
        Output extents of the spatial axes, outermost first.
    resize_x, resize_y, resize_z : float, scalar or Batch
        Output width, height, depth.
    resize_shorter, resize_longer : float, scalar or Batch
        Length of the shorter/longer side; the aspect ratio is kept.
    max_size : float or sequence of float
        Limit of the output extents.
    mode : str
        ``"default"`` (missing extents keep the mean scale), ``"stretch"``, ``"not_smaller"``,
        ``"not_larger"``.
    interp_type, min_filter, mag_filter : interpolation type, scalar or Batch
        ``INTERP_LINEAR`` (default), ``INTERP_NN``, ``INTERP_CUBIC``, ``INTERP_LANCZOS3``,
        ``INTERP_TRIANGULAR``, ``INTERP_GAUSSIAN``; ``min_filter``/``mag_filter`` for
        shrinking/growing axes.
    antialias : bool
        Widen the filter when scaling down (default True).
    roi_start, roi_end : sequence of float, scalar or Batch
        Input region to resize (reversed → flipped).
    roi_relative : bool
        ROI given relative to the input extents.
    subpixel_scale : bool
        Keep fractional scales by adjusting the ROI (default True).
    dtype : DType
        Output type: the input's (default) or float32.
    image_type, minibatch_size, temp_buffer_hint : ignored
        Accepted for compatibility.
    save_attrs : bool
        Not supported (must be False).
    device : str or Device
        ``"cpu"`` or ``"gpu"``; default: where the input is.
    batch_size : int
        Batch size when no input is a Batch.

    Returns
    -------
    Tensor or Batch
        Same layout as the input (``HWC`` when it had none).

    Raises
    ------
    InvalidArgumentError
        Several or no ways of giving the size, ``mode`` with ``resize_shorter``/``_longer``,
        ``dtype`` other than the input's or float32.
    ShapeError
        No or an incomplete layout, non-adjacent spatial axes.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> img = ndd.tensor(np.zeros((100, 200, 3), np.uint8), layout="HWC")
    >>> ndd.resize(img, size=[50, 0]).shape
    (50, 100, 3)
    """
    return RESIZE.call((input,), **forward_args(locals(), "input"))


def crop(
    input: Input,
    /,
    *,
    crop: Vector = None,
    crop_h: Scalar = None,
    crop_w: Scalar = None,
    crop_d: Scalar = None,
    crop_pos_x: Scalar = None,
    crop_pos_y: Scalar = None,
    crop_pos_z: Scalar = None,
    rounding: str | None = None,
    fill_values: float | Sequence[float] | None = None,
    out_of_bounds_policy: str | None = None,
    dtype: Any = None,
    output_dtype: Any = None,
    image_type: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Cut a window out of images, volumes or sequences.

    Parameters
    ----------
    input : Tensor or Batch
        Any layout with spatial axes (3-D without layout: ``HWC``); any type; CPU or GPU.
    crop : sequence of float, scalar or Batch
        Window extents ``([D,] H, W)``; or give ``crop_h``/``crop_w``/``crop_d``.
    crop_h, crop_w, crop_d : float, scalar or Batch
        Window height, width, depth (0 or missing: the whole extent).
    crop_pos_x, crop_pos_y, crop_pos_z : float, scalar or Batch
        Relative window position in ``[0, 1]`` (default 0.5: centred).
    rounding : str
        Anchor rounding, ``"round"`` (default) or ``"truncate"``.
    fill_values : float or sequence of float
        Values for pixels outside the input (one, or one per channel).
    out_of_bounds_policy : str
        ``"error"`` (default), ``"pad"`` or ``"trim_to_shape"``.
    dtype, output_dtype : DType
        Output type (default: the input's); ``output_dtype`` is the deprecated name.
    image_type : ignored
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Same layout as the input.

    Raises
    ------
    ShapeError
        The window leaves the input and ``out_of_bounds_policy`` is ``"error"``.
    InvalidArgumentError
        ``crop`` together with ``crop_h``/``crop_w``; negative extents; positions outside
        ``[0, 1]``; a wrong number of values.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> img = ndd.tensor(np.arange(48, dtype=np.uint8).reshape(4, 4, 3), layout="HWC")
    >>> ndd.crop(img, crop=(2, 2), crop_pos_x=0.0, crop_pos_y=0.0).torch()[..., 0].tolist()
    [[0, 3], [12, 15]]
    """
    return CROP.call((input,), **forward_args(locals(), "input"))


def crop_mirror_normalize(
    input: Input,
    /,
    *,
    crop: Vector = None,
    crop_h: Scalar = None,
    crop_w: Scalar = None,
    crop_d: Scalar = None,
    crop_pos_x: Scalar = None,
    crop_pos_y: Scalar = None,
    crop_pos_z: Scalar = None,
    rounding: str | None = None,
    mirror: int | Tensor | Batch | None = None,
    mean: Vector = None,
    std: Vector = None,
    scale: float | None = None,
    shift: float | None = None,
    dtype: Any = None,
    output_layout: str | None = None,
    pad_output: bool | None = None,
    fill_values: float | Sequence[float] | None = None,
    out_of_bounds_policy: str | None = None,
    output_dtype: Any = None,
    image_type: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Crop, mirror, normalise (``(x - mean) / std * scale + shift``) and transpose, fused.

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC``, ``CHW``, ``FHWC``, ``DHWC``, ... (3-D without layout: ``HWC``); any type;
        CPU or GPU. uint8 ``HWC`` input takes a lookup-table fast path.
    crop, crop_h, crop_w, crop_d, crop_pos_x, crop_pos_y, crop_pos_z, rounding
        The window, as in :func:`crop` (default: no crop).
    mirror : int, scalar or Batch
        Flip horizontally when non-zero (e.g. ``ndd.random.coin_flip(batch_size=n)``).
    mean, std : float, sequence of float or Batch
        One value or one per channel (defaults 0 and 1).
    scale, shift : float
        Applied after normalising (defaults 1 and 0).
    dtype : DType
        Output type (default float32); integers are rounded and saturated.
    output_layout : str
        Output layout, a permutation of the input's (default ``"CHW"``).
    pad_output : bool
        Pad the channels up to a power of two (3 -> 4, 5 -> 8; 1, 2 and 4 stay). The padding
        channels hold ``fill_values`` (one value, or their entries of one per output channel)
        when ``out_of_bounds_policy="pad"``, else 0, as the reference.
    fill_values, out_of_bounds_policy
        As in :func:`crop`; filled pixels are not normalised; integer outputs take them by a
        plain cast (truncated and wrapped: 300 -> 44 as uint8), as the reference.
    output_dtype, image_type
        Deprecated / ignored.
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Layout ``output_layout``.

    Raises
    ------
    InvalidArgumentError
        ``std`` of 0, ``mean``/``std`` with a wrong number of values, ``output_layout`` not a
        permutation of the input layout.
    ShapeError
        The window leaves the input and ``out_of_bounds_policy`` is ``"error"``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> img = ndd.tensor(np.full((8, 8, 3), 10, np.uint8), layout="HWC")
    >>> out = ndd.crop_mirror_normalize(img, crop=(4, 4), mean=[5.0], std=[5.0])
    >>> out.shape, out.torch()[:, 0, 0].tolist()
    ((3, 4, 4), [1.0, 1.0, 1.0])
    """
    return CROP_MIRROR_NORMALIZE.call((input,), **forward_args(locals(), "input"))


def random_resized_crop(
    input: Input,
    /,
    *,
    size: Sequence[int] | int,
    random_area: Sequence[float] | None = None,
    random_aspect_ratio: Sequence[float] | None = None,
    num_attempts: int | None = None,
    interp_type: Interp = None,
    min_filter: Interp = None,
    mag_filter: Interp = None,
    antialias: bool | None = None,
    dtype: Any = None,
    minibatch_size: int | None = None,
    temp_buffer_hint: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: Any = None,
) -> Tensor | Batch:
    """Crop a random window (random area and aspect ratio) and resize it to ``size``.

    The window's area fraction is uniform in ``random_area`` and its aspect ratio (w / h)
    log-uniform in ``random_aspect_ratio``; after ``num_attempts`` misses the whole image,
    trimmed to the nearest allowed aspect ratio, is used. Sequences (``FHWC``) use one window
    for all frames. Windows are drawn sample by sample from one generator seeded by this
    call's ``rng`` draw, so equal RNG states give equal crops.

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC``, ``CHW``, ``FHWC`` (3-D without layout: ``HWC``); any type; CPU or GPU.
    size : sequence of int
        Output ``(H, W)`` (required).
    random_area : sequence of float
        Range of the area fraction (default ``[0.08, 1.0]``).
    random_aspect_ratio : sequence of float
        Range of the aspect ratio (default ``[3/4, 4/3]``).
    num_attempts : int
        Tries before the fallback (default 10).
    interp_type, min_filter, mag_filter, antialias, dtype
        As in :func:`resize`.
    minibatch_size, temp_buffer_hint : ignored
    device : str or Device
    batch_size : int
    rng : ndd.random.RNG
        Generator to draw from (default: the thread's default RNG).

    Returns
    -------
    Tensor or Batch
        Same layout as the input, spatial extents ``size``.

    Raises
    ------
    InvalidArgumentError
        Non-positive ``size``, empty or reversed ranges.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> img = ndd.tensor(np.zeros((60, 80, 3), np.uint8), layout="HWC")
    >>> ndd.random_resized_crop(img, size=[32, 32], rng=ndd.random.RNG(seed=1)).shape
    (32, 32, 3)
    """
    return RANDOM_RESIZED_CROP.call((input,), **forward_args(locals(), "input"))


def flip(
    input: Input,
    /,
    *,
    horizontal: int | Tensor | Batch | None = None,
    vertical: int | Tensor | Batch | None = None,
    depthwise: int | Tensor | Batch | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Flip images, volumes or sequences along ``W``, ``H`` and/or ``D``.

    Parameters
    ----------
    input : Tensor or Batch
        Any layout (3-D without layout: ``HWC``, 4-D: ``FHWC``); any type; CPU or GPU.
    horizontal, vertical, depthwise : int, scalar or Batch
        Flip the ``W``/``H``/``D`` axis when non-zero (defaults 1, 0, 0).
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(3, dtype=np.uint8).reshape(1, 3, 1), layout="HWC")
    >>> ndd.flip(x).torch().ravel().tolist()
    [2, 1, 0]
    """
    return FLIP.call(
        (input,),
        device=device,
        batch_size=batch_size,
        horizontal=horizontal,
        vertical=vertical,
        depthwise=depthwise,
    )


def slice(
    data: Input,
    anchor: Input = None,
    shape_input: Input = None,
    /,
    *,
    start: Vector = None,
    end: Vector = None,
    shape: Vector = None,
    rel_start: Vector = None,
    rel_end: Vector = None,
    rel_shape: Vector = None,
    axes: Sequence[int] | Tensor | Batch | None = None,
    axis_names: str | None = None,
    normalized_anchor: bool | None = None,
    normalized_shape: bool | None = None,
    fill_values: float | Sequence[float] | None = None,
    out_of_bounds_policy: str | None = None,
    dtype: Any = None,
    output_dtype: Any = None,
    image_type: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Extract a box given by its start and end or extent along chosen axes.

    The start comes from the ``anchor`` input, ``start`` or ``rel_start`` (default 0); the end
    from the ``shape_input`` input, ``shape``, ``rel_shape``, ``end`` or ``rel_end`` (default:
    the extent). ``rel_*`` values and, with ``normalized_anchor``/``normalized_shape``, the
    inputs are fractions of the extent.

    Parameters
    ----------
    data : Tensor or Batch
        Any layout and type; CPU or GPU.
    anchor, shape_input : Tensor or Batch, optional
        Positional start and extent (float or int), one value per axis.
    start, end, shape : sequence of int, or Batch
        Absolute start, end, extent.
    rel_start, rel_end, rel_shape : sequence of float, or Batch
        Relative start, end, extent.
    axes : sequence of int
        Axes the values refer to (default ``[1, 0]``, used when there is no layout).
    axis_names : str
        Axes by layout name (default ``"WH"``).
    normalized_anchor, normalized_shape : bool
        The positional inputs are relative (default True).
    fill_values, out_of_bounds_policy, dtype, output_dtype, image_type
        As in :func:`crop`.
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Same layout as the input.

    Raises
    ------
    InvalidArgumentError
        Several start or end forms, ``axes`` with ``axis_names``, unknown axes, an end before
        the start.
    ShapeError
        The box leaves the input and ``out_of_bounds_policy`` is ``"error"``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(10, dtype=np.float32), layout="W")
    >>> ndd.slice(x, start=[2], shape=[3], axes=[0]).torch().tolist()
    [2.0, 3.0, 4.0]
    """
    return SLICE.call(
        (data, anchor, shape_input), **forward_args(locals(), "data", "anchor", "shape_input")
    )


def pad(
    input: Input,
    /,
    *,
    shape: Sequence[int] | Tensor | Batch | None = None,
    align: int | Sequence[int] | Tensor | Batch | None = None,
    axes: Sequence[int] | Tensor | Batch | None = None,
    axis_names: str | None = None,
    fill_value: Scalar = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Pad the end of chosen axes with ``fill_value``.

    Parameters
    ----------
    input : Tensor or Batch
        Any layout and type; CPU or GPU.
    shape : sequence of int, or Batch
        Output extents; -1, 0 (and the default) mean the largest extent in the batch. Smaller
        extents than the input's keep the input's.
    align : int or sequence of int, or Batch
        Round the padded extents up to a multiple of this.
    axes : sequence of int, or Batch
        Padded axes (default: all).
    axis_names : str
        Padded axes by layout name.
    fill_value : float, scalar or Batch
        Padding value (default 0).
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Same layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> b = ndd.batch([np.ones(2, np.float32), np.ones(4, np.float32)])
    >>> [t.shape for t in ndd.pad(b, fill_value=-1).tensors]
    [(4,), (4,)]
    """
    return PAD.call((input,), **forward_args(locals(), "input"))


def paste(
    input: Input,
    /,
    *,
    ratio: float | Tensor | Batch,
    fill_value: int | Sequence[int],
    paste_x: Scalar = None,
    paste_y: Scalar = None,
    min_canvas_size: Scalar = None,
    n_channels: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Place images on a larger canvas filled with ``fill_value`` (zoom-out augmentation).

    The canvas is ``ratio`` times the image (at least ``min_canvas_size``); the image goes at
    relative position ``(paste_x, paste_y)``. (The reference has a GPU kernel only; headrace
    also runs it on the CPU.)

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC`` images (3-D without layout: ``HWC``); any type; CPU or GPU.
    ratio : float, scalar or Batch
        Canvas extent / image extent, >= 1 (required).
    fill_value : int or sequence of int
        Canvas colour, one value or one per channel (required).
    paste_x, paste_y : float, scalar or Batch
        Relative position in ``[0, 1]`` (default 0.5).
    min_canvas_size : float, scalar or Batch
        Smallest canvas side (default 0).
    n_channels : int
        When given, the number of channels the input must have.
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        ``HWC``.

    Raises
    ------
    InvalidArgumentError
        ``ratio`` < 1, positions outside ``[0, 1]``, a channel count other than ``n_channels``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> img = ndd.tensor(np.ones((2, 3, 3), np.uint8), layout="HWC")
    >>> ndd.paste(img, ratio=2.0, fill_value=0).shape
    (4, 6, 3)
    """
    return PASTE.call((input,), **forward_args(locals(), "input"))


def erase(
    input: Input,
    /,
    *,
    anchor: Vector = None,
    shape: Vector = None,
    axes: Sequence[int] | None = None,
    axis_names: str | None = None,
    fill_value: Vector = None,
    normalized: bool | None = None,
    normalized_anchor: bool | None = None,
    normalized_shape: bool | None = None,
    centered_anchor: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Fill rectangular regions with ``fill_value`` (cutout / random erasing).

    ``anchor`` and ``shape`` list the regions one after another, each with one value per axis
    of ``axes``/``axis_names`` (default: every axis but ``C``).

    Parameters
    ----------
    input : Tensor or Batch
        Any layout (3-D without layout: ``HWC``) and type; CPU or GPU.
    anchor, shape : sequence of float, or Batch
        Starts and extents of the regions.
    axes : sequence of int
        Axes the values refer to.
    axis_names : str
        Axes by layout name (e.g. ``"HW"``).
    fill_value : float, sequence of float, or Batch
        Fill, one value or one per channel (default 0).
    normalized, normalized_anchor, normalized_shape : bool
        Values are fractions of the extents (``normalized`` sets both).
    centered_anchor : bool
        Anchors are the regions' centres.
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Raises
    ------
    InvalidArgumentError
        ``anchor``/``shape`` lengths that are not a whole number of regions.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> img = ndd.tensor(np.ones((4, 4, 1), np.uint8), layout="HWC")
    >>> out = ndd.erase(img, anchor=[1, 1], shape=[2, 2], axis_names="HW")
    >>> int(out.torch().sum())
    12
    """
    return ERASE.call((input,), **forward_args(locals(), "input"))


def resize_crop_mirror(
    input: Input,
    /,
    *,
    size: Vector = None,
    resize_x: Scalar = None,
    resize_y: Scalar = None,
    resize_z: Scalar = None,
    resize_shorter: Scalar = None,
    resize_longer: Scalar = None,
    max_size: float | Sequence[float] | None = None,
    mode: str | None = None,
    crop: Vector = None,
    crop_h: Scalar = None,
    crop_w: Scalar = None,
    crop_d: Scalar = None,
    crop_pos_x: Scalar = None,
    crop_pos_y: Scalar = None,
    crop_pos_z: Scalar = None,
    rounding: str | None = None,
    mirror: int | Tensor | Batch | None = None,
    interp_type: Interp = None,
    min_filter: Interp = None,
    mag_filter: Interp = None,
    antialias: bool | None = None,
    roi_start: Vector = None,
    roi_end: Vector = None,
    roi_relative: bool | None = None,
    subpixel_scale: bool | None = None,
    dtype: Any = None,
    minibatch_size: int | None = None,
    temp_buffer_hint: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Resize, crop and mirror in one resampling pass (only the cropped part is computed).

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC`` images (3-D without layout: ``HWC``); CPU or GPU.
    size, resize_x, resize_y, resize_z, resize_shorter, resize_longer, max_size, mode
        The resize, as in :func:`resize`.
    crop, crop_h, crop_w, crop_pos_x, crop_pos_y : as in :func:`crop`
        The window, taken from the resized image.
    crop_d, crop_pos_z, rounding
        Accepted for 2-D images only at their defaults (volumes are not supported).
    mirror : int, scalar or Batch
        Flip horizontally when non-zero.
    interp_type, min_filter, mag_filter, antialias, roi_start, roi_end, roi_relative,
    subpixel_scale, dtype : as in :func:`resize`
    minibatch_size, temp_buffer_hint : ignored
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Same layout as the input.

    Raises
    ------
    InvalidArgumentError
        As :func:`resize` and :func:`crop`; ``crop_d``, ``crop_pos_z`` or
        ``rounding="truncate"``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> img = ndd.tensor(np.zeros((480, 640, 3), np.uint8), layout="HWC")
    >>> ndd.resize_crop_mirror(img, resize_shorter=256, crop=[224, 224], mirror=1).shape
    (224, 224, 3)
    """
    return RESIZE_CROP_MIRROR.call((input,), **forward_args(locals(), "input"))


def tensor_resize(
    input: Input,
    /,
    *,
    sizes: Vector = None,
    scales: Vector = None,
    axes: Sequence[int] | None = None,
    axis_names: str | None = None,
    alignment: Vector = None,
    size_rounding: str | None = None,
    mode: str | None = None,
    max_size: float | Sequence[float] | None = None,
    roi_start: Vector = None,
    roi_end: Vector = None,
    roi_relative: bool | None = None,
    subpixel_scale: bool | None = None,
    interp_type: Interp = None,
    min_filter: Interp = None,
    mag_filter: Interp = None,
    antialias: bool | None = None,
    dtype: Any = None,
    minibatch_size: int | None = None,
    temp_buffer_hint: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Tensor | Batch:
    """Resample any axes of any tensor (no layout needed).

    Give ``sizes`` or ``scales`` (output extent = ``size_rounding(scale * input extent)``) for
    the axes in ``axes``/``axis_names`` (default: all); other axes keep their extent. The axes
    that change must lie within three consecutive dimensions.

    Parameters
    ----------
    input : Tensor or Batch
        At least 1-D; any layout and type; CPU or GPU.
    sizes : sequence of float, or Batch
        Output extents (0: derived by ``mode``; negative: flip).
    scales : sequence of float, or Batch
        Scale factors (not with ``mode="not_smaller"``/``"not_larger"``).
    axes : sequence of int
        Axes the values refer to (negative counts from the back).
    axis_names : str
        Axes by layout name.
    alignment : float, sequence of float, or Batch
        Relative ROI point kept in place when the scale is fractional (default 0.5: centre;
        0: start; 1: end).
    size_rounding : str
        ``"round"`` (default, halves away from zero), ``"truncate"`` or ``"ceil"``.
    mode, max_size, roi_start, roi_end, roi_relative, subpixel_scale, interp_type,
    min_filter, mag_filter, antialias, dtype : as in :func:`resize`
    minibatch_size, temp_buffer_hint : ignored
    device : str or Device
    batch_size : int

    Returns
    -------
    Tensor or Batch
        Same layout as the input.

    Raises
    ------
    InvalidArgumentError
        Both or neither of ``sizes``/``scales``, ``axes`` with ``axis_names``, changes
        spanning more than 3 dimensions, a bad ``size_rounding``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.zeros((4, 6, 2), np.float32))
    >>> ndd.tensor_resize(x, sizes=[2, 3], axes=[0, 1]).shape
    (2, 3, 2)
    >>> ndd.tensor_resize(x, scales=[0.5], axes=[1], size_rounding="ceil").shape
    (4, 3, 2)
    """
    return TENSOR_RESIZE.call((input,), **forward_args(locals(), "input"))


__all__ = [
    "crop",
    "crop_mirror_normalize",
    "erase",
    "flip",
    "pad",
    "paste",
    "random_resized_crop",
    "resize",
    "resize_crop_mirror",
    "slice",
    "tensor_resize",
]
