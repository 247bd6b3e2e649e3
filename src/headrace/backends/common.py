"""Backend-neutral helpers shared by the CPU (``backends/cpu``) and torch (``backends/torch``)
kernels.

Everything here is plain numpy computed on the host, so both backends derive the same values
(noise fields, random offsets, sampling points, border indices) from the same plan. Backend
modules import this module; they never import each other.

Examples
--------
>>> reflect101_indices(3, 2).tolist()
[2, 1, 0, 1, 2, 1, 0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

_F32 = np.float32

# ================================================================================================
# Filters (``backends/<backend>/filters.py``): border indices, noise fields, jitter offsets,
# grid masks and displacement points. The random ones are deterministic functions of a plan's
# ``seed`` (numpy PCG64), so the CPU and the torch kernels produce identical values.
# ================================================================================================


def reflect101_indices(n: int, r: int) -> np.ndarray:
    """Source indices of a length-``n`` axis padded by ``r`` on both sides (reflect-101).

    A single sample mirrors onto itself.

    Examples
    --------
    >>> reflect101_indices(3, 2).tolist()
    [2, 1, 0, 1, 2, 1, 0]
    >>> reflect101_indices(1, 1).tolist()
    [0, 0, 0]
    """
    idx = np.arange(-r, n + r)
    if n == 1:
        return np.zeros_like(idx)
    period = 2 * (n - 1)
    idx = np.abs(idx) % period
    return np.where(idx >= n, period - idx, idx)


def noise_generator(seed: int) -> np.random.Generator:
    """The numpy generator that expands a sampler's ``seed``.

    Examples
    --------
    >>> float(noise_generator(1).random()) == float(noise_generator(1).random())
    True
    """
    return np.random.Generator(np.random.PCG64(seed))


def gaussian_field(seed: int, shape: Sequence[int], mean: float, stddev: float) -> np.ndarray:
    """The float32 noise that ``noise.gaussian`` adds for ``seed``.

    Examples
    --------
    >>> gaussian_field(3, (2,), 0.0, 0.0).tolist()
    [0.0, 0.0]
    """
    n = noise_generator(seed).standard_normal(tuple(shape), dtype=_F32)
    n *= _F32(stddev)
    n += _F32(mean)
    return n


def salt_pepper_masks(
    seed: int, shape: Sequence[int], prob: float, salt_vs_pepper: float, channel_axis: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean (salt, pepper) masks, broadcastable to ``shape``.

    Examples
    --------
    >>> s, p = salt_pepper_masks(0, (3, 4, 3), 1.0, 1.0, 2)
    >>> s.shape, bool(s.all()), bool(p.any())
    ((3, 4, 1), True, False)
    """
    draw_shape = list(shape)
    if channel_axis is not None:
        draw_shape[channel_axis] = 1
    u = noise_generator(seed).random((2, *draw_shape), dtype=_F32)
    hit = u[0] < prob
    salt = hit & (u[1] < salt_vs_pepper)
    return salt, hit & ~salt


def shot_field(seed: int, x: np.ndarray, factor: float) -> np.ndarray:
    """``Poisson(max(0, x / factor)) * factor`` as float32 (``x`` itself when factor is 0).

    Examples
    --------
    >>> shot_field(0, np.zeros(3, np.uint8), 10.0).tolist()
    [0.0, 0.0, 0.0]
    """
    if factor == 0:
        return x.astype(_F32)
    lam = np.maximum(x.astype(np.float64) / factor, 0.0)
    return (noise_generator(seed).poisson(lam) * factor).astype(_F32)


def jitter_offsets(seed: int, shape: Sequence[int], n_degree: int) -> tuple[np.ndarray, ...]:
    """Integer (dy, dx) offsets per pixel component for ``jitter``.

    Examples
    --------
    >>> dy, dx = jitter_offsets(0, (5, 5, 3), 2)
    >>> int(dy.min()) >= -1 and int(dx.max()) <= 1
    True
    """
    lo = -(n_degree >> 1)
    d = noise_generator(seed).integers(lo, lo + n_degree + 1, (2, *shape), dtype=np.int32)
    return d[0], d[1]


def jitter_indices(seed: int, shape: Sequence[int], n_degree: int) -> np.ndarray:
    """Flat source indices (H*W*C) of every output component of ``jitter``.

    Examples
    --------
    >>> jitter_indices(0, (2, 2, 1), 0).tolist()
    [0, 1, 2, 3]
    """
    h, w, c = shape
    dy, dx = jitter_offsets(seed, shape, n_degree)
    ys = np.clip(np.arange(h, dtype=np.int64)[:, None, None] + dy, 0, h - 1)
    xs = np.clip(np.arange(w, dtype=np.int64)[None, :, None] + dx, 0, w - 1)
    cs = np.arange(c, dtype=np.int64)[None, None, :]
    return ((ys * w + xs) * c + cs).ravel()


def grid_keep_mask(
    h: int, w: int, *, tile: int, ratio: float, angle: float, shift_x: float, shift_y: float
) -> np.ndarray:
    """Boolean (h, w) mask of the pixels ``grid_mask`` keeps (float32 math, as DALI).

    Examples
    --------
    >>> grid_keep_mask(1, 4, tile=2, ratio=0.5, angle=0.0, shift_x=0.0, shift_y=0.0).tolist()
    [[False, True, False, True]]
    """
    ca = _F32(math.cos(angle)) / _F32(tile)
    sa = _F32(math.sin(angle)) / _F32(tile)
    sx, sy = _F32(shift_x) / _F32(tile), _F32(shift_y) / _F32(tile)
    ys = np.arange(h, dtype=_F32)[:, None]
    xs = np.arange(w, dtype=_F32)[None, :]
    fx = (-sx + ys * -sa) + xs * ca
    fy = (-sy + ys * ca) + xs * sa
    r = _F32(ratio)
    return ((fx - np.floor(fx)) >= r) | ((fy - np.floor(fy)) >= r)


def water_points(h: int, w: int, wave: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Source points (x, y) of ``water`` for every output pixel (float32, DALI's formula).

    Examples
    --------
    >>> px, py = water_points(2, 3, (0.0, 0.0, 0.1, 0.1, 0.0, 0.0))
    >>> px.tolist()
    [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    """
    ax, ay, fx, fy, phx, phy = (_F32(v) for v in wave)
    ys = np.arange(h, dtype=_F32)[:, None]
    xs = np.arange(w, dtype=_F32)[None, :]
    px = xs + ax * np.sin(fx * ys + phx)
    py = ys + ay * np.cos(fy * xs + phy)
    return np.broadcast_to(px, (h, w)), np.broadcast_to(py, (h, w))


def sphere_points(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Source points (x, y) of ``sphere`` for every output pixel (float32, DALI's formula).

    Examples
    --------
    >>> px, py = sphere_points(2, 2)
    >>> px.shape
    (2, 2)
    """
    mid_x, mid_y = _F32(w * 0.5), _F32(h * 0.5)
    d = _F32(int(max(mid_x, mid_y)))
    ty = np.arange(h, dtype=_F32)[:, None] + _F32(0.5) - mid_y
    tx = np.arange(w, dtype=_F32)[None, :] + _F32(0.5) - mid_x
    rad = np.sqrt(tx * tx + ty * ty) / d
    return mid_x + rad * tx, mid_y + rad * ty
