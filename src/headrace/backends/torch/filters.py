"""Torch blur, Laplacian, noise, mask and displacement kernels (names and plans as on the CPU).

Noise fields, jitter offsets, grid masks and displacement points are computed on the host by
the numpy helpers of :mod:`headrace.backends.shared.common` (shared with the CPU kernels) from the
plan and moved to the tensor's device once, so CPU and torch kernels produce the same values
(exactly for integer outputs of noise/jitter/grid_mask; ``noise.gaussian`` on float data to
float32 rounding). Blur, Laplacian and displacement sampling run on the device:
``gaussian_blur`` and ``laplacian`` agree with the CPU kernels within 1 (uint8) / 1e-4
(float32, relative for ``laplacian``); ``water``/``sphere`` with NN
exactly (same float32 points), with linear within 1 (uint8).

Examples
--------
>>> import numpy as np, torch
>>> from headrace.ops._filter_params import gaussian_blur_params
>>> img = torch.full((8, 8, 3), 50, dtype=torch.uint8)
>>> plan = gaussian_blur_params(tuple(img.shape), "HWC", np.uint8, sigma=1.5)
>>> bool((gaussian_blur(img, "HWC", **plan.kwargs) == 50).all())
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from headrace.backends.shared import common as _common
from headrace.backends.torch.cast import saturate
from headrace.backends.torch.transfer import upload


def _conv_axis(v: torch.Tensor, w: np.ndarray, axis: int) -> torch.Tensor:
    r = (w.size - 1) // 2
    n = v.shape[axis]
    idx = upload(_common.reflect101_indices(n, r), v.device)
    p = v.index_select(axis, idx)
    out = p.narrow(axis, 0, n) * float(w[0])
    for k in range(1, w.size):
        out = out + p.narrow(axis, k, n) * float(w[k])
    return out


def gaussian_blur(
    x: torch.Tensor,
    layout: str | None,
    *,
    windows: Sequence[np.ndarray],
    axes: tuple[int, ...],
    dtype: np.dtype,
) -> torch.Tensor:
    """Separable Gaussian blur along ``axes`` (reflect-101 borders).

    Examples
    --------
    >>> x = torch.zeros(1, 5); x[0, 2] = 1
    >>> w = np.array([0.25, 0.5, 0.25], np.float32)
    >>> gaussian_blur(x, "HW", windows=[np.ones(1, np.float32), w], axes=(0, 1),
    ...               dtype=np.dtype("float32"))[0].tolist()
    [0.0, 0.25, 0.5, 0.25, 0.0]
    """
    return saturate(_separable(x.to(torch.float32), windows, axes), dtype)


def _separable(
    v: torch.Tensor, windows: Sequence[np.ndarray], axes: tuple[int, ...]
) -> torch.Tensor:
    """Float32 ``v`` correlated with one 1-D window per axis of ``axes`` (reflect-101)."""
    if v.numel():
        for ax, w in zip(axes, windows):
            v = _conv_axis(v, w, ax)
    return v


def laplacian(
    x: torch.Tensor,
    layout: str | None,
    *,
    partials: Sequence[Sequence[np.ndarray]],
    scales: Sequence[float],
    axes: tuple[int, ...],
    dtype: np.dtype,
) -> torch.Tensor:
    """``sum(scales[i] * partial_i)``; partial ``i`` is a separable convolution with the windows
    ``partials[i]``, one per axis of ``axes`` (reflect-101 borders).

    Examples
    --------
    >>> x = torch.zeros(5, 5); x[2, 2] = 1
    >>> d, s = np.array([1, -2, 1], np.float32), np.ones(1, np.float32)
    >>> laplacian(x, "HW", partials=[(d, s), (s, d)], scales=(1.0, 1.0), axes=(0, 1),
    ...           dtype=np.dtype("float32"))[1:4, 1:4].tolist()
    [[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]]
    """
    v = x.to(torch.float32)
    out = _separable(v, partials[0], axes) * float(scales[0])
    for windows, s in zip(partials[1:], scales[1:]):
        out = out + _separable(v, windows, axes) * float(s)
    return saturate(out, dtype)


def _field(a: np.ndarray, like: torch.Tensor) -> torch.Tensor:
    return upload(a, like.device)


def noise_gaussian(
    x: torch.Tensor, layout: str | None, *, seed: int, mean: float, stddev: float
) -> torch.Tensor:
    """``x + N(mean, stddev)``, rounded and saturated to ``x``'s dtype.

    Examples
    --------
    >>> noise_gaussian(torch.full((4,), 10, dtype=torch.uint8), None, seed=0, mean=2.0,
    ...                stddev=0.0).tolist()
    [12, 12, 12, 12]
    """
    n = _field(_common.gaussian_field(seed, tuple(x.shape), mean, stddev), x)
    return saturate(n + x, x.dtype)


def noise_salt_and_pepper(
    x: torch.Tensor,
    layout: str | None,
    *,
    seed: int,
    prob: float,
    salt_vs_pepper: float,
    salt,
    pepper,
    channel_axis: int | None,
) -> torch.Tensor:
    """Replace a ``prob`` fraction of pixels (or values) with ``salt`` or ``pepper``.

    Examples
    --------
    >>> x = torch.full((2, 2, 3), 9, dtype=torch.uint8)
    >>> int(noise_salt_and_pepper(x, "HWC", seed=0, prob=1.0, salt_vs_pepper=0.0, salt=255,
    ...                           pepper=0, channel_axis=2).max())
    0
    """
    s, p = _common.salt_pepper_masks(seed, tuple(x.shape), prob, salt_vs_pepper, channel_axis)
    out = torch.where(_field(s, x), torch.full((), salt, dtype=x.dtype, device=x.device), x)
    return torch.where(_field(p, x), torch.full((), pepper, dtype=x.dtype, device=x.device), out)


def noise_shot(x: torch.Tensor, layout: str | None, *, seed: int, factor: float) -> torch.Tensor:
    """Shot (Poisson) noise; the Poisson draws come from the plan's seed on the host.

    Examples
    --------
    >>> noise_shot(torch.full((3,), 7, dtype=torch.uint8), None, seed=1, factor=0.0).tolist()
    [7, 7, 7]
    """
    host = x.detach().to("cpu", copy=False).numpy() if factor else None
    v = x.to(torch.float32) if host is None else _field(_common.shot_field(seed, host, factor), x)
    return saturate(v, x.dtype)


def jitter(x: torch.Tensor, layout: str | None, *, seed: int, n_degree: int) -> torch.Tensor:
    """Move every pixel component by a random integer offset (clamped to the image).

    Examples
    --------
    >>> x = torch.arange(12, dtype=torch.uint8).reshape(2, 2, 3)
    >>> bool(torch.equal(jitter(x, "HWC", seed=0, n_degree=0), x))
    True
    """
    idx = _field(_common.jitter_indices(seed, tuple(x.shape), n_degree), x)
    return x.reshape(-1)[idx].reshape(x.shape)


def grid_mask(x: torch.Tensor, layout: str | None, **params) -> torch.Tensor:
    """Zero the grid squares of ``grid_mask`` in an HWC or HW image.

    Examples
    --------
    >>> x = torch.ones((1, 4, 1), dtype=torch.uint8)
    >>> grid_mask(x, "HWC", tile=2, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0)[0, :, 0]
    tensor([0, 1, 0, 1], dtype=torch.uint8)
    """
    keep = _field(_common.grid_keep_mask(x.shape[0], x.shape[1], **params), x)
    if x.dim() == 3:
        keep = keep.unsqueeze(-1)
    return torch.where(keep, x, torch.zeros((), dtype=x.dtype, device=x.device))


def remap(
    x: torch.Tensor, px: np.ndarray, py: np.ndarray, fill_value: float, interp: str
) -> torch.Tensor:
    """Sample HWC ``x`` at corner-convention points; outside points take ``fill_value``.

    Examples
    --------
    >>> x = torch.arange(4, dtype=torch.uint8).reshape(1, 4, 1)
    >>> px = np.array([[0.5, 3.9, 4.0, -0.1]], np.float32); py = np.full_like(px, 0.5)
    >>> remap(x, px, py, 9.0, "nn")[0, :, 0].tolist()
    [0, 3, 9, 9]
    """
    h, w = x.shape[:2]
    if interp == "nn":
        ix = _field(np.floor(px).astype(np.int64), x)
        iy = _field(np.floor(py).astype(np.int64), x)
        ok = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        out = x[torch.where(ok, iy, 0), torch.where(ok, ix, 0)]
        fill = upload(saturate(torch.tensor(float(fill_value)), x.dtype), x.device)
        return torch.where(ok.unsqueeze(-1), out, fill)
    gx = _field(np.asarray(px, np.float32) * np.float32(2 / w) - 1, x)
    gy = _field(np.asarray(py, np.float32) * np.float32(2 / h) - 1, x)
    grid = torch.stack([gx, gy], dim=-1).unsqueeze(0)
    v = x.permute(2, 0, 1).unsqueeze(0).to(torch.float32) - float(fill_value)
    out = F.grid_sample(v, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    out = out[0].permute(1, 2, 0) + float(fill_value)
    return saturate(out.contiguous(), x.dtype)


def water(
    x: torch.Tensor, layout: str | None, *, wave: Sequence[float], fill_value: float, interp: str
) -> torch.Tensor:
    """The ``water`` displacement of an HWC image.

    Examples
    --------
    >>> x = torch.arange(6, dtype=torch.uint8).reshape(2, 3, 1)
    >>> water(x, "HWC", wave=(0, 0, 0, 0, 0, 0), fill_value=0.0, interp="nn")[..., 0].tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    px, py = _common.water_points(x.shape[0], x.shape[1], wave)
    return remap(x, px, py, fill_value, interp)


def sphere(x: torch.Tensor, layout: str | None, *, fill_value: float, interp: str) -> torch.Tensor:
    """The ``sphere`` displacement of an HWC image.

    Examples
    --------
    >>> int(sphere(torch.full((4, 4, 1), 5, dtype=torch.uint8), "HWC", fill_value=0.0,
    ...            interp="nn")[2, 2, 0])
    5
    """
    px, py = _common.sphere_points(x.shape[0], x.shape[1])
    return remap(x, px, py, fill_value, interp)


__all__ = [
    "gaussian_blur",
    "grid_mask",
    "jitter",
    "laplacian",
    "noise_gaussian",
    "noise_salt_and_pepper",
    "noise_shot",
    "remap",
    "sphere",
    "water",
]
