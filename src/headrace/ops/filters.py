"""Filter and displacement operators: Gaussian blur, Laplacian, grid mask, water, sphere, jitter.

The noise operators live in :mod:`headrace.ops.noise` (``ndd.noise``).

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> img = ndd.tensor(np.full((8, 8, 3), 50, np.uint8), layout="HWC")
>>> bool((np.asarray(ndd.gaussian_blur(img, sigma=1.5).cpu()) == 50).all())
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from headrace import types as _types
from headrace._core.batch import Batch
from headrace._core.tensor import Tensor
from headrace._dispatch import meta_rules as _meta
from headrace._dispatch.args import (
    Arg,
    forward_args,
    to_bool,
    to_dtype,
    to_float,
    to_floats,
    to_int,
    to_ints,
)
from headrace._dispatch.schema import OpSchema, Planned
from headrace._rng import RNG
from headrace.ops import _filter_params as P
from headrace.ops._enum_args import to_interp_type

TensorOrBatch = Tensor | Batch
Scalar = float | TensorOrBatch
_HWC = {3: "HWC"}


def _schema(name: str, plan: Planned, *args: Arg) -> OpSchema:
    """A filter op: per-sample plans from ``_filter_params``, pixel kernels named ``name`` in
    ``backends/<backend>/filters.py``."""
    return OpSchema(name, "filters", args=args, random=plan.random, planned=plan)


def _f(name: str, default: float, doc: str, per_sample: bool = True) -> Arg:
    return Arg(name, to_float, default, per_sample=per_sample, doc=doc)


MASK = Arg("mask", to_bool, True, per_sample=True, doc="0 passes the sample through unchanged.")
_FILL = _f("fill_value", 0.0, "Value of pixels sampled outside the image.", per_sample=False)
_INTERP = Arg("interp_type", to_interp_type, _types.INTERP_NN, doc="INTERP_NN or INTERP_LINEAR.")

GAUSSIAN_BLUR = _schema(
    "gaussian_blur",
    Planned(P.gaussian_blur_params),
    Arg("sigma", to_floats, 0.0, per_sample=True, doc="Sigma, one or one per spatial axis."),
    Arg("window_size", to_ints, 0, per_sample=True, doc="Odd window, one or one per axis."),
    Arg("dtype", to_dtype, None, doc="Output type (default: the input's)."),
)
LAPLACIAN = _schema(
    "laplacian",
    Planned(P.laplacian_params),
    Arg("window_size", to_ints, 3, per_sample=True, doc="Odd derivative window, one or per axis."),
    Arg("smoothing_size", to_ints, None, per_sample=True, doc="Odd smoothing window(s)."),
    Arg("scale", to_floats, None, per_sample=True, doc="Factor of each partial derivative."),
    Arg("normalized_kernel", to_bool, False, doc="Scale each partial by 2^(n + 2 - s)."),
    Arg("dtype", to_dtype, None, doc="Output type: the input's (default) or float32."),
)
GRID_MASK = _schema(
    "grid_mask",
    Planned(P.grid_mask_params),
    Arg("tile", to_int, 100, per_sample=True, doc="Grid period in pixels."),
    _f("ratio", 0.5, "Fraction of each tile that is zeroed, per axis."),
    _f("angle", 0.0, "Grid rotation in radians."),
    _f("shift_x", 0.0, "Horizontal grid shift in pixels."),
    _f("shift_y", 0.0, "Vertical grid shift in pixels."),
)
WATER = _schema(
    "water",
    Planned(P.water_params, layouts=_HWC),
    _f("ampl_x", 10.0, "Horizontal wave amplitude in pixels.", per_sample=False),
    _f("ampl_y", 10.0, "Vertical wave amplitude in pixels.", per_sample=False),
    _f("freq_x", P.WATER_FREQ, "Horizontal wave frequency (radians per pixel).", per_sample=False),
    _f("freq_y", P.WATER_FREQ, "Vertical wave frequency (radians per pixel).", per_sample=False),
    _f("phase_x", 0.0, "Horizontal wave phase (radians).", per_sample=False),
    _f("phase_y", 0.0, "Vertical wave phase (radians).", per_sample=False),
    _FILL,
    _INTERP,
    MASK,
)
SPHERE = _schema("sphere", Planned(P.sphere_params, layouts=_HWC), _FILL, _INTERP, MASK)
JITTER = _schema(
    "jitter",
    Planned(P.jitter_sampler, random=True, layouts=_HWC),
    Arg("nDegree", to_int, 2, doc="Largest displacement span in pixels."),
    _FILL,
    _INTERP,
    MASK,
)


# What a pending call's outputs are, before they are computed (``headrace._core.meta``).
GAUSSIAN_BLUR.meta = _meta.with_dtype()


def gaussian_blur(
    input: Any,
    /,
    *,
    sigma: Any = None,
    window_size: Any = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Blur with a separable Gaussian over the spatial axes (borders mirror, reflect-101).

    Parameters
    ----------
    input : Tensor or Batch
        Images, volumes or sequences; the layout's ``D``/``H``/``W`` axes are blurred
        (channels first or last). Without a layout every axis is blurred.
    sigma : float, list or Batch, optional
        One value or one per spatial axis (outermost first); may vary per sample. Default:
        derived from ``window_size`` as ``(radius - 1) * 0.3 + 0.8``.
    window_size : int, list or Batch, optional
        Odd window size(s); default ``2 * ceil(3 * sigma) + 1``. At least one of ``sigma`` and
        ``window_size`` must be given.
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
    InvalidArgumentError
        When neither ``sigma`` nor ``window_size`` is set, or a window is even.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.eye(5, dtype=np.float32), layout="HW")
    >>> ndd.gaussian_blur(x, window_size=3).shape
    (5, 5)
    """
    return GAUSSIAN_BLUR.call((input,), **forward_args(locals(), "input"))


def laplacian(
    input: Any,
    /,
    *,
    window_size: int | Sequence[int] | TensorOrBatch | None = None,
    smoothing_size: int | Sequence[int] | TensorOrBatch | None = None,
    scale: float | Sequence[float] | TensorOrBatch | None = None,
    normalized_kernel: bool | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Laplacian: the sum of the second partial derivatives along the spatial axes.

    Each partial derivative is a separable convolution: a second-derivative window along its
    axis and binomial smoothing windows along the other spatial axes (borders mirror,
    reflect-101). Computed in float32.

    Parameters
    ----------
    input : Tensor or Batch
        Images, volumes or sequences of them; the layout's ``D``/``H``/``W`` axes are the
        spatial axes (channels first or last; ``F`` is not spatial). Without a layout every
        axis is spatial (at most 3). Any integer type, float16 or float32.
    window_size : int, list or Batch, optional
        Derivative window size, odd, 3..31: one value or one per spatial axis (outermost
        first); may vary per sample (default 3).
    smoothing_size : int, list or Batch, optional
        Smoothing window size applied along axis ``j`` in the other axes' partial derivatives,
        odd, 1..31 (1: no smoothing); one value or one per axis. Default: the derivative
        window size of the partial derivative.
    scale : float, list or Batch, optional
        Factor of each partial derivative, one value or one per axis (default 1).
    normalized_kernel : bool, optional
        Scale each partial derivative by ``2 ** (n + 2 - s)`` (``s``: the sum of its window
        sizes, ``n``: the number of spatial axes); excludes ``scale``. Default False.
    dtype : DType, optional
        Output type: the input's (default, rounded and saturated) or ``float32``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        Same shape and layout as the input.

    Raises
    ------
    InvalidArgumentError
        For an even or out-of-range window, a wrong number of per-axis values, ``scale`` with
        ``normalized_kernel=True`` or an unsupported ``dtype``.
    InvalidTypeError
        For bool or float64 input (as the reference).
    ShapeError
        When channels are neither first nor last, or the layout has no spatial axis.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = np.zeros((5, 5), np.float32); x[2, 2] = 1
    >>> y = ndd.laplacian(ndd.tensor(x, layout="HW"), smoothing_size=1)
    >>> np.asarray(y.cpu())[1:4, 1:4].tolist()
    [[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]
    """
    return LAPLACIAN.call((input,), **forward_args(locals(), "input"))


def grid_mask(
    input: Any,
    /,
    *,
    tile: int | TensorOrBatch | None = None,
    ratio: Scalar | None = None,
    angle: Scalar | None = None,
    shift_x: Scalar | None = None,
    shift_y: Scalar | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Zero a rotated grid of squares (GridMask augmentation).

    A pixel is kept when either of its rotated, shifted coordinates (in tiles) has a fractional
    part of at least ``ratio``.

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC`` or ``HW`` images.
    tile : int, scalar or Batch, optional
        Grid period in pixels (default 100).
    ratio : float, scalar or Batch, optional
        Default 0.5.
    angle : float, scalar or Batch, optional
        Grid rotation in **radians** (default 0).
    shift_x, shift_y : float, scalar or Batch, optional
        Grid shifts in pixels (default 0).
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
    >>> x = ndd.tensor(np.ones((1, 4, 1), np.uint8), layout="HWC")
    >>> np.asarray(ndd.grid_mask(x, tile=2).cpu()).ravel().tolist()
    [0, 1, 0, 1]
    """
    return GRID_MASK.call((input,), **forward_args(locals(), "input"))


def water(
    input: Any,
    /,
    *,
    ampl_x: float | None = None,
    ampl_y: float | None = None,
    freq_x: float | None = None,
    freq_y: float | None = None,
    phase_x: float | None = None,
    phase_y: float | None = None,
    fill_value: float | None = None,
    interp_type: Any = None,
    mask: bool | TensorOrBatch | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Displace pixels along sine waves: output ``(x, y)`` reads the input at
    ``(x + ampl_x sin(freq_x y + phase_x), y + ampl_y cos(freq_y x + phase_y))``.

    Parameters
    ----------
    input : Tensor or Batch
        uint8 or float32 ``HWC`` images (3-D input without a layout is taken as ``HWC``).
    ampl_x, ampl_y : float, optional
        Amplitudes in pixels (default 10).
    freq_x, freq_y : float, optional
        Frequencies in radians per pixel (default ``2 pi / 128``).
    phase_x, phase_y : float, optional
        Phases in radians (default 0).
    fill_value : float, optional
        Value outside the image (default 0).
    interp_type : types.DALIInterpType, optional
        ``INTERP_NN`` (default) or ``INTERP_LINEAR``.
    mask : bool, scalar or Batch, optional
        Per sample: 0 passes the sample through unchanged (default 1).
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
    >>> x = ndd.tensor(np.arange(6, dtype=np.uint8).reshape(2, 3, 1), layout="HWC")
    >>> np.asarray(ndd.water(x, ampl_x=0.0, ampl_y=0.0).cpu())[..., 0].tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    return WATER.call((input,), **forward_args(locals(), "input"))


def sphere(
    input: Any,
    /,
    *,
    fill_value: float | None = None,
    interp_type: Any = None,
    mask: bool | TensorOrBatch | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Bulge the image as if seen through a sphere (radial magnification about the centre).

    Parameters
    ----------
    input : Tensor or Batch
        uint8 or float32 ``HWC`` images.
    fill_value : float, optional
        Value outside the image (default 0).
    interp_type : types.DALIInterpType, optional
        ``INTERP_NN`` (default) or ``INTERP_LINEAR``.
    mask : bool, scalar or Batch, optional
        Per sample: 0 passes the sample through unchanged (default 1).
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
    >>> x = ndd.tensor(np.full((4, 4, 1), 5, np.uint8), layout="HWC")
    >>> int(np.asarray(ndd.sphere(x).cpu())[2, 2, 0])
    5
    """
    return SPHERE.call((input,), **forward_args(locals(), "input"))


def jitter(
    input: Any,
    /,
    *,
    nDegree: int | None = None,
    fill_value: float | None = None,
    interp_type: Any = None,
    mask: bool | TensorOrBatch | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Move every pixel by a random offset of up to ``nDegree`` pixels (clamped to the image).

    The reference has only a GPU kernel; headrace also runs it on the CPU. The offsets follow
    the reference's distribution, not its exact draws.

    Parameters
    ----------
    input : Tensor or Batch
        ``HWC`` images.
    nDegree : int, optional
        Span of the offsets per axis, ``[-(nDegree // 2), nDegree - nDegree // 2]`` (default 2).
    fill_value : float, optional
        Accepted for compatibility (offsets are clamped, so it is never used).
    interp_type : types.DALIInterpType, optional
        Accepted for compatibility (offsets are whole pixels).
    mask : bool, scalar or Batch, optional
        Per sample: 0 passes the sample through unchanged (default 1).
    device, batch_size
        As for every operator.
    rng : random.RNG, optional
        Generator to draw from (default: the thread's default generator).

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.arange(12, dtype=np.uint8).reshape(2, 2, 3), layout="HWC")
    >>> bool((np.asarray(ndd.jitter(x, nDegree=0).cpu()) == np.asarray(x)).all())
    True
    """
    return JITTER.call((input,), **forward_args(locals(), "input"))


__all__ = ["gaussian_blur", "grid_mask", "jitter", "laplacian", "sphere", "water"]
