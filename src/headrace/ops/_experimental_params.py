"""Plans for the experimental operators ``dilate``, ``erode``, ``median_blur``, ``remap`` and
``warp_perspective`` (no pixels touched).

The reference runs ``dilate``, ``erode``, ``median_blur`` and ``remap`` on the GPU only (CV-CUDA),
so their semantics follow its documentation and OpenCV's conventions, which CV-CUDA mirrors:

* ``mask_size``, ``anchor`` and ``window_size`` are given as (width, height) / (x, y);
* ``iterations=n`` equals one pass with a ``(n (w - 1) + 1) x (n (h - 1) + 1)`` mask whose
  anchor is ``n`` times the mask's (what the reference documents);
* a ``constant`` morphology border never wins (OpenCV's default border value); the median
  window repeats the border pixels (``replicate``);
* ``remap`` samples at ``(mapx, mapy)`` with pixel corners at integers (``pixel_origin=
  "corner"``) or pixel centres (``"center"``); outside points read 0.

``warp_perspective`` matches the reference's CPU operator (OpenCV's ``warpPerspective``): the
3x3 matrix maps output to input points (unless ``inverse_map=False``), in the corner or the
centre convention (``pixel_origin``).

Examples
--------
>>> morphology_params((8, 9, 3), "HWC", "uint8", mask_size=[3, 5], iterations=2).kwargs["pads"]
(4, 4, 2, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace._dispatch.planned import KernelPlan
from headrace.ops._geometry_common import check_choice, nn_or_linear
from headrace.ops._image_params import image_layout, planes_perm
from headrace.types import DALIInterpType

#: Layouts of the experimental 2-D image operators.
LAYOUTS = ("HW", "HWC", "CHW", "FHWC", "FCHW")
#: Their border modes (the reference's names).
BORDERS = ("constant", "replicate", "reflect", "reflect_101", "wrap")
_TYPES = tuple(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.float32))


def _check_type(op: str, in_dtype: Any) -> np.dtype:
    dt = np.dtype(in_dtype)
    if dt not in _TYPES:
        raise InvalidTypeError(
            f"{op}: {dt} input is not supported (supported: uint8, int8, uint16, int16, "
            "float32). Cast the data first."
        )
    return dt


def _pair(op: str, name: str, value: Any) -> tuple[int, int]:
    """Two integers (x, y) from one or two values."""
    a = np.asarray(value, dtype=np.int64).ravel()
    if a.size == 1:
        a = np.repeat(a, 2)
    if a.size != 2:
        raise InvalidArgumentError(
            f"{op}: `{name}` needs 1 or 2 values (width/x, height/y) (got {a.tolist()})."
        )
    return int(a[0]), int(a[1])


def morphology_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    mask_size: Any = (3, 3),
    anchor: Any = (-1, -1),
    iterations: int = 1,
    border_mode: str = "constant",
    _op: str = "dilate",
) -> KernelPlan:
    """Plan ``dilate``/``erode``: one rectangular window pass (iterations folded in).

    Examples
    --------
    >>> p = morphology_params((8, 9), "HW", "uint8", mask_size=3, anchor=[0, 0])
    >>> p.kwargs["window"], p.kwargs["pads"]
    ((3, 3), (0, 2, 0, 2))
    """
    op = f"experimental.{_op}"
    lay = image_layout(op, shape, layout, LAYOUTS)
    _check_type(op, in_dtype)
    mw, mh = _pair(op, "mask_size", mask_size)
    ax, ay = _pair(op, "anchor", anchor)
    if mw < 1 or mh < 1:
        raise InvalidArgumentError(
            f"{op}: `mask_size` must be positive (got {[mw, mh]}). Pass (width, height)."
        )
    ax, ay = (mw // 2 if ax == -1 else ax), (mh // 2 if ay == -1 else ay)
    if not (0 <= ax < mw and 0 <= ay < mh):
        raise InvalidArgumentError(
            f"{op}: `anchor` must lie within the mask (got {[ax, ay]} for a {mw} x {mh} "
            "mask). Pass -1 for the centre."
        )
    n = int(iterations)
    if n < 1:
        raise InvalidArgumentError(f"{op}: `iterations` must be at least 1 (got {n}).")
    check_choice(op, "border_mode", border_mode, BORDERS)
    eh, ew = n * (mh - 1) + 1, n * (mw - 1) + 1
    pads = (n * ay, eh - 1 - n * ay, n * ax, ew - 1 - n * ax)
    kw = {"perm": planes_perm(lay), "window": (eh, ew), "pads": pads, "border": border_mode}
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)


def dilate_params(shape: Sequence[int], layout: str | None, in_dtype: Any, **args: Any
                  ) -> KernelPlan:  # fmt: skip
    """Plan ``experimental.dilate`` (see :func:`morphology_params`)."""
    return morphology_params(shape, layout, in_dtype, _op="dilate", **args)


def erode_params(shape: Sequence[int], layout: str | None, in_dtype: Any, **args: Any
                 ) -> KernelPlan:  # fmt: skip
    """Plan ``experimental.erode`` (see :func:`morphology_params`)."""
    return morphology_params(shape, layout, in_dtype, _op="erode", **args)


def median_blur_params(
    shape: Sequence[int], layout: str | None, in_dtype: Any, *, window_size: Any = (3, 3)
) -> KernelPlan:
    """Plan ``experimental.median_blur``: an odd (width, height) window, borders replicated.

    Examples
    --------
    >>> median_blur_params((8, 9, 3), "HWC", "uint8", window_size=[5, 3]).kwargs["window"]
    (3, 5)
    """
    op = "experimental.median_blur"
    lay = image_layout(op, shape, layout, LAYOUTS)
    _check_type(op, in_dtype)
    ww, wh = _pair(op, "window_size", window_size)
    if ww < 1 or wh < 1 or ww % 2 == 0 or wh % 2 == 0:
        raise InvalidArgumentError(
            f"{op}: `window_size` must be odd and positive (got {[ww, wh]}). "
            "Pass (width, height) such as [3, 3]."
        )
    kw = {"perm": planes_perm(lay), "window": (wh, ww)}
    return KernelPlan(tuple(shape), np.dtype(in_dtype), kw)


def _map(op: str, name: str, m: Any, frames: int) -> np.ndarray:
    a = np.asarray(m, dtype=np.float32)
    if a.ndim >= 3 and a.shape[-1] == 1:
        a = a[..., 0]
    if a.ndim == 2 or (a.ndim == 3 and frames and a.shape[0] == frames):
        return a
    raise ShapeError(
        f"{op}: `{name}` must be an HW map (or one per frame, FHW) (got shape {a.shape}). "
        "Pass one coordinate per output pixel."
    )


def remap_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    mapx: Any,
    mapy: Any,
    interp: Any = DALIInterpType.INTERP_LINEAR,
    pixel_origin: str = "corner",
) -> KernelPlan:
    """Plan ``experimental.remap``: output ``(y, x)`` reads the input at
    ``(mapx[y, x], mapy[y, x])``; outside points are 0.

    Examples
    --------
    >>> m = np.zeros((2, 3), np.float32)
    >>> p = remap_params((4, 4, 3), "HWC", "uint8", mapx=m, mapy=m, pixel_origin="center")
    >>> p.shape, float(p.kwargs["mapx"][0, 0])
    ((2, 3, 3), 0.5)
    """
    op = "experimental.remap"
    hint = "Pass HWC images or FHWC sequences."
    lay = _layout.require_one_of(op, shape, layout or "HWC", ("HWC", "FHWC"), hint, "images")
    _check_type(op, in_dtype)
    frames = int(shape[0]) if lay == "FHWC" else 0
    mx, my = _map(op, "mapx", mapx, frames), _map(op, "mapy", mapy, frames)
    if mx.shape != my.shape:
        raise ShapeError(
            f"{op}: `mapx` and `mapy` must have the same shape (got {mx.shape} and {my.shape})."
        )
    check_choice(op, "pixel_origin", pixel_origin, ("corner", "center"))
    if pixel_origin == "center":  # the kernels take corner coordinates
        mx, my = mx + np.float32(0.5), my + np.float32(0.5)
    if frames and mx.ndim == 2:
        mx, my = np.broadcast_to(mx, (frames, *mx.shape)), np.broadcast_to(my, (frames, *my.shape))
    out = (*((frames,) if frames else ()), *mx.shape[-2:], int(shape[-1]))
    kw = {"mapx": mx, "mapy": my, "interp": nn_or_linear(op, interp)}
    return KernelPlan(out, np.dtype(in_dtype), kw)


_INTERPS = {
    DALIInterpType.INTERP_NN: "nn",
    DALIInterpType.INTERP_LINEAR: "linear",
    DALIInterpType.INTERP_CUBIC: "cubic",
}


def warp_perspective_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    matrix: Any = None,
    size: Any = None,
    border_mode: str = "constant",
    fill_value: Any = None,
    interp_type: Any = DALIInterpType.INTERP_LINEAR,
    inverse_map: bool = True,
    pixel_origin: str = "corner",
) -> KernelPlan:
    """Plan ``experimental.warp_perspective``: the output-to-input homography in OpenCV's
    (pixel-centre) convention.

    Examples
    --------
    >>> p = warp_perspective_params((4, 6, 3), "HWC", "uint8", matrix=np.eye(3), size=[5, 7])
    >>> p.shape, p.kwargs["matrix"].tolist()[0]
    ((5, 7, 3), [1.0, 0.0, 0.0])
    """
    op = "experimental.warp_perspective"
    lay = image_layout(op, shape, layout, LAYOUTS)
    dt = _check_type(op, in_dtype)
    if dt == np.dtype(np.int8):
        raise InvalidTypeError(f"{op}: int8 input is not supported. Cast the data first.")
    m = np.asarray([] if matrix is None else matrix, dtype=np.float64).ravel()
    if m.size != 9 or not np.all(np.isfinite(m)):
        raise InvalidArgumentError(
            f"{op}: the matrix must hold 9 finite numbers, a 3x3 homography (got {m.size} "
            "values). Pass `matrix=` or the `matrix_input` input."
        )
    m = m.reshape(3, 3)
    if abs(np.linalg.det(m)) < 1e-12 and not inverse_map:
        raise InvalidArgumentError(
            f"{op}: the matrix is singular and cannot be inverted (got {m.tolist()})."
        )
    if not inverse_map:
        m = np.linalg.inv(m)
    check_choice(op, "pixel_origin", pixel_origin, ("corner", "center"))
    if pixel_origin == "corner":
        s = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 1.0]])
        m = np.linalg.inv(s) @ m @ s
    check_choice(op, "border_mode", border_mode, BORDERS)
    interp = _INTERPS.get(interp_type)
    if interp is None:
        raise InvalidArgumentError(
            f"{op}: `interp_type` must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC (got "
            f"{interp_type})."
        )
    hi, wi = lay.index("H"), lay.index("W")
    sz = np.asarray([] if size is None else size, dtype=np.float64).ravel()
    if sz.size not in (0, 2) or np.any(sz < 0):
        raise InvalidArgumentError(
            f"{op}: `size` must be two non-negative numbers (height, width) (got {sz.tolist()})."
        )
    out = list(shape)
    if sz.size:
        out[hi], out[wi] = int(sz[0]), int(sz[1])
    c = int(shape[lay.index("C")]) if "C" in lay else 1
    fv = np.asarray([] if fill_value is None else fill_value, dtype=np.float64).ravel()
    if fv.size not in (0, 1, c):
        raise InvalidArgumentError(
            f"{op}: `fill_value` needs 1 or {c} (one per channel) values (got {fv.tolist()})."
        )
    fill = tuple(float(v) for v in (np.zeros(c) if fv.size == 0 else np.resize(fv, c)))
    kw = {
        "perm": planes_perm(lay),
        "matrix": m,
        "out_hw": (out[hi], out[wi]),
        "border": border_mode,
        "fill": fill,
        "interp": interp,
    }
    return KernelPlan(tuple(out), dt, kw)
