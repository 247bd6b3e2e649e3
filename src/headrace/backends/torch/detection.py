"""Torch kernels of the bounding-box operators that run on the GPU (``ops/detection.py``):
``bb_flip``, ``box_encoder`` and ``multi_paste``. The other box operators run on the CPU
only, as in the reference.

Examples
--------
>>> import torch
>>> flip_boxes_t(torch.tensor([[0.1, 0.2, 0.5, 0.6]]), True, 1, 0).double().round(decimals=3)
tensor([[0.5000, 0.2000, 0.9000, 0.6000]], dtype=torch.float64)
"""

from __future__ import annotations

from typing import Any

import torch

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.dtype import to_torch_dtype
from headrace._core.errors import ShapeError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.shared.common import check_encoder_args
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload

Vals = dict[str, Any]
F32 = torch.float32


def _boxes(a: torch.Tensor) -> torch.Tensor:
    if a.numel() == 0:
        return torch.zeros((0, 4), dtype=F32, device=a.device)
    if a.ndim == 1 and a.shape[0] % 4 == 0:
        a = a.reshape(-1, 4)
    if a.ndim != 2 or a.shape[1] != 4:
        raise ShapeError(f"boxes must have the shape [N, 4], got {list(a.shape)}.")
    return a.to(F32)


def flip_boxes_t(b: torch.Tensor, ltrb: bool, horizontal: int, vertical: int) -> torch.Tensor:
    """Boxes mirrored in relative coordinates (torch; xywh boxes go through ltrb)."""
    lt, rb = b[:, :2], (b[:, 2:] if ltrb else b[:, :2] + b[:, 2:])
    nlt, nrb = lt.clone(), rb.clone()
    for d, flip in enumerate((horizontal, vertical)):
        if flip:
            nlt[:, d], nrb[:, d] = 1 - rb[:, d], 1 - lt[:, d]
    return torch.cat([nlt, nrb if ltrb else nrb - nlt], 1)


def bb_flip(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``bb_flip`` on torch boxes."""
    x = ins[0]
    per = has_per_sample(v)

    def one(i: int) -> torch.Tensor:
        a = sample_args(v, i) if per else v
        return flip_boxes_t(_boxes(x._samples[i]), a["ltrb"], a["horizontal"], a["vertical"])

    return (Batch._wrap(kc.map(one, parallel=False), _dt.float32, None, kc.device),)


def _iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    lt = torch.maximum(a[:, None, :2], b[None, :, :2])
    rb = torch.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return torch.where(union > 0, inter / union.clamp(min=torch.finfo(F32).tiny), 0.0)


def _encode(
    boxes: torch.Tensor,
    labels: torch.Tensor,
    anchors: torch.Tensor,
    v: Vals,
    means: torch.Tensor,
    stds: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    m = anchors.shape[0]
    match = torch.full((m,), -1, dtype=torch.int64, device=anchors.device)
    if boxes.shape[0]:
        iou = _iou(boxes, anchors)
        n = iou.shape[0]  # (ties of IoU go to the later box / anchor, as in the reference)
        best_iou, rev = iou.flip(0).max(dim=0)
        best_box = n - 1 - rev
        match = torch.where(best_iou > v["criteria"], best_box, match)
        # each box claims its best anchor; later boxes win a shared one (as on the CPU): the
        # highest box index per anchor, on the device (no per-box loop on the host)
        boxes_idx = torch.arange(boxes.shape[0], dtype=torch.int64, device=anchors.device)
        claimed = torch.full((m,), -1, dtype=torch.int64, device=anchors.device)
        best_anchor = m - 1 - iou.flip(1).argmax(dim=1)
        claimed.scatter_reduce_(0, best_anchor, boxes_idx, reduce="amax")
        match = torch.where(claimed >= 0, claimed, match)
    hit = match >= 0
    out_labels = torch.zeros(m, dtype=labels.dtype, device=labels.device)
    src = anchors
    if boxes.shape[0]:
        out_labels = torch.where(hit, labels[match.clamp(min=0)], out_labels)
        src = torch.where(hit[:, None], boxes[match.clamp(min=0)], anchors)
    s = torch.tensor(v["scale"], dtype=F32)
    src = src * s
    anc = anchors * s
    c = (src[:, :2] + src[:, 2:]) * 0.5
    wh = src[:, 2:] - src[:, :2]
    if not v["offset"]:
        return torch.cat([c, wh], 1), out_labels
    ac = (anc[:, :2] + anc[:, 2:]) * 0.5
    awh = anc[:, 2:] - anc[:, :2]
    dc = ((c - ac) / awh - means[:2]) / stds[:2]
    dwh = (torch.log(wh / awh) - means[2:]) / stds[2:]
    enc = torch.cat([dc, dwh], 1)
    return torch.where(hit[:, None], enc, 0.0), out_labels


def box_encoder(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch, Batch]:
    """``box_encoder`` on torch boxes."""
    anchors_np, means_np, stds_np = check_encoder_args(v)
    bx, lb = ins
    dev = bx._samples[0].device if bx._samples else torch.device("cpu")
    anchors, means, stds = (upload(a, dev) for a in (anchors_np, means_np, stds_np))

    def one(i: int) -> tuple[torch.Tensor, torch.Tensor]:
        b = _boxes(bx._samples[i])
        lab = lb._samples[i].reshape(-1)
        if lab.shape[0] != b.shape[0]:
            raise ShapeError(f"got {b.shape[0]} boxes and {lab.shape[0]} labels.")
        return _encode(b, lab, anchors, v, means, stds)

    res = kc.map(one, parallel=False)
    return (
        Batch._wrap([r[0] for r in res], _dt.float32, None, kc.device),
        Batch._wrap([r[1] for r in res], lb._dtype, None, kc.device),
    )


def multi_paste(kc: KernelContext, ins: list[Batch], v: Vals) -> tuple[Batch]:
    """``multi_paste`` on torch images: the regions ``v["plans"]`` lists, pasted in order."""
    dt: _dt.DType = v["dtype"]
    t_dt = to_torch_dtype(dt)
    dev = next((s.device for b in ins for s in b._samples), torch.device("cpu"))

    def one(i: int) -> torch.Tensor:
        shape, regions = v["plans"][i]
        out = torch.zeros(shape, dtype=t_dt, device=dev)
        for k, j, iy, ix, h, w, oy, ox in regions:
            src = ins[k]._samples[j][iy : iy + h, ix : ix + w]
            out[oy : oy + h, ox : ox + w] = src if src.dtype == t_dt else saturate(src, dt)
        return out

    return (Batch._wrap(kc.map(one), dt, "HWC", kc.device),)
