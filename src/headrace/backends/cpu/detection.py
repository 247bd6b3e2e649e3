"""NumPy kernels of the bounding-box operators (``ops/detection.py``).

Boxes are float32 ``[N, 4]`` arrays (``[N, 6]`` for 3-D boxes where an operator allows them),
relative coordinates unless said otherwise. Random kernels draw from the call's generator in
sample order, except ``random_bbox_crop``, whose samples each draw from their own sub-stream.

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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch, split_dense
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace._rng import uniform_substreams
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


def last_argmax(a: np.ndarray, axis: int) -> np.ndarray:
    """The index of the *last* maximum along ``axis`` (the reference breaks IoU ties that way).

    Examples
    --------
    >>> last_argmax(np.array([[1, 3, 3], [2, 0, 2]]), 1).tolist()
    [2, 2]
    """
    return a.shape[axis] - 1 - np.flip(a, axis).argmax(axis)


def match_anchors(iou: np.ndarray, criteria: float) -> np.ndarray:
    """The box matched to each anchor (``-1``: none), SSD style.

    Each anchor takes its best box when that IoU is above ``criteria``; then each box claims its
    own best anchor (boxes in order, later boxes win a shared anchor); ties of IoU go to the
    later box / anchor, as in the reference.
    """
    n_boxes, n_anchors = iou.shape
    match = np.full(n_anchors, -1, np.int64)
    if n_boxes == 0:
        return match
    best_box = last_argmax(iou, 0)
    best_iou = iou[best_box, np.arange(n_anchors)] if n_boxes > 1 else iou[0]
    ok = best_iou > criteria
    match[ok] = best_box[ok]
    match[last_argmax(iou, 1)] = np.arange(n_boxes)
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
            claimed[k] = m - 1 - iou[::-1].argmax()  # (the last anchor of the best IoU)
            if k == 0:
                best[...] = iou
            else:
                np.copyto(arg, k, where=iou >= best)  # (ties: the later box)
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
        best, arg = iou.max(axis=0), last_argmax(iou, 0)  # the last box of the best IoU
        match = np.where(best > criteria, arg, -1)
        match[last_argmax(iou, 1)] = np.arange(len(b))
        return match


#: Box-anchor pairs per sample from which the samples are encoded on the pool (fewer: the
#: thread hand-offs cost more than they save).
_PARALLEL_PAIRS = 1 << 14
#: Up to this many box-anchor pairs, :meth:`AnchorSet.match` builds the whole IoU matrix.
_DENSE_IOU = 1 << 17
#: Up to this many box-anchor pairs in a whole batch (each sample padded to the most boxes),
#: ``box_encoder`` matches and encodes the batch at once.
_BATCH_PAIRS = 1 << 20
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


def match_batch(aset: AnchorSet, boxes: list[np.ndarray], criteria: float) -> np.ndarray:
    """:meth:`AnchorSet.match` of every sample at once: ``[S, M]`` box indices (``-1``: none).

    The samples' boxes are stacked into ``[S, N, 4]`` (``N`` the most boxes of a sample); the IoU
    takes the same float32 steps as :meth:`AnchorSet._match_dense`, and the rows of padding get
    an IoU of -1, so they never win an anchor nor claim one: the same matches, sample by sample.
    """
    s, m = len(boxes), aset.ltrb.shape[0]
    counts = np.array([len(b) for b in boxes], np.int64)
    n = int(counts.max()) if s else 0
    if n == 0:
        return np.full((s, m), -1, np.int64)
    stacked = np.zeros((s, n, 4), F32)
    for i, b in enumerate(boxes):
        stacked[i, : len(b)] = b
    x0, y0, x1, y1 = aset.cols
    l, t, r, bt = (stacked[:, :, k : k + 1] for k in range(4))
    w = np.maximum(np.minimum(x1, r) - np.maximum(x0, l), F32(0))
    h = np.maximum(np.minimum(y1, bt) - np.maximum(y0, t), F32(0))
    inter = w * h
    union = (aset.area + (r - l) * (bt - t)) - inter
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    real = np.arange(n) < counts[:, None]  # [S, N]
    iou[~real] = -1
    best, arg = iou.max(axis=1), last_argmax(iou, 1)  # the last box of the best IoU
    match = np.where(best > criteria, arg, -1)
    si, ki = np.nonzero(real)  # each box claims its best anchor, boxes in order
    match[si, last_argmax(iou, 2)[si, ki]] = ki
    return match


def encode_batch(aset: AnchorSet, boxes: list[np.ndarray], labels: list[np.ndarray],
                 match: np.ndarray, offset: bool, scale: float, means: np.ndarray,
                 stds: np.ndarray, enc: np.ndarray, labels_out: np.ndarray) -> None:  # fmt: skip
    """:func:`encode_boxes` of every sample at once from :func:`match_batch`'s ``match``,
    written into ``enc [S, M, 4]`` and ``labels_out [S, M]`` (the same float32 steps)."""
    si, ai = np.nonzero(match >= 0)
    starts = np.cumsum([0] + [len(b) for b in boxes[:-1]])
    which = starts[si] + match[si, ai]  # rows of the concatenated boxes
    all_boxes = np.concatenate(boxes) if boxes else np.zeros((0, 4), F32)
    labels_out[...] = 0
    if len(which):
        labels_out[si, ai] = np.concatenate(labels)[which]
    src = all_boxes[which].astype(F32) * F32(scale)
    c = (src[:, :2] + src[:, 2:]) * F32(0.5)
    wh = src[:, 2:] - src[:, :2]
    if not offset:
        enc[...] = aset.plain
        enc[si, ai, :2] = c
        enc[si, ai, 2:] = wh
        return
    ac, awh = aset.centre[ai], aset.size[ai]
    enc[...] = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        enc[si, ai, :2] = ((c - ac) / awh - means[:2]) / stds[:2]
        enc[si, ai, 2:] = (np.log(wh / awh) - means[2:]) / stds[2:]


def box_encoder(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch, Batch]:
    """``box_encoder`` on numpy boxes: every sample written into one dense output. Batches
    with at most :data:`_BATCH_PAIRS` box-anchor pairs (padded) are matched and encoded all at
    once (:func:`match_batch`, :func:`encode_batch`); larger ones sample by sample."""
    anchors, means, stds = check_encoder_args(v)
    aset = anchor_set(anchors, v["scale"])
    bx, lb = ins
    m = anchors.shape[0]
    enc = np.empty((kc.n, m, 4), F32)
    labels_out = np.empty((kc.n, m), lb._dtype.numpy)

    def checked(i: int) -> tuple[np.ndarray, np.ndarray]:
        b = boxes_of(bx._samples[i])
        lab = np.asarray(lb._samples[i]).reshape(-1)
        if lab.shape[0] != b.shape[0]:
            raise ShapeError(f"got {b.shape[0]} boxes and {lab.shape[0]} labels.")
        return b, lab

    pairs = m * max((len(np.asarray(s)) for s in bx._samples), default=0) * kc.n
    if kc.n > 1 and pairs <= _BATCH_PAIRS:
        got = kc.map(checked, parallel=False)
        boxes, labels = [g[0] for g in got], [g[1] for g in got]
        match = match_batch(aset, boxes, v["criteria"])
        encode_batch(aset, boxes, labels, match, v["offset"], v["scale"], means, stds, enc,
                     labels_out)  # fmt: skip
    else:

        def one(i: int) -> None:
            b, lab = checked(i)
            encode_boxes(b, lab, aset, v["criteria"], v["offset"], v["scale"], means, stds,
                         out=(enc[i], labels_out[i]))  # fmt: skip

        boxes_total = sum(len(np.asarray(s)) for s in bx._samples)
        kc.map(one, parallel=m * max(1, boxes_total // max(kc.n, 1)) >= _PARALLEL_PAIRS)
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


def _columns(layout: str, ndim: int) -> tuple[list[int], list[int], bool]:
    """The columns of the starts and of the ends (or sizes) of ``layout``, x first, and
    whether the latter are sizes."""
    sized = _END[0] not in layout
    second = _SIZE if sized else _END
    return [layout.index(c) for c in _START[:ndim]], [layout.index(c) for c in second[:ndim]], sized


def to_ltrb(b: np.ndarray, layout: str, ndim: int) -> np.ndarray:
    """Boxes of ``layout`` as ``[starts..., ends...]`` in x, y(, z) order."""
    starts, seconds, sized = _columns(layout, ndim)
    out = b[:, starts + seconds]
    if sized:
        out[:, ndim:] += out[:, :ndim]
    return out


def from_ltrb(b: np.ndarray, layout: str, ndim: int) -> np.ndarray:
    """Inverse of :func:`to_ltrb`."""
    starts, seconds, sized = _columns(layout, ndim)
    out = np.empty_like(b)
    out[:, starts] = b[:, :ndim]
    out[:, seconds] = b[:, ndim:] - b[:, :ndim] if sized else b[:, ndim:]
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


def box_volumes(boxes: np.ndarray, ndim: int) -> np.ndarray:
    """The volume (area) of each ltrb box (last axis), its extents multiplied in axis order."""
    size = boxes[..., ndim:] - boxes[..., :ndim]
    vol = size[..., 0]
    for d in range(1, ndim):
        vol = vol * size[..., d]
    return vol


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


#: Attempts drawn at once for each sample still without a window (whole threshold choices of
#: ``num_attempts`` attempts each, at least this many); most samples find theirs in the first.
_BLOCK = 16
_BLOCK_MAX = 1024
#: Largest ``samples x attempts x boxes`` evaluated in one pass (bounds the temporaries).
_PASS_ELEMENTS = 1 << 18


def _windows(u: np.ndarray, st: Vals, ndim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, size, valid)`` of attempts from uniform draws ``u`` (``(..., 2 ndim)``):
    relative windows, x first. Without ``crop_shape`` x is uniform in ``scaling`` and the other
    extents follow from aspect ratios (x over the other axis, in pixels when the image size is
    known) uniform in their pairs; an attempt is not ``valid`` when a derived extent falls
    outside ``scaling`` or the image."""
    crop_shape, in_shape = st["crop_shape"], st["in_shape"]
    if crop_shape is not None:
        size = np.broadcast_to(np.minimum(crop_shape / in_shape, 1.0), (*u.shape[:-1], ndim))
        start = np.floor(u[..., :ndim] * (in_shape - crop_shape + 1)) / in_shape
        return np.clip(start, 0, 1 - size), size, np.ones(u.shape[:-1], bool)
    lo_s, hi_s = float(st["scaling"][0]), float(st["scaling"][1])
    pairs, ext = st["ar"].reshape(-1, 2).tolist(), st["extent"]
    x = lo_s + (hi_s - lo_s) * u[..., 0]
    size = np.empty((*u.shape[:-1], ndim))
    size[..., 0] = x
    valid = x <= 1
    for d in range(1, ndim):
        lo, hi = pairs[d - 1 if len(pairs) > 1 else 0]
        v = x * float(ext[0]) / ((lo + (hi - lo) * u[..., d]) * float(ext[d]))
        size[..., d] = v
        valid &= (v >= lo_s) & (v <= hi_s) & (v <= 1)
    return u[..., ndim:] * (1 - size), size, valid


def _overlaps(lo: np.ndarray, hi: np.ndarray, boxes: np.ndarray, vol: np.ndarray, ndim: int,
              iou: bool) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(metric, covered)`` of windows ``[lo, hi)`` (``(n, k, ndim)``) against padded boxes
    (``(n, 1, N, 2 ndim)``): IoU (``iou``) or the fraction of each box inside the window, and
    the latter in any case (for pruning). One coordinate at a time: NumPy broadcasts an
    innermost axis of 2 or 3 values several times slower."""
    inter = np.empty(0)
    for d in range(ndim):
        ext = np.minimum(boxes[..., ndim + d], hi[:, :, None, d])
        ext -= np.maximum(boxes[..., d], lo[:, :, None, d])
        np.maximum(ext, 0, out=ext)
        inter = ext if d == 0 else inter * ext
    covered = np.divide(inter, vol, out=np.zeros_like(inter), where=vol > 0)
    if not iou:
        return covered, covered
    wvol = box_volumes(np.concatenate([lo, hi], -1), ndim)[..., None]
    den = vol + wvol - inter
    return np.divide(inter, den, out=np.zeros_like(inter), where=den > 0), covered


def _centred(lo: np.ndarray, hi: np.ndarray, boxes: np.ndarray, ndim: int) -> np.ndarray:
    """Whether each padded box's centre lies in each window (shapes as :func:`_overlaps`)."""
    inside = np.empty(0)
    for d in range(ndim):
        c = (boxes[..., d] + boxes[..., ndim + d]) / 2
        ok = (c >= lo[:, :, None, d]) & (c <= hi[:, :, None, d])
        inside = ok if d == 0 else inside & ok
    return inside


def bbox_crops(
    draw: Callable[[int, int, tuple[int, int]], np.ndarray],
    ids: list[int],
    boxes: list[np.ndarray],
    a: Vals,
    ndim: int,
    st: Vals,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """``random_bbox_crop`` for samples sharing arguments ``a`` (:func:`crop_settings` ``st``):
    per sample ``(anchor, shape, boxes, kept indices)``.

    ``boxes`` are ltrb float64 (x, y(, z) order); anchor and shape are relative, x-first, and so
    are the returned boxes (relative to the window, clipped to it). Each sample repeats: pick a
    threshold (or no crop) among the options, try ``num_attempts`` windows; the first window
    whose overlap with the boxes meets the threshold (with at least one box kept) wins, and
    after ``total_num_attempts`` the whole image is used. The attempts of every sample still
    searching are evaluated together, a block at a time (blocks double for the samples still
    searching). ``draw(stream, part, shape)`` gives uniform draws of the call's sub-streams:
    sample ``ids[j]``'s first block is row ``ids[j]`` of one draw for all first blocks of its
    size, its later blocks come from its own sub-stream, so a sample's window does not depend
    on the other samples.
    """
    full = st["full"]
    options, total, na = st["options"], st["total"], a["num_attempts"]
    thr = np.array([np.nan if o is None else o for o in options])
    prune, every = a["bbox_prune_threshold"], a["all_boxes_above_threshold"]
    iou = a["threshold_type"] == "iou"
    first_groups = max(1, -(-_BLOCK // na))
    q = 1 + 2 * ndim  # draws per attempt: the option, then the window's
    out: list[Any] = [None] * len(boxes)
    tried = np.zeros(len(boxes), np.int64)
    passes = [0] * len(boxes)
    todo = list(range(len(boxes)))
    while todo:
        p = passes[todo[0]]  # one pass of the samples at the same block
        k = min(first_groups << p, max(first_groups, _BLOCK_MAX // na)) * na
        nmax = max(1, max(len(boxes[s]) for s in todo))
        chunk = [s for s in todo if passes[s] == p][: max(1, _PASS_ELEMENTS // (k * nmax))]
        n = len(chunk)
        padded = np.zeros((n, 1, nmax, 2 * ndim))
        mask = np.zeros((n, 1, nmax), bool)
        for j, s in enumerate(chunk):
            padded[j, 0, : len(boxes[s])] = boxes[s]
            mask[j, 0, : len(boxes[s])] = True
        if p == 0:
            rows = [ids[s] for s in chunk]
            u = draw(0, k * q, (max(rows) + 1, k, q))[rows]
        else:
            u = np.stack([draw(1 + ids[s], p, (k, q)) for s in chunk])
        pick = thr[np.minimum(u[:, ::na, 0] * len(options), len(options) - 1).astype(np.intp)]
        t = np.repeat(pick, na, axis=1)[..., None]
        nocrop = np.zeros((n, k), bool)
        nocrop[:, ::na] = np.isnan(pick)
        start, size, valid = _windows(u[..., 1:], st, ndim)
        end = start + size
        allowed = tried[chunk][:, None] + np.arange(k) < total
        metric, covered = _overlaps(start, end, padded, box_volumes(padded, ndim), ndim, iou)
        passed = metric >= t
        ok = (passed | ~mask).all(-1) if every else (passed & mask).any(-1)
        if prune is None:
            keep = _centred(start, end, padded, ndim)
        else:
            keep = covered >= prune
        keep &= mask
        empty = ~mask.any(-1)  # a sample without boxes takes any valid window
        hit = allowed & (nocrop | (valid & ~np.isnan(t[..., 0]) & (empty | ok & keep.any(-1))))
        rows = np.arange(n)
        first = hit.argmax(1)
        found = hit[rows, first]
        whole = found & nocrop[rows, first]
        lo_w, hi_w, sz = start[rows, first], end[rows, first], size[rows, first]
        r, c = np.nonzero(keep[rows, first] & (found & ~whole)[:, None])  # the kept boxes
        box = padded[r, 0, c]
        lo = np.clip(box[:, :ndim], lo_w[r], hi_w[r])
        hi = np.clip(box[:, ndim:], lo_w[r], hi_w[r])
        rel = np.concatenate([lo - lo_w[r], hi - lo_w[r]], 1)
        rel /= np.tile(sz[r], 2)
        counts = np.bincount(r, minlength=n).tolist()
        rels, idxs = _split(np.clip(rel, 0, 1, out=rel), counts), _split(c, counts)
        tried[chunk] += k * ~found
        for j, s in enumerate(chunk):
            passes[s] += 1
            if found[j] and not whole[j]:
                out[s] = (lo_w[j], sz[j], rels[j], idxs[j])
                continue
            if not found[j]:
                if tried[s] < total:
                    continue
                if not a["quiet"]:
                    warnings.warn(
                        f"random_bbox_crop: no crop window met the constraints in {total} "
                        "attempts; the whole image is used.",
                        stacklevel=3,
                    )
            out[s] = (full[:ndim], full[ndim:], boxes[s], np.arange(len(boxes[s])))
        todo = [s for s in todo if out[s] is None]
    return out


def _split(arr: np.ndarray, counts: list[int]) -> list[np.ndarray]:
    """``arr``'s rows in consecutive pieces of ``counts`` rows (views)."""
    ends = np.cumsum(counts).tolist()
    return [arr[e - c : e] for e, c in zip(ends, counts)]


def random_bbox_crop(kc: KernelContext, ins: list[Batch | None], v: Vals) -> tuple[Batch, ...]:
    """``random_bbox_crop``: the samples' boxes checked in sample order, then the samples that
    share arguments converted and given their windows together (:func:`bbox_crops`), each
    sample drawing from its own sub-stream of the call's generator."""
    draw = uniform_substreams(kc.rng_words)
    bx, lb = ins
    vals = _vals(v, kc.n)
    groups: dict[tuple[int, int], list[int]] = {}  # one per argument set (all samples, usually)
    checked: dict[tuple[int, int], tuple[str, Vals]] = {}  # its layout and crop settings
    raws: list[np.ndarray] = []
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
            b = boxes_of(raw, "random_bbox_crop: boxes", width)
            n_labels = None if lb is None else np.shape(lb._samples[i])[:1]
            if n_labels is not None and n_labels != (b.shape[0],):
                raise ShapeError(
                    f"random_bbox_crop: got {b.shape[0]} boxes and labels of shape "
                    f"{list(np.shape(lb._samples[i]))}."
                )
            key = (id(a), width // 2)
            if key not in checked:  # argument errors name the first sample that has them
                checked[key] = (
                    bbox_layout_of(a["bbox_layout"], a["ltrb"], width // 2),
                    crop_settings(a, width // 2),
                )
        except Exception as e:
            from headrace._dispatch.kernel_context import annotate

            raise annotate(e, kc.name, i, kc.source(i)) from None
        groups.setdefault(key, []).append(i)
        raws.append(b)
    anchors: list[Any] = [None] * kc.n
    shapes, outb, outi = anchors.copy(), anchors.copy(), anchors.copy()
    for key, members in groups.items():
        ndim = key[1]
        a = vals[members[0]]
        layout, st = checked[key]
        counts = [len(raws[i]) for i in members]
        every = np.concatenate([raws[i] for i in members]).astype(np.float64)
        found = bbox_crops(draw, members, _split(to_ltrb(every, layout, ndim), counts), a, ndim, st)
        starts = np.array([f[0] for f in found])
        sizes = np.array([f[1] for f in found])
        if st["crop_shape"] is not None:  # absolute windows
            starts, sizes = np.round(starts * st["in_shape"]), np.round(sizes * st["in_shape"])
        order = [_SIZE.index(c) for c in a["shape_layout"] or _SIZE[:ndim]]
        rel = np.concatenate([f[2] for f in found]) if found else np.zeros((0, 2 * ndim))
        kept = _split(from_ltrb(rel, layout, ndim).astype(F32), [len(f[3]) for f in found])
        for j, (i, f) in enumerate(zip(members, found)):
            outb[i], outi[i] = kept[j], f[3].astype(np.int32)
        for i, an, sh in zip(members, starts[:, order].astype(F32), sizes[:, order].astype(F32)):
            anchors[i], shapes[i] = an, sh
    if lb is None:  # no labels: the indices stand in (the operator drops this output)
        labels, label_type = outi, _dt.int32
    else:
        labels = [np.asarray(lb._samples[i])[outi[i]] for i in range(kc.n)]
        label_type = lb._dtype
    return (
        _wrap(kc, anchors, _dt.float32),
        _wrap(kc, shapes, _dt.float32),
        _wrap(kc, outb, _dt.float32),
        Batch._wrap(labels, label_type, None, kc.device),
        _wrap(kc, outi, _dt.int32),
    )


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
