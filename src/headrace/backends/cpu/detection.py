"""NumPy kernels of the bounding-box operators (``ops/detection.py``).

Boxes are float32 ``[N, 4]`` arrays (``[N, 6]`` for 3-D boxes where an operator allows them),
relative coordinates unless said otherwise. Random kernels draw from the call's generator in
sample order.

Examples
--------
>>> import numpy as np
>>> b = np.array([[0.1, 0.2, 0.5, 0.6]], np.float32)
>>> flip_boxes(b, False, 1, 0).astype(float).round(3).tolist()
[[0.4, 0.2, 0.5, 0.6]]
>>> iou_matrix(np.array([[0, 0, 1, 1]], np.float32), np.array([[0, 0, 0.5, 1]], np.float32))
array([[0.5]], dtype=float32)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch, split_dense
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.common import check_encoder_args, dali_radians, rotated_canvas_size

Vals = dict[str, Any]
F32 = np.float32


def _vals(v: Vals, n: int) -> list[Vals]:
    return [sample_args(v, i) for i in range(n)] if has_per_sample(v) else [v] * n


def boxes_of(a: Any, what: str = "boxes", width: int = 4) -> np.ndarray:
    """``a`` as a float32 ``[N, width]`` array, or a :class:`ShapeError` naming ``what``."""
    a = np.asarray(a)
    if a.size == 0:
        return np.zeros((0, width), F32)
    if a.ndim == 1 and a.shape[0] % width == 0:
        a = a.reshape(-1, width)
    if a.ndim != 2 or a.shape[1] != width:
        raise ShapeError(f"{what} must have the shape [N, {width}], got {list(a.shape)}.")
    return a.astype(F32, copy=False)


def _wrap(kc: KernelContext, outs: list[np.ndarray], dt: _dt.DType) -> Batch:
    return Batch._wrap(outs, dt, None, kc.device)


# --- bb_flip ------------------------------------------------------------------------------------
def flip_boxes(b: np.ndarray, ltrb: bool, horizontal: int, vertical: int) -> np.ndarray:
    """Boxes mirrored in relative coordinates (``1 - end`` becomes the new start).

    xywh boxes go through ltrb (``x + w`` and back), so their extents round as the
    reference's do even along an axis that is not flipped.
    """
    b = b.astype(F32, copy=False)
    one = F32(1)
    lt, rb = b[:, :2], (b[:, 2:] if ltrb else b[:, :2] + b[:, 2:])
    nlt, nrb = lt.copy(), rb.copy()
    for d, flip in enumerate((horizontal, vertical)):
        if flip:
            nlt[:, d], nrb[:, d] = one - rb[:, d], one - lt[:, d]
    return np.concatenate([nlt, nrb if ltrb else nrb - nlt], 1).astype(F32, copy=False)


def bb_flip(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``bb_flip`` on numpy boxes."""
    x = ins[0]
    vals = _vals(v, kc.n)

    def one(i: int) -> np.ndarray:
        a = vals[i]
        return flip_boxes(boxes_of(x._samples[i]), a["ltrb"], a["horizontal"], a["vertical"])

    return (_wrap(kc, kc.map(one, parallel=False), _dt.float32),)


# --- bbox_paste ---------------------------------------------------------------------------------
def bbox_paste(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``bbox_paste``: boxes of an image pasted into a canvas ``ratio`` times larger."""
    x = ins[0]
    vals = _vals(v, kc.n)

    def one(i: int) -> np.ndarray:
        a = vals[i]
        ratio = F32(a["ratio"])
        if not ratio >= 1:
            raise InvalidArgumentError(f"ratio must be at least 1, got {float(ratio)}.")
        px, py = F32(a["paste_x"]), F32(a["paste_y"])
        for name, p in (("paste_x", px), ("paste_y", py)):
            if not 0 <= p <= 1:
                raise InvalidArgumentError(f"{name} must be in [0, 1], got {float(p)}.")
        b = boxes_of(x._samples[i])
        scale = F32(1) / ratio
        mx, my = px * (F32(1) - scale), py * (F32(1) - scale)
        out = b * scale
        out[:, 0] += mx
        out[:, 1] += my
        if a["ltrb"]:
            out[:, 2] += mx
            out[:, 3] += my
        return out.astype(F32, copy=False)

    return (_wrap(kc, kc.map(one, parallel=False), _dt.float32),)


# --- bbox_rotate --------------------------------------------------------------------------------
_ROTATE_MODES = ("expand", "halfway", "fixed")


def _rotate_hw(a: Vals) -> tuple[int, int]:
    """The image (height, width) of ``input_shape`` read in ``shape_layout`` order."""
    shape = np.asarray(a["input_shape"]).reshape(-1)
    lay = a["shape_layout"]
    if "H" not in lay or "W" not in lay or len(lay) != len(set(lay)):
        raise InvalidArgumentError(
            f"bbox_rotate: shape_layout must name the H and W axes once each, got {lay!r}."
        )
    if shape.size < len(lay) and shape.size <= max(lay.index("H"), lay.index("W")):
        raise InvalidArgumentError(
            f"bbox_rotate: input_shape {shape.tolist()} has no {lay!r} extents."
        )
    h, w = int(shape[lay.index("H")]), int(shape[lay.index("W")])
    if h <= 0 or w <= 0:
        raise InvalidArgumentError(
            f"bbox_rotate: input_shape needs positive H and W, got {shape.tolist()}."
        )
    return h, w


def _rotate_canvas(a: Vals, h: int, w: int) -> tuple[int, int]:
    """The output canvas (height, width): ``size``, the image (``keep_size``) or the expanded
    canvas ``rotate`` makes."""
    size = None if a["size"] is None else np.asarray(a["size"], np.float64).reshape(-1)
    if size is not None and size.size:
        if a["keep_size"]:
            raise InvalidArgumentError("bbox_rotate: keep_size and size are mutually exclusive.")
        if size.size != 2 or not np.isfinite(size).all() or (size < 1).any():
            raise InvalidArgumentError(
                f"bbox_rotate: size must be two positive numbers (height, width), got "
                f"{size.tolist()}."
            )
        return int(size[0]), int(size[1])
    if a["keep_size"]:
        return h, w
    return rotated_canvas_size(h, w, a["angle"])


def rotate_boxes(b: np.ndarray, a: Vals) -> tuple[np.ndarray, np.ndarray]:
    """Boxes ``[N, 4]`` rotated with their image by ``a["angle"]`` degrees counter-clockwise
    about its centre, in the output canvas (``mode``: the rotated box's bounding box, the box's
    own extents, swapped past 45 degrees, or halfway between); and the indices of the boxes
    kept (those of which at least ``remove_threshold`` of the area lies inside the canvas)."""
    layout, mode, thr = a["bbox_layout"], a["mode"], a["remove_threshold"]
    if layout not in ("xyXY", "xyWH"):
        raise InvalidArgumentError(
            f"bbox_rotate: bbox_layout must be 'xyXY' or 'xyWH', got {layout!r}."
        )
    if mode not in _ROTATE_MODES:
        raise InvalidArgumentError(
            f"bbox_rotate: mode must be one of {', '.join(_ROTATE_MODES)}, got {mode!r}."
        )
    if not 0 <= thr <= 1:
        raise InvalidArgumentError(f"bbox_rotate: remove_threshold must be in [0, 1], got {thr}.")
    if not np.isfinite(a["angle"]):
        raise InvalidArgumentError(f"bbox_rotate: angle must be finite, got {a['angle']}.")
    h, w = _rotate_hw(a)
    ch, cw = _rotate_canvas(a, h, w)
    x = b.astype(np.float64)
    lt = x[:, :2]
    rb = x[:, 2:] if layout == "xyXY" else lt + x[:, 2:]
    img = np.array([w, h], np.float64)
    canvas = np.array([cw, ch], np.float64)
    if a["bbox_normalized"]:
        lt, rb = lt * img, rb * img
    centre, half = (lt + rb) / 2 - img / 2, (rb - lt) / 2
    t = dali_radians(a["angle"])
    c, s = np.cos(t), np.sin(t)
    rot = np.array([[c, s], [-s, c]])
    centre = centre @ rot.T + canvas / 2
    grown = half @ np.abs(rot).T
    if mode != "expand":  # "fixed" keeps the size, turned a quarter when the box mostly is
        kept = half[:, ::-1] if abs(s) > abs(c) else half
        half = kept if mode == "fixed" else (grown + kept) / 2
    else:
        half = grown
    lo, hi = centre - half, centre + half
    clo, chi = np.clip(lo, 0, canvas), np.clip(hi, 0, canvas)
    area = np.prod(hi - lo, axis=1)
    inside = np.prod(chi - clo, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(area > 0, inside / area, 1.0)
    keep = np.flatnonzero(frac >= thr)
    clo, chi = clo[keep], chi[keep]
    if a["bbox_normalized"]:
        clo, chi = clo / canvas, chi / canvas
    out = np.concatenate([clo, chi if layout == "xyXY" else chi - clo], 1)
    return out.astype(F32), keep


def bbox_rotate(kc: KernelContext, ins: list[Batch | None], v: Vals) -> tuple[Batch, Batch]:
    """``bbox_rotate``: boxes (and their labels, when given) of rotated images."""
    bx, lb = ins[0], ins[1] if len(ins) > 1 else None
    assert bx is not None
    vals = _vals(v, kc.n)

    def one(i: int) -> tuple[np.ndarray, np.ndarray]:
        b = boxes_of(bx._samples[i], "bbox_rotate: bboxes")
        if lb is None:
            return rotate_boxes(b, vals[i])[0], np.zeros(0, np.int32)
        lab = np.asarray(lb._samples[i])
        if lab.ndim not in (1, 2) or lab.shape[0] != b.shape[0] or lab.size != b.shape[0]:
            raise ShapeError(
                f"bbox_rotate: labels must have the shape [N] or [N, 1] for {b.shape[0]} boxes, "
                f"got {list(lab.shape)}."
            )
        out, keep = rotate_boxes(b, vals[i])
        return out, lab[keep]

    res = kc.map(one, parallel=False)
    labels_dt = lb._dtype if lb is not None else _dt.int32
    return (
        _wrap(kc, [r[0] for r in res], _dt.float32),
        Batch._wrap([r[1] for r in res], labels_dt, None, kc.device),
    )


# --- box_encoder --------------------------------------------------------------------------------
def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every ltrb box of ``a`` (rows) with every ltrb box of ``b`` (columns), float32."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0, inter / union, 0)
    return iou.astype(F32)


def match_anchors(iou: np.ndarray, criteria: float) -> np.ndarray:
    """The box matched to each anchor (``-1``: none), SSD style.

    Each anchor takes its best box when that IoU is above ``criteria``; then each box claims its
    own best anchor (boxes in order, later boxes win a shared anchor).
    """
    n_boxes, n_anchors = iou.shape
    match = np.full(n_anchors, -1, np.int64)
    if n_boxes == 0:
        return match
    best_box = iou.argmax(axis=0)
    best_iou = iou[best_box, np.arange(n_anchors)] if n_boxes > 1 else iou[0]
    ok = best_iou > criteria
    match[ok] = best_box[ok]
    match[iou.argmax(axis=1)] = np.arange(n_boxes)
    return match


class AnchorSet:
    """Anchors ``[M, 4]`` (ltrb) with what encoding needs of them, computed once per anchor set
    and scale: their columns and areas (for the IoU), their centres and sizes after scaling, and
    the output of an unmatched anchor (itself, or zeros with offsets)."""

    __slots__ = ("area", "centre", "cols", "ltrb", "plain", "size")

    def __init__(self, anchors: np.ndarray, scale: float) -> None:
        a = np.ascontiguousarray(anchors, F32)
        self.ltrb = a
        self.cols = [np.ascontiguousarray(a[:, k]) for k in range(4)]
        self.area = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
        sa = a * F32(scale)
        self.centre = (sa[:, :2] + sa[:, 2:]) * F32(0.5)
        self.size = sa[:, 2:] - sa[:, :2]
        self.plain = np.concatenate([self.centre, self.size], 1)

    def match(self, b: np.ndarray, criteria: float) -> np.ndarray:
        """The box of ``b`` (ltrb ``[N, 4]``) matched to each anchor, as :func:`match_anchors`
        gives for :func:`iou_matrix`, computed one box at a time (no ``[N, M]`` arrays)."""
        x0, y0, x1, y1 = self.cols
        m = x0.shape[0]
        if len(b) and len(b) * m <= _DENSE_IOU:
            return self._match_dense(b, criteria)
        w, h, tmp = np.empty(m, F32), np.empty(m, F32), np.empty(m, F32)
        best, arg = np.empty(m, F32), np.zeros(m, np.int64)
        claimed = np.empty(len(b), np.int64)
        for k, (l, t, r, bt) in enumerate(b):
            np.minimum(x1, r, out=w)
            w -= np.maximum(x0, l, out=tmp)
            np.maximum(w, 0, out=w)
            np.minimum(y1, bt, out=h)
            h -= np.maximum(y0, t, out=tmp)
            np.maximum(h, 0, out=h)
            w *= h  # the intersections
            np.add(self.area, (r - l) * (bt - t), out=h)
            h -= w  # the unions
            iou = np.divide(w, h, out=tmp, where=h > 0)
            iou[h <= 0] = 0
            claimed[k] = iou.argmax()
            if k == 0:
                best[...] = iou
            else:
                np.copyto(arg, k, where=iou > best)
                np.maximum(best, iou, out=best)
        match = np.where(best > criteria, arg, -1)
        match[claimed] = np.arange(len(b))
        return match

    def _match_dense(self, b: np.ndarray, criteria: float) -> np.ndarray:
        """:meth:`match` through the whole ``[N, M]`` IoU matrix (few boxes and anchors): the
        same float32 operations in the same order, so the same matches."""
        x0, y0, x1, y1 = self.cols
        b = np.asarray(b, F32)
        l, t, r, bt = (b[:, k : k + 1] for k in range(4))
        w = np.maximum(np.minimum(x1, r) - np.maximum(x0, l), F32(0))
        h = np.maximum(np.minimum(y1, bt) - np.maximum(y0, t), F32(0))
        inter = w * h
        union = (self.area + (r - l) * (bt - t)) - inter
        iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        best, arg = iou.max(axis=0), iou.argmax(axis=0)  # the first box of the best IoU
        match = np.where(best > criteria, arg, -1)
        match[iou.argmax(axis=1)] = np.arange(len(b))
        return match


#: Box-anchor pairs per sample from which the samples are encoded on the pool (fewer: the
#: thread hand-offs cost more than they save).
_PARALLEL_PAIRS = 1 << 14
#: Up to this many box-anchor pairs, :meth:`AnchorSet.match` builds the whole IoU matrix.
_DENSE_IOU = 1 << 17
_ANCHOR_SETS: dict[tuple[bytes, float], AnchorSet] = {}


def anchor_set(anchors: np.ndarray, scale: float) -> AnchorSet:
    """The :class:`AnchorSet` of ``anchors`` and ``scale`` (cached: a few sets are kept)."""
    key = (np.ascontiguousarray(anchors, F32).tobytes(), float(scale))
    found = _ANCHOR_SETS.get(key)
    if found is None:
        if len(_ANCHOR_SETS) >= 8:
            _ANCHOR_SETS.pop(next(iter(_ANCHOR_SETS)))
        found = _ANCHOR_SETS[key] = AnchorSet(anchors, scale)
    return found


def encode_boxes(
    boxes: np.ndarray,
    labels: np.ndarray,
    anchors: np.ndarray | AnchorSet,
    criteria: float,
    offset: bool,
    scale: float,
    means: np.ndarray,
    stds: np.ndarray,
    out: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Encoded boxes ``[M, 4]`` (centre and size) and labels ``[M]`` for ``M`` anchors.

    Only the matched anchors are computed from their boxes; the others are copied from the
    anchor set. ``out``: arrays to write the results into.
    """
    aset = anchors if isinstance(anchors, AnchorSet) else anchor_set(anchors, scale)
    m = aset.ltrb.shape[0]
    enc, out_labels = out if out is not None else (np.empty((m, 4), F32), None)
    if out_labels is None:
        out_labels = np.empty(m, labels.dtype)
    match = aset.match(boxes, criteria) if len(boxes) else np.full(m, -1)
    idx = np.flatnonzero(match >= 0)
    which = match[idx]
    out_labels[...] = 0
    out_labels[idx] = labels[which]
    src = boxes[which].astype(F32) * F32(scale)
    c = (src[:, :2] + src[:, 2:]) * F32(0.5)
    wh = src[:, 2:] - src[:, :2]
    if not offset:
        enc[...] = aset.plain
        enc[idx, :2] = c
        enc[idx, 2:] = wh
        return enc, out_labels
    ac, awh = aset.centre[idx], aset.size[idx]
    enc[...] = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        enc[idx, :2] = ((c - ac) / awh - means[:2]) / stds[:2]
        enc[idx, 2:] = (np.log(wh / awh) - means[2:]) / stds[2:]
    return enc, out_labels


def box_encoder(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch, Batch]:
    """``box_encoder`` on numpy boxes: every sample written into one dense output."""
    anchors, means, stds = check_encoder_args(v)
    aset = anchor_set(anchors, v["scale"])
    bx, lb = ins
    m = anchors.shape[0]
    enc = np.empty((kc.n, m, 4), F32)
    labels_out = np.empty((kc.n, m), lb._dtype.numpy)

    def one(i: int) -> None:
        b = boxes_of(bx._samples[i])
        lab = np.asarray(lb._samples[i]).reshape(-1)
        if lab.shape[0] != b.shape[0]:
            raise ShapeError(f"got {b.shape[0]} boxes and {lab.shape[0]} labels.")
        encode_boxes(b, lab, aset, v["criteria"], v["offset"], v["scale"], means, stds,
                     out=(enc[i], labels_out[i]))  # fmt: skip

    boxes = sum(len(np.asarray(s)) for s in bx._samples)
    kc.map(one, parallel=m * max(1, boxes // max(kc.n, 1)) >= _PARALLEL_PAIRS)
    return (
        Batch._wrap(split_dense(enc), _dt.float32, None, kc.device, dense=enc),
        Batch._wrap(split_dense(labels_out), lb._dtype, None, kc.device, dense=labels_out),
    )


# --- random_bbox_crop ---------------------------------------------------------------------------
_START, _END, _SIZE = "xyz", "XYZ", "WHD"


def bbox_layout_of(layout: str, ltrb: bool, ndim: int) -> str:
    """The boxes' layout: ``layout`` or the default of ``ltrb`` (``xyXY`` / ``xyWH``…)."""
    if layout:
        letters = set(layout)
        starts = _START[:ndim]
        ok = len(layout) == 2 * ndim and set(starts) <= letters
        ok = ok and (set(_END[:ndim]) <= letters or set(_SIZE[:ndim]) <= letters)
        if not ok:
            raise InvalidArgumentError(
                f"random_bbox_crop: bbox_layout {layout!r} does not describe {ndim}-D boxes; "
                f"use e.g. {starts + _END[:ndim]!r} or {starts + _SIZE[:ndim]!r}."
            )
        return layout
    return _START[:ndim] + (_END[:ndim] if ltrb else _SIZE[:ndim])


def to_ltrb(b: np.ndarray, layout: str, ndim: int) -> np.ndarray:
    """Boxes of ``layout`` as ``[starts..., ends...]`` in x, y(, z) order."""
    out = np.empty_like(b)
    for d in range(ndim):
        s = b[:, layout.index(_START[d])]
        out[:, d] = s
        out[:, ndim + d] = (
            b[:, layout.index(_END[d])] if _END[d] in layout else s + b[:, layout.index(_SIZE[d])]
        )
    return out


def from_ltrb(b: np.ndarray, layout: str, ndim: int) -> np.ndarray:
    """Inverse of :func:`to_ltrb`."""
    out = np.empty_like(b)
    for d in range(ndim):
        out[:, layout.index(_START[d])] = b[:, d]
        if _END[d] in layout:
            out[:, layout.index(_END[d])] = b[:, ndim + d]
        else:
            out[:, layout.index(_SIZE[d])] = b[:, ndim + d] - b[:, d]
    return out


def _shape_xyz(v: Any, layout: str, ndim: int, what: str) -> np.ndarray | None:
    """An ``input_shape``/``crop_shape`` given in ``shape_layout`` order, in x, y(, z) order."""
    if v is None:
        return None
    a = np.asarray(v, np.float64).reshape(-1)
    if a.size != ndim or (a <= 0).any():
        raise InvalidArgumentError(
            f"random_bbox_crop: {what} needs {ndim} positive extents, got {a.tolist()}."
        )
    lay = layout or _SIZE[:ndim]
    if sorted(lay) != sorted(_SIZE[:ndim]):
        raise InvalidArgumentError(
            f"random_bbox_crop: shape_layout {layout!r} must order the letters {_SIZE[:ndim]!r}."
        )
    return np.array([a[lay.index(_SIZE[d])] for d in range(ndim)])


def overlap_metric(
    crop: np.ndarray, boxes: np.ndarray, ndim: int, kind: str, vol: np.ndarray | None = None
) -> np.ndarray:
    """IoU of ``crop`` with each box (``kind="iou"``) or the fraction of each box it covers.
    ``vol``: the boxes' volumes (:func:`box_volumes`), when already known."""
    ext = np.minimum(boxes[:, ndim:], crop[ndim:])
    ext -= np.maximum(boxes[:, :ndim], crop[:ndim])
    np.maximum(ext, 0, out=ext)
    inter = ext[:, 0]
    for d in range(1, ndim):
        inter = inter * ext[:, d]
    if vol is None:
        vol = box_volumes(boxes, ndim)
    den = vol + np.prod(crop[ndim:] - crop[:ndim]) - inter if kind == "iou" else vol
    return np.divide(inter, den, out=np.zeros_like(inter), where=den > 0)


def box_volumes(boxes: np.ndarray, ndim: int) -> np.ndarray:
    """The volume (area) of each ltrb box, its extents multiplied in axis order."""
    size = boxes[:, ndim:] - boxes[:, :ndim]
    vol = size[:, 0]
    for d in range(1, ndim):
        vol = vol * size[:, d]
    return vol


def _keep(
    crop: np.ndarray,
    boxes: np.ndarray,
    ndim: int,
    prune: float | None,
    centres: np.ndarray | None = None,
    vol: np.ndarray | None = None,
) -> np.ndarray:
    if prune is None:
        c = (boxes[:, :ndim] + boxes[:, ndim:]) / 2 if centres is None else centres
        return np.all((c >= crop[:ndim]) & (c <= crop[ndim:]), axis=1)
    return overlap_metric(crop, boxes, ndim, "overlap", vol) >= prune


def window_size(
    gen: np.random.Generator, scaling: np.ndarray, ar: np.ndarray, extent: np.ndarray, ndim: int
) -> np.ndarray | None:
    """A relative window size: x uniform in ``scaling``, the others from aspect ratios (x over
    the other axis, in pixels when ``extent`` is the image size) uniform in ``ar``'s pairs;
    ``None`` when a derived size falls outside ``scaling`` or the image."""
    lo_s, hi_s = float(scaling[0]), float(scaling[1])
    pairs = ar.reshape(-1, 2).tolist()
    x = gen.uniform(lo_s, hi_s)
    size = [x]
    for d in range(1, ndim):
        lo, hi = pairs[d - 1 if len(pairs) > 1 else 0]
        r = gen.uniform(lo, hi)
        size.append(x * float(extent[0]) / (r * float(extent[d])))
    if any(not lo_s <= v <= hi_s for v in size[1:]) or any(v > 1 for v in size):
        return None
    return np.array(size)


#: Attempts ``random_bbox_crop`` makes with ``total_num_attempts=-1`` before it gives up.
MAX_TOTAL_ATTEMPTS = 10_000


def crop_settings(a: Vals, ndim: int) -> Vals:
    """The checked, converted arguments of ``random_bbox_crop`` for ``ndim``-D boxes."""
    in_shape = _shape_xyz(a["input_shape"], a["shape_layout"], ndim, "input_shape")
    crop_shape = _shape_xyz(a["crop_shape"], a["shape_layout"], ndim, "crop_shape")
    if crop_shape is not None and in_shape is None:
        raise InvalidArgumentError("random_bbox_crop: crop_shape needs input_shape.")
    thresholds = [float(t) for t in np.atleast_1d(a["thresholds"])]
    scaling = np.asarray(a["scaling"], np.float64).reshape(-1)
    ar = np.asarray(a["aspect_ratio"], np.float64).reshape(-1)
    if scaling.size != 2 or not 0 < scaling[0] <= scaling[1]:
        raise InvalidArgumentError(
            f"random_bbox_crop: scaling must be [lo, hi] with 0 < lo <= hi, got {scaling.tolist()}."
        )
    if ar.size not in (2, 2 if ndim == 2 else 6) or (ar <= 0).any() or (ar[0::2] > ar[1::2]).any():
        raise InvalidArgumentError(
            f"random_bbox_crop: aspect_ratio must be [lo, hi] pairs with 0 < lo <= hi, got "
            f"{ar.tolist()}."
        )
    if a["threshold_type"] not in ("iou", "overlap"):
        raise InvalidArgumentError(
            f"random_bbox_crop: threshold_type must be 'iou' or 'overlap', got "
            f"{a['threshold_type']!r}."
        )
    if a["num_attempts"] < 1:
        raise InvalidArgumentError("random_bbox_crop: num_attempts must be at least 1.")
    options: list[float | None] = list(thresholds)
    if a["allow_no_crop"] and crop_shape is None:
        options.append(None)
    if not options:
        raise InvalidArgumentError("random_bbox_crop: thresholds is empty and allow_no_crop off.")
    total = a["total_num_attempts"]
    return {
        "in_shape": in_shape,
        "crop_shape": crop_shape,
        "scaling": scaling,
        "ar": ar,
        "options": options,
        "total": MAX_TOTAL_ATTEMPTS if total is None or total < 0 else total,
        "extent": in_shape if in_shape is not None else np.ones(ndim),
        "full": np.concatenate([np.zeros(ndim), np.ones(ndim)]),
    }


def bbox_crop_one(
    gen: np.random.Generator, boxes: np.ndarray, a: Vals, ndim: int, settings: Vals | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One sample of ``random_bbox_crop``: ``(anchor, shape, boxes, kept indices)``.

    ``boxes`` are ltrb (x, y(, z) order); anchor and shape are relative, x-first, and so are the
    returned boxes (relative to the crop window, clipped to it). ``settings``: the
    :func:`crop_settings` of ``a`` (computed when not given).
    """
    st = crop_settings(a, ndim) if settings is None else settings
    in_shape, crop_shape, full = st["in_shape"], st["crop_shape"], st["full"]
    options, total = st["options"], st["total"]
    prune = a["bbox_prune_threshold"]
    every = a["all_boxes_above_threshold"]
    kind = a["threshold_type"]
    vol = box_volumes(boxes, ndim)  # the boxes' own quantities, once for every attempt
    centres = (boxes[:, :ndim] + boxes[:, ndim:]) / 2 if prune is None else None
    tried = 0
    while tried < total:
        t = options[int(gen.integers(len(options)))]
        if t is None:
            return full[:ndim], full[ndim:], boxes, np.arange(len(boxes))
        for _ in range(a["num_attempts"]):
            if tried >= total:
                break
            tried += 1
            if crop_shape is not None:
                size = np.minimum(crop_shape / in_shape, 1.0)
                start = np.floor(gen.random(ndim) * (in_shape - crop_shape + 1)) / in_shape
                start = np.clip(start, 0, 1 - size)
            else:
                drawn = window_size(gen, st["scaling"], st["ar"], st["extent"], ndim)
                if drawn is None:
                    continue
                size = drawn
                start = gen.random(ndim) * (1 - size)
            crop = np.concatenate([start, start + size])
            if len(boxes):
                m = overlap_metric(crop, boxes, ndim, kind, vol)
                ok = (m >= t).all() if every else (m >= t).any()
                if not ok:
                    continue
                keep = _keep(crop, boxes, ndim, prune, centres, vol)
                if not keep.any():
                    continue
            else:
                keep = np.zeros(0, bool)
            idx = np.flatnonzero(keep)
            kept = boxes[idx]
            lo = np.clip(kept[:, :ndim], crop[:ndim], crop[ndim:])
            hi = np.clip(kept[:, ndim:], crop[:ndim], crop[ndim:])
            rel = np.concatenate([(lo - start) / size, (hi - start) / size], 1)
            return start, size, np.clip(rel, 0, 1), idx
    if not a["quiet"]:
        warnings.warn(
            f"random_bbox_crop: no crop window met the constraints in {tried} attempts; the "
            "whole image is used.",
            stacklevel=2,
        )
    return full[:ndim], full[ndim:], boxes, np.arange(len(boxes))


def random_bbox_crop(kc: KernelContext, ins: list[Batch | None], v: Vals) -> tuple[Batch, ...]:
    """``random_bbox_crop``: every sample's window drawn in sample order."""
    gen = kc.generator()
    bx, lb = ins
    vals = _vals(v, kc.n)
    settings: dict[tuple[int, int], Vals] = {}  # one per argument set (all samples, usually)
    anchors, shapes, outb, outl, outi = [], [], [], [], []
    for i in range(kc.n):
        a = vals[i]
        try:
            raw = np.asarray(bx._samples[i])
            width = raw.shape[-1] if raw.ndim == 2 and raw.shape[0] else 4
            if width not in (4, 6):
                raise ShapeError(
                    f"random_bbox_crop: boxes must have the shape [N, 4] or [N, 6], got "
                    f"{list(raw.shape)}."
                )
            ndim = width // 2
            layout = bbox_layout_of(a["bbox_layout"], a["ltrb"], ndim)
            b = boxes_of(raw, "random_bbox_crop: boxes", width)
            lab = None if lb is None else np.asarray(lb._samples[i])
            if lab is not None and lab.shape[:1] != (b.shape[0],):
                raise ShapeError(
                    f"random_bbox_crop: got {b.shape[0]} boxes and labels of shape "
                    f"{list(lab.shape)}."
                )
            ltrb = to_ltrb(b.astype(np.float64), layout, ndim)
            key = (id(a), ndim)
            if key not in settings:
                settings[key] = crop_settings(a, ndim)
            start, size, rel, idx = bbox_crop_one(gen, ltrb, a, ndim, settings[key])
        except Exception as e:
            from headrace._dispatch.kernel_context import annotate

            raise annotate(e, kc.name, i, kc.source(i)) from None
        lay = a["shape_layout"] or _SIZE[:ndim]
        order = [_SIZE.index(c) for c in lay]
        if a["crop_shape"] is not None:  # absolute windows
            in_shape = _shape_xyz(a["input_shape"], a["shape_layout"], ndim, "input_shape")
            start, size = np.round(start * in_shape), np.round(size * in_shape)
        anchors.append(np.asarray(start, F32)[order])
        shapes.append(np.asarray(size, F32)[order])
        outb.append(from_ltrb(rel, layout, ndim).astype(F32))
        outi.append(idx.astype(np.int32))
        outl.append(outi[-1] if lab is None else lab[idx])  # no labels: a placeholder
    res = [
        _wrap(kc, anchors, _dt.float32),
        _wrap(kc, shapes, _dt.float32),
        _wrap(kc, outb, _dt.float32),
        Batch._wrap(outl, _dt.int32 if lb is None else lb._dtype, None, kc.device),
        _wrap(kc, outi, _dt.int32),
    ]
    return tuple(res)


# --- roi_random_crop / random_crop_generator ----------------------------------------------------
def roi_crop_anchor(
    gen: np.random.Generator,
    crop: Sequence[int],
    roi_start: Sequence[int],
    roi_end: Sequence[int],
    in_shape: Sequence[int] | None,
) -> np.ndarray:
    """A crop anchor (int64) such that the crop holds the ROI (or lies in it, when smaller),
    and stays inside ``in_shape`` when given and possible."""
    out = []
    for d in range(len(crop)):
        c, s, e = int(crop[d]), int(roi_start[d]), int(roi_end[d])
        if e - s <= c:
            lo, hi = e - c, s
        else:
            lo, hi = s, e - c
        if in_shape is not None:
            lo2, hi2 = max(lo, 0), min(hi, int(in_shape[d]) - c)
            if lo2 <= hi2:
                lo, hi = lo2, hi2
        out.append(int(gen.integers(lo, hi + 1)))
    return np.asarray(out, np.int64)


def roi_random_crop(kc: KernelContext, ins: list[Batch | None], v: Vals) -> tuple[Batch]:
    """``roi_random_crop``: one anchor per sample."""
    gen = kc.generator()
    x = ins[0] if ins else None
    vals = _vals(v, kc.n)
    outs = []
    for i in range(kc.n):
        a = vals[i]
        try:
            if x is not None:
                shape: Sequence[int] | None = tuple(x._samples[i].shape)
            elif a["in_shape"] is not None:
                shape = [int(s) for s in np.atleast_1d(a["in_shape"])]
            else:
                shape = None
            crop = [int(c) for c in np.atleast_1d(a["crop_shape"])]
            start = [int(s) for s in np.atleast_1d(a["roi_start"])]
            if (a["roi_end"] is None) == (a["roi_shape"] is None):
                raise InvalidArgumentError("give exactly one of roi_end and roi_shape.")
            if a["roi_end"] is not None:
                end = [int(s) for s in np.atleast_1d(a["roi_end"])]
            else:
                end = [s + int(e) for s, e in zip(start, np.atleast_1d(a["roi_shape"]))]
            nd = len(crop)
            if len(start) != nd or len(end) != nd or (shape is not None and len(shape) != nd):
                raise InvalidArgumentError(
                    f"crop_shape, roi_start, roi_end/roi_shape and the input shape need the same "
                    f"number of dimensions (got {nd}, {len(start)}, {len(end)}, "
                    f"{None if shape is None else len(shape)})."
                )
            if any(c < 0 for c in crop) or any(e < s for s, e in zip(start, end)):
                raise InvalidArgumentError(
                    f"crop_shape must be non-negative and roi_end >= roi_start (got {crop}, "
                    f"{start}, {end})."
                )
            outs.append(roi_crop_anchor(gen, crop, start, end, shape))
        except Exception as e:
            from headrace._dispatch.kernel_context import annotate

            raise annotate(e, kc.name, i, kc.source(i)) from None
    return (_wrap(kc, outs, _dt.int64),)


def random_crop_generator(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch, Batch]:
    """``random_crop_generator``: the windows the ops layer drew (``v["windows"]``)."""
    wins = v["windows"]
    anchors = [np.asarray(w[0], np.int32) for w in wins]
    shapes = [np.asarray(w[1], np.int32) for w in wins]
    return _wrap(kc, anchors, _dt.int32), _wrap(kc, shapes, _dt.int32)


# --- multi_paste --------------------------------------------------------------------------------
def multi_paste(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``multi_paste`` on numpy images: the regions ``v["plans"]`` lists, pasted in order."""
    from headrace._core.saturate import saturate

    dt: _dt.DType = v["dtype"]
    np_dt = dt.numpy

    def one(i: int) -> np.ndarray:
        shape, regions = v["plans"][i]
        out = np.zeros(shape, np_dt)
        for k, j, iy, ix, h, w, oy, ox in regions:
            src = np.asarray(ins[k]._samples[j])[iy : iy + h, ix : ix + w]
            out[oy : oy + h, ox : ox + w] = src if src.dtype == np_dt else saturate(src, np_dt)
        return out

    return (Batch._wrap(kc.map(one), dt, "HWC", kc.device),)
