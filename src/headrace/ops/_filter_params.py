"""Parameter math and samplers for blur, noise and displacement ops (no pixels touched).

Deterministic ops have ``*_params(shape, layout, in_dtype, **args) -> KernelPlan``. Random ops
have ``*_sampler(rng, shape, layout, in_dtype, **args) -> KernelPlan``: each draws exactly one
64-bit seed from ``rng`` per sample; the kernels expand it with numpy's PCG64, so CPU and torch
kernels produce identical noise (distribution parity with DALI, not bit parity).

DALI 2.4 rules reproduced here:

* ``gaussian_blur``: radius ``ceil(3 * sigma)`` when only sigma is given; ``sigma = (radius - 1)
  * 0.3 + 0.8`` with ``radius = (window_size - 1) / 2`` when only the window is given; one value
  or one per spatial axis (outermost first); borders mirror without repeating the edge
  (reflect-101). Output keeps the input type unless ``dtype`` (float) is given.
* ``laplacian``: the sum of one separable convolution per spatial axis (a second-derivative
  window along it, binomial smoothing along the others); windows odd, derivative 3..31,
  smoothing 1..31 (DALI checks 31, its documentation says 23); one value or one per axis;
  reflect-101 borders; output type: the input's or float32.
* ``noise.salt_and_pepper``: salt/pepper default to the type's max/min (1/-1 for floats); a given
  value is converted with C-style truncation and wrap-around, as DALI does.
* ``grid_mask``: ``angle`` in radians; a pixel is kept when either rotated, shifted coordinate
  (in tiles) has a fractional part >= ``ratio``.

Examples
--------
>>> gaussian_window(1.0, 0).size, gaussian_window(0.0, 5).size
(7, 5)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace._dispatch.planned import KernelPlan
from headrace.ops._color_params import to_numpy_dtype
from headrace.ops._geometry_common import as_float_list, nn_or_linear
from headrace.types import DALIInterpType

WATER_FREQ = 2 * math.pi / 128  # DALI's default freq_x/freq_y (0.049087)


def gaussian_window(sigma: float, window_size: int) -> np.ndarray:
    """Normalised 1-D Gaussian weights (float32) from DALI's sigma/window rules.

    Examples
    --------
    >>> w = gaussian_window(1.0, 0)
    >>> round(float(w.sum()), 6), int(np.argmax(w))
    (1.0, 3)
    """
    sigma, window_size = float(sigma), int(window_size)
    if sigma < 0 or window_size < 0 or (window_size and window_size % 2 == 0):
        raise InvalidArgumentError(
            f"gaussian_blur: `sigma` must be >= 0 and `window_size` odd and >= 0 (got sigma="
            f"{sigma}, window_size={window_size}). Pass a positive sigma or an odd window."
        )
    if sigma == 0 and window_size == 0:
        raise InvalidArgumentError(
            "gaussian_blur: neither `sigma` nor `window_size` is set (got 0 and 0). "
            "Give at least one of them."
        )
    if window_size == 0:
        window_size = 2 * math.ceil(3 * sigma) + 1
    radius = (window_size - 1) // 2
    if sigma == 0:
        sigma = (radius - 1) * 0.3 + 0.8
    t = np.arange(-radius, radius + 1, dtype=np.float64)
    w = np.exp(-(t * t) / (2 * sigma * sigma))
    return (w / w.sum()).astype(np.float32)


def _blur_axes(
    shape: Sequence[int], layout: str | None, op: str = "gaussian_blur"
) -> tuple[int, ...]:
    if not layout:
        return tuple(range(len(shape)))
    _layout.require(op, shape, layout)
    if "C" in layout and layout.index("C") not in (0, len(layout) - 1, layout.find("F") + 1):
        raise ShapeError(
            f"{op}: channels must come first or last, or right after the frames (got layout "
            f"{layout!r}). Transpose the data."
        )
    return _layout.spatial_axes(layout)


def gaussian_blur_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    sigma: Any = 0.0,
    window_size: Any = 0,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``gaussian_blur``: one 1-D window per spatial axis.

    Examples
    --------
    >>> p = gaussian_blur_params((10, 12, 3), "HWC", "uint8", sigma=[1.0, 2.0])
    >>> p.kwargs["axes"], [k.size for k in p.kwargs["windows"]]
    ((0, 1), [7, 13])
    """
    axes = _blur_axes(shape, layout)
    sig = as_float_list("gaussian_blur", "sigma", sigma, len(axes))
    win = as_float_list("gaussian_blur", "window_size", window_size, len(axes))
    windows = tuple(gaussian_window(s, int(w)) for s, w in zip(sig, win))
    out_dt = to_numpy_dtype(dtype) or np.dtype(in_dtype)
    return KernelPlan(tuple(shape), out_dt, {"windows": windows, "axes": axes, "dtype": out_dt})


# ------------------------------------------------------------------------------ laplacian

#: Largest derivative/smoothing window ``laplacian`` accepts: DALI 2.4 checks 31 (its
#: documentation says 23).
LAPLACIAN_MAX_WINDOW = 31
#: Input types DALI's ``laplacian`` rejects.
_LAPLACIAN_BAD_INPUTS = {np.dtype(np.bool_), np.dtype(np.float64)}


def smoothing_window(size: int) -> np.ndarray:
    """Binomial smoothing window of ``size`` taps (row ``size - 1`` of Pascal's triangle).

    Examples
    --------
    >>> smoothing_window(5).tolist()
    [1.0, 4.0, 6.0, 4.0, 1.0]
    """
    w = np.ones(1)
    for _ in range(size - 1):
        w = np.convolve(w, (1.0, 1.0))
    return w


def derivative_window(size: int) -> np.ndarray:
    """Second-derivative window of ``size`` taps: ``[1, -2, 1]`` smoothed binomially.

    Examples
    --------
    >>> derivative_window(3).tolist(), derivative_window(5).tolist()
    ([1.0, -2.0, 1.0], [1.0, 0.0, -2.0, 0.0, 1.0])
    """
    return np.convolve(smoothing_window(size - 2), (1.0, -2.0, 1.0))


def _window_sizes(name: str, value: Any, n: int, lo: int) -> list[int]:
    sizes = [int(v) for v in as_float_list("laplacian", name, value, n)]
    for v in sizes:
        if v % 2 == 0 or not lo <= v <= LAPLACIAN_MAX_WINDOW:
            raise InvalidArgumentError(
                f"laplacian: `{name}` must be odd and between {lo} and {LAPLACIAN_MAX_WINDOW} "
                f"(got {v}). Pass an odd window size."
            )
    return sizes


def laplacian_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    window_size: Any = 3,
    smoothing_size: Any = None,
    scale: Any = None,
    normalized_kernel: bool = False,
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``laplacian``: per partial derivative, one 1-D window per spatial axis.

    The partial derivative along spatial axis ``i`` convolves that axis with a derivative
    window of ``window_size[i]`` taps and every other axis ``j`` with a binomial smoothing
    window of ``smoothing_size[j]`` taps (default: ``window_size[i]``); its result is
    multiplied by ``scale[i]``, or by ``2 ** (n + 2 - s)`` with ``normalized_kernel`` (``s``:
    the sum of its window sizes, ``n``: the number of spatial axes). The windows have integer
    taps, so the convolutions are exact for small integer inputs and only the scaling rounds,
    as in the reference. The output keeps the input type unless ``dtype`` is float32.

    Examples
    --------
    >>> p = laplacian_params((10, 12, 3), "HWC", "uint8", window_size=[3, 5])
    >>> [[w.tolist() for w in ws] for ws in p.kwargs["partials"]]
    [[[1.0, -2.0, 1.0], [1.0, 2.0, 1.0]], [[1.0, 4.0, 6.0, 4.0, 1.0], [1.0, 0.0, -2.0, 0.0, 1.0]]]
    >>> p.kwargs["scales"], p.kwargs["axes"], p.dtype
    ((1.0, 1.0), (0, 1), dtype('uint8'))
    """
    op = "laplacian"
    axes = _blur_axes(shape, layout, op)
    if not layout and not 1 <= len(shape) <= 3:
        raise ShapeError(
            f"{op}: data without a layout must have 1 to 3 dimensions (got shape "
            f"{tuple(shape)}). Pass a layout such as 'HWC', 'FHWC' or 'DHWC'."
        )
    in_dt = np.dtype(in_dtype)
    if in_dt in _LAPLACIAN_BAD_INPUTS:
        raise InvalidTypeError(
            f"{op}: {in_dt} input is not supported (like the reference). Cast to float32 first."
        )
    out_dt = to_numpy_dtype(dtype) or in_dt
    if out_dt not in (in_dt, np.dtype(np.float32)):
        raise InvalidArgumentError(
            f"{op}: `dtype` must be the input type or float (got {out_dt}). "
            "Cast the result for other types."
        )
    if normalized_kernel and scale is not None:
        raise InvalidArgumentError(
            f"{op}: `scale` cannot be given together with `normalized_kernel=True`. "
            "Pass one of them."
        )
    n = len(axes)
    win = _window_sizes("window_size", window_size, n, 3)
    smooth = (
        None if smoothing_size is None else _window_sizes("smoothing_size", smoothing_size, n, 1)
    )
    factors = as_float_list(op, "scale", 1.0 if scale is None else scale, n)
    partials, scales = [], []
    for i in range(n):
        sizes = [win[i] if smooth is None or j == i else smooth[j] for j in range(n)]
        scales.append(2.0 ** (n + 2 - sum(sizes)) if normalized_kernel else factors[i])
        windows = [smoothing_window(s) for s in sizes]
        windows[i] = derivative_window(win[i])
        partials.append(tuple(w.astype(np.float32) for w in windows))
    kw = {"partials": tuple(partials), "scales": tuple(scales), "axes": axes, "dtype": out_dt}
    return KernelPlan(tuple(shape), out_dt, kw)


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**63, dtype=np.int64))


def noise_gaussian_sampler(
    rng: np.random.Generator,
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    mean: float = 0.0,
    stddev: float = 1.0,
) -> KernelPlan:
    """Draw the parameters of ``noise.gaussian`` (out = in + N(mean, stddev)).

    Examples
    --------
    >>> p = noise_gaussian_sampler(np.random.default_rng(0), (2, 2), None, "uint8", stddev=3.0)
    >>> sorted(p.kwargs)
    ['mean', 'seed', 'stddev']
    """
    if float(stddev) < 0:
        raise InvalidArgumentError(
            f"noise.gaussian: `stddev` must be >= 0 (got {stddev}). Pass a non-negative value."
        )
    kw = {"seed": _seed(rng), "mean": float(mean), "stddev": float(stddev)}
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)


def _static_cast(value: float, dtype: np.dtype):
    if dtype.kind == "f":
        return float(value)
    bits = dtype.itemsize * 8
    v = math.trunc(value) % (1 << bits)  # C conversion: truncate, then wrap
    if dtype.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def noise_salt_and_pepper_sampler(
    rng: np.random.Generator,
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    prob: float = 0.05,
    salt_vs_pepper: float = 0.5,
    salt_val: float | None = None,
    pepper_val: float | None = None,
    per_channel: bool = False,
) -> KernelPlan:
    """Draw the parameters of ``noise.salt_and_pepper``.

    Examples
    --------
    >>> p = noise_salt_and_pepper_sampler(np.random.default_rng(0), (4, 4, 3), "HWC", "uint8")
    >>> p.kwargs["salt"], p.kwargs["pepper"], p.kwargs["channel_axis"]
    (255, 0, 2)
    """
    op = "noise.salt_and_pepper"
    for name, v in (("prob", prob), ("salt_vs_pepper", salt_vs_pepper)):
        if not 0 <= float(v) <= 1:
            raise InvalidArgumentError(
                f"{op}: `{name}` must lie in [0, 1] (got {v}). Pass a probability."
            )
    dt = np.dtype(in_dtype)
    hi, lo = (1.0, -1.0) if dt.kind == "f" else (np.iinfo(dt).max, np.iinfo(dt).min)
    salt = _static_cast(hi if salt_val is None else float(salt_val), dt)
    pepper = _static_cast(lo if pepper_val is None else float(pepper_val), dt)
    if per_channel or not shape:
        channel_axis = None  # every element draws its own noise
    elif layout:
        channel_axis = layout.index("C") if "C" in layout else None
    else:
        channel_axis = len(shape) - 1  # no layout: channel-last, as DALI assumes
    kw = {
        "seed": _seed(rng),
        "prob": float(prob),
        "salt_vs_pepper": float(salt_vs_pepper),
        "salt": salt,
        "pepper": pepper,
        "channel_axis": channel_axis,
    }
    return KernelPlan(tuple(shape), dt, kw)


def noise_shot_sampler(
    rng: np.random.Generator,
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    factor: float = 12.0,
) -> KernelPlan:
    """Draw the parameters of ``noise.shot`` (out = Poisson(in / factor) * factor).

    The default ``factor`` is 12, what DALI 2.4 actually uses (its docs say 20).

    Examples
    --------
    >>> noise_shot_sampler(np.random.default_rng(0), (2,), None, "uint8").kwargs["factor"]
    12.0
    """
    if float(factor) < 0:
        raise InvalidArgumentError(
            f"noise.shot: `factor` must be >= 0 (got {factor}). Pass a non-negative value."
        )
    kw = {"seed": _seed(rng), "factor": float(factor)}
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)


def _check_hwc(op: str, shape: Sequence[int], layout: str | None) -> None:
    hint = "Pass channel-last images; use per-frame calls for sequences."
    _layout.require_one_of(op, shape, layout or "HWC", ("HWC",), hint, "one image")


def jitter_sampler(
    rng: np.random.Generator,
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    nDegree: int = 2,
    fill_value: float = 0.0,
    interp_type: Any = DALIInterpType.INTERP_NN,
) -> KernelPlan:
    """Draw the parameters of ``jitter``: each pixel component moves by a random integer offset
    in ``[-(nDegree // 2), nDegree - nDegree // 2]`` per axis, clamped to the image.

    Examples
    --------
    >>> jitter_sampler(np.random.default_rng(0), (4, 4, 3), "HWC", "uint8").kwargs["n_degree"]
    2
    """
    _check_hwc("jitter", shape, layout)
    if int(nDegree) < 0:
        raise InvalidArgumentError(
            f"jitter: `nDegree` must be >= 0 (got {nDegree}). Pass a non-negative integer."
        )
    kw = {"seed": _seed(rng), "n_degree": int(nDegree)}
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)


def grid_mask_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    tile: int = 100,
    ratio: float = 0.5,
    angle: float = 0.0,
    shift_x: float = 0.0,
    shift_y: float = 0.0,
) -> KernelPlan:
    """Plan ``grid_mask`` (``angle`` in radians, as DALI).

    Examples
    --------
    >>> grid_mask_params((8, 8, 3), "HWC", "uint8", tile=4).kwargs["tile"]
    4
    """
    if int(tile) <= 0:
        raise InvalidArgumentError(
            f"grid_mask: `tile` must be positive (got {tile}). Pass the tile size in pixels."
        )
    if len(shape) not in (2, 3):
        raise ShapeError(
            f"grid_mask: expects an HWC or HW image (got shape {tuple(shape)}). "
            "Pass one image per sample."
        )
    kw = {
        "tile": int(tile),
        "ratio": float(ratio),
        "angle": float(angle),
        "shift_x": float(shift_x),
        "shift_y": float(shift_y),
    }
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)


def _displacement_common(op: str, shape, layout, in_dtype, fill_value, interp) -> dict:
    _check_hwc(op, shape, layout)
    if np.dtype(in_dtype) not in (np.dtype(np.uint8), np.dtype(np.float32)):
        raise InvalidTypeError(
            f"{op}: only uint8 and float32 images are supported (got {np.dtype(in_dtype)}). "
            "Cast the data first."
        )
    return {"fill_value": float(fill_value), "interp": nn_or_linear(op, interp)}


def water_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    ampl_x: float = 10.0,
    ampl_y: float = 10.0,
    freq_x: float = WATER_FREQ,
    freq_y: float = WATER_FREQ,
    phase_x: float = 0.0,
    phase_y: float = 0.0,
    fill_value: float = 0.0,
    interp_type: Any = DALIInterpType.INTERP_NN,
) -> KernelPlan:
    """Plan ``water``: output pixel (x, y) samples the input at
    ``(x + ampl_x sin(freq_x y + phase_x), y + ampl_y cos(freq_y x + phase_y))``.

    Examples
    --------
    >>> water_params((8, 8, 3), "HWC", "uint8").kwargs["interp"]
    'nn'
    """
    kw = _displacement_common("water", shape, layout, in_dtype, fill_value, interp_type)
    wave = (ampl_x, ampl_y, freq_x, freq_y, phase_x, phase_y)
    kw["wave"] = tuple(float(v) for v in wave)
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)


def sphere_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    fill_value: float = 0.0,
    interp_type: Any = DALIInterpType.INTERP_NN,
) -> KernelPlan:
    """Plan ``sphere``: a radial magnification about the image centre.

    Examples
    --------
    >>> sphere_params((8, 8, 3), "HWC", "float32", interp_type="linear").kwargs["interp"]
    'linear'
    """
    kw = _displacement_common("sphere", shape, layout, in_dtype, fill_value, interp_type)
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)
