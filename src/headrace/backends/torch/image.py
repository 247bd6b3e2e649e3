"""Torch image kernels (names and plans as on the CPU).

``equalize`` counts histograms on the device and applies OpenCV's table (built on the host
from the 256 counts by :func:`headrace.backends.shared.common.equalize_lut`): identical to the CPU.
``filter`` pads with the shared border indices and correlates with ``conv2d`` in float32:
integer outputs within 1 of the CPU kernel (rounding of float sums), float32 within 1e-4
relative. ``clahe``, ``debayer`` and ``jpeg_compression_distortion`` run the CPU kernels on the
host and upload the result (identical to the CPU).

Examples
--------
>>> import torch
>>> x = torch.tensor([[10, 20], [20, 30]], dtype=torch.uint8)
>>> equalize(x, "HW", perm=(0, 1)).tolist()
[[0, 170], [170, 255]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from headrace._core.storage import to_numpy_view
from headrace.backends.shared import common as _common
from headrace.backends.shared import host_pixels as _host
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload


def to_planes(x: torch.Tensor, perm: tuple[int, ...], layout: str | None) -> torch.Tensor:
    """``x`` as ``(frames, channels, H, W)``."""
    v = x.permute(perm)
    lead = 1 if layout and "F" in layout else 0
    f = v.shape[0] if lead else 1
    return v.reshape(f, int(np.prod(v.shape[lead:-2])), *v.shape[-2:])


def from_planes(v: torch.Tensor, perm: tuple[int, ...], shape: Sequence[int]) -> torch.Tensor:
    """Undo :func:`to_planes` for planes of (possibly new) height and width."""
    t = [shape[p] for p in perm]
    t[-2:] = v.shape[-2:]
    return v.reshape(t).permute(tuple(int(i) for i in np.argsort(perm))).contiguous()


def _on_host(fn: Callable[..., np.ndarray]) -> Callable[..., torch.Tensor]:
    """Run the CPU kernel ``fn`` on the host copy of the sample and upload the result."""

    def kern(x: torch.Tensor, layout: str | None, **kw: Any) -> torch.Tensor:
        host = to_numpy_view(x.detach().cpu())
        return upload(fn(host, layout, **kw), x.device)

    kern.__name__ = kern.__qualname__ = fn.__name__
    kern.__doc__ = f"The CPU kernel ``{fn.__name__}`` on the host, uploaded."
    return kern


clahe = _on_host(_host.clahe)
debayer = _on_host(_host.debayer)
jpeg_compression_distortion = _on_host(_host.jpeg_compression_distortion)


def equalize(x: torch.Tensor, layout: str | None, *, perm: tuple[int, ...]) -> torch.Tensor:
    """OpenCV's ``equalizeHist`` on every channel of every frame.

    Examples
    --------
    >>> equalize(torch.tensor([[5, 5], [9, 9]], dtype=torch.uint8), "HW", perm=(0, 1)).tolist()
    [[0, 0], [255, 255]]
    """
    p = to_planes(x, perm, layout)
    flat = p.reshape(-1, p.shape[-2] * p.shape[-1]).long()
    if flat.numel() == 0:
        return x.clone()
    hist = torch.zeros((flat.shape[0], 256), dtype=torch.int64, device=x.device)
    hist.scatter_add_(1, flat, torch.ones_like(flat))
    luts = np.stack([_common.equalize_lut(h) for h in hist.cpu().numpy()])
    lut = upload(luts, x.device)
    out = torch.gather(lut, 1, flat).to(torch.uint8).reshape(p.shape)
    return from_planes(out, perm, x.shape)


def pad_planes(v: torch.Tensor, pads: tuple[int, int, int, int], border: str,
               fill: float) -> torch.Tensor:  # fmt: skip
    """Pad the last two axes of ``v`` by ``(top, bottom, left, right)`` with ``border``."""
    top, bottom, left, right = pads
    if not any(pads):
        return v
    if border == "constant":
        return F.pad(v, (left, right, top, bottom), value=float(fill))
    iy = upload(_common.padded_indices(v.shape[-2], top, bottom, border), v.device)
    ix = upload(_common.padded_indices(v.shape[-1], left, right, border), v.device)
    return v.index_select(-2, iy).index_select(-1, ix)


def filter(
    x: torch.Tensor,
    layout: str | None,
    *,
    perm: tuple[int, ...],
    kernels: Sequence[np.ndarray],
    pads: tuple[int, int, int, int],
    border: str,
    fill: float,
    dtype: np.dtype,
) -> torch.Tensor:
    """Correlate every plane with its frame's filter (float32), then convert to ``dtype``.

    Examples
    --------
    >>> x = torch.arange(5, dtype=torch.float32).reshape(1, 5)
    >>> k = np.array([[0.0, 0.0, 1.0]], np.float32)
    >>> filter(x, "HW", perm=(0, 1), kernels=[k], pads=(0, 0, 1, 1), border="replicate",
    ...        fill=0.0, dtype=np.dtype("float32")).tolist()
    [[1.0, 2.0, 3.0, 4.0, 4.0]]
    """
    p = to_planes(x, perm, layout).to(torch.float32)
    kh, kw = kernels[0].shape
    f, c, h, w = p.shape
    ho, wo = h + pads[0] + pads[1] - kh + 1, w + pads[2] + pads[3] - kw + 1
    if p.numel() == 0 or ho <= 0 or wo <= 0:
        out = torch.zeros((f, c, max(ho, 0), max(wo, 0)), dtype=torch.float32, device=x.device)
    else:
        padded = pad_planes(p, pads, border, fill)
        ws = [upload(k, x.device)[None, None] for k in kernels]
        frames = [F.conv2d(padded[i][:, None], ws[i if len(ws) > 1 else 0])[:, 0] for i in range(f)]
        out = torch.stack(frames)
    return from_planes(saturate(out, dtype), perm, x.shape)
