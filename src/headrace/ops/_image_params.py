"""Plans for the image operators ``clahe``, ``equalize``, ``debayer``, ``filter`` and
``jpeg_compression_distortion`` (no pixels touched).

Kernels see their samples as planes: :func:`planes_perm` orders a layout's axes as
``F, C, H, W`` (those present), so a kernel transposes, reshapes to ``(frames, channels, H, W)``
and back. Reproduced from the reference (DALI 2.4, CPU):

* ``equalize``: OpenCV's ``equalizeHist`` on every channel of every frame (exact);
* ``clahe``: OpenCV's CLAHE with ``tiles_x`` x ``tiles_y`` tiles; RGB with ``luma_only`` works
  on the L channel of CIE Lab (exact);
* ``debayer``: OpenCV's demosaicing; ``blue_position`` ``[0, 0]``/``[0, 1]``/``[1, 0]``/
  ``[1, 1]`` are OpenCV's ``BG``/``GB``/``GR``/``RG`` patterns (exact);
* ``filter``: correlation (not flipped) computed in float32, ``anchor`` in (row, column) order,
  ``-1`` meaning the centre ``k // 2``; output the input type (rounded, saturated) or float32;
* ``jpeg_compression_distortion``: a real JPEG round trip at ``quality`` clamped to 1..100.

Examples
--------
>>> planes_perm("HWC"), planes_perm("FCHW")
((2, 0, 1), (0, 1, 2, 3))
>>> filter_params((6, 7, 3), "HWC", "uint8", filter=np.ones((3, 3), np.float32)).shape
(6, 7, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import layout as _layout
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace._dispatch.planned import KernelPlan
from headrace.ops._color_params import to_numpy_dtype
from headrace.ops._geometry_common import check_choice

_U8 = np.dtype(np.uint8)
_F32 = np.dtype(np.float32)
#: Image layouts of 2-D operators (sequences: ``F`` first).
IMAGE_LAYOUTS = ("HW", "HWC", "CHW", "FHW", "FHWC", "FCHW")
#: Layout assumed for inputs without one, by number of dims.
DEFAULT_LAYOUTS = {2: "HW", 3: "HWC", 4: "FHWC"}


def planes_perm(layout: str) -> tuple[int, ...]:
    """The axes of ``layout`` in ``F, C, H, W`` order (those present).

    Examples
    --------
    >>> planes_perm("CHW"), planes_perm("FHW")
    ((0, 1, 2), (0, 1, 2))
    """
    return tuple(layout.index(a) for a in "FCHW" if a in layout)


def image_layout(op: str, shape: Sequence[int], layout: str | None,
                 layouts: Sequence[str] = IMAGE_LAYOUTS) -> str:  # fmt: skip
    """The sample's layout (default by rank), which must be one of ``layouts``.

    Examples
    --------
    >>> image_layout("equalize", (4, 5), None)
    'HW'
    """
    lay = layout or DEFAULT_LAYOUTS.get(len(shape))
    hint = "Pass images (HWC, CHW or HW) or sequences of them (F first)."
    return _layout.require_one_of(op, shape, lay, tuple(layouts), hint, "images")


def _check_type(op: str, in_dtype: Any, allowed: Sequence[Any]) -> np.dtype:
    dt = np.dtype(in_dtype)
    if dt not in [np.dtype(t) for t in allowed]:
        names = ", ".join(np.dtype(t).name for t in allowed)
        raise InvalidTypeError(
            f"{op}: {dt} input is not supported (got {dt}; supported: {names}). "
            "Cast the data first."
        )
    return dt


def _channels(shape: Sequence[int], layout: str) -> int:
    return int(shape[layout.index("C")]) if "C" in layout else 1


# ----------------------------------------------------------------------------- equalize, clahe


def equalize_params(shape: Sequence[int], layout: str | None, in_dtype: Any) -> KernelPlan:
    """Plan ``equalize``: one histogram per channel of each frame.

    Examples
    --------
    >>> equalize_params((4, 5, 3), "HWC", "uint8").kwargs
    {'perm': (2, 0, 1)}
    """
    lay = image_layout("equalize", shape, layout)
    _check_type("equalize", in_dtype, (np.uint8,))
    return KernelPlan(tuple(shape), _U8, {"perm": planes_perm(lay)})


def clahe_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    clip_limit: float,
    tiles_x: int,
    tiles_y: int,
    bins: int = 256,
    luma_only: bool = True,
) -> KernelPlan:
    """Plan ``clahe``: ``HW`` or ``HWC`` uint8 images with 1 or 3 (RGB) channels.

    Examples
    --------
    >>> clahe_params((8, 8, 3), "HWC", "uint8", clip_limit=2.0, tiles_x=2, tiles_y=4).kwargs
    {'clip_limit': 2.0, 'tiles': (2, 4), 'luma': True}
    """
    op = "clahe"
    lay = image_layout(op, shape, layout, ("HW", "HWC"))
    _check_type(op, in_dtype, (np.uint8,))
    c = _channels(shape, lay)
    if c not in (1, 3):
        raise ShapeError(
            f"{op}: images must have 1 or 3 (RGB) channels (got {c}). Pass grayscale or RGB images."
        )
    if int(tiles_x) < 1 or int(tiles_y) < 1:
        raise InvalidArgumentError(
            f"{op}: `tiles_x` and `tiles_y` must be at least 1 (got {tiles_x} and {tiles_y}). "
            "Pass the number of tiles along each axis."
        )
    if float(clip_limit) < 0:
        raise InvalidArgumentError(
            f"{op}: `clip_limit` must be >= 0 (got {clip_limit}). Pass a non-negative limit."
        )
    if int(bins) != 256:
        raise InvalidArgumentError(
            f"{op}: only `bins=256` is supported for uint8 images (got {bins}). "
            "Leave `bins` at its default."
        )
    kw = {
        "clip_limit": float(clip_limit),
        "tiles": (int(tiles_x), int(tiles_y)),
        "luma": bool(luma_only) and c == 3,
    }
    return KernelPlan(tuple(shape), _U8, kw)


# ------------------------------------------------------------------------------------ debayer

#: OpenCV Bayer pattern names by the reference's ``blue_position`` (row, column).
BAYER_PATTERNS = {(0, 0): "BG", (0, 1): "GB", (1, 0): "GR", (1, 1): "RG"}
#: Debayering algorithms; ``default`` and the GPU-only ``bilinear_npp`` use OpenCV's bilinear.
DEBAYER_ALGORITHMS = {
    "default": "bilinear",
    "bilinear_ocv": "bilinear",
    "bilinear_npp": "bilinear",
    "edgeaware_ocv": "edgeaware",
    "vng_ocv": "vng",
    "gray_ocv": "gray",
}


def debayer_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    blue_position: Any,
    algorithm: str | None = None,
) -> KernelPlan:
    """Plan ``debayer``: a one-channel Bayer mosaic to RGB (``gray_ocv``: to one gray channel).

    Examples
    --------
    >>> p = debayer_params((4, 6), "HW", "uint8", blue_position=[1, 1])
    >>> p.shape, p.kwargs
    ((4, 6, 3), {'pattern': 'RG', 'algorithm': 'bilinear'})
    """
    op = "debayer"
    lay = image_layout(op, shape, layout, ("HW", "HWC", "FHW", "FHWC"))
    dt = _check_type(op, in_dtype, (np.uint8, np.uint16))
    if _channels(shape, lay) != 1:
        raise ShapeError(
            f"{op}: the mosaic must have one channel (got shape {tuple(shape)}, layout "
            f"{lay!r}). Pass single-channel HW images."
        )
    alg = DEBAYER_ALGORITHMS[
        check_choice(op, "algorithm", algorithm or "default", tuple(DEBAYER_ALGORITHMS))
    ]
    if alg == "vng" and dt != _U8:
        raise InvalidTypeError(
            f"{op}: `vng_ocv` supports only uint8 mosaics (got {dt}). Use another algorithm."
        )
    pos = np.asarray(blue_position).ravel()
    key = tuple(int(v) for v in pos) if pos.size == 2 else None
    if key not in BAYER_PATTERNS:
        raise InvalidArgumentError(
            f"{op}: `blue_position` must be two values, each 0 or 1 (got {pos.tolist()}). "
            "Pass the (row, column) of the blue pixel in the top-left 2x2 tile."
        )
    h, w = shape[lay.index("H")], shape[lay.index("W")]
    if h % 2 or w % 2:
        raise ShapeError(
            f"{op}: the height and width must be even (got {h} x {w}). Crop the mosaic first."
        )
    frames = (int(shape[0]),) if lay.startswith("F") else ()
    out = (*frames, int(h), int(w), 1 if alg == "gray" else 3)
    return KernelPlan(out, dt, {"pattern": BAYER_PATTERNS[key], "algorithm": alg})


def debayer_layout(layout: str | None, plans: Sequence[Any], args: dict[str, Any]) -> str:
    """Output layout of ``debayer``: ``HWC``, or ``FHWC`` for sequences."""
    return "FHWC" if layout and layout.startswith("F") else "HWC"


# ------------------------------------------------------------------------------------- filter

#: The reference's border names for ``filter``, as the kernels' border modes.
FILTER_BORDERS = {
    "reflect_101": "reflect_101",
    "reflect_1001": "reflect",
    "clamp": "replicate",
    "wrap": "wrap",
    "constant": "constant",
}
_FILTER_INPUTS = (np.uint8, np.int8, np.uint16, np.int16, np.float16, np.float32)


def filter_params(
    shape: Sequence[int],
    layout: str | None,
    in_dtype: Any,
    *,
    filter: Any,
    fill_value: Any = None,
    anchor: Any = -1,
    border: str = "reflect_101",
    mode: str = "same",
    dtype: Any = None,
) -> KernelPlan:
    """Plan ``filter``: correlate every channel (of every frame) with a 2-D filter.

    Examples
    --------
    >>> p = filter_params((5, 6, 3), "HWC", "uint8", filter=np.ones((3, 4), np.float32),
    ...                   mode="valid")
    >>> p.shape, p.kwargs["pads"], p.kwargs["border"]
    ((3, 3, 3), (0, 0, 0, 0), 'reflect_101')
    """
    op = "filter"
    lay = image_layout(op, shape, layout)
    in_dt = _check_type(op, in_dtype, _FILTER_INPUTS)
    out_dt = to_numpy_dtype(dtype) or in_dt
    if out_dt not in (in_dt, _F32):
        raise InvalidArgumentError(
            f"{op}: `dtype` must be the input type or float32 (got {out_dt}). "
            "Cast the result for other types."
        )
    k = np.asarray(filter, dtype=np.float32)
    frames = int(shape[0]) if lay.startswith("F") else 0
    if k.ndim == 3 and frames and k.shape[0] == frames:
        kernels = tuple(np.ascontiguousarray(f) for f in k)  # one filter per frame
    elif k.ndim == 2:
        kernels = (np.ascontiguousarray(k),)
    else:
        raise ShapeError(
            f"{op}: the filter must be a 2-D array (or one per frame of a sequence) (got shape "
            f"{k.shape} for a sample of shape {tuple(shape)}, layout {lay!r})."
        )
    kh, kw = kernels[0].shape
    if kh < 1 or kw < 1:
        raise ShapeError(f"{op}: the filter is empty (got shape {k.shape}). Pass a 2-D filter.")
    bmode = FILTER_BORDERS[check_choice(op, "border", border, tuple(FILTER_BORDERS))]
    check_choice(op, "mode", mode, ("same", "valid"))
    anc = np.asarray(anchor, dtype=np.int64).ravel()
    if anc.size == 1:
        anc = np.repeat(anc, 2)
    if anc.size != 2:
        raise InvalidArgumentError(
            f"{op}: `anchor` needs 1 or 2 values (got {anc.tolist()}). Pass (row, column)."
        )
    ay, ax = (int(a) if a != -1 else s // 2 for a, s in zip(anc, (kh, kw)))
    if not (0 <= ay < kh and 0 <= ax < kw):
        raise InvalidArgumentError(
            f"{op}: `anchor` must lie within the filter (got {anc.tolist()} for a {kh} x {kw} "
            "filter). Pass -1 for the centre."
        )
    h, w = int(shape[lay.index("H")]), int(shape[lay.index("W")])
    out = list(shape)
    if mode == "valid":
        if kh > h or kw > w:
            raise ShapeError(
                f"{op}: in 'valid' mode the filter ({kh} x {kw}) must fit in the image "
                f"({h} x {w}). Use mode='same' or a smaller filter."
            )
        pads = (0, 0, 0, 0)
        out[lay.index("H")], out[lay.index("W")] = h - kh + 1, w - kw + 1
    else:
        pads = (ay, kh - 1 - ay, ax, kw - 1 - ax)
    fill = 0.0 if fill_value is None else float(np.asarray(fill_value).reshape(-1)[0])
    kw_ = {
        "perm": planes_perm(lay),
        "kernels": kernels,
        "pads": pads,
        "border": bmode,
        "fill": fill,
        "dtype": out_dt,
    }
    return KernelPlan(tuple(out), out_dt, kw_)


# -------------------------------------------------------------------- jpeg compression distortion


def jpeg_distortion_params(
    shape: Sequence[int], layout: str | None, in_dtype: Any, *, quality: int = 50
) -> KernelPlan:
    """Plan ``jpeg_compression_distortion``: RGB uint8 images, ``quality`` clamped to 1..100.

    Examples
    --------
    >>> jpeg_distortion_params((8, 8, 3), "HWC", "uint8", quality=150).kwargs
    {'quality': 100}
    """
    op = "jpeg_compression_distortion"
    lay = image_layout(op, shape, layout, ("HWC", "FHWC"))
    _check_type(op, in_dtype, (np.uint8,))
    if shape[-1] != 3:
        raise ShapeError(
            f"{op}: images must have 3 (RGB) channels (got shape {tuple(shape)}, layout "
            f"{lay!r}). Pass RGB images."
        )
    return KernelPlan(tuple(shape), _U8, {"quality": int(np.clip(int(quality), 1, 100))})
