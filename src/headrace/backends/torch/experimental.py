"""Torch kernels of the experimental operators (names and plans as on the CPU).

``dilate``/``erode`` are ``max_pool2d`` over border-padded planes and ``median_blur`` a median of
unfolded windows: identical to the CPU kernels. ``remap`` is the displacement sampler of
:mod:`headrace.backends.torch.filters`. ``warp_perspective`` samples exactly (float) with the
border mode mapped on indices: within 1 of the CPU kernel (OpenCV's 1/32-pixel positions) on
integer types, nearest neighbour equal except at rounding ties.

Examples
--------
>>> x = torch.tensor([[0, 0, 5, 0, 0]], dtype=torch.uint8)
>>> dilate(x, "HW", perm=(0, 1), window=(1, 3), pads=(0, 0, 1, 1), border="constant").tolist()
[[0, 5, 5, 5, 0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from headrace.backends.torch.cast import saturate
from headrace.backends.torch.filters import remap as _remap_hwc
from headrace.backends.torch.image import from_planes, pad_planes, to_planes
from headrace.backends.torch.transfer import upload


def _morph(x, layout, perm, window, pads, border, dilation: bool) -> torch.Tensor:
    p = to_planes(x, perm, layout)
    if p.numel() == 0:
        return x.clone()
    v = p.to(torch.float32)
    if not dilation:
        v = -v
    v = pad_planes(v, pads, border, -math.inf)
    f, c, hp, wp = v.shape
    out = F.max_pool2d(v.reshape(f * c, 1, hp, wp), window, stride=1).reshape(p.shape)
    if not dilation:
        out = -out
    return from_planes(out.to(x.dtype), perm, x.shape)


def dilate(
    x: torch.Tensor,
    layout: str | None,
    *,
    perm: tuple[int, ...],
    window: tuple[int, int],
    pads: tuple[int, int, int, int],
    border: str,
) -> torch.Tensor:
    """The maximum under a ``window`` (height, width) mask placed by ``pads``."""
    return _morph(x, layout, perm, window, pads, border, dilation=True)


def erode(
    x: torch.Tensor,
    layout: str | None,
    *,
    perm: tuple[int, ...],
    window: tuple[int, int],
    pads: tuple[int, int, int, int],
    border: str,
) -> torch.Tensor:
    """The minimum under a ``window`` (height, width) mask placed by ``pads``.

    Examples
    --------
    >>> x = torch.tensor([[5, 5, 0, 5, 5]], dtype=torch.uint8)
    >>> erode(x, "HW", perm=(0, 1), window=(1, 3), pads=(0, 0, 1, 1), border="constant").tolist()
    [[5, 0, 0, 0, 5]]
    """
    return _morph(x, layout, perm, window, pads, border, dilation=False)


def median_blur(x: torch.Tensor, layout: str | None, *, perm: tuple[int, ...],
                window: tuple[int, int]) -> torch.Tensor:  # fmt: skip
    """The median of a ``window`` (height, width) around every pixel (borders replicated).

    Examples
    --------
    >>> x = torch.tensor([[1, 9, 2, 3]], dtype=torch.uint8)
    >>> median_blur(x, "HW", perm=(0, 1), window=(1, 3)).tolist()
    [[1, 2, 3, 3]]
    """
    p = to_planes(x, perm, layout)
    if p.numel() == 0:
        return x.clone()
    wh, ww = window
    v = pad_planes(p.to(torch.float32), (wh // 2, wh // 2, ww // 2, ww // 2), "replicate", 0.0)
    win = v.unfold(-2, wh, 1).unfold(-2, ww, 1)
    out = win.reshape(*win.shape[:4], -1).median(dim=-1).values
    return from_planes(out.to(x.dtype), perm, x.shape)


def remap(x: torch.Tensor, layout: str | None, *, mapx: np.ndarray, mapy: np.ndarray,
          interp: str) -> torch.Tensor:  # fmt: skip
    """Sample ``HWC`` (``FHWC``) ``x`` at the corner-convention points; outside reads 0.

    Examples
    --------
    >>> x = torch.arange(4, dtype=torch.uint8).reshape(1, 4, 1)
    >>> mx = np.array([[3.5, 0.5, 9.0]], np.float32); my = np.full_like(mx, 0.5)
    >>> remap(x, "HWC", mapx=mx, mapy=my, interp="nn").ravel().tolist()
    [3, 0, 0]
    """
    if x.numel() == 0 or mapx.size == 0:
        return torch.zeros((*mapx.shape, x.shape[-1]), dtype=x.dtype, device=x.device)
    if mapx.ndim == 3:
        return torch.stack([_remap_hwc(f, mx, my, 0.0, interp) for f, mx, my in zip(x, mapx, mapy)])
    return _remap_hwc(x, mapx, mapy, 0.0, interp)


def _map_border(i: torch.Tensor, n: int, mode: str) -> torch.Tensor:
    """Torch twin of :func:`headrace.backends.shared.common.map_border` (constant: clamped; the
    caller masks)."""
    if mode in ("constant", "replicate") or n == 1:
        return i.clamp(0, n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":
        m = i % (2 * n)
        return torch.where(m >= n, 2 * n - 1 - m, m)
    period = 2 * (n - 1)
    m = i.abs() % period
    return torch.where(m >= n, period - m, m)


def _cubic(t: torch.Tensor) -> list[torch.Tensor]:
    """OpenCV's cubic weights (a = -0.75) of the taps at -1, 0, 1, 2 for fractions ``t``."""
    a = -0.75
    w0 = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a
    w1 = ((a + 2) * t - (a + 3)) * t * t + 1
    w2 = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1
    return [w0, w1, w2, 1 - w0 - w1 - w2]


def warp_perspective(
    x: torch.Tensor,
    layout: str | None,
    *,
    perm: tuple[int, ...],
    matrix: np.ndarray,
    out_hw: tuple[int, int],
    border: str,
    fill: Sequence[float],
    interp: str,
) -> torch.Tensor:
    """Sample every plane at ``matrix @ (x, y, 1)`` (projected; pixel centres at integers).

    Examples
    --------
    >>> x = torch.arange(4, dtype=torch.float32).reshape(1, 4)
    >>> m = np.array([[1.0, 0, 1], [0, 1, 0], [0, 0, 1]])
    >>> warp_perspective(x, "HW", perm=(0, 1), matrix=m, out_hw=(1, 4), border="replicate",
    ...                  fill=(0.0,), interp="linear").tolist()
    [[1.0, 2.0, 3.0, 3.0]]
    """
    p = to_planes(x, perm, layout)
    f, c, h_in, w_in = p.shape
    h, w = out_hw
    dev = x.device
    if p.numel() == 0 or h == 0 or w == 0:
        out = torch.zeros((f, c, h, w), dtype=x.dtype, device=dev)
        return from_planes(out, perm, x.shape)
    m = upload(np.asarray(matrix, np.float64), torch.device(dev))
    gy, gx = torch.meshgrid(
        torch.arange(h, dtype=torch.float64, device=dev),
        torch.arange(w, dtype=torch.float64, device=dev),
        indexing="ij",
    )
    z = m[2, 0] * gx + m[2, 1] * gy + m[2, 2]
    z = torch.where(z == 0, torch.ones_like(z), z)
    sx = (m[0, 0] * gx + m[0, 1] * gy + m[0, 2]) / z
    sy = (m[1, 0] * gx + m[1, 1] * gy + m[1, 2]) / z
    planes = p.reshape(f * c, h_in, w_in).to(torch.float32)
    fills = upload(np.asarray(list(fill) * f, np.float32), torch.device(dev))[:, None, None]
    if interp == "nn":
        taps_x, wx = [torch.round(sx).long()], [torch.ones_like(sx)]
        taps_y, wy = [torch.round(sy).long()], [torch.ones_like(sy)]
    else:
        x0, y0 = torch.floor(sx), torch.floor(sy)
        tx, ty = sx - x0, sy - y0
        if interp == "linear":
            offs, wx, wy = (0, 1), [1 - tx, tx], [1 - ty, ty]
        else:
            offs, wx, wy = (-1, 0, 1, 2), _cubic(tx), _cubic(ty)
        taps_x = [x0.long() + o for o in offs]
        taps_y = [y0.long() + o for o in offs]
    acc = torch.zeros((f * c, h, w), dtype=torch.float64, device=dev)
    for iy, wyk in zip(taps_y, wy):
        my = _map_border(iy, h_in, border)
        oky = (iy >= 0) & (iy < h_in)
        for ix, wxk in zip(taps_x, wx):
            mx = _map_border(ix, w_in, border)
            v = planes[:, my, mx]
            if border == "constant":
                ok = oky & (ix >= 0) & (ix < w_in)
                v = torch.where(ok, v, fills)
            acc += v.double() * (wyk * wxk)
    out = saturate(acc.to(torch.float32), x.dtype).reshape(f, c, h, w)
    return from_planes(out, perm, x.shape)
