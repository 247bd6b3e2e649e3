"""Torch colour kernels: same names, arguments and plans as ``headrace.backends.cpu.color``.

Tensors stay on their device. Arithmetic is float32 as on the CPU, so results agree with the CPU
kernels exactly for ``brightness_contrast``, ``lookup_table`` and ``color_space_conversion``
(except RGB->GRAY: OpenCV's fixed-point luma on the CPU vs float here, max abs diff 1), and
within 1 (uint8) / 1e-5 relative (float32) for the matrix ops and ``normalize``.

Examples
--------
>>> import torch
>>> x = torch.tensor([[[0, 128, 255]]], dtype=torch.uint8)
>>> brightness_contrast(x, "HWC", scale=0.5, offset=64.0, dtype=np.dtype("uint8")).tolist()
[[[64, 128, 192]]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from headrace.backends.shared import common as _common
from headrace.backends.torch.batching import stacked
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload


def _f32(x: torch.Tensor) -> torch.Tensor:
    return x if x.dtype == torch.float32 else x.to(torch.float32)


def brightness_contrast(
    x: torch.Tensor, layout: str | None, *, scale: float, offset: float, dtype: np.dtype
) -> torch.Tensor:
    """``out = scale * x + offset`` in float32, converted to ``dtype``.

    Examples
    --------
    >>> x = torch.full((1, 1, 3), 100, dtype=torch.uint8)
    >>> brightness_contrast(x, "HWC", scale=1.5, offset=0.0, dtype=np.dtype("uint8"))[0, 0, 0]
    tensor(150, dtype=torch.uint8)
    """
    v = _f32(x) * np.float32(scale)
    v = v + np.float32(offset)
    return saturate(v, dtype)


def color_twist(
    x: torch.Tensor, layout: str | None, *, matrix: np.ndarray, offset: float, dtype: np.dtype
) -> torch.Tensor:
    """Apply the 3x3 ``matrix`` and ``offset`` to every pixel (channels last).

    Examples
    --------
    >>> x = torch.tensor([[[10, 20, 30]]], dtype=torch.uint8)
    >>> color_twist(x, "HWC", matrix=np.eye(3) * 2, offset=1.0, dtype=np.dtype("uint8")).tolist()
    [[[21, 41, 61]]]
    """
    m = upload(np.asarray(matrix, np.float32), x.device)
    v = _f32(x) @ m.T + np.float32(offset)
    return saturate(v, dtype)


hsv = color_twist
hue = color_twist
saturation = color_twist


def _uniform_dtype(plans: Sequence[Any]) -> tuple[bool, Any]:
    dt = plans[0].kwargs["dtype"]
    return all(p.kwargs["dtype"] == dt for p in plans), dt


def _per_sample(plans: Sequence[Any], key: str, shape: tuple[int, ...], device) -> torch.Tensor:
    """Every plan's ``key`` (float32) uploaded at once, shaped ``(N, *shape)``."""
    vals = np.stack([np.asarray(p.kwargs[key], np.float32).reshape(shape) for p in plans])
    return upload(vals, device)


def brightness_contrast_batched(
    samples: Sequence[torch.Tensor], layout: str | None, plans: Sequence[Any]
) -> tuple[list[torch.Tensor], torch.Tensor] | None:
    """:func:`brightness_contrast` on a dense batch in one pass (``None`` for ragged batches).

    Examples
    --------
    >>> from headrace._dispatch.planned import KernelPlan
    >>> u8 = np.dtype("uint8")
    >>> plans = [KernelPlan((1, 2), u8, dict(scale=s, offset=1.0, dtype=u8)) for s in (1.0, 2.0)]
    >>> outs, dense = brightness_contrast_batched(list(torch.full((2, 1, 2), 10).unbind(0)),
    ...                                           "HW", plans)
    >>> dense.tolist()
    [[[11, 11]], [[21, 21]]]
    """
    same, dt = _uniform_dtype(plans)
    block = stacked(samples) if same and len(samples) > 1 else None
    if block is None:
        return None
    bshape = (1,) * (block.dim() - 1)
    scale = _per_sample(plans, "scale", bshape, block.device)
    offset = _per_sample(plans, "offset", bshape, block.device)
    out = saturate(_f32(block) * scale + offset, dt)
    return list(out.unbind(0)), out


def color_twist_batched(
    samples: Sequence[torch.Tensor], layout: str | None, plans: Sequence[Any]
) -> tuple[list[torch.Tensor], torch.Tensor] | None:
    """:func:`color_twist` (also ``hsv``, ``hue``, ``saturation``) on a dense batch: one batched
    matrix product with every sample's matrix (``None`` for ragged batches)."""
    same, dt = _uniform_dtype(plans)
    block = stacked(samples) if same and len(samples) > 1 else None
    if block is None or block.shape[-1] != 3:
        return None
    n = block.shape[0]
    mats = _per_sample(plans, "matrix", (3, 3), block.device)
    offset = _per_sample(plans, "offset", (1, 1), block.device)
    v = torch.bmm(_f32(block).reshape(n, -1, 3), mats.transpose(1, 2)) + offset
    out = saturate(v.view(block.shape), dt)
    return list(out.unbind(0)), out


hsv_batched = color_twist_batched
hue_batched = color_twist_batched
saturation_batched = color_twist_batched


def _dot(ch: Sequence[torch.Tensor], coeffs) -> torch.Tensor:
    return ch[0] * coeffs[0] + ch[1] * coeffs[1] + ch[2] * coeffs[2]


def color_space_conversion(
    x: torch.Tensor, layout: str | None, *, src: str, dst: str
) -> torch.Tensor:
    """Convert uint8 pixels between ``RGB``, ``BGR``, ``GRAY`` and ``YCbCr``.

    Examples
    --------
    >>> x = torch.tensor([[[255, 0, 0]]], dtype=torch.uint8)
    >>> color_space_conversion(x, "HWC", src="RGB", dst="BGR").tolist()
    [[[0, 0, 255]]]
    """
    u8 = np.dtype(np.uint8)
    if src == dst:
        return x.clone()
    if src == "BGR":
        return color_space_conversion(x.flip(-1), layout, src="RGB", dst=dst)
    if dst == "BGR":
        return color_space_conversion(x, layout, src=src, dst="RGB").flip(-1).contiguous()
    if src == "GRAY":
        if dst == "RGB":
            return x.expand(*x.shape[:-1], 3).contiguous()
        y = saturate(_f32(x) * _common.Y_SUM + np.float32(16), u8)
        c = torch.full_like(y, 128)
        return torch.cat([y, c, c], dim=-1)
    ch = [_f32(x[..., i]) for i in range(3)]
    if src == "RGB" and dst == "GRAY":
        return saturate(_dot(ch, (0.299, 0.587, 0.114)), u8).unsqueeze(-1)
    if src == "RGB":
        grey = (x[..., 0] == x[..., 1]) & (x[..., 0] == x[..., 2])
        y = _dot(ch, _common.Y601) + 16.0
        cb = torch.where(grey, 128.0, _dot(ch, _common.CB601) + 128.0)
        cr = torch.where(grey, 128.0, _dot(ch, _common.CR601) + 128.0)
        return saturate(torch.stack([y, cb, cr], dim=-1), u8)
    if dst == "GRAY":
        return saturate((ch[0] - 16.0) * _common.Y_INV, u8).unsqueeze(-1)
    ty = (ch[0] - 16.0) * _common.Y_INV
    tb, tr = ch[1] - 128.0, ch[2] - 128.0
    r = ty + _common.R_CR * tr
    g = ty - _common.G_CR * tr - _common.G_CB * tb
    b = ty + _common.B_CB * tb
    return saturate(torch.stack([r, g, b], dim=-1), u8)


def _stats(xs: Sequence[torch.Tensor], axes, mean, stddev, epsilon: float, ddof: int):
    dev = xs[0].device
    dims = tuple(axes)
    count = sum(int(np.prod([x.shape[i] for i in dims], dtype=np.int64)) for x in xs)
    if mean is None:
        total = sum(x.to(torch.float64).sum(dim=dims, keepdim=True) for x in xs)
        m = total / count
    else:
        m = upload(np.asarray(mean, np.float64), torch.device(dev))
    if stddev is None:
        ssq = sum(((x.to(torch.float64) - m) ** 2).sum(dim=dims, keepdim=True) for x in xs)
        var = ssq / (count - ddof) if count - ddof > 0 else torch.zeros_like(ssq)
    else:
        var = upload(np.asarray(stddev, np.float64), torch.device(dev)) ** 2
    var = var + epsilon
    inv = torch.where(var > 0, var.clamp_min(1e-300).rsqrt(), torch.zeros_like(var))
    return m, inv


def _apply_norm(x, m, inv, scale, shift, dtype):
    v = (_f32(x) - m.to(torch.float32)) * (inv * scale).to(torch.float32)
    if shift:
        v = v + np.float32(shift)
    return saturate(v, dtype)


def normalize(
    x: torch.Tensor,
    layout: str | None,
    *,
    axes: tuple[int, ...],
    mean,
    stddev,
    scale: float,
    shift: float,
    epsilon: float,
    ddof: int,
    dtype: np.dtype,
) -> torch.Tensor:
    """``scale * (x - mean) / sqrt(var + epsilon) + shift`` with statistics over ``axes``.

    Examples
    --------
    >>> normalize(torch.tensor([1.0, 3.0]), None, axes=(0,), mean=None, stddev=None, scale=1.0,
    ...           shift=0.0, epsilon=0.0, ddof=0, dtype=np.dtype("float32")).tolist()
    [-1.0, 1.0]
    """
    m, inv = _stats([x], axes, mean, stddev, epsilon, ddof)
    return _apply_norm(x, m, inv, scale, shift, dtype)


def normalize_batch(xs: Sequence[torch.Tensor], layout: str | None, **params) -> list:
    """``normalize`` with ``batch=True``: statistics shared by all samples of ``xs``.

    Examples
    --------
    >>> xs = [torch.tensor([0.0]), torch.tensor([2.0])]
    >>> [o.tolist() for o in normalize_batch(xs, None, axes=(0,), mean=None, stddev=None,
    ...   scale=1.0, shift=0.0, epsilon=0.0, ddof=0, dtype=np.dtype("float32"))]
    [[-1.0], [1.0]]
    """
    m, inv = _stats(
        xs, params["axes"], params["mean"], params["stddev"], params["epsilon"], params["ddof"]
    )
    return [_apply_norm(x, m, inv, params["scale"], params["shift"], params["dtype"]) for x in xs]


def lookup_table(
    x: torch.Tensor, layout: str | None, *, table: np.ndarray, default
) -> torch.Tensor:
    """``out = table[x]`` where ``0 <= x < len(table)``, else ``default``.

    Examples
    --------
    >>> lookup_table(torch.tensor([0, 1, 5, -1]), None, table=np.array([7, 8], np.uint8),
    ...              default=0).tolist()
    [7, 8, 0, 0]
    """
    t = upload(np.asarray(table), x.device)
    full = torch.cat([t, torch.full((1,), default, dtype=t.dtype, device=x.device)])
    idx = x.to(torch.int64)
    idx = torch.where((idx >= 0) & (idx < len(table)), idx, len(table))
    return full[idx]
