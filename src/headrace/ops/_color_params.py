"""Parameter math for the colour operators (no pixels touched here).

Each ``*_params`` function takes one sample's shape, layout and element type plus the op's
arguments (already resolved for that sample) and returns a
:class:`~headrace.ops._geometry_common.KernelPlan` whose ``kwargs`` feed the kernel of the same
name in ``headrace.backends.cpu.color`` / ``headrace.backends.torch.color``.

Semantics follow DALI 2.4 and were checked against it:

* ``brightness_contrast``: ``out = brightness_shift * range + brightness * (center + contrast *
  (in - center))``, ``range`` = 1 for float outputs, else the output type's max; ``center``
  defaults to half the *input* type's positive range (128 for uint8, 16384 for int16, 0.5 for
  float). Computed as ``a * in + b`` in float32, which is bit-exact with DALI on uint8.
* ``color_twist`` / ``hsv`` / ``hue`` / ``saturation``: a 3x3 matrix applied in RGB, built as
  ``brightness * contrast * YIQ^-1 . Hue . Sat . value . YIQ`` plus the offset
  ``(half - half * contrast) * brightness`` (``half`` = 128 for integer inputs, 0.5 for float).
  ``hsv`` outputs uint8 unless ``dtype`` is given (DALI's default, even for float input).
* Integer outputs round half away from zero and saturate (DALI's ``ConvertSat``).

Examples
--------
>>> plan = brightness_contrast_params((2, 2, 3), "HWC", "uint8", brightness=2.0)
>>> plan.kwargs["scale"], plan.kwargs["offset"], plan.dtype
(2.0, 0.0, dtype('uint8'))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace._core.saturate import saturate
from headrace.ops._geometry_common import KernelPlan
from headrace.types import DALIDataType, DALIImageType
from headrace.types import image_type as to_image_type

_DALI_TO_NUMPY = {
    DALIDataType.UINT8: np.uint8,
    DALIDataType.UINT16: np.uint16,
    DALIDataType.UINT32: np.uint32,
    DALIDataType.UINT64: np.uint64,
    DALIDataType.INT8: np.int8,
    DALIDataType.INT16: np.int16,
    DALIDataType.INT32: np.int32,
    DALIDataType.INT64: np.int64,
    DALIDataType.FLOAT16: np.float16,
    DALIDataType.FLOAT: np.float32,
    DALIDataType.FLOAT64: np.float64,
    DALIDataType.BOOL: np.bool_,
}

# Colour-space matrices (rows produce Y, I, Q from R, G, B), as DALI defines them.
RGB_TO_YIQ = np.array(
    [[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]], np.float64
)
YIQ_TO_RGB = np.linalg.inv(RGB_TO_YIQ)

_IMAGE_CHANNELS = {
    DALIImageType.RGB: 3,
    DALIImageType.BGR: 3,
    DALIImageType.YCbCr: 3,
    DALIImageType.GRAY: 1,
}


def to_numpy_dtype(value: Any) -> np.dtype | None:
    """Normalise a dtype argument (``None``, numpy dtype, name or DALI enum) to numpy.

    Examples
    --------
    >>> to_numpy_dtype(DALIDataType.FLOAT), to_numpy_dtype("uint8"), to_numpy_dtype(None)
    (dtype('float32'), dtype('uint8'), None)
    """
    if value is None:
        return None
    if isinstance(value, DALIDataType):
        return np.dtype(_DALI_TO_NUMPY[value])
    name = getattr(value, "name", None)  # headrace/DALI-like dtype objects
    if name is not None and not isinstance(value, np.dtype) and isinstance(name, str):
        key = name.upper().replace("FLOAT32", "FLOAT")
        if key in DALIDataType.__members__:
            return np.dtype(_DALI_TO_NUMPY[DALIDataType[key]])
    try:
        return np.dtype(value)
    except TypeError:
        raise InvalidTypeError(
            f"unsupported dtype (got {value!r}). Pass a numpy dtype or a headrace type."
        ) from None


def type_max(dtype: np.dtype) -> float:
    """The value range unit of ``dtype``: 1 for floats, else the type's maximum.

    Examples
    --------
    >>> type_max(np.dtype("uint8")), type_max(np.dtype("float32"))
    (255.0, 1.0)
    """
    if dtype.kind == "f":
        return 1.0
    return float(np.iinfo(dtype).max)


def half_range(dtype: np.dtype) -> float:
    """Half of the positive range of ``dtype`` (128 for uint8, 0.5 for floats).

    Examples
    --------
    >>> half_range(np.dtype("uint8")), half_range(np.dtype("int16")), half_range(np.dtype("f4"))
    (128.0, 16384.0, 0.5)
    """
    if dtype.kind == "f":
        return 0.5
    return (float(np.iinfo(dtype).max) + 1.0) / 2.0


def _check_channels_last(op: str, shape: Sequence[int], layout: str | None, n: int) -> None:
    _layout.check_rank(op, shape, layout)
    if layout and layout[-1] != "C":
        raise ShapeError(
            f"{op}: expects channel-last data such as HWC, FHWC or DHWC (got layout {layout!r}). "
            "Transpose the data so that channels come last."
        )
    if len(shape) == 0 or shape[-1] != n:
        raise ShapeError(
            f"{op}: expects {n} channels in the last axis (got shape {tuple(shape)}). "
            f"Pass {n}-channel images."
        )


def _check_nonneg(op: str, name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise InvalidArgumentError(
            f"{op}: `{name}` must be a non-negative number (got {value}). Pass a value >= 0."
        )
    return value


def _out_dtype(in_dtype: Any, dtype: Any) -> np.dtype:
    out = to_numpy_dtype(dtype)
    return np.dtype(in_dtype) if out is None else out


def brightness_contrast_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    brightness: float = 1.0,
    brightness_shift: float = 0.0,
    contrast: float = 1.0,
    contrast_center: float | None = None,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``brightness_contrast`` as ``out = scale * in + offset`` (float32 arithmetic).

    Examples
    --------
    >>> p = brightness_contrast_params((4, 4, 3), "HWC", "uint8", contrast=0.5)
    >>> p.kwargs["scale"], p.kwargs["offset"]
    (0.5, 64.0)
    """
    f32 = np.float32
    in_dt = np.dtype(in_dtype)
    out_dt = _out_dtype(in_dt, dtype)
    center = half_range(in_dt) if contrast_center is None else float(contrast_center)
    b, c = f32(brightness), f32(contrast)
    scale = b * c
    offset = f32(brightness_shift) * f32(type_max(out_dt)) + b * (f32(center) - c * f32(center))
    return KernelPlan(
        tuple(shape), out_dt, {"scale": float(scale), "offset": float(offset), "dtype": out_dt}
    )


def _hue_matrix(hue_deg: float) -> np.ndarray:
    a = math.radians(hue_deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]])


def twist_matrix(
    hue: float = 0.0,
    saturation: float = 1.0,
    value: float = 1.0,
    brightness: float = 1.0,
    contrast: float = 1.0,
) -> np.ndarray:
    """The 3x3 RGB matrix of a hue/saturation/value/brightness/contrast adjustment (float32).

    Examples
    --------
    >>> bool(np.allclose(twist_matrix(), np.eye(3), atol=1e-6))
    True
    """
    sat = np.diag([1.0, saturation, saturation])
    m = YIQ_TO_RGB @ _hue_matrix(hue) @ sat @ RGB_TO_YIQ
    return (m * (brightness * contrast * value)).astype(np.float32)


def _twist_plan(
    op: str, shape: Sequence[int], layout: str | None, in_dtype: Any, out_dt: np.dtype, **kw: float
) -> KernelPlan:
    _check_channels_last(op, shape, layout, 3)
    in_dt = np.dtype(in_dtype)
    contrast = kw.get("contrast", 1.0)
    brightness = kw.get("brightness", 1.0)
    half = np.float32(half_range(in_dt))
    offset = (half - half * np.float32(contrast)) * np.float32(brightness)
    matrix = twist_matrix(**kw)
    return KernelPlan(
        tuple(shape), out_dt, {"matrix": matrix, "offset": float(offset), "dtype": out_dt}
    )


def color_twist_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    brightness: float = 1.0,
    contrast: float = 1.0,
    hue: float = 0.0,
    saturation: float = 1.0,
    image_type: Any = DALIImageType.RGB,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``color_twist`` (``hue`` in degrees; ``image_type`` is accepted and ignored, as DALI).

    Examples
    --------
    >>> p = color_twist_params((2, 2, 3), "HWC", "uint8", contrast=0.0)
    >>> p.kwargs["offset"], bool(np.all(p.kwargs["matrix"] == 0))
    (128.0, True)
    """
    op = "color_twist"
    kw = {
        "brightness": _check_nonneg(op, "brightness", brightness),
        "contrast": _check_nonneg(op, "contrast", contrast),
        "saturation": _check_nonneg(op, "saturation", saturation),
        "hue": float(hue),
    }
    return _twist_plan(op, shape, layout, in_dtype, _out_dtype(in_dtype, dtype), **kw)


def hsv_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    hue: float = 0.0,
    saturation: float = 1.0,
    value: float = 1.0,
    dtype: Any = DALIDataType.UINT8,
) -> KernelPlan:
    """Plan ``hsv``; like DALI, the output is uint8 unless ``dtype`` says otherwise.

    Examples
    --------
    >>> hsv_params((2, 2, 3), "HWC", "float32", value=0.5).dtype
    dtype('uint8')
    """
    out_dt = _out_dtype(in_dtype, DALIDataType.UINT8 if dtype is None else dtype)
    kw = {"hue": float(hue), "saturation": float(saturation), "value": float(value)}
    return _twist_plan("hsv", shape, layout, in_dtype, out_dt, **kw)


def hue_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    hue: float = 0.0,
    image_type: Any = DALIImageType.RGB,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``hue`` (degrees).

    Examples
    --------
    >>> hue_params((1, 1, 3), "HWC", "uint8", hue=90.0).kwargs["matrix"].shape
    (3, 3)
    """
    return _twist_plan("hue", shape, layout, in_dtype, _out_dtype(in_dtype, dtype), hue=float(hue))


def saturation_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    saturation: float = 1.0,
    image_type: Any = DALIImageType.RGB,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``saturation`` (0 gives grey).

    Examples
    --------
    >>> m = saturation_params((1, 1, 3), "HWC", "uint8", saturation=0.0).kwargs["matrix"]
    >>> bool(np.allclose(m[0], m[1], atol=1e-3))
    True
    """
    sat = _check_nonneg("saturation", "saturation", saturation)
    return _twist_plan(
        "saturation", shape, layout, in_dtype, _out_dtype(in_dtype, dtype), saturation=sat
    )


def color_space_conversion_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    image_type: Any,
    output_type: Any,
) -> KernelPlan:
    """Plan ``color_space_conversion`` between RGB, BGR, GRAY and YCbCr (uint8 only, as DALI).

    Examples
    --------
    >>> color_space_conversion_params((4, 4, 3), "HWC", "uint8", image_type="rgb",
    ...                               output_type="gray").shape
    (4, 4, 1)
    """
    op = "color_space_conversion"
    try:
        src, dst = to_image_type(image_type), to_image_type(output_type)
    except ValueError as e:
        raise InvalidArgumentError(f"{op}: {e}") from None
    for name, t in (("image_type", src), ("output_type", dst)):
        if t not in _IMAGE_CHANNELS:
            raise InvalidArgumentError(
                f"{op}: `{name}` must be RGB, BGR, GRAY or YCbCr (got {t.name}). "
                "Pick a supported colour space."
            )
    if np.dtype(in_dtype) != np.uint8:
        raise InvalidTypeError(
            f"{op}: only uint8 input is supported (got {np.dtype(in_dtype)}). "
            "Cast the data to uint8 first."
        )
    _check_channels_last(op, shape, layout, _IMAGE_CHANNELS[src])
    out_shape = (*tuple(shape)[:-1], _IMAGE_CHANNELS[dst])
    kw = {"src": src.name, "dst": dst.name}
    return KernelPlan(out_shape, np.dtype(np.uint8), kw)


def lookup_table_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    keys: Sequence[int] = (),
    values: Sequence[float] = (),
    default_value: float = 0.0,
    dtype: Any = DALIDataType.FLOAT,
) -> KernelPlan:
    """Build the table of ``lookup_table``: ``lut[k] = values[last index of k]``.

    Examples
    --------
    >>> p = lookup_table_params((3,), None, "int32", keys=[0, 2], values=[5.0, 7.0])
    >>> p.kwargs["table"].tolist(), p.kwargs["default"]
    ([5.0, 0.0, 7.0], 0.0)
    """
    op = "lookup_table"
    in_dt = np.dtype(in_dtype)
    if in_dt.kind not in "iu":
        raise InvalidTypeError(
            f"{op}: only integer inputs can be looked up (got {in_dt}). Cast the data to an "
            "integer type first."
        )
    k = np.asarray(keys, dtype=np.int64).ravel()
    v = np.asarray(values, dtype=np.float64).ravel()
    if k.size != v.size:
        raise InvalidArgumentError(
            f"{op}: `keys` and `values` differ in length (got {k.size} and {v.size}). "
            "Give one value per key."
        )
    if k.size and (k.min() < 0 or k.max() > 65535):
        raise InvalidArgumentError(
            f"{op}: `keys` must lie in [0, 65535] (got range [{k.min()}, {k.max()}]). "
            "Remap the keys into that range."
        )
    out_dt = to_numpy_dtype(DALIDataType.FLOAT if dtype is None else dtype)
    size = int(k.max()) + 1 if k.size else 0
    table = np.full(size, float(default_value), np.float64)
    table[k] = v  # later duplicates win, as in DALI
    default = saturate(np.array(default_value, np.float64), out_dt).item()
    return KernelPlan(tuple(shape), out_dt, {"table": saturate(table, out_dt), "default": default})


# --------------------------------------------------------------------------- normalize


def _reduced_axes(
    op: str,
    shape: Sequence[int],
    layout: str | None,
    axes: Sequence[int] | int | None,
    axis_names: str | None,
    params: Sequence[np.ndarray | None],
) -> tuple[int, ...]:
    ndim = len(shape)
    if axes is not None and axis_names is not None:
        raise InvalidArgumentError(
            f"{op}: `axes` and `axis_names` cannot both be given (got {axes!r} and "
            f"{axis_names!r}). Pass only one of them."
        )
    if axis_names is not None:
        if not layout:
            raise ShapeError(
                f"{op}: `axis_names` needs a layout (got none for shape {tuple(shape)}). "
                "Give the input a layout or use `axes`."
            )
        out = []
        for ch in axis_names:
            if ch not in layout:
                raise InvalidArgumentError(
                    f"{op}: axis {ch!r} is not in the layout (got axis_names={axis_names!r}, "
                    f"layout {layout!r}). Name axes of the input layout."
                )
            out.append(layout.index(ch))
        return tuple(sorted(set(out)))
    if axes is not None:
        lst = [int(a) for a in np.atleast_1d(axes)]
        for a in lst:
            if not -ndim <= a < ndim:
                raise InvalidArgumentError(
                    f"{op}: axis index out of range (got {a} for a {ndim}-D input). "
                    f"Use axes in [{-ndim}, {ndim - 1}]."
                )
        return tuple(sorted({a % ndim for a in lst}))
    for p in params:
        if p is not None and p.ndim == ndim and p.size > 1:
            return tuple(i for i in range(ndim) if p.shape[i] == 1)
    return tuple(range(ndim))


def _param_array(op: str, name: str, value: Any, shape: Sequence[int], axes) -> np.ndarray | None:
    if value is None:
        return None
    arr = np.asarray(value, dtype=np.float32)
    if arr.size == 1:
        return arr.reshape(())
    if arr.ndim != len(shape) or any(
        (p != 1 and p != s) or (i in axes and p != 1)
        for i, (p, s) in enumerate(zip(arr.shape, shape))
    ):
        raise ShapeError(
            f"{op}: `{name}` must have extent 1 in reduced axes and match the input elsewhere "
            f"(got {name} shape {arr.shape} for input {tuple(shape)}, reduced axes {axes}). "
            "Reshape the argument."
        )
    return arr


def normalize_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    mean: Any = None,
    stddev: Any = None,
    axes: Sequence[int] | int | None = None,
    axis_names: str | None = None,
    batch: bool = False,
    scale: float = 1.0,
    shift: float = 0.0,
    epsilon: float = 0.0,
    ddof: int = 0,
    dtype: Any = DALIDataType.FLOAT,
) -> KernelPlan:
    """Plan ``normalize``: ``out = scale * (in - mean) / sqrt(var + epsilon) + shift``.

    ``mean``/``stddev`` not given are computed over the reduced ``axes`` (per sample, or over the
    whole batch with ``batch=True``, see ``normalize_batch`` in the kernels). A given ``stddev``
    is combined with ``epsilon`` as ``sqrt(stddev**2 + epsilon)``; a zero deviation maps to 0.

    Examples
    --------
    >>> p = normalize_params((4, 4, 3), "HWC", "uint8", axis_names="HW")
    >>> p.kwargs["axes"], p.dtype
    ((0, 1), dtype('float32'))
    """
    op = "normalize"
    in_dt = np.dtype(in_dtype)
    if in_dt.kind not in "iuf":
        raise InvalidTypeError(
            f"{op}: unsupported input type (got {in_dt}). Use an integer or float type."
        )
    out_dt = to_numpy_dtype(DALIDataType.FLOAT if dtype is None else dtype)
    raw = [None if v is None else np.asarray(v, np.float32) for v in (mean, stddev)]
    red = _reduced_axes(op, shape, layout, axes, axis_names, raw)
    m = _param_array(op, "mean", mean, shape, red)
    s = _param_array(op, "stddev", stddev, shape, red)
    if batch and any(p is not None and p.ndim > 0 for p in (m, s)):
        raise InvalidArgumentError(
            f"{op}: a non-scalar mean/stddev cannot be used with batch=True (got shapes "
            f"{None if m is None else m.shape}, {None if s is None else s.shape}). "
            "Pass scalars or set batch=False."
        )
    if int(ddof) < 0 or float(epsilon) < 0:
        raise InvalidArgumentError(
            f"{op}: `ddof` and `epsilon` must be >= 0 (got {ddof}, {epsilon}). "
            "Pass non-negative values."
        )
    kw = {
        "axes": red,
        "mean": m,
        "stddev": s,
        "scale": float(scale),
        "shift": float(shift),
        "epsilon": float(epsilon),
        "ddof": int(ddof),
        "dtype": out_dt,
    }
    return KernelPlan(tuple(shape), out_dt, kw)
