"""Torch affine warps (``rotate``, ``warp_affine``) on ``grid_sample``; CPU kernel's contract.

Linear sampling is exact float32 bilinear (``align_corners=False`` matches DALI's corner
convention). Against the CPU kernel: uint8 max abs diff 1 (OpenCV's 1/32-pixel positions),
float32 within ~6e-3 on 0..255 data. Nearest neighbour reads the same pixels as the CPU kernel
(the reference's rule, :mod:`headrace.backends.shared.warp_nn`: ``floor`` of float32 row-wise
running source points, computed on the host), gathered on the device.

Examples
--------
>>> import numpy as np, torch
>>> from headrace.ops._warp_params import rotate_params
>>> img = torch.arange(6, dtype=torch.uint8).reshape(2, 3, 1)
>>> plan = rotate_params(tuple(img.shape), "HWC", np.uint8, angle=180.0)
>>> rotate(img, "HWC", **plan.kwargs)[..., 0].tolist()
[[5, 4, 3], [2, 1, 0]]
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from headrace.backends.shared.warp_nn import nn_source_pixels, rotating
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload


def source_grid(
    matrix: np.ndarray, out_hw: tuple[int, int], in_hw: tuple[int, int], device
) -> torch.Tensor:
    """The ``grid_sample`` grid (1, H, W, 2) of source points for each output pixel centre.

    Examples
    --------
    >>> source_grid(np.array([[1.0, 0, 0], [0, 1, 0]]), (1, 2), (1, 2), "cpu").tolist()
    [[[[-0.5, 0.0], [0.5, 0.0]]]]
    """
    h, w = out_hw
    m = upload(np.asarray(matrix, np.float64), torch.device(device))
    ys = torch.arange(h, dtype=torch.float64, device=device) + 0.5
    xs = torch.arange(w, dtype=torch.float64, device=device) + 0.5
    gy, gx = torch.meshgrid(ys, xs, indexing="ij")
    sx = m[0, 0] * gx + m[0, 1] * gy + m[0, 2]
    sy = m[1, 0] * gx + m[1, 1] * gy + m[1, 2]
    grid = torch.stack([sx * (2.0 / in_hw[1]) - 1.0, sy * (2.0 / in_hw[0]) - 1.0], dim=-1)
    return grid.to(torch.float32).unsqueeze(0)


def _nn_gather(
    v: torch.Tensor, matrix: np.ndarray, out_hw: tuple[int, int], fill_value: float | None
) -> torch.Tensor:
    """Nearest neighbour of ``v`` (N, H, W, C): the pixels ``nn_source_pixels`` picks; outside
    the input, ``fill_value`` or (without one) the nearest edge pixel."""
    n, h_in, w_in, c = v.shape
    sx, sy = nn_source_pixels(matrix, out_hw)
    ix = np.clip(sx, -1, w_in).astype(np.int64)
    iy = np.clip(sy, -1, h_in).astype(np.int64)
    if fill_value is None:
        lin = np.clip(iy, 0, h_in - 1) * w_in + np.clip(ix, 0, w_in - 1)
    else:
        inside = (ix >= 0) & (ix < w_in) & (iy >= 0) & (iy < h_in)
        lin = np.where(inside, iy * w_in + ix, -1)
    idx = upload(lin.astype(np.int32), v.device).long()
    out = v.reshape(n, h_in * w_in, c)[:, idx.clamp(min=0)]
    if fill_value is not None:
        out = out.masked_fill((idx < 0)[None, :, :, None], fill_value)
    return out


def warp_affine(
    x: torch.Tensor,
    layout: str | None,
    *,
    matrix: np.ndarray,
    out_hw: tuple[int, int],
    fill_value: float | None,
    interp: str,
    dtype: np.dtype,
) -> torch.Tensor:
    """Sample ``x`` at ``matrix @ (x + 0.5, y + 0.5, 1)`` for every output pixel.

    Nearest neighbour reads pixel ``(floor(sx), floor(sy))`` of the reference's float32 source
    points (exact half-pixel ties go to the pixel whose corner they are); linear is
    ``grid_sample``'s bilinear.

    Examples
    --------
    >>> x = torch.arange(4, dtype=torch.float32).reshape(1, 4, 1)
    >>> warp_affine(x, "HWC", matrix=np.array([[1.0, 0, 1], [0, 1, 0]]), out_hw=(1, 4),
    ...             fill_value=None, interp="nn", dtype=np.dtype("float32"))[0, :, 0].tolist()
    [1.0, 2.0, 3.0, 3.0]
    """
    frames = layout is not None and layout.startswith("F")
    v = x if frames else x.unsqueeze(0)
    squeeze_c = v.dim() == 3  # HW / FHW
    if squeeze_c:
        v = v.unsqueeze(-1)
    n, h_in, w_in, c = v.shape
    h, w = out_hw
    if h == 0 or w == 0 or v.numel() == 0:
        out = torch.zeros((n, h, w, c), dtype=torch.float32, device=x.device)
    elif interp == "nn":
        out = _nn_gather(v, matrix, out_hw, fill_value)
    else:
        grid = source_grid(matrix, out_hw, (h_in, w_in), x.device).expand(n, h, w, 2)
        v = v.permute(0, 3, 1, 2).to(torch.float32)
        fill = 0.0 if fill_value is None else float(fill_value)
        if fill:
            v = v - fill
        mode = "nearest" if interp == "nn" else "bilinear"
        pad = "border" if fill_value is None else "zeros"
        out = F.grid_sample(v, grid, mode=mode, padding_mode=pad, align_corners=False)
        if fill:
            out = out + fill
        out = out.permute(0, 2, 3, 1)
    if squeeze_c:
        out = out[..., 0]
    if not frames:
        out = out[0]
    return saturate(out.contiguous(), dtype)


rotate = rotating(warp_affine)
