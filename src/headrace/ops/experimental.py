"""Experimental operators: ``dilate``, ``erode``, ``median_blur``, ``remap`` and
``warp_perspective`` (public as ``ndd.experimental.*``).

The reference runs the first four on the GPU only; headrace runs all of them on the CPU too
(OpenCV/numpy) and on torch devices. Their conventions are described in
:mod:`headrace.ops._experimental_params`.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> x = np.zeros((5, 5), np.uint8); x[2, 2] = 9
>>> y = ndd.experimental.dilate(ndd.tensor(x, layout="HW"))
>>> int(np.asarray(y.cpu()).sum())
81
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
from headrace._dispatch.args import (
    Arg,
    ArgDict,
    PerSample,
    forward_args,
    to_bool,
    to_floats,
    to_int,
    to_ints,
    to_str,
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema, Planned
from headrace.ops import _experimental_params as P
from headrace.ops._enum_args import to_interp_type
from headrace.ops._image_params import DEFAULT_LAYOUTS

TensorOrBatch = Tensor | Batch
Vals = dict[str, Any]


def _host(b: Batch) -> PerSample:
    assert b._samples is not None
    return PerSample(np.asarray(_st.move(s, CPU, b._dtype)) for s in b._samples)


def _with(vals: Vals, **extra: Any) -> ArgDict:
    out = ArgDict(vals)
    out.update(extra)
    out.per_sample = True
    return out


def _remap_maps(kc: KernelContext, ins: list[Batch | None], vals: Vals) -> Vals:
    """The ``mapx``/``mapy`` inputs as per-sample plan arguments (on the host)."""
    mx, my = ins[1], ins[2]
    assert mx is not None and my is not None
    return _with(vals, mapx=_host(mx), mapy=_host(my))


def _matrix_input(kc: KernelContext, ins: list[Batch | None], vals: Vals) -> Vals:
    """The matrix from the optional ``matrix_input`` input or ``matrix=`` (exactly one)."""
    mtx = ins[1] if len(ins) > 1 else None
    has_kw = vals.get("matrix") is not None and np.asarray(vals["matrix"]).size > 0
    if mtx is None:
        if not has_kw and type(vals.get("matrix")) is not PerSample:
            raise InvalidArgumentError(
                "experimental.warp_perspective: no transform is given (got neither `matrix` nor "
                "the `matrix_input` input). Pass a 3x3 matrix."
            )
        return vals
    if has_kw:
        raise InvalidArgumentError(
            "experimental.warp_perspective: the matrix is given twice (got both `matrix_input` "
            "and `matrix=`). Pass only one of them."
        )
    return _with(vals, matrix=_host(mtx))


def _morph(name: str) -> OpSchema:
    plan = P.dilate_params if name == "dilate" else P.erode_params
    return OpSchema(
        f"experimental.{name}",
        "experimental",
        args=(
            Arg("mask_size", to_ints, [3, 3], per_sample=True, doc="Mask (width, height)."),
            Arg("anchor", to_ints, [-1, -1], per_sample=True, doc="Mask anchor (x, y)."),
            Arg("iterations", to_int, 1, doc="Number of passes."),
            Arg("border_mode", to_str, "constant", doc="Border outside the image."),
        ),
        planned=Planned(plan, layouts=DEFAULT_LAYOUTS),
    )


DILATE = _morph("dilate")
ERODE = _morph("erode")
MEDIAN_BLUR = OpSchema(
    "experimental.median_blur",
    "experimental",
    args=(Arg("window_size", to_ints, [3, 3], per_sample=True, doc="Odd (width, height)."),),
    planned=Planned(P.median_blur_params, layouts=DEFAULT_LAYOUTS),
)
REMAP = OpSchema(
    "experimental.remap",
    "experimental",
    inputs=("input", "mapx", "mapy"),
    args=(
        Arg("interp", to_interp_type, _types.INTERP_LINEAR, doc="INTERP_NN or INTERP_LINEAR."),
        Arg("pixel_origin", to_str, "corner", doc="corner or center."),
    ),
    planned=Planned(P.remap_params, layouts={3: "HWC", 4: "FHWC"}, prepare=_remap_maps),
)
WARP_PERSPECTIVE = OpSchema(
    "experimental.warp_perspective",
    "experimental",
    inputs=("input", "matrix_input"),
    args=(
        Arg("matrix", to_floats, None, per_sample=True, doc="3x3 homography (9 values)."),
        Arg("size", to_floats, None, per_sample=True, doc="Output (height, width)."),
        Arg("border_mode", to_str, "constant", doc="Border outside the input."),
        Arg("fill_value", to_floats, None, doc="Constant border value(s), one or per channel."),
        Arg("interp_type", to_interp_type, _types.INTERP_LINEAR, doc="NN, LINEAR or CUBIC."),
        Arg("inverse_map", to_bool, True, doc="The matrix maps output to input points."),
        Arg("pixel_origin", to_str, "corner", doc="corner or center."),
    ),
    planned=Planned(P.warp_perspective_params, layouts=DEFAULT_LAYOUTS, prepare=_matrix_input),
)


def dilate(
    input: Any,
    /,
    *,
    mask_size: Any = None,
    anchor: Any = None,
    iterations: int | None = None,
    border_mode: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Dilation: every pixel becomes the maximum under a rectangular mask.

    Parameters
    ----------
    input : Tensor or Batch
        Images (``HW``, ``HWC``, ``CHW``) or sequences (``FHWC``, ``FCHW``); every channel
        separately.
    mask_size : int, (int, int) or Batch, optional
        Mask (width, height) (default [3, 3]); may vary per sample.
    anchor : int, (int, int) or Batch, optional
        Mask position (x, y) on the output pixel; -1 (default): the centre.
    iterations : int, optional
        Passes (default 1); ``n`` passes equal one with an ``n (size - 1) + 1`` mask.
    border_mode : str, optional
        ``"constant"`` (default: the border never wins), ``"replicate"``, ``"reflect"``,
        ``"reflect_101"`` or ``"wrap"``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[0, 0, 5, 0, 0]], np.uint8), layout="HW")
    >>> np.asarray(ndd.experimental.dilate(x, mask_size=[3, 1]).cpu()).tolist()
    [[0, 5, 5, 5, 0]]
    """
    return DILATE.call((input,), **forward_args(locals(), "input"))


def erode(
    input: Any,
    /,
    *,
    mask_size: Any = None,
    anchor: Any = None,
    iterations: int | None = None,
    border_mode: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Erosion: every pixel becomes the minimum under a rectangular mask.

    Parameters
    ----------
    input : Tensor or Batch
        Images (``HW``, ``HWC``, ``CHW``) or sequences (``FHWC``, ``FCHW``); every channel
        separately.
    mask_size : int, (int, int) or Batch, optional
        Mask (width, height) (default [3, 3]); may vary per sample.
    anchor : int, (int, int) or Batch, optional
        Mask position (x, y) on the output pixel; -1 (default): the centre.
    iterations : int, optional
        Passes (default 1); ``n`` passes equal one with an ``n (size - 1) + 1`` mask.
    border_mode : str, optional
        ``"constant"`` (default: the border never wins), ``"replicate"``, ``"reflect"``,
        ``"reflect_101"`` or ``"wrap"``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[5, 5, 0, 5, 5]], np.uint8), layout="HW")
    >>> np.asarray(ndd.experimental.erode(x, mask_size=[3, 1]).cpu()).tolist()
    [[5, 0, 0, 0, 5]]
    """
    return ERODE.call((input,), **forward_args(locals(), "input"))


def median_blur(
    input: Any,
    /,
    *,
    window_size: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Median filter: every pixel becomes the median of a rectangular window (borders repeat).

    Parameters
    ----------
    input : Tensor or Batch
        Images (``HW``, ``HWC``, ``CHW``) or sequences (``FHWC``, ``FCHW``); every channel
        separately.
    window_size : int, (int, int) or Batch, optional
        Odd window (width, height) (default [3, 3]); may vary per sample.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.array([[1, 9, 2, 3]], np.uint8), layout="HW")
    >>> np.asarray(ndd.experimental.median_blur(x, window_size=[3, 1]).cpu()).tolist()
    [[1, 2, 3, 3]]
    """
    return MEDIAN_BLUR.call((input,), **forward_args(locals(), "input"))


def remap(
    input: Any,
    mapx: Any,
    mapy: Any,
    /,
    *,
    interp: Any = None,
    pixel_origin: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Generic geometric transform: ``output[y, x] = input[mapy[y, x], mapx[y, x]]``.

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC`` images or ``FHWC`` sequences.
    mapx, mapy : Tensor or Batch
        float32 source coordinates, ``HW`` (or ``HWC`` with one channel; ``FHW`` per frame);
        the output has their height and width.
    interp : types.DALIInterpType, optional
        ``INTERP_LINEAR`` (default) or ``INTERP_NN``.
    pixel_origin : str, optional
        ``"corner"`` (default: pixel ``i`` covers ``[i, i + 1)``) or ``"center"`` (pixel
        ``i`` is at ``i``).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The input's type and layout; points outside the input are 0.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(4, dtype=np.uint8).reshape(1, 4, 1), layout="HWC")
    >>> mx = ndd.tensor(np.array([[3.5, 0.5, 9.0]], np.float32))
    >>> my = ndd.tensor(np.full((1, 3), 0.5, np.float32))
    >>> np.asarray(ndd.experimental.remap(x, mx, my).cpu()).ravel().tolist()
    [3, 0, 0]
    """
    return REMAP.call((input, mapx, mapy), **forward_args(locals(), "input", "mapx", "mapy"))


def warp_perspective(
    input: Any,
    matrix_input: Any = None,
    /,
    *,
    matrix: Any = None,
    size: Any = None,
    border_mode: str | None = None,
    fill_value: Any = None,
    interp_type: Any = None,
    inverse_map: bool | None = None,
    pixel_origin: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Perspective transform: output point ``p`` reads the input at ``H @ (p, 1)`` (projected).

    Parameters
    ----------
    input : Tensor or Batch
        uint8, uint16, int16 or float32 images (``HW``, ``HWC``, ``CHW``) or sequences.
    matrix_input : Tensor or Batch, optional
        3x3 float matrix per sample; the alternative to ``matrix``.
    matrix : 9 values, 3x3 array or Batch, optional
        The homography (one of ``matrix_input`` and ``matrix`` is required).
    size : (float, float) or Batch, optional
        Output (height, width) (default: the input's).
    border_mode : str, optional
        ``"constant"`` (default), ``"replicate"``, ``"reflect"``, ``"reflect_101"`` or
        ``"wrap"``.
    fill_value : float or list of float, optional
        Constant border value, one or one per channel (default 0).
    interp_type : types.DALIInterpType, optional
        ``INTERP_LINEAR`` (default), ``INTERP_NN`` or ``INTERP_CUBIC``.
    inverse_map : bool, optional
        True (default): the matrix maps output to input points; False: input to output.
    pixel_origin : str, optional
        ``"corner"`` (default) or ``"center"``: where integer coordinates lie in a pixel.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Warped images with the input's type and layout.

    Raises
    ------
    InvalidArgumentError
        When no matrix or both are given, or an argument is malformed.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(4, dtype=np.float32).reshape(1, 4), layout="HW")
    >>> m = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]  # read one pixel to the right
    >>> y = ndd.experimental.warp_perspective(x, matrix=m, border_mode="replicate")
    >>> np.asarray(y.cpu()).ravel().tolist()
    [1.0, 2.0, 3.0, 3.0]
    """
    return WARP_PERSPECTIVE.call((input, matrix_input),
                                 **forward_args(locals(), "input", "matrix_input"))  # fmt: skip


__all__ = ["dilate", "erode", "median_blur", "remap", "warp_perspective"]
