"""Whole-batch torch resampling: a batch of images of any sizes in a few large kernels.

:func:`resize_batched` is the batch form of :func:`headrace.backends.torch.resize.resize` (the
schema finds it by name, ``resize_batched``, next to the pixel kernel). Samples are grouped so
that padding them to a common size wastes little work; per group it

1. takes a few numbers per sample and axis on the host (scale, origin, window table scale,
   number of taps, extents: float32 as :func:`~headrace.backends.shared.common.axis_weights`
   computes them) and uploads them at once, asynchronously
   (:func:`~headrace.backends.torch.transfer.upload`);
2. builds the dense per-sample ``(out, in)`` matrices on the device with the same float32 steps
   as the CPU kernels' coefficients (window table sampled per tap, rows normalised), zero where a
   sample is smaller than the group's padded extent;
3. copies the samples into one zero-padded ``(G, H, W, C)`` block (one ``stack`` when shapes agree)
   and resamples both axes with two batched matrix products (``bmm``) in float32, the cheaper axis
   order first;
4. converts to the output type with the reference's rounding, once for the group.

No per-sample kernel launches beyond the input copies, and no host synchronisation: the result
is identical to the per-sample torch kernel up to float32 summation order (uint8 within 1 level).

Examples
--------
>>> import torch
>>> from headrace.ops._resize_params import AxisFilter
>>> from headrace._dispatch.planned import KernelPlan
>>> lin = AxisFilter("triangular", 2.0)
>>> plan = lambda h, w: KernelPlan((h, w, 3), None, dict(out_size=(h, w), roi_lo=(0.0, 0.0),
...     roi_hi=(2.0 * h, 2.0 * w), filters=(lin, lin)))
>>> u8 = torch.uint8
>>> xs = [torch.full((8, 6, 3), 10, dtype=u8), torch.full((4, 4, 3), 20, dtype=u8)]
>>> outs, dense = resize_batched(xs, "HWC", [plan(4, 3), plan(2, 2)])
>>> [tuple(o.shape) for o in outs], dense is None, int(outs[1].max())
([(4, 3, 3), (2, 2, 3)], True, 20)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace.backends.shared.common import Filter, filter_table
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload

_F32 = np.float32

#: A group is split when padding would make its work exceed this multiple of the useful work
#: (on the CPU, where the padded work costs its full price, and on CUDA, where a few more large
#: kernels cost less than the launches and copies of more groups).
MAX_PADDING_WASTE = {"cpu": 1.5, "cuda": 4.0}


def _groups(shapes: Sequence[tuple[int, ...]], waste: float = 1.5) -> list[list[int]]:
    """Sample indices grouped (by size) so that each group's padded area stays within ``waste``
    times its sum."""
    order = sorted(range(len(shapes)), key=lambda i: (shapes[i][0], shapes[i][1]))
    groups: list[list[int]] = []
    cur: list[int] = []
    hmax = wmax = area = 0
    for i in order:
        h, w = shapes[i][0], shapes[i][1]
        nh, nw, na = max(hmax, h), max(wmax, w), area + h * w
        if cur and (len(cur) + 1) * nh * nw > waste * na:
            groups.append(cur)
            cur, nh, nw, na = [], h, w, h * w
        cur.append(i)
        hmax, wmax, area = nh, nw, na
    if cur:
        groups.append(cur)
    return groups


def _axis_params(in_len: int, out_len: int, lo: float, hi: float, flt: Filter
                 ) -> tuple[float, float, float, int, int, int]:  # fmt: skip
    """One sample's axis on the host, in float32 as :func:`axis_weights` computes it:
    ``(scale, origin, table_scale, taps, in_len, out_len)``."""
    n = filter_table(flt.kind).size
    tscale = _F32(n - 1) / _F32(flt.support)
    anchor = _F32(flt.support) * _F32(0.5)
    taps = max(1, math.ceil(_F32(n - 1) / tscale))
    scale = (_F32(hi) - _F32(lo)) / _F32(out_len)
    origin = _F32(lo) + _F32(0.5) * scale - _F32(0.5) - anchor
    return float(scale), float(origin), float(tscale), taps, in_len, out_len


def _matrices(kind: str, params: list[tuple[float, float, float, int, int, int]], out_max: int,
              in_max: int, device: torch.device) -> torch.Tensor:  # fmt: skip
    """Dense ``(G, out_max, in_max)`` float32 resampling matrices, built on the device from a few
    numbers per sample (one small upload) with the float32 steps of :func:`axis_weights`: the
    window table sampled at each tap, zero outside it, each row normalised to sum 1. Rows past a
    sample's output and columns past its input stay zero."""
    g = len(params)
    arr = np.array(params, dtype=np.float64)  # small integers and float32 values: exact
    p = upload(arr, device)
    scale, origin, tscale = (p[:, k].to(torch.float32) for k in range(3))
    taps, in_len, out_len = (p[:, k].to(torch.int64) for k in range(3, 6))
    table = filter_table(kind)
    n = table.size
    padded = upload(np.concatenate([[0], table, [0]]).astype(np.float32), device)
    support = int(arr[:, 3].max())
    o = torch.arange(out_max, device=device, dtype=torch.float32)
    sx0f = o[None, :] * scale[:, None] + origin[:, None]
    sx0 = torch.ceil(sx0f)
    f0 = sx0 - sx0f
    k = torch.arange(support, device=device, dtype=torch.float32)
    t = (f0[:, :, None] + k[None, None, :]) * tscale[:, None, None]
    t0 = torch.floor(t)
    frac = t - t0
    i0 = t0.to(torch.int64)
    c0 = padded[torch.clamp(i0 + 1, 0, n + 1)]
    c1 = padded[torch.clamp(i0 + 2, 0, n + 1)]
    coeffs = c0 + frac * (c1 - c0)
    ki = torch.arange(support, device=device)
    rows = torch.arange(out_max, device=device)
    keep = (t > -1) & (t < n) & (ki[None, None, :] < taps[:, None, None])
    keep &= (rows[None, :] < out_len[:, None])[:, :, None]
    coeffs = torch.where(keep, coeffs, torch.zeros((), device=device))
    total = coeffs.sum(dim=2, keepdim=True)
    coeffs = torch.where(total != 0, coeffs / torch.where(total != 0, total, 1.0), coeffs)
    src = sx0.to(torch.int64)[:, :, None] + ki[None, None, :]
    src = torch.minimum(src.clamp_min(0), (in_len - 1)[:, None, None])
    mat = torch.zeros((g, out_max, in_max), dtype=torch.float32, device=device)
    return mat.scatter_add_(2, src, coeffs)


def _resample(block: torch.Tensor, mh: torch.Tensor, mw: torch.Tensor) -> torch.Tensor:
    """``mh @ block @ mw^T`` on the H and W axes of a ``(G, H, W, C)`` float32 block."""
    g, hin, win, c = block.shape
    hout, wout = mh.shape[1], mw.shape[1]
    if hout * hin * win + wout * win * hout <= wout * win * hin + hout * hin * wout:
        t = torch.bmm(mh, block.reshape(g, hin, win * c)).view(g, hout, win, c)
        t = t.transpose(1, 2).reshape(g, win, hout * c)
        return torch.bmm(mw, t).view(g, wout, hout, c).transpose(1, 2)
    t = block.transpose(1, 2).reshape(g, win, hin * c)
    t = torch.bmm(mw, t).view(g, wout, hin, c).transpose(1, 2).reshape(g, hin, wout * c)
    return torch.bmm(mh, t).view(g, hout, wout, c)


def resize_batched(
    samples: Sequence[torch.Tensor], layout: str | None, plans: Sequence[Any]
) -> tuple[list[torch.Tensor], torch.Tensor | None] | None:
    """Resize every sample by its plan in whole-batch kernels; ``None`` when not applicable.

    Applies to ``HWC``/``HW`` images whose axes all use a filter (not nearest neighbour); others
    go through the per-sample kernel. Returns the outputs and, when they all have one shape,
    the dense ``(N, ...)`` tensor they are views of.
    """
    if layout not in ("HWC", "HW") or len(samples) < 2:
        return None
    kws = [p.kwargs for p in plans]
    if any(f.kind == "nn" for kw in kws for f in kw["filters"]):
        return None
    kinds = tuple(f.kind for f in kws[0]["filters"])
    if any(tuple(f.kind for f in kw["filters"]) != kinds for kw in kws):
        return None  # one window table per axis and call (mixed min/mag filters: per sample)
    dt = kws[0].get("dtype")
    if any(kw.get("dtype") != dt for kw in kws):
        return None
    out_dtype = samples[0].dtype if dt is None else _dt.to_torch_dtype(dt)
    device = samples[0].device
    chan = layout == "HWC"
    shapes = [tuple(int(v) for v in s.shape) for s in samples]
    if any(0 in sh for sh in shapes) or any(0 in tuple(kw["out_size"]) for kw in kws):
        return None
    outs: list[torch.Tensor | None] = [None] * len(samples)
    all_sizes = {tuple(int(v) for v in kw["out_size"]) for kw in kws}
    dense = None
    for grp in _groups(shapes, MAX_PADDING_WASTE.get(device.type, 1.5)):
        hin = max(shapes[i][0] for i in grp)
        win = max(shapes[i][1] for i in grp)
        sizes = [tuple(int(v) for v in kws[i]["out_size"]) for i in grp]
        hout, wout = max(s[0] for s in sizes), max(s[1] for s in sizes)
        ph, pw = [], []
        for i, (ho, wo) in zip(grp, sizes):
            kw = kws[i]
            fh, fw = kw["filters"]
            ph.append(_axis_params(shapes[i][0], ho, kw["roi_lo"][0], kw["roi_hi"][0], fh))
            pw.append(_axis_params(shapes[i][1], wo, kw["roi_lo"][1], kw["roi_hi"][1], fw))
        mh = _matrices(kinds[0], ph, hout, hin, device)
        mw = _matrices(kinds[1], pw, wout, win, device)
        members = [samples[i] if chan else samples[i][..., None] for i in grp]
        if all(shapes[i] == shapes[grp[0]] for i in grp):
            block = torch.stack(members).to(torch.float32)
        else:
            c = members[0].shape[-1]
            block = torch.zeros((len(grp), hin, win, c), dtype=torch.float32, device=device)
            for j, m in enumerate(members):
                block[j, : m.shape[0], : m.shape[1]] = m
        res = saturate(_resample(block, mh, mw), out_dtype)
        if not chan:
            res = res[..., 0]
        if len(all_sizes) == 1:  # one output shape: every group writes into one dense tensor
            if dense is None:
                dense = torch.empty((len(samples), *res.shape[1:]), dtype=res.dtype, device=device)
            dense.index_copy_(0, upload(np.asarray(grp, np.int64), device), res)
            continue
        for j, (i, (ho, wo)) in enumerate(zip(grp, sizes)):
            outs[i] = res[j, :ho, :wo]
    if dense is not None:
        return list(dense.unbind(0)), dense
    return [o for o in outs if o is not None], None


__all__ = ["MAX_PADDING_WASTE", "resize_batched"]
