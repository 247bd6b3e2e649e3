"""Affine warps: ``rotate`` and ``warp_affine`` of 2-D images and sequences of them.

Coordinates follow the reference: ``(0, 0)`` is the corner of the first pixel. Only
nearest-neighbour and linear interpolation exist; without ``fill_value`` the border repeats.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> img = ndd.tensor(np.zeros((30, 20, 3), np.uint8), layout="HWC")
>>> ndd.rotate(img, angle=90.0).shape
(20, 30, 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace import types as _types
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.errors import InvalidArgumentError
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
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema, Planned
from headrace.ops import _warp_params as P
from headrace.ops._enum_args import to_interp_type
from headrace.ops._warp_params import rotated_canvas_size

TensorOrBatch = Tensor | Batch
#: Layouts assumed for inputs without one, by number of dims.
_LAYOUTS = {2: "HW", 3: "HWC", 4: "FHWC"}


def _matrix_input(
    kc: KernelContext, ins: list[Batch | None], vals: dict[str, Any]
) -> dict[str, Any]:
    """Take the matrix from the optional second input ``mtx``, or insist on ``matrix=``."""
    mtx = ins[1] if len(ins) > 1 else None
    if mtx is None:
        if vals["matrix"] is None:
            raise InvalidArgumentError(
                "warp_affine: no transform is given (got neither `matrix` nor the `mtx` input). "
                "Pass matrix=[[m11, m12, m13], [m21, m22, m23]]."
            )
        return vals
    if vals["matrix"] is not None:
        raise InvalidArgumentError(
            "warp_affine: the matrix is given twice (got both the `mtx` input and `matrix=`). "
            "Pass only one of them."
        )
    host = [np.asarray(_st.move(m, CPU, mtx._dtype), np.float64) for m in mtx._samples]
    return {**vals, "matrix": PerSample(host)}


_COMMON = (
    Arg("size", to_floats, None, per_sample=True, doc="Output (height, width)."),
    Arg("fill_value", to_float, None, doc="Value outside the input (default: repeat the border)."),
    Arg("interp_type", to_interp_type, _types.INTERP_LINEAR, doc="INTERP_NN or INTERP_LINEAR."),
    Arg("dtype", to_dtype, None, doc="Output type (default: the input's)."),
    Arg("output_dtype", to_dtype, None, doc="Deprecated alias of dtype."),
)


def _one_canvas_per_sequence(
    vals: Any, counts: list[int], shapes: list[tuple[int, ...]], layout: str | None
) -> None:
    """Per-frame angles without ``size``/``keep_size``: every frame of a sequence gets the
    canvas that holds each of its frames' rotations (the element-wise largest), as the
    reference gives; the frames of one sequence then stack."""
    if vals.get("size") is not None or vals.get("keep_size"):
        return
    lay = layout or _LAYOUTS.get(len(shapes[0]) if shapes else 3, "HWC")
    hi, wi = lay.index("H"), lay.index("W")
    angles = vals["angle"]
    per = [angles[j] if type(angles) is PerSample else angles for j in range(len(shapes))]
    sizes: list[Any] = []
    at = 0
    for f in counts:
        hws = [rotated_canvas_size(shapes[j][hi], shapes[j][wi], float(per[j]))
               for j in range(at, at + f)]  # fmt: skip
        canvas = [float(max(h for h, _ in hws)), float(max(w for _, w in hws))] if hws else None
        sizes.extend([canvas] * f)
        at += f
    vals["size"] = PerSample(sizes)


ROTATE = OpSchema(
    "rotate",
    "warp",
    per_frame_vals=_one_canvas_per_sequence,
    args=(
        Arg("angle", to_float, REQUIRED, per_sample=True, doc="Degrees, counter-clockwise."),
        Arg("axis", to_floats, None, per_sample=True, doc="Rotation axis (3-D volumes)."),
        Arg("keep_size", to_bool, False, doc="Keep the input size instead of fitting the result."),
        *_COMMON,
    ),
    planned=Planned(P.rotate_params, layouts=_LAYOUTS),
)
WARP_AFFINE = OpSchema(
    "warp_affine",
    "warp",
    inputs=("data", "mtx"),
    per_frame_inputs=("mtx",),
    args=(
        Arg("matrix", to_floats, None, per_sample=True, doc="2x3 matrix (or 6 values)."),
        Arg("inverse_map", to_bool, True, doc="The matrix maps output to input points."),
        *_COMMON,
    ),
    planned=Planned(P.warp_affine_params, layouts=_LAYOUTS, prepare=_matrix_input),
)


# What a pending call's outputs are, before they are computed (``headrace._core.meta``).
WARP_AFFINE.meta = _meta.warp_affine


def rotate(
    input: Any,
    /,
    *,
    angle: float | TensorOrBatch,
    axis: Any = None,
    keep_size: bool | None = None,
    size: Any = None,
    fill_value: float | None = None,
    interp_type: Any = None,
    dtype: Any = None,
    output_dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Rotate images by ``angle`` degrees counter-clockwise about their centre.

    Unless ``size`` or ``keep_size`` is given, the output is the bounding box of the rotated
    image (sides keep the parity of the input sides they mostly come from).

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC``, ``FHWC``, ``HW`` or ``FHW`` images (3-D without a layout: ``HWC``).
    angle : float, scalar or Batch
        Degrees; may vary per sample. Required.
    axis : list of float, optional
        For 3-D volumes, which are not supported yet (an error when given).
    keep_size : bool, optional
        Keep the input's height and width (default False).
    size : (float, float), list or Batch, optional
        Output (height, width); values are truncated to integers.
    fill_value : float, optional
        Value outside the input; default: repeat the border.
    interp_type : types.DALIInterpType, optional
        ``INTERP_LINEAR`` (default) or ``INTERP_NN``.
    dtype : DType, optional
        Output type (default: the input's).
    output_dtype : DType, optional
        Deprecated alias of ``dtype``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Rotated images with the input's layout.

    Raises
    ------
    ShapeError
        For layouts other than those listed.
    InvalidArgumentError
        For other interpolations, a bad ``size`` or ``axis``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(6, dtype=np.uint8).reshape(2, 3, 1), layout="HWC")
    >>> np.asarray(ndd.rotate(x, angle=180.0).cpu())[..., 0].tolist()
    [[5, 4, 3], [2, 1, 0]]
    """
    return ROTATE.call((input,), **forward_args(locals(), "input"))


def warp_affine(
    data: Any,
    mtx: Any = None,
    /,
    *,
    matrix: Any = None,
    size: Any = None,
    inverse_map: bool | None = None,
    fill_value: float | None = None,
    interp_type: Any = None,
    dtype: Any = None,
    output_dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Apply an affine transform: output point ``p`` reads the input at ``matrix @ (p, 1)``.

    Parameters
    ----------
    data : Tensor or Batch
        ``HWC``, ``FHWC``, ``HW`` or ``FHW`` images (3-D without a layout: ``HWC``).
    mtx : Tensor or Batch, optional
        The matrix as a second input (2x3 per sample); the alternative to ``matrix``.
    matrix : 2x3 array, 6 values or Batch, optional
        The transform (one of ``mtx`` and ``matrix`` is required); may vary per sample. A GPU
        ``Tensor``/``Batch`` is taken as the ``mtx`` input (the call then runs on the GPU).
    size : (float, float), list or Batch, optional
        Output (height, width) (default: the input's).
    inverse_map : bool, optional
        True (default): the matrix maps output to input points; False: input to output.
    fill_value : float, optional
        Value outside the input; default: repeat the border.
    interp_type : types.DALIInterpType, optional
        ``INTERP_LINEAR`` (default) or ``INTERP_NN``.
    dtype : DType, optional
        Output type (default: the input's).
    output_dtype : DType, optional
        Deprecated alias of ``dtype``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Warped images with the input's layout.

    Raises
    ------
    InvalidArgumentError
        When no matrix or both ``mtx`` and ``matrix`` are given, or the matrix is malformed
        (or singular with ``inverse_map=False``).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(4, dtype=np.float32).reshape(1, 4, 1), layout="HWC")
    >>> m = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]  # read one pixel to the right
    >>> y = ndd.warp_affine(x, matrix=m, interp_type=ndd.types.INTERP_NN)
    >>> np.asarray(y.cpu()).ravel().tolist()
    [1.0, 2.0, 3.0, 3.0]
    """
    if mtx is None and _on_gpu(matrix):
        # Arguments live on the host; a GPU matrix travels as the `mtx` input instead, so that
        # it places the call on the GPU exactly as a GPU `mtx` would.
        mtx, matrix = matrix, None
    return WARP_AFFINE.call((data, mtx), **forward_args(locals(), "data", "mtx"))


def _on_gpu(value: Any) -> bool:
    """Whether ``value`` is a Tensor or Batch on a GPU."""
    return isinstance(value, (Tensor, Batch)) and value.device.device_type == "gpu"


__all__ = ["rotate", "warp_affine"]
