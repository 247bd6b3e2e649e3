"""Affine transform matrices: ``transforms.{translation, scale, rotation, shear, crop, combine}``.

Each operator produces, per sample, an ``ndim x (ndim + 1)`` float32 matrix ``[M | T]`` mapping a
point ``x`` to ``M x + T`` — what ``coord_transform`` (``MT=``) and ``warp_affine`` take. Given an
input transform, the new transform is applied after it (``reverse_order=True``: before it). The
operators run on the CPU (as in the reference); per-sample arguments come as ``Batch``es.

Examples
--------
>>> import headrace as ndd
>>> ndd.transforms.translation(offset=[2, 3]).torch().tolist()
[[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]]
>>> t = ndd.transforms.scale(ndd.transforms.translation(offset=[1, 0]), scale=[2, 2])
>>> t.torch().tolist()
[[2.0, 0.0, 2.0], [0.0, 2.0, 0.0]]
"""

from __future__ import annotations

from typing import Any

from headrace._dispatch.args import REQUIRED, Arg, forward_args, to_bool, to_floats, to_int
from headrace._dispatch.schema import OpSchema

__all__ = ["combine", "crop", "rotation", "scale", "shear", "translation"]

_REVERSE = Arg(
    "reverse_order", to_bool, False, doc="Apply the input transform after this one, not before."
)


def _schema(name: str, *args: Arg, **kw: Any) -> OpSchema:
    return OpSchema(
        f"transforms.{name}",
        "transforms",
        args=(*args, _REVERSE),
        devices=("cpu",),
        min_inputs=0,
        **kw,
    )


def _vec(name: str, default: Any, doc: str) -> Arg:
    return Arg(name, to_floats, default, per_sample=True, doc=doc)


TRANSLATION = _schema("translation", _vec("offset", REQUIRED, "The translation vector."))
SCALE = _schema(
    "scale",
    _vec("scale", REQUIRED, "Scale factor per dimension."),
    _vec("center", None, "Center of the scaling."),
    Arg("ndim", to_int, None, doc="Number of dimensions when it cannot be inferred."),
)
ROTATION = _schema(
    "rotation",
    _vec("angle", REQUIRED, "Angle, in degrees."),
    _vec("axis", None, "Rotation axis (3D only)."),
    _vec("center", None, "Center of the rotation."),
)
SHEAR = _schema(
    "shear",
    _vec("shear", None, "Shear factors (2 in 2D, 6 in 3D)."),
    _vec("angles", None, "Shear angles in degrees (exclusive with shear)."),
    _vec("center", None, "Center of the shear."),
)
CROP = _schema(
    "crop",
    _vec("from_start", None, "Lower bound of the source space (default: zeros)."),
    _vec("from_end", None, "Upper bound of the source space (default: ones)."),
    _vec("to_start", None, "Lower bound of the destination space (default: zeros)."),
    _vec("to_end", None, "Upper bound of the destination space (default: ones)."),
    Arg("absolute", to_bool, False, doc="Swap start and end where start > end."),
)
COMBINE = OpSchema(
    "transforms.combine",
    "transforms",
    inputs=("inputs",),
    variadic=True,
    min_inputs=2,
    args=(_REVERSE,),
    devices=("cpu",),
)


def translation(
    input: Any = None,
    /,
    *,
    offset: Any,
    reverse_order: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """A translation matrix ``[I | offset]`` (applied after ``input``'s transform, if given).

    Parameters
    ----------
    input : Tensor or Batch, optional
        A transform (``ndim x (ndim + 1)``) to extend.
    offset : float or list of float or Batch
        The translation vector; its length gives the number of dimensions.
    reverse_order : bool, optional
        Apply ``input`` after the translation instead (default: False).

    Returns
    -------
    Tensor or Batch
        ``ndim x (ndim + 1)`` float32 matrices.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.transforms.translation(offset=[5, -1]).torch().tolist()
    [[1.0, 0.0, 5.0], [0.0, 1.0, -1.0]]
    """
    return TRANSLATION.call((input,), **forward_args(locals(), "input"))


def scale(
    input: Any = None,
    /,
    *,
    scale: Any,
    center: Any = None,
    ndim: int | None = None,
    reverse_order: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """A scaling matrix, about ``center`` (default: the origin).

    Parameters
    ----------
    input : Tensor or Batch, optional
        A transform to extend.
    scale : float or list of float or Batch
        Factor per dimension (a scalar applies to every dimension; then give ``ndim``, an input
        or a ``center``).
    center : list of float or Batch, optional
        The fixed point of the scaling.
    ndim : int, optional
        Number of dimensions when neither argument nor input tells.
    reverse_order : bool, optional
        Apply ``input`` after the scaling instead (default: False).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.transforms.scale(scale=[2, 3], center=[1, 1]).torch().tolist()
    [[2.0, 0.0, -1.0], [0.0, 3.0, -2.0]]
    >>> ndd.transforms.scale(scale=2, ndim=1).torch().tolist()
    [[2.0, 0.0]]
    """
    return SCALE.call((input,), **forward_args(locals(), "input"))


def rotation(
    input: Any = None,
    /,
    *,
    angle: Any,
    axis: Any = None,
    center: Any = None,
    reverse_order: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """A rotation matrix (2D, or 3D about ``axis``), about ``center`` (default: the origin).

    Parameters
    ----------
    input : Tensor or Batch, optional
        A transform to extend.
    angle : float or Batch
        Angle in degrees (counter-clockwise for x right, y up).
    axis : list of float or Batch, optional
        Rotation axis of a 3D rotation (need not be normalized; must not be zero).
    center : list of float or Batch, optional
        The fixed point of the rotation.
    reverse_order : bool, optional
        Apply ``input`` after the rotation instead (default: False).

    Examples
    --------
    >>> import headrace as ndd
    >>> m = ndd.transforms.rotation(angle=90).torch()
    >>> [[round(v, 6) + 0.0 for v in row] for row in m.tolist()]
    [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0]]
    """
    return ROTATION.call((input,), **forward_args(locals(), "input"))


def shear(
    input: Any = None,
    /,
    *,
    shear: Any = None,
    angles: Any = None,
    center: Any = None,
    reverse_order: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """A shear matrix, from factors or from angles, about ``center`` (default: the origin).

    Parameters
    ----------
    input : Tensor or Batch, optional
        A transform to extend.
    shear : list of float or Batch, optional
        Factors: ``[s_x, s_y]`` in 2D (``x' = x + s_x y``), ``[s_xy, s_xz, s_yx, s_yz, s_zx,
        s_zy]`` in 3D.
    angles : list of float or Batch, optional
        The same as angles in degrees (factor ``tan(angle)``), in (-90, 90).
    center : list of float or Batch, optional
        The fixed point of the shear.
    reverse_order : bool, optional
        Apply ``input`` after the shear instead (default: False).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.transforms.shear(shear=[0.5, 0]).torch().tolist()
    [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0]]
    """
    return SHEAR.call((input,), **forward_args(locals(), "input"))


def crop(
    input: Any = None,
    /,
    *,
    from_start: Any = None,
    from_end: Any = None,
    to_start: Any = None,
    to_end: Any = None,
    absolute: bool | None = None,
    reverse_order: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """A matrix mapping the box ``[from_start, from_end]`` onto ``[to_start, to_end]``.

    Parameters
    ----------
    input : Tensor or Batch, optional
        A transform to extend.
    from_start, from_end, to_start, to_end : float or list of float or Batch, optional
        Corners of the source and destination boxes (defaults: zeros and ones; a scalar
        repeats for every dimension).
    absolute : bool, optional
        Swap a start and end where start > end (default: False).
    reverse_order : bool, optional
        Apply ``input`` after this transform instead (default: False).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.transforms.crop(from_start=[10, 20], from_end=[30, 60]).torch().tolist()
    [[0.05000000074505806, 0.0, -0.5], [0.0, 0.02500000037252903, -0.5]]
    """
    return CROP.call((input,), **forward_args(locals(), "input"))


def combine(
    input_0: Any,
    input_1: Any,
    /,
    *inputs: Any,
    reverse_order: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Combine transforms: the result applies ``input_0`` first, then ``input_1``, …

    Parameters
    ----------
    input_0, input_1, *inputs : Tensor or Batch
        ``ndim x (ndim + 1)`` transforms of one ``ndim``.
    reverse_order : bool, optional
        Apply them in the opposite order (default: False).

    Examples
    --------
    >>> import headrace as ndd
    >>> t = ndd.transforms.translation(offset=[1, 0])
    >>> s = ndd.transforms.scale(scale=[2, 2])
    >>> ndd.transforms.combine(t, s).torch().tolist()
    [[2.0, 0.0, 2.0], [0.0, 2.0, 0.0]]
    """
    return COMBINE.call(
        (input_0, input_1, *inputs),
        device=device,
        batch_size=batch_size,
        reverse_order=reverse_order,
    )
