"""Torch kernels of the geometry ops (any torch device; never leave it).

Same names, signatures and plans as :mod:`headrace.backends.cpu.geometry`. Windows, flips,
padding, pasting and erasing are bit-identical to the CPU kernels; ``crop_mirror_normalize``
computes ``x * mul + add`` in float32 like the CPU lookup table (identical results, integer
outputs rounded half away from zero).

Examples
--------
>>> import torch
>>> flip(torch.arange(3).reshape(1, 3, 1), "HWC", axes=(1,)).ravel().tolist()
[2, 1, 0]
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from headrace._core import dtype as _dt
from headrace._core.errors import InvalidArgumentError
from headrace._core.saturate import c_cast
from headrace.backends.shared.common import box_fill, overlap
from headrace.backends.torch.batching import dense_base, stacked
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload

_slice = builtins.slice


def _fill_block(
    shape: Sequence[int], dtype: torch.dtype, fill: np.ndarray, channel_axis: int | None, device
) -> torch.Tensor:
    fill = np.asarray(fill, dtype=np.float64).ravel()
    fill = fill if fill.size else np.zeros(1)
    if dtype.is_floating_point:  # (bfloat16 has no numpy type)
        values = torch.from_numpy(fill).to(dtype)
    else:  # converted as the reference (truncated and wrapped): the CPU kernels' rule
        values = torch.from_numpy(c_cast(fill, _dt.dtype(dtype).numpy))
    if values.numel() <= 1 or channel_axis is None:
        return torch.full(tuple(shape), values[0].item(), dtype=dtype, device=device)
    values = upload(values, device)
    if values.numel() != shape[channel_axis]:
        raise InvalidArgumentError(
            f"fill_values: need 1 or {shape[channel_axis]} values, one per channel "
            f"(got {values.numel()}). Give a scalar or one value per channel."
        )
    bshape = [1] * len(shape)
    bshape[channel_axis] = values.numel()
    return values.reshape(bshape).expand(tuple(shape)).contiguous()


def window(
    x: torch.Tensor,
    anchor: Sequence[int],
    shape: Sequence[int],
    fill_values: np.ndarray,
    channel_axis: int | None,
    dtype=None,
) -> torch.Tensor:
    """Cut a box out of ``x``, filling what lies outside (see the CPU ``window``).

    Examples
    --------
    >>> window(torch.ones(2, 2), (-1, 0), (3, 2), np.array([5.0]), None).tolist()
    [[5.0, 5.0], [1.0, 1.0], [1.0, 1.0]]
    """
    out_dtype = x.dtype if dtype is None else _dt.to_torch_dtype(dtype)
    src, dst, inside = overlap(anchor, shape, x.shape)
    if inside:
        return saturate(x[src], out_dtype).clone()
    out = _fill_block(shape, out_dtype, fill_values, channel_axis, x.device)
    out[dst] = saturate(x[src], out_dtype)
    return out


def crop(x: torch.Tensor, layout: str, *, anchor, shape, fill_values, channel_axis, dtype=None):
    """Crop one sample (plan from ``crop_params``).

    Examples
    --------
    >>> crop(torch.zeros(4, 4, 1), "HWC", anchor=(1, 1, 0), shape=(2, 2, 1),
    ...      fill_values=np.zeros(1), channel_axis=2).shape
    torch.Size([2, 2, 1])
    """
    return window(x, anchor, shape, fill_values, channel_axis, dtype)


slice = crop


def flip(x: torch.Tensor, layout: str, *, axes: Sequence[int]) -> torch.Tensor:
    """Reverse the given axes (plan from ``flip_params``)."""
    return torch.flip(x, tuple(axes)) if axes else x.clone()


def pad(x: torch.Tensor, layout: str, *, out_shape, fill_value: float) -> torch.Tensor:
    """Pad the end of each axis up to ``out_shape`` with ``fill_value``."""
    return window(x, (0,) * x.dim(), out_shape, np.asarray([fill_value]), None)


def paste(x: torch.Tensor, layout: str, *, anchor, out_shape, fill_values, channel_axis):
    """Place ``x`` at ``anchor`` on a filled canvas of ``out_shape``."""
    return window(x, tuple(-a for a in anchor), out_shape, fill_values, channel_axis)


def erase(x: torch.Tensor, layout, *, boxes, fill_values, channel_axis) -> torch.Tensor:
    """Fill each box ``(lo, hi)`` of a copy of ``x`` with ``fill_values``."""
    out = x.clone()
    for lo, hi in boxes:
        if all(b > a for a, b in zip(lo, hi)):
            region = tuple(_slice(a, b) for a, b in zip(lo, hi))
            shape = out[region].shape
            fill = box_fill(np.asarray(fill_values), lo, hi, channel_axis, tuple(x.shape))
            out[region] = _fill_block(shape, out.dtype, fill, channel_axis, x.device)
    return out


def crop_mirror_normalize(
    x: torch.Tensor,
    layout: str,
    *,
    anchor,
    shape,
    mirror_axis,
    mul,
    add,
    perm,
    pad_output,
    channel_axis,
    fill_values,
    dtype,
    pad_fill=None,
) -> torch.Tensor:
    """Crop + mirror + ``x * mul + add`` per channel + transpose + cast (see the CPU kernel).

    Examples
    --------
    >>> f32 = np.dtype(np.float32)
    >>> p = dict(anchor=(2, 2, 0), shape=(4, 4, 3), mirror_axis=None, mul=np.full(3, 0.2, f32),
    ...          add=np.full(3, -1, f32), perm=(2, 0, 1), pad_output=0, channel_axis=2,
    ...          fill_values=np.zeros(1), dtype=f32)
    >>> img = torch.full((8, 8, 3), 10, dtype=torch.uint8)
    >>> crop_mirror_normalize(img, "HWC", **p)[:, 0, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    out_dtype = torch.float32 if dtype is None else _dt.to_torch_dtype(dtype)
    src_box, dst_box, inside = overlap(anchor, shape, x.shape)
    src = x[src_box]
    if mirror_axis is not None:
        src = torch.flip(src, (mirror_axis,))
    bshape = [1] * src.dim()
    if channel_axis is not None:
        bshape[channel_axis] = -1
    m = upload(np.asarray(mul, np.float32), x.device).reshape(bshape)
    a = upload(np.asarray(add, np.float32), x.device).reshape(bshape)
    vals = saturate(src.to(torch.float32) * m + a, out_dtype)
    full = list(shape)
    pad = int(pad_output)
    pad_values = np.zeros(pad) if pad_fill is None else np.asarray(pad_fill, np.float64)
    if pad:
        full[channel_axis] += pad
    fill = np.asarray(fill_values, np.float64).ravel()
    if pad and fill.size == shape[channel_axis] > 1:
        fill = np.append(fill, pad_values)
    out = _fill_block(full, out_dtype, fill, channel_axis, x.device)
    dst = list(dst_box)
    if mirror_axis is not None:
        d, n = dst[mirror_axis], shape[mirror_axis]
        dst[mirror_axis] = _slice(n - d.stop, n - d.start)
    if all(b.stop > b.start for b in src_box):
        if pad:  # the padding channels hold their values where there is image too
            extra_shape = list(vals.shape)
            extra_shape[channel_axis] = pad
            extra = _fill_block(extra_shape, out_dtype, pad_values, channel_axis, x.device)
            vals = torch.cat([vals, extra], channel_axis)
            dst[channel_axis] = _slice(0, shape[channel_axis] + pad)
        out[tuple(dst)] = vals
    del inside
    return out.permute(*perm).contiguous()


def _same(values: Sequence[Any]) -> bool:
    first = values[0]
    return all(v == first for v in values[1:])


def crop_batched(
    samples: Sequence[torch.Tensor], layout: str | None, plans: Sequence[Any]
) -> tuple[list[torch.Tensor], torch.Tensor] | None:
    """:func:`crop` (and ``slice``) as one ``stack`` of windows when every window lies inside its
    sample and all have one shape and type; ``None`` otherwise.

    Examples
    --------
    >>> from headrace._dispatch.planned import KernelPlan
    >>> kw = dict(shape=(1, 2), fill_values=np.zeros(1), channel_axis=None)
    >>> plans = [KernelPlan((1, 2), None, dict(kw, anchor=(i, 0))) for i in (0, 1)]
    >>> crop_batched([torch.arange(4).reshape(2, 2)] * 2, "HW", plans)[1].tolist()
    [[[0, 1]], [[2, 3]]]
    """
    kws = [p.kwargs for p in plans]
    if not (_same([tuple(kw["shape"]) for kw in kws]) and _same([kw.get("dtype") for kw in kws])):
        return None
    if not _same([s.dtype for s in samples]):
        return None
    wins = []
    for s, kw in zip(samples, kws):
        src, _, inside = overlap(kw["anchor"], kw["shape"], s.shape)
        if not inside:
            return None
        wins.append(s[src])
    dt = kws[0].get("dtype")
    dense = torch.stack(wins)
    if dt is not None:
        dense = saturate(dense, _dt.to_torch_dtype(dt))
    return list(dense.unbind(0)), dense


slice_batched = crop_batched


def flip_batched(
    samples: Sequence[torch.Tensor], layout: str | None, plans: Sequence[Any]
) -> tuple[list[torch.Tensor], torch.Tensor] | None:
    """:func:`flip` on a batch of equal-shaped samples: one flip per distinct set of axes, written
    into one output with index copies; ``None`` for ragged batches."""
    block = stacked(samples)
    if block is None:
        return None
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, p in enumerate(plans):
        groups.setdefault(tuple(int(a) for a in p.kwargs["axes"]), []).append(i)
    if len(groups) == 1:
        axes = next(iter(groups))
        out = torch.flip(block, tuple(1 + a for a in axes)) if axes else block.clone()
        return list(out.unbind(0)), out
    out = block.clone()
    for axes, idx in groups.items():
        if axes:
            sel = upload(np.asarray(idx, np.int64), block.device)
            out.index_copy_(0, sel, torch.flip(block.index_select(0, sel), [1 + a for a in axes]))
    return list(out.unbind(0)), out


def crop_mirror_normalize_batched(
    samples: Sequence[torch.Tensor], layout: str | None, plans: Sequence[Any]
) -> tuple[list[torch.Tensor], torch.Tensor] | None:
    """:func:`crop_mirror_normalize` on the whole batch in a handful of kernels.

    Applies when every sample's window lies inside its image, all outputs share one shape, type
    and layout, and no channel is added (``pad_output``); returns ``None`` otherwise (the
    per-sample kernel runs). The windows are gathered with one ``stack`` (no copy at all when
    the input is already a dense batch and the window is the whole image), mirrored samples are
    picked with one ``where``, and the per-sample ``mul``/``add`` vectors are uploaded once.

    Examples
    --------
    >>> from headrace._dispatch.planned import KernelPlan
    >>> f32 = np.dtype(np.float32)
    >>> kw = dict(anchor=(0, 0, 0), shape=(2, 2, 1), mul=np.ones(1, f32), add=np.zeros(1, f32),
    ...           perm=(2, 0, 1), pad_output=0, channel_axis=2, fill_values=np.zeros(1),
    ...           dtype=f32)
    >>> plans = [KernelPlan((1, 2, 2), f32, dict(kw, mirror_axis=m)) for m in (None, 1)]
    >>> x = [torch.arange(4, dtype=torch.uint8).reshape(2, 2, 1)] * 2
    >>> outs, dense = crop_mirror_normalize_batched(x, "HWC", plans)
    >>> dense[:, 0].tolist()
    [[[0.0, 1.0], [2.0, 3.0]], [[1.0, 0.0], [3.0, 2.0]]]
    """
    if len(samples) < 2:
        return None
    kws = [p.kwargs for p in plans]
    k0 = kws[0]
    keys = ("shape", "perm", "pad_output", "channel_axis", "dtype")
    distinct = list({id(kw): kw for kw in kws}.values())  # plans are shared between samples
    if k0["pad_output"] or not all(_same([kw[k] for kw in distinct]) for k in keys):
        return None
    if not _same([s.dtype for s in samples]) or not _same([s.dim() for s in samples]):
        return None
    mirror_axes = {kw["mirror_axis"] for kw in kws} - {None}
    if len(mirror_axes) > 1:
        return None
    boxes = []
    for s, kw in zip(samples, kws):
        src, _, inside = overlap(kw["anchor"], kw["shape"], s.shape)
        if not inside:
            return None
        boxes.append(src)
    device = samples[0].device
    shape = tuple(int(v) for v in k0["shape"])
    whole = all(tuple(s.shape) == shape for s in samples)
    base = dense_base(samples) if whole else None
    block = base if base is not None else torch.stack([s[b] for s, b in zip(samples, boxes)])
    n = len(samples)
    if mirror_axes:
        axis = 1 + mirror_axes.pop()
        flags = np.array([kw["mirror_axis"] is not None for kw in kws])
        if flags.all():
            block = torch.flip(block, (axis,))
        else:
            sel = upload(flags, device)
            block = torch.where(sel.view(n, *([1] * (block.dim() - 1))), block.flip(axis), block)
    ch = k0["channel_axis"]
    if len(distinct) == 1 or all(
        np.array_equal(kw["mul"], k0["mul"]) and np.array_equal(kw["add"], k0["add"])
        for kw in distinct
    ):
        kws_norm = [k0]
    else:
        kws_norm = kws
    mul = np.stack([np.asarray(kw["mul"], np.float32).ravel() for kw in kws_norm])
    add = np.stack([np.asarray(kw["add"], np.float32).ravel() for kw in kws_norm])
    bshape = [n] + [1] * (block.dim() - 1)
    if ch is not None:
        bshape[1 + ch] = -1
    if (mul == mul[0]).all() and (add == add[0]).all():
        mul, add = mul[:1], add[:1]
        bshape[0] = 1
    coef = upload(np.stack([mul, add]), device)
    vals = block.to(torch.float32) * coef[0].reshape(bshape) + coef[1].reshape(bshape)
    out_dtype = torch.float32 if k0["dtype"] is None else _dt.to_torch_dtype(k0["dtype"])
    perm = (0, *(1 + int(p) for p in k0["perm"]))
    dense = saturate(vals, out_dtype).permute(perm).contiguous()
    return list(dense.unbind(0)), dense
