"""Bounding-box operators for detection pipelines: bb_flip, bbox_paste, bbox_rotate, box_encoder,
random_bbox_crop, roi_random_crop and random_crop_generator; and multi_paste, the image mixing
(mosaic, cut-and-paste) that goes with them.

Boxes are float ``[N, 4]`` tensors in relative coordinates (``[0, 1]`` of the image), either
``ltrb`` (left, top, right, bottom) or ``xywh`` (left, top, width, height).

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> boxes = ndd.tensor(np.array([[0.1, 0.2, 0.5, 0.6]], np.float32))
>>> ndd.bb_flip(boxes, ltrb=True).torch().double().round(decimals=3).tolist()
[[0.5, 0.2, 0.9, 0.6]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch import meta_rules as _meta
from headrace._dispatch.args import (
    REQUIRED,
    Arg,
    forward_args,
    has_per_sample,
    sample_args,
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
from headrace._dispatch.schema import OpSchema
from headrace._rng import RNG
from headrace.backends.shared.common import multi_paste_regions
from headrace.ops._geometry_params import random_crop_window

__all__ = [
    "bb_flip",
    "bbox_paste",
    "bbox_rotate",
    "box_encoder",
    "multi_paste",
    "random_bbox_crop",
    "random_crop_generator",
    "roi_random_crop",
]


def _schema(name: str, **kw: Any) -> OpSchema:
    """A box op: batch kernels named ``name`` in ``backends/<backend>/detection.py``."""
    return OpSchema(name, "detection", **kw)


def _floats_or_none(v: Any) -> Any:
    return None if v is None else to_floats(v)


def _float_or_none(v: Any) -> float | None:
    return None if v is None else to_float(v)


BB_FLIP = _schema(
    "bb_flip",
    args=(
        Arg("horizontal", to_int, 1, per_sample=True, doc="Flip horizontally (1) or not (0)."),
        Arg("ltrb", to_bool, False, doc="Boxes are ltrb (default: xywh)."),
        Arg("vertical", to_int, 0, per_sample=True, doc="Flip vertically (1) or not (0)."),
    ),
)
BBOX_PASTE = _schema(
    "bbox_paste",
    args=(
        Arg("ltrb", to_bool, False, doc="Boxes are ltrb (default: xywh)."),
        Arg("paste_x", to_float, 0.5, per_sample=True, doc="Horizontal paste position."),
        Arg("paste_y", to_float, 0.5, per_sample=True, doc="Vertical paste position."),
        Arg("ratio", to_float, REQUIRED, per_sample=True, doc="Canvas size / image size."),
    ),
    devices=("cpu",),
)
BBOX_ROTATE = _schema(
    "bbox_rotate",
    inputs=("bboxes", "labels"),
    min_inputs=1,
    num_outputs=2,  # the public function drops the labels when none are given
    args=(
        Arg("angle", to_float, REQUIRED, per_sample=True, doc="Rotation in degrees."),
        Arg("bbox_layout", to_layout, "xyXY", doc="'xyXY' or 'xyWH'."),
        Arg("bbox_normalized", to_bool, True, doc="Boxes are relative to the image size."),
        Arg("input_shape", to_ints, REQUIRED, per_sample=True, doc="Shape of the image."),
        Arg("keep_size", to_bool, False, doc="The rotated image keeps its size."),
        Arg("mode", to_str, "expand", doc="'expand', 'halfway' or 'fixed'."),
        Arg("remove_threshold", to_float, 0.1, doc="Fraction inside the canvas to keep a box."),
        Arg("shape_layout", to_layout, "HW", doc="Meaning of the input_shape extents."),
        Arg("size", _floats_or_none, None, per_sample=True, doc="Output canvas (H, W)."),
    ),
    devices=("cpu",),
)
BOX_ENCODER = _schema(
    "box_encoder",
    inputs=("input_0", "input_1"),
    num_outputs=2,
    args=(
        Arg("anchors", to_floats, REQUIRED, doc="Anchors, ltrb, 4 numbers each."),
        Arg("criteria", to_float, 0.5, doc="IoU above which an anchor matches a box."),
        Arg("means", to_floats, (0.0, 0.0, 0.0, 0.0), doc="Subtracted from the offsets."),
        Arg("offset", to_bool, False, doc="Encode offsets from the anchors."),
        Arg("scale", to_float, 1.0, doc="Rescales boxes and anchors before encoding."),
        Arg("stds", to_floats, (1.0, 1.0, 1.0, 1.0), doc="Divide the offsets."),
    ),
)
RANDOM_BBOX_CROP = _schema(
    "random_bbox_crop",
    inputs=("boxes", "labels"),
    num_outputs=5,  # the public function drops the indices unless output_bbox_indices
    args=(
        Arg("all_boxes_above_threshold", to_bool, True, doc="Every box must pass the threshold."),
        Arg("allow_no_crop", to_bool, True, doc="Keeping the whole image is an option."),
        Arg("aspect_ratio", to_floats, (1.0, 1.0), doc="Range of the window's aspect ratios."),
        Arg("bbox_layout", to_layout, "", doc="Layout of the boxes (xyXY, xyWH…)."),
        Arg("bbox_prune_threshold", _float_or_none, None, doc="Covered fraction to keep a box."),
        Arg("crop_shape", _floats_or_none, None, per_sample=True, doc="Fixed window size."),
        Arg("input_shape", _floats_or_none, None, per_sample=True, doc="Image size."),
        Arg("ltrb", to_bool, True, doc="Boxes are ltrb (default) or xywh."),
        Arg("num_attempts", to_int, 1, doc="Windows tried per threshold drawn."),
        Arg("output_bbox_indices", to_bool, False, doc="Also output the kept boxes' indices."),
        Arg("quiet", to_bool, False, doc="No warning when no window is found."),
        Arg("scaling", to_floats, (1.0, 1.0), doc="Range of the window's relative size."),
        Arg("shape_layout", to_layout, "", doc="Order of input_shape/crop_shape (WH…)."),
        Arg("threshold_type", to_str, "iou", doc="'iou' or 'overlap'."),
        Arg("thresholds", to_floats, (0.0,), doc="Minimum overlaps to choose from."),
        Arg("total_num_attempts", to_int, -1, doc="Attempts before giving up (-1: no limit)."),
    ),
    devices=("cpu",),
    random=True,
)
# What a pending call's outputs are, before they are computed (``headrace._core.meta``).
BB_FLIP.meta = _meta.same_as_input(needs_layout=False)
RANDOM_BBOX_CROP.meta = _meta.random_bbox_crop
ROI_RANDOM_CROP = _schema(
    "roi_random_crop",
    min_inputs=0,
    args=(
        Arg("crop_shape", to_ints, REQUIRED, per_sample=True, doc="Size of the crop window."),
        Arg("in_shape", to_ints, None, per_sample=True, doc="Input shape (without input)."),
        Arg("roi_end", to_ints, None, per_sample=True, doc="End of the ROI (exclusive)."),
        Arg("roi_shape", to_ints, None, per_sample=True, doc="Size of the ROI."),
        Arg("roi_start", to_ints, REQUIRED, per_sample=True, doc="Start of the ROI."),
    ),
    devices=("cpu",),
    random=True,
)


def _crop_windows(kc: KernelContext, ins: list[Batch | None], v: dict[str, Any]) -> dict[str, Any]:
    """Draw every sample's window (in sample order) with the random-resized-crop sampler."""
    gen = kc.generator()
    x = ins[0]
    assert x is not None
    per = has_per_sample(v)
    wins = []
    for i in range(kc.n):
        a = sample_args(v, i) if per else v
        shape = np.asarray(x._samples[i]).reshape(-1)
        if shape.size < 2 or (shape[:2] <= 0).any():
            from headrace._dispatch.kernel_context import annotate

            raise annotate(
                InvalidArgumentError(
                    f"random_crop_generator: the input must be a shape with at least 2 positive "
                    f"extents (H, W), got {shape.tolist()}."
                ),
                kc.name,
                i,
                kc.source(i),
            )
        wins.append(
            random_crop_window(
                gen, shape[:2], a["random_area"], a["random_aspect_ratio"], a["num_attempts"]
            )
        )
    return {"windows": wins}


RANDOM_CROP_GENERATOR = _schema(
    "random_crop_generator",
    num_outputs=2,
    args=(
        Arg("num_attempts", to_int, 10, doc="Windows tried before the fallback."),
        Arg("random_area", to_floats, (0.08, 1.0), doc="Range of the window's area fraction."),
        Arg("random_aspect_ratio", to_floats, (3 / 4, 4 / 3), doc="Range of w / h."),
    ),
    devices=("cpu",),
    random=True,
    prepare=_crop_windows,
)


def _paste_plan(kc: KernelContext, ins: list[Batch | None], v: dict[str, Any]) -> dict[str, Any]:
    """Every output sample's canvas shape and regions (the same for every backend)."""
    batches = [b for b in ins if b is not None]
    if v["in_ids"] is not None and len(batches) != 1:
        raise InvalidArgumentError(
            f"multi_paste: with in_ids, pass exactly one input batch (got {len(batches)})."
        )
    dtypes = {b._dtype for b in batches}
    if len(dtypes) > 1:
        raise InvalidArgumentError(
            f"multi_paste: the inputs must share one type, got {sorted(map(str, dtypes))}."
        )
    shapes = [[tuple(s.shape) for s in b._samples] for b in batches]
    for k, ss in enumerate(shapes):
        for j, sh in enumerate(ss):
            if len(sh) != 3:
                raise InvalidArgumentError(
                    f"multi_paste: input {k}, sample {j}: expected HWC images (3 dims), got the "
                    f"shape {list(sh)}. Sequences (FHWC) are not supported yet."
                )
    flat = {sh for ss in shapes for sh in ss}
    default_hw = next(iter(flat))[:2] if len(flat) == 1 else None
    per = has_per_sample(v)
    plans = []
    for i in range(kc.n):
        a = sample_args(v, i) if per else v
        try:
            if a["in_ids"] is not None:
                ids = [int(j) for j in np.asarray(a["in_ids"]).reshape(-1)]
                bad = [j for j in ids if not 0 <= j < len(shapes[0])]
                if bad:
                    raise InvalidArgumentError(
                        f"multi_paste: in_ids {bad} out of range for a batch of "
                        f"{len(shapes[0])} samples."
                    )
                sources = [(0, j) for j in ids]
            else:
                sources = [(k, i) for k in range(len(batches))]
            src = [shapes[k][j] for k, j in sources]
            if len({sh[2] for sh in src}) > 1:
                raise InvalidArgumentError(
                    f"multi_paste: the pasted samples differ in channels: {[sh[2] for sh in src]}."
                )
            hw, regions = multi_paste_regions(a, sources, src, default_hw)
            channels = src[0][2] if src else shapes[0][0][2] if shapes[0] else 1
        except Exception as e:
            from headrace._dispatch.kernel_context import annotate

            raise annotate(e, kc.name, i, kc.source(i)) from None
        plans.append(((*hw, channels), regions))
    out_dt = v["dtype"] if v["dtype"] is not None else batches[0]._dtype
    return {"plans": plans, "dtype": out_dt}


def _ints_or_none(v: Any) -> Any:
    return None if v is None else to_ints(v)


MULTI_PASTE = _schema(
    "multi_paste",
    inputs=("input_0", "inputs"),
    variadic=True,
    args=(
        Arg("dtype", to_dtype, None, doc="Output type (default: the inputs')."),
        Arg("in_anchors", _ints_or_none, None, per_sample=True, doc="Region starts (H, W)."),
        Arg("in_anchors_rel", _floats_or_none, None, per_sample=True, doc="Relative starts."),
        Arg("in_ids", _ints_or_none, None, per_sample=True, doc="Samples pasted (one input)."),
        Arg("out_anchors", _ints_or_none, None, per_sample=True, doc="Where regions go."),
        Arg("out_anchors_rel", _floats_or_none, None, per_sample=True, doc="Relative targets."),
        Arg("output_size", _ints_or_none, None, per_sample=True, doc="Canvas (H, W)."),
        Arg("shapes", _ints_or_none, None, per_sample=True, doc="Region sizes (H, W)."),
        Arg("shapes_rel", _floats_or_none, None, per_sample=True, doc="Relative sizes."),
    ),
    prepare=_paste_plan,
)


def bb_flip(
    input: Any,
    /,
    *,
    horizontal: Any = None,
    ltrb: bool | None = None,
    vertical: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Mirror bounding boxes (relative coordinates) horizontally and/or vertically.

    Parameters
    ----------
    input : Tensor or Batch
        Float boxes ``[N, 4]``.
    horizontal : int or Batch, optional
        1 (default): mirror left-right; 0: do not. One per sample from a Batch.
    ltrb : bool, optional
        The boxes are ``[left, top, right, bottom]``; default False: ``[x, y, w, h]``.
    vertical : int or Batch, optional
        1: mirror top-bottom; 0 (default): do not.

    Returns
    -------
    Tensor or Batch
        float32 boxes in the input's format.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> b = ndd.tensor(np.array([[0.1, 0.2, 0.3, 0.4]], np.float32))
    >>> ndd.bb_flip(b, horizontal=0, vertical=1).torch().double().round(decimals=3).tolist()
    [[0.1, 0.4, 0.3, 0.4]]
    """
    return BB_FLIP.call((input,), **forward_args(locals(), "input"))


def bbox_paste(
    input: Any,
    /,
    *,
    ratio: Any,
    ltrb: bool | None = None,
    paste_x: Any = None,
    paste_y: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Boxes of an image pasted into a canvas ``ratio`` times its size (as ``ndd.paste`` does).

    The image's relative position in the canvas is ``paste_x``/``paste_y`` (0: left/top edge,
    1: right/bottom edge); a coordinate ``c`` becomes ``c / ratio + paste * (1 - 1 / ratio)``.

    Parameters
    ----------
    input : Tensor or Batch
        Float boxes ``[N, 4]``, relative coordinates.
    ratio : float or Batch
        Canvas size over image size (at least 1).
    ltrb : bool, optional
        ltrb boxes; default False: xywh.
    paste_x, paste_y : float or Batch, optional
        Position in ``[0, 1]`` (default 0.5: centred).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> b = ndd.tensor(np.array([[0.0, 0.0, 1.0, 1.0]], np.float32))
    >>> ndd.bbox_paste(b, ratio=2.0, ltrb=True, paste_x=0.0).torch().tolist()
    [[0.0, 0.25, 0.5, 0.75]]
    """
    return BBOX_PASTE.call((input,), **forward_args(locals(), "input"))


def bbox_rotate(
    bboxes: Any,
    labels: Any = None,
    /,
    *,
    angle: Any,
    input_shape: Any,
    bbox_layout: str | None = None,
    bbox_normalized: bool | None = None,
    keep_size: bool | None = None,
    mode: str | None = None,
    remove_threshold: float | None = None,
    shape_layout: str | None = None,
    size: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Boxes that stay on their objects when the image is rotated (as ``ndd.rotate`` does).

    Rotate the boxes before the image: they need its original shape. Each box's centre turns
    ``angle`` degrees counter-clockwise about the image centre into the output canvas (the
    image with ``keep_size``, ``size``, or the expanded canvas ``rotate`` makes); its size is
    the rotated box's bounding box (``mode="expand"``), the original size (``"fixed"``) or
    halfway between. Boxes are clipped to the canvas; those of which less than
    ``remove_threshold`` of the area remains are removed, with their labels.

    Parameters
    ----------
    bboxes : Tensor or Batch
        Float boxes ``[N, 4]``.
    labels : Tensor or Batch, optional
        Their labels, ``[N]`` or ``[N, 1]``.
    angle : float or Batch
        Rotation angle in degrees (counter-clockwise).
    input_shape : sequence of int or Batch
        The image's shape, ordered as ``shape_layout`` says (``HW``; ``HWC`` works too).
    bbox_layout : str, optional
        ``"xyXY"`` (default) or ``"xyWH"``.
    bbox_normalized : bool, optional
        Boxes are relative to the image (default True); otherwise in pixels.
    keep_size : bool, optional
        The canvas is the image's size (default False: expanded to hold the rotated image).
    mode : str, optional
        ``"expand"`` (default), ``"halfway"`` or ``"fixed"``.
    remove_threshold : float, optional
        Minimum fraction of a box left inside the canvas, in ``[0, 1]`` (default 0.1).
    shape_layout : str, optional
        Meaning of the extents of ``input_shape`` (default ``"HW"``).
    size : sequence of float or Batch, optional
        Canvas ``(H, W)`` given to ``rotate`` (excludes ``keep_size``).

    Returns
    -------
    Tensor or Batch, or tuple
        float32 boxes in the input's layout (relative to the canvas when normalized), and the
        kept labels when ``labels`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> b = ndd.tensor(np.array([[0.1, 0.2, 0.3, 0.4]], np.float32))
    >>> r = ndd.bbox_rotate(b, angle=90.0, input_shape=[100, 100])
    >>> r.torch().double().round(decimals=3).tolist()
    [[0.2, 0.7, 0.4, 0.9]]
    """
    res = BBOX_ROTATE.call((bboxes, labels), **forward_args(locals(), "bboxes", "labels"))
    return res if labels is not None else res[0]


def box_encoder(
    input_0: Any,
    input_1: Any,
    /,
    *,
    anchors: Any,
    criteria: float | None = None,
    means: Any = None,
    offset: bool | None = None,
    scale: float | None = None,
    stds: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Match ground-truth boxes to anchors and encode them, SSD style.

    Each anchor takes the box it overlaps most when that IoU is above ``criteria``; each box
    then claims its own best anchor. Matched anchors get the box and its label, the others the
    anchor itself and label 0. Boxes come out as ``[cx, cy, w, h]``; with ``offset=True`` as
    ``((c - anchor_c) / anchor_wh - means) / stds`` and ``(log(wh / anchor_wh) - means) /
    stds`` (zeros for unmatched anchors), after multiplying boxes and anchors by ``scale``.

    Parameters
    ----------
    input_0 : Tensor or Batch
        ltrb float boxes ``[N, 4]``.
    input_1 : Tensor or Batch
        Their labels ``[N]`` (or ``[N, 1]``), integers.
    anchors : sequence of float
        ``M`` anchors, ltrb, flattened (``4 * M`` numbers).
    criteria : float, optional
        IoU threshold in ``[0, 1]`` (default 0.5).
    means, stds : sequence of 4 floats, optional
        Normalisation of the offsets (defaults 0 and 1).
    offset : bool, optional
        Encode offsets from the anchors (default False).
    scale : float, optional
        Factor applied to boxes and anchors first (default 1).

    Returns
    -------
    tuple
        Encoded boxes ``[M, 4]`` float32 and labels ``[M]`` (the labels' type).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> boxes = ndd.tensor(np.array([[0.0, 0.0, 0.5, 0.5]], np.float32))
    >>> labels = ndd.tensor(np.array([7], np.int32))
    >>> enc, lab = ndd.box_encoder(boxes, labels, anchors=[0, 0, 0.5, 0.5, 0.5, 0.5, 1, 1])
    >>> enc.torch().tolist(), lab.torch().tolist()
    ([[0.25, 0.25, 0.5, 0.5], [0.75, 0.75, 0.5, 0.5]], [7, 0])
    """
    return BOX_ENCODER.call((input_0, input_1), **forward_args(locals(), "input_0", "input_1"))


def multi_paste(
    input_0: Any,
    /,
    *inputs: Any,
    dtype: Any = None,
    in_anchors: Any = None,
    in_anchors_rel: Any = None,
    in_ids: Any = None,
    out_anchors: Any = None,
    out_anchors_rel: Any = None,
    output_size: Any = None,
    shapes: Any = None,
    shapes_rel: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Paste regions of several images into each output canvas (mosaic, cut-and-paste).

    With ``in_ids`` (one input batch), output sample ``i`` gets the samples ``in_ids[i]`` of
    the batch (the output batch has the input's size); without it, sample ``i`` of every input,
    in input order. Regions are pasted in order (later ones cover earlier ones) on a zero
    canvas. Per-region arguments are ``[k, 2]``
    (H, W) arrays, one row per region; relative ones are fractions of the source sample
    (``in_anchors_rel``, ``shapes_rel``) or of the canvas (``out_anchors_rel``), starts rounded
    down and sizes up. Every region must lie inside its source and the canvas.

    Parameters
    ----------
    input_0, *inputs : Tensor or Batch
        HWC images of one type (a single batch with ``in_ids``).
    dtype : DType, optional
        Output type (saturating conversion); default: the inputs'.
    in_anchors, in_anchors_rel : array or Batch, optional
        Top-left corner of each region in its source (default 0).
    in_ids : sequence of int or Batch, optional
        Indices, in the input batch, of the samples pasted into each output.
    out_anchors, out_anchors_rel : array or Batch, optional
        Top-left corner of each region in the canvas (default 0).
    output_size : sequence of int or Batch, optional
        Canvas (H, W); needed unless every input sample has the same shape.
    shapes, shapes_rel : array or Batch, optional
        Region sizes (default: from the anchor to the end of the source).

    Returns
    -------
    Tensor or Batch
        HWC canvases.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> a = ndd.batch([np.full((2, 2, 1), 5, np.uint8), np.full((2, 2, 1), 9, np.uint8)])
    >>> ids = ndd.batch([np.int32([0, 1]), np.int32([1])])
    >>> at = ndd.batch([np.int32([[0, 0], [1, 2]]), np.int32([[0, 1]])])
    >>> size = ndd.batch([np.int32([[2, 2], [1, 1]]), np.int32([[2, 2]])])
    >>> out = ndd.multi_paste(a, in_ids=ids, output_size=[2, 3], out_anchors=at, shapes=size)
    >>> [np.asarray(t)[..., 0].tolist() for t in out.tensors]
    [[[5, 5, 0], [5, 5, 9]], [[0, 9, 9], [0, 9, 9]]]
    """
    return MULTI_PASTE.call(
        (input_0, *inputs),
        device=device,
        batch_size=batch_size,
        dtype=dtype,
        in_anchors=in_anchors,
        in_anchors_rel=in_anchors_rel,
        in_ids=in_ids,
        out_anchors=out_anchors,
        out_anchors_rel=out_anchors_rel,
        output_size=output_size,
        shapes=shapes,
        shapes_rel=shapes_rel,
    )


def random_bbox_crop(
    boxes: Any,
    labels: Any = None,
    /,
    *,
    all_boxes_above_threshold: bool | None = None,
    allow_no_crop: bool | None = None,
    aspect_ratio: Any = None,
    bbox_layout: str | None = None,
    bbox_prune_threshold: float | None = None,
    crop_shape: Any = None,
    input_shape: Any = None,
    ltrb: bool | None = None,
    num_attempts: int | None = None,
    output_bbox_indices: bool | None = None,
    quiet: bool | None = None,
    scaling: Any = None,
    shape_layout: str | None = None,
    threshold_type: str | None = None,
    thresholds: Any = None,
    total_num_attempts: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Draw a crop window that keeps the boxes' overlap above a threshold (SSD's sampling).

    For each sample, an option is drawn uniformly from ``thresholds`` (plus "no crop" when
    ``allow_no_crop``). For a threshold, up to ``num_attempts`` windows are drawn: the relative
    width uniform in ``scaling``, the width/height ratio (in pixels when ``input_shape`` is
    given) uniform in ``aspect_ratio`` (a height outside ``scaling`` or the image rejects the
    window), the position uniform inside the image. A window is accepted when the overlap
    (``threshold_type``: IoU of window and box, or the fraction of the box the window covers)
    of every box (``all_boxes_above_threshold``, otherwise of some box) reaches the threshold
    and some box is kept: boxes whose centre lies in the window, or (``bbox_prune_threshold``)
    of which at least that fraction is covered.
    Otherwise another option is drawn, until ``total_num_attempts`` windows (-1: 10 000) have
    been tried; then the whole image is used (with a warning unless ``quiet``). With
    ``crop_shape`` (needs ``input_shape``), windows have that size, at integer positions.
    Each sample draws from its own sub-stream of the call's random draw, so a sample's window
    does not depend on the batch's other samples; the samples' attempts are evaluated
    together, in blocks.

    Parameters
    ----------
    boxes : Tensor or Batch
        Float boxes ``[N, 4]`` (``[N, 6]`` in 3-D), relative coordinates.
    labels : Tensor or Batch, optional
        One label per box (``[N]`` or ``[N, 1]``); without it there is no labels output.
    all_boxes_above_threshold, allow_no_crop : bool, optional
        Default True.
    aspect_ratio : sequence of float, optional
        ``[lo, hi]`` of width/height (default [1, 1]); in 3-D, one pair or three (xy, xz, yz).
    bbox_layout : str, optional
        Box layout, e.g. ``"xyXY"`` or ``"xyWH"`` (default: from ``ltrb``).
    bbox_prune_threshold : float, optional
        Keep boxes of which at least this fraction is inside the window (default: centres).
    crop_shape, input_shape : sequence of float or Batch, optional
        Window and image sizes in ``shape_layout`` order (default ``"WH"``/``"WHD"``).
    ltrb : bool, optional
        Boxes are ltrb (default True) or xywh (without ``bbox_layout``).
    num_attempts : int, optional
        Windows tried per option drawn (default 1).
    output_bbox_indices : bool, optional
        Add a fifth output: the indices of the kept boxes (int32).
    quiet : bool, optional
        No warning when falling back to the whole image.
    scaling : sequence of float, optional
        ``[lo, hi]`` of the window's size relative to the image (default [1, 1]).
    shape_layout : str, optional
        Order of the extents of ``input_shape``/``crop_shape`` and of the anchor/shape outputs.
    threshold_type : str, optional
        ``"iou"`` (default) or ``"overlap"``.
    thresholds : sequence of float, optional
        Minimum overlaps to choose from (default [0.0]).
    total_num_attempts : int, optional
        Total windows tried before giving up (default -1).
    rng : random.RNG, optional
        Generator to draw from; the same state gives the same windows.

    Returns
    -------
    tuple
        ``(anchor, shape, boxes[, labels][, indices])``: the window's start and size (float32,
        relative; absolute with ``crop_shape``; in ``shape_layout`` order, x first by default),
        the kept boxes relative to the window and clipped to it (the input's layout), their
        labels (when ``labels`` is given).

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> boxes = ndd.tensor(np.array([[0.1, 0.1, 0.4, 0.5]], np.float32))
    >>> labels = ndd.tensor(np.array([1], np.int32))
    >>> anchor, shape, b, l = ndd.random_bbox_crop(
    ...     boxes, labels, scaling=[0.5, 1.0], aspect_ratio=[0.5, 2.0], thresholds=[0.3],
    ...     allow_no_crop=False, num_attempts=20, rng=ndd.random.RNG(seed=0))
    >>> bool(((b.torch() >= 0) & (b.torch() <= 1)).all()), l.torch().tolist()
    (True, [1])
    """
    res = RANDOM_BBOX_CROP.call((boxes, labels), **forward_args(locals(), "boxes", "labels"))
    if labels is None:  # the kernel's labels output is a placeholder then
        res = res[:3] + res[4:]
    return res if output_bbox_indices else res[:-1]


def roi_random_crop(
    input: Any = None,
    /,
    *,
    crop_shape: Any,
    roi_start: Any,
    in_shape: Any = None,
    roi_end: Any = None,
    roi_shape: Any = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Random crop anchors whose window contains a region of interest.

    Per dimension, the anchor is uniform among the integers that put the ROI inside the window
    (or the window inside the ROI, when the ROI is larger), and keep the window inside the
    input when that is possible.

    Parameters
    ----------
    input : Tensor or Batch, optional
        Data whose shape bounds the window (or give ``in_shape``).
    crop_shape : sequence of int or Batch
        Window size, one extent per dimension.
    roi_start : sequence of int or Batch
        ROI start.
    in_shape : sequence of int or Batch, optional
        Input shape, without ``input``.
    roi_end, roi_shape : sequence of int or Batch, optional
        ROI end (exclusive) or size: exactly one.
    rng : random.RNG, optional
        Generator to draw from.

    Returns
    -------
    Tensor or Batch
        int64 anchors, one extent per dimension.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.zeros((10, 12), np.uint8))
    >>> a = ndd.roi_random_crop(x, crop_shape=[4, 5], roi_start=[2, 3], roi_end=[5, 6],
    ...                         rng=ndd.random.RNG(seed=1)).torch().tolist()
    >>> 1 <= a[0] <= 2 and 1 <= a[1] <= 3
    True
    """
    inputs = () if input is None else (input,)
    return ROI_RANDOM_CROP.call(inputs, **forward_args(locals(), "input", "inputs"))


def random_crop_generator(
    input: Any,
    /,
    *,
    num_attempts: int | None = None,
    random_area: Any = None,
    random_aspect_ratio: Any = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Random crop windows of random area and aspect ratio (random-resized-crop's sampler).

    The area fraction is uniform in ``random_area``, the aspect ratio (w / h) log-uniform in
    ``random_aspect_ratio``; after ``num_attempts`` windows that do not fit, the whole image
    cropped to the nearest allowed aspect ratio, centred.

    Parameters
    ----------
    input : Tensor or Batch
        The image shape, ``(H, W[, ...])``, integers.
    num_attempts : int, optional
        Default 10.
    random_area : sequence of float, optional
        Default [0.08, 1].
    random_aspect_ratio : sequence of float, optional
        Default [3/4, 4/3].
    rng : random.RNG, optional
        Generator to draw from.

    Returns
    -------
    tuple
        ``(anchor, shape)``: int32 ``(y, x)`` and ``(h, w)``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> a, s = ndd.random_crop_generator(ndd.tensor(np.array([100, 200])),
    ...                                  rng=ndd.random.RNG(seed=1))
    >>> (y, x), (h, w) = a.torch().tolist(), s.torch().tolist()
    >>> 0 <= y <= 100 - h and 0 <= x <= 200 - w
    True
    """
    return RANDOM_CROP_GENERATOR.call((input,), **forward_args(locals(), "input"))
