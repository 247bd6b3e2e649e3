"""Image operators: ``clahe``, ``equalize``, ``debayer``, ``filter`` and
``jpeg_compression_distortion``.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> img = ndd.tensor(np.arange(12, dtype=np.uint8).reshape(3, 4), layout="HW")
>>> np.asarray(ndd.equalize(img).cpu())[0].tolist()
[0, 23, 46, 70]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.tensor import Tensor
from headrace._dispatch.args import (
    REQUIRED,
    Arg,
    ArgDict,
    PerSample,
    forward_args,
    to_bool,
    to_dtype,
    to_float,
    to_int,
    to_ints,
    to_str,
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema, Planned
from headrace.ops import _image_params as P

TensorOrBatch = Tensor | Batch


def _schema(name: str, plan: Planned, *args: Arg, inputs: tuple[str, ...] = ("input",)
            ) -> OpSchema:  # fmt: skip
    """An image op: plans from ``_image_params``, pixel kernels named ``name`` in
    ``backends/<backend>/image.py``."""
    return OpSchema(name, "image", inputs=inputs, args=args, planned=plan)


def _host(b: Batch) -> list[np.ndarray]:
    assert b._samples is not None
    return [np.asarray(_st.move(s, CPU, b._dtype)) for s in b._samples]


def _filter_inputs(
    kc: KernelContext, ins: list[Batch | None], vals: dict[str, Any]
) -> dict[str, Any]:
    """The filters (second input) and fill values (optional third input) as per-sample
    arguments of the plan."""
    filt, fill = ins[1], ins[2] if len(ins) > 2 else None
    assert filt is not None
    out = ArgDict(vals)
    out["filter"] = PerSample(_host(filt))
    if fill is not None:
        out["fill_value"] = PerSample(_host(fill))
    out.per_sample = True
    return out


CLAHE = _schema(
    "clahe",
    Planned(P.clahe_params, layouts=P.DEFAULT_LAYOUTS),
    Arg("clip_limit", to_float, REQUIRED, doc="Histogram clipping limit (OpenCV's clipLimit)."),
    Arg("tiles_x", to_int, REQUIRED, doc="Number of tiles along the width."),
    Arg("tiles_y", to_int, REQUIRED, doc="Number of tiles along the height."),
    Arg("bins", to_int, 256, doc="Histogram bins (256 for uint8)."),
    Arg("luma_only", to_bool, True, doc="RGB: equalize the luminance only."),
)
EQUALIZE = _schema("equalize", Planned(P.equalize_params, layouts=P.DEFAULT_LAYOUTS))
DEBAYER = _schema(
    "debayer",
    Planned(P.debayer_params, layouts=P.DEFAULT_LAYOUTS, out_layout=P.debayer_layout),
    Arg("blue_position", to_ints, REQUIRED, per_sample=True, doc="(row, col) of blue in 2x2."),
    Arg("algorithm", to_str, None, doc="bilinear_ocv (default), edgeaware_ocv, vng_ocv, ..."),
)
FILTER = _schema(
    "filter",
    Planned(P.filter_params, layouts=P.DEFAULT_LAYOUTS, prepare=_filter_inputs),
    Arg("anchor", to_ints, -1, per_sample=True, doc="Filter position of the output pixel."),
    Arg("border", to_str, "reflect_101", doc="reflect_101, reflect_1001, wrap, clamp, constant."),
    Arg("mode", to_str, "same", doc="same: output of the input's size; valid: no borders."),
    Arg("dtype", to_dtype, None, doc="Output type: the input's (default) or float32."),
    inputs=("data", "filter", "fill_value"),
)
JPEG_COMPRESSION_DISTORTION = _schema(
    "jpeg_compression_distortion",
    Planned(P.jpeg_distortion_params, layouts=P.DEFAULT_LAYOUTS),
    Arg("quality", to_int, 50, per_sample=True, doc="JPEG quality, clamped to 1..100."),
)


def clahe(
    input: Any,
    /,
    *,
    clip_limit: float,
    tiles_x: int,
    tiles_y: int,
    bins: int | None = None,
    luma_only: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Contrast Limited Adaptive Histogram Equalization (OpenCV's algorithm).

    The image is cut into ``tiles_y`` x ``tiles_x`` tiles; each tile's histogram is clipped at
    ``clip_limit`` times the mean bin count (the excess spread over all bins) and equalized;
    every pixel blends the four nearest tiles' tables bilinearly.

    Parameters
    ----------
    input : Tensor or Batch
        ``uint8`` images, ``HWC`` with 1 or 3 channels (RGB order) or ``HW``.
    clip_limit : float
        Contrast limit (OpenCV's ``clipLimit``). Required.
    tiles_x, tiles_y : int
        Number of tiles along the width and the height. Required.
    bins : int, optional
        Histogram bins; only 256 (the default) is supported.
    luma_only : bool, optional
        RGB input: equalize the L channel of CIE Lab only (default True); False equalizes every
        channel independently.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Raises
    ------
    InvalidTypeError
        For non-uint8 input.
    ShapeError
        For channels other than 1 or 3.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.tile(np.arange(0, 64, 4, dtype=np.uint8), (16, 1)), layout="HW")
    >>> y = ndd.clahe(x, clip_limit=2.0, tiles_x=2, tiles_y=2)
    >>> y.shape, y.dtype == ndd.uint8
    ((16, 16), True)
    """
    return CLAHE.call((input,), **forward_args(locals(), "input"))


def equalize(input: Any, /, *, device: Any = None, batch_size: int | None = None) -> Any:
    """Histogram equalization of every channel of every image (OpenCV's ``equalizeHist``).

    Parameters
    ----------
    input : Tensor or Batch
        ``uint8`` images (``HW``, ``HWC``, ``CHW``) or sequences of them (``F`` first).
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
    >>> x = ndd.tensor(np.array([[10, 20], [20, 30]], np.uint8), layout="HW")
    >>> np.asarray(ndd.equalize(x).cpu()).tolist()
    [[0, 170], [170, 255]]
    """
    return EQUALIZE.call((input,), **forward_args(locals(), "input"))


def debayer(
    input: Any,
    /,
    *,
    blue_position: Any,
    algorithm: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Demosaic single-channel Bayer images into RGB.

    Parameters
    ----------
    input : Tensor or Batch
        ``uint8`` or ``uint16`` mosaics, ``HW`` (or ``HWC`` with one channel) or ``FHW``
        sequences; height and width must be even.
    blue_position : (int, int), list or Batch
        Row and column (each 0 or 1) of the blue pixel in the top-left 2x2 tile: ``[0, 0]``
        is BGGR, ``[0, 1]`` GBRG, ``[1, 0]`` GRBG, ``[1, 1]`` RGGB. May vary per sample.
        Required.
    algorithm : str, optional
        ``"bilinear_ocv"`` (the default; also what ``"default"`` and ``"bilinear_npp"`` give
        here), ``"edgeaware_ocv"``, ``"vng_ocv"`` (uint8 only) or ``"gray_ocv"`` (one gray
        channel out).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        ``HWC`` (``FHWC``) images with 3 channels (1 for ``gray_ocv``), the input's type.

    Raises
    ------
    ShapeError
        For odd sizes or more than one channel.
    InvalidArgumentError
        For a bad ``blue_position`` or an unknown ``algorithm``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.full((4, 4), 100, np.uint8), layout="HW")
    >>> y = ndd.debayer(x, blue_position=[0, 0])
    >>> y.shape, y.layout, int(np.asarray(y.cpu())[1, 1, 0])
    ((4, 4, 3), 'HWC', 100)
    """
    return DEBAYER.call((input,), **forward_args(locals(), "input"))


def filter(
    data: Any,
    filter: Any,
    fill_value: Any = None,
    /,
    *,
    anchor: Any = None,
    border: str | None = None,
    mode: str | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Correlate images with a 2-D filter (the filter is not flipped), in float32.

    Parameters
    ----------
    data : Tensor or Batch
        Images (``HW``, ``HWC``, ``CHW``) or sequences (``F`` first) of uint8, int8, uint16,
        int16, float16 or float32; every channel is filtered.
    filter : Tensor or Batch
        float32 2-D filter per sample (for a sequence also one per frame, ``(F, kh, kw)``).
    fill_value : Tensor or Batch, optional
        Scalar per sample: the value outside the image with ``border="constant"`` (default 0).
    anchor : int, (int, int) or Batch, optional
        Filter position (row, column) that lands on the output pixel; -1 (default): the
        centre ``k // 2``.
    border : str, optional
        ``"reflect_101"`` (default, ``cb|abc``), ``"reflect_1001"`` (``cba|abc``), ``"clamp"``,
        ``"wrap"`` or ``"constant"``.
    mode : str, optional
        ``"same"`` (default): the output has the input's size; ``"valid"``: only positions
        where the filter fits in the image.
    dtype : DType, optional
        Output type: the input's (default; rounded and saturated) or float32.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Filtered images with the input's layout.

    Raises
    ------
    InvalidArgumentError
        For an unknown ``border``/``mode``, an anchor outside the filter or another ``dtype``.
    ShapeError
        For a filter that is not 2-D or, with ``mode="valid"``, larger than the image.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(5, dtype=np.float32).reshape(1, 5), layout="HW")
    >>> k = ndd.tensor(np.array([[0.0, 0.0, 1.0]], np.float32))
    >>> np.asarray(ndd.filter(x, k, border="clamp").cpu()).tolist()
    [[1.0, 2.0, 3.0, 4.0, 4.0]]
    """
    return FILTER.call((data, filter, fill_value),
                       **forward_args(locals(), "data", "filter", "fill_value"))  # fmt: skip


def jpeg_compression_distortion(
    input: Any,
    /,
    *,
    quality: int | TensorOrBatch | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Introduce JPEG artifacts: encode each RGB image as a JPEG and decode it back.

    Parameters
    ----------
    input : Tensor or Batch
        ``uint8`` RGB ``HWC`` images or ``FHWC`` sequences.
    quality : int or Batch, optional
        JPEG quality, 1 (worst) to 100, clamped (default 50); may vary per sample (draw it
        with ``ndd.random.uniform`` for random distortion).
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
    >>> x = ndd.tensor(np.full((16, 16, 3), 128, np.uint8), layout="HWC")
    >>> int(np.abs(np.asarray(ndd.jpeg_compression_distortion(x, quality=10).cpu()) - 128).max())
    0
    """
    return JPEG_COMPRESSION_DISTORTION.call((input,), **forward_args(locals(), "input"))


__all__ = ["clahe", "debayer", "equalize", "filter", "jpeg_compression_distortion"]
