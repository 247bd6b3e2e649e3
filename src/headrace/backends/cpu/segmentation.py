"""NumPy kernels of the segmentation operators (``ops/segmentation.py``): random_mask_pixel,
random_object_bbox and select_masks. Random kernels draw from the call's generator in sample
order.

Examples
--------
>>> m = np.array([[1, 1, 0], [0, 0, 1]], np.uint8)
>>> label_blobs(m > 0)[1]
2
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext, annotate

Vals = dict[str, Any]


def _vals(v: Vals, n: int) -> list[Vals]:
    return [sample_args(v, i) for i in range(n)] if has_per_sample(v) else [v] * n


def _wrap(kc: KernelContext, outs: list[np.ndarray], dt: _dt.DType) -> Batch:
    return Batch._wrap(outs, dt, None, kc.device)


def _each(kc: KernelContext, fn: Any) -> list[Any]:
    """``fn(i)`` for every sample in order (errors name the sample)."""
    out = []
    for i in range(kc.n):
        try:
            out.append(fn(i))
        except Exception as e:
            raise annotate(e, kc.name, i, kc.source(i)) from None
    return out


# --- random_mask_pixel --------------------------------------------------------------------------
def mask_pixel(gen: np.random.Generator, m: np.ndarray, a: Vals) -> np.ndarray:
    """A random position (int64) in ``m``: among its foreground pixels when asked and any."""
    if m.ndim == 0 or m.size == 0:
        raise ShapeError(f"the mask must be a non-empty array, got shape {list(m.shape)}.")
    if a["foreground"]:
        fg = m == a["value"] if a["value"] is not None else m > a["threshold"]
        idx = np.flatnonzero(fg)
        if idx.size:
            return np.asarray(np.unravel_index(idx[gen.integers(idx.size)], m.shape), np.int64)
    return np.asarray([gen.integers(s) for s in m.shape], np.int64)


def random_mask_pixel(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``segmentation.random_mask_pixel``."""
    gen = kc.generator()
    x = ins[0]
    vals = _vals(v, kc.n)
    outs = _each(kc, lambda i: mask_pixel(gen, np.asarray(x._samples[i]), vals[i]))
    return (_wrap(kc, outs, _dt.int64),)


# --- random_object_bbox -------------------------------------------------------------------------
def label_blobs(mask: np.ndarray) -> tuple[np.ndarray, int]:
    """Face-connected components of a boolean array of any rank: ``(labels, count)``, labels
    1..count in raster order of their first pixel, 0 outside the mask."""
    m = mask.reshape((1,) * max(0, 2 - mask.ndim) + mask.shape)
    flat = m.reshape((-1,) + m.shape[-2:])
    labels = np.zeros(flat.shape, np.int64)
    base = 0
    for k in range(flat.shape[0]):  # 4-connected labelling of every 2-D slice
        n, lab = cv2.connectedComponents(flat[k].astype(np.uint8), connectivity=4, ltype=cv2.CV_32S)
        lab = lab.astype(np.int64)
        lab[lab > 0] += base
        labels[k] = lab
        base += n - 1
    labels = labels.reshape(m.shape)
    parent = np.arange(base + 1)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = int(parent[i])
        return i

    for ax in range(m.ndim - 2):  # join the slices along the outer axes
        a = np.moveaxis(labels, ax, 0)
        lo, hi = a[:-1].reshape(-1), a[1:].reshape(-1)
        both = (lo > 0) & (hi > 0)
        for p, q in np.unique(np.stack([lo[both], hi[both]], 1), axis=0):
            rp, rq = find(int(p)), find(int(q))
            if rp != rq:
                parent[max(rp, rq)] = min(rp, rq)
    if m.ndim > 2:
        roots = np.array([find(i) for i in range(base + 1)])
    else:  # one slice: nothing was joined
        roots = np.arange(base + 1)
    flat_l = roots[labels].reshape(-1)
    # renumber 1..count in raster order of each blob's first pixel
    order = np.zeros(base + 1, np.int64)
    _, first = np.unique(flat_l, return_index=True)
    seen = flat_l[np.sort(first)]
    seen = seen[seen > 0]
    order[seen] = np.arange(1, len(seen) + 1)
    return order[flat_l].reshape(mask.shape), len(seen)


Blobs = tuple[np.ndarray, np.ndarray, np.ndarray]
"""``(start, end, size)`` of every blob: ``(count, ndim)``, ``(count, ndim)``, ``(count,)``."""


def _blob_boxes(labels: np.ndarray, count: int) -> Blobs:
    """The boxes and sizes of blobs 1..count (every label present): the pixels sorted by
    label once, then each blob's extent by one segmented min/max (not one pass per blob)."""
    nd = labels.ndim
    if count == 0:
        return np.zeros((0, nd), np.intp), np.zeros((0, nd), np.intp), np.zeros(0, np.intp)
    coords = np.nonzero(labels)
    lab = labels[coords]
    order = np.argsort(lab, kind="stable")
    starts = np.searchsorted(lab[order], np.arange(1, count + 1))
    sizes = np.diff(np.append(starts, lab.size))
    pts = np.stack(coords, 1)[order]
    lo = np.minimum.reduceat(pts, starts, axis=0)
    hi = np.maximum.reduceat(pts, starts, axis=0) + 1
    return lo, hi, sizes


def _blob_boxes_2d(mask: np.ndarray) -> Blobs:
    """:func:`_blob_boxes` of :func:`label_blobs` for a 1-D or 2-D mask, from OpenCV's
    per-component statistics (boxes and areas): no pass over the labels (a 300x400 noisy mask:
    ~0.5 ms instead of ~8). OpenCV numbers the components in raster order of their first pixel,
    as :func:`label_blobs` does (checked against it in the tests)."""
    m2 = mask.reshape((1,) * (2 - mask.ndim) + mask.shape)
    n, _, stats, _ = cv2.connectedComponentsWithStats(
        m2.astype(np.uint8), connectivity=4, ltype=cv2.CV_32S
    )
    st = stats[1:n].astype(np.intp)
    lo = st[:, [cv2.CC_STAT_TOP, cv2.CC_STAT_LEFT]]
    hi = lo + st[:, [cv2.CC_STAT_HEIGHT, cv2.CC_STAT_WIDTH]]
    k = mask.ndim
    return lo[:, 2 - k :], hi[:, 2 - k :], st[:, cv2.CC_STAT_AREA]


def object_bbox(gen: np.random.Generator, m: np.ndarray, a: Vals) -> tuple[np.ndarray, ...]:
    """One sample of ``random_object_bbox``: ``(start, end, class)`` (int32)."""
    if m.ndim == 0 or m.size == 0:
        raise ShapeError(f"the mask must be a non-empty array, got shape {list(m.shape)}.")
    if m.dtype.kind not in "biu":
        raise InvalidArgumentError(f"the mask must hold integer labels, got {m.dtype}.")
    nd = m.ndim
    classes = a["classes"]
    weights = a["class_weights"]
    ignore = a["ignore_class"]
    if ignore and (classes is not None or weights is not None or a["output_class"]):
        raise InvalidArgumentError(
            "classes, class_weights and output_class cannot be used with ignore_class=True."
        )
    if classes is not None:
        classes = [int(c) for c in np.atleast_1d(classes)]
    bg = a["background"]
    if bg is None:  # 0, or a value that is not a class
        bg = 0 if classes is None or 0 not in classes else min(classes) - 1
    if weights is not None:
        weights = np.atleast_1d(np.asarray(weights, np.float64))
        if classes is None:
            classes = list(range(1, len(weights) + 1))
        if len(weights) != len(classes) or (weights < 0).any():
            raise InvalidArgumentError(
                f"class_weights needs one non-negative weight per class ({len(classes)}), got "
                f"{weights.tolist()}."
            )
    thr = a["threshold"]
    thr = None if thr is None else np.atleast_1d(np.asarray(thr, np.int64))
    if thr is not None and thr.size not in (1, nd):
        raise InvalidArgumentError(f"threshold needs 1 or {nd} extents, got {thr.tolist()}.")
    k = a["k_largest"]
    if k is not None and k < 1:
        raise InvalidArgumentError(f"k_largest must be positive, got {k}.")
    whole = (np.zeros(nd, np.int32), np.asarray(m.shape, np.int32), np.int32(bg))
    if gen.random() >= a["foreground_prob"]:
        return whole

    def blobs(sel: np.ndarray) -> Blobs:
        lo, hi, size = _blob_boxes_2d(sel) if sel.ndim <= 2 else _blob_boxes(*label_blobs(sel))
        if thr is not None:
            keep = ((hi - lo) >= thr).all(axis=1)
            lo, hi, size = lo[keep], hi[keep], size[keep]
        if k is not None:  # the k largest (ties: the first), in raster order
            pick = np.sort(np.argsort(-size, kind="stable")[:k])
            lo, hi, size = lo[pick], hi[pick], size[pick]
        return lo, hi, size

    if ignore:
        cands = {int(bg): blobs(m != bg)}
    else:
        present = [int(c) for c in np.unique(m) if c != bg]
        cls = present if classes is None else [c for c in classes if c != bg]
        cands = {c: blobs(m == c) for c in cls if c in present}
    w = {c: 1.0 for c in cands}
    if weights is not None:
        w = {c: float(weights[classes.index(c)]) for c in cands}
    ok = [c for c in cands if len(cands[c][2]) and w[c] > 0]
    if not ok:
        return whole
    p = np.asarray([w[c] for c in ok])
    c = ok[int(gen.choice(len(ok), p=p / p.sum()))]
    lo, hi, size = cands[c]
    j = int(gen.integers(len(size)))
    return lo[j].astype(np.int32), hi[j].astype(np.int32), np.int32(c)


def random_object_bbox(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch, ...]:
    """``segmentation.random_object_bbox``: outputs ``(first, second, class)`` as ``format``
    asks (``box``: ``first`` holds start and end, ``second`` the end, unused)."""
    gen = kc.generator()
    x = ins[0]
    vals = _vals(v, kc.n)
    fmt = v["format"]
    res = _each(kc, lambda i: object_bbox(gen, np.asarray(x._samples[i]), vals[i]))
    if fmt == "anchor_shape":
        first = [s for s, _, _ in res]
        second = [(e - s).astype(np.int32) for s, e, _ in res]
    elif fmt == "start_end":
        first, second = [s for s, _, _ in res], [e for _, e, _ in res]
    else:
        first = [np.concatenate([s, e]).astype(np.int32) for s, e, _ in res]
        second = [e for _, e, _ in res]
    cls = [np.asarray(c, np.int32).reshape(()) for _, _, c in res]
    return _wrap(kc, first, _dt.int32), _wrap(kc, second, _dt.int32), _wrap(kc, cls, _dt.int32)


# --- select_masks -------------------------------------------------------------------------------
def select_one(
    ids: np.ndarray, polys: np.ndarray, verts: np.ndarray, reindex: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The polygons of the masks ``ids`` (in that order) and their vertices, renumbered."""
    ids = ids.reshape(-1)
    if polys.ndim != 2 or polys.shape[1] != 3:
        if polys.size == 0:
            polys = polys.reshape(0, 3)
        else:
            raise ShapeError(
                f"polygons must have the shape [N, 3] (mask_id, start, end), got "
                f"{list(polys.shape)}."
            )
    if verts.ndim != 2:
        raise ShapeError(f"vertices must have the shape [V, D], got {list(verts.shape)}.")
    if len(np.unique(ids)) != len(ids):
        raise InvalidArgumentError(f"mask_ids must not repeat, got {ids.tolist()}.")
    nv = verts.shape[0]
    if ((polys[:, 1] < 0) | (polys[:, 2] > nv) | (polys[:, 1] > polys[:, 2])).any():
        raise InvalidArgumentError(
            f"polygons name vertices outside [0, {nv}] or end before they start."
        )
    out_p, out_v, at = [], [], 0
    for new_id, mid in enumerate(ids.tolist()):
        rows = np.flatnonzero(polys[:, 0] == mid)
        if rows.size == 0:
            raise InvalidArgumentError(f"selected mask_id {mid} is not present in the input.")
        for r in rows:
            s, e = int(polys[r, 1]), int(polys[r, 2])
            out_p.append([new_id if reindex else mid, at, at + e - s])
            out_v.append(verts[s:e])
            at += e - s
    p = np.asarray(out_p, np.int32).reshape(-1, 3)
    vv = np.concatenate(out_v) if out_v else verts[:0]
    return p, np.ascontiguousarray(vv)


def select_masks(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch, Batch]:
    """``segmentation.select_masks``."""
    ids, polys, verts = ins
    for b, what in ((ids, "mask_ids"), (polys, "polygons")):
        if not b._dtype.is_integer:
            raise InvalidArgumentError(f"{kc.name}: {what} must be integers, got {b._dtype}.")

    def one(i: int) -> tuple[np.ndarray, np.ndarray]:
        return select_one(
            np.asarray(ids._samples[i]),
            np.asarray(polys._samples[i]),
            np.asarray(verts._samples[i]),
            v["reindex_masks"],
        )

    res = _each(kc, one)
    return (
        _wrap(kc, [r[0] for r in res], _dt.int32),
        Batch._wrap([r[1] for r in res], verts._dtype, None, kc.device),
    )
