"""COCO segmentation masks: the RLE format (uncompressed counts and the compressed string) and
the COCO polygon rasterisation (the rule of the COCO API, which the reference follows).

RLE: ``counts`` are run lengths over the mask in column-major order (down each column, then the
next column), starting with a run of zeros. The compressed string stores each count (from the
fourth on, as the difference with the count two places before) as little-endian groups of 5
bits, each written as ``chr(48 + bits | 0x20 * more)``; the last group's bit 0x10 is the sign.

Examples
--------
>>> rle_decode([1, 2, 1], 2, 2).tolist()
[[0, 1], [1, 0]]
>>> rle_decode(rle_encode_string([1, 2, 1]), 2, 2).tolist()
[[0, 1], [1, 0]]
>>> polygon_mask([0, 0, 2, 0, 2, 2, 0, 2], 3, 3).tolist()
[[1, 1, 0], [1, 1, 0], [0, 0, 0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def rle_string_counts(s: str) -> list[int]:
    """The counts of a compressed RLE string."""
    counts: list[int] = []
    p = 0
    while p < len(s):
        x = k = 0
        more = True
        while more:
            if p >= len(s):
                raise ValueError("the compressed RLE string ends inside a count")
            c = ord(s[p]) - 48
            if c < 0 or c > 63:
                raise ValueError(f"invalid character {s[p]!r} in the compressed RLE string")
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts


def rle_encode_string(counts: Sequence[int]) -> str:
    """The compressed RLE string of ``counts`` (the inverse of :func:`rle_string_counts`)."""
    out = []
    for i, x in enumerate(counts):
        x = int(x) - (int(counts[i - 2]) if i > 2 else 0)
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = x != -1 if c & 0x10 else x != 0
            out.append(chr(48 + (c | 0x20 if more else c)))
    return "".join(out)


def rle_decode(counts: str | Sequence[int], h: int, w: int) -> np.ndarray:
    """The uint8 ``(h, w)`` mask of an RLE (counts or compressed string)."""
    cnt = rle_string_counts(counts) if isinstance(counts, str) else [int(c) for c in counts]
    if any(c < 0 for c in cnt):
        raise ValueError("negative run length in the RLE counts")
    total = sum(cnt)
    if total != h * w:
        raise ValueError(
            f"the RLE counts cover {total} pixels, the mask size [{h}, {w}] has {h * w}"
        )
    vals = np.arange(len(cnt), dtype=np.uint8) & 1
    flat = np.repeat(vals, cnt)
    return np.ascontiguousarray(flat.reshape(w, h).T)


def _poly_counts(xy: Sequence[float], h: int, w: int) -> list[int]:
    """RLE counts of one polygon, by the COCO API's rule: the outline is traced on a 5x finer
    grid, its crossings of pixel-column centres give run boundaries."""
    scale = 5.0
    k = len(xy) // 2
    x = [int(scale * float(xy[2 * j]) + 0.5) for j in range(k)]
    y = [int(scale * float(xy[2 * j + 1]) + 0.5) for j in range(k)]
    x.append(x[0])
    y.append(y[0])
    u: list[int] = []
    v: list[int] = []
    for j in range(k):
        xs, xe, ys, ye = x[j], x[j + 1], y[j], y[j + 1]
        dx, dy = abs(xe - xs), abs(ys - ye)
        flip = (dx >= dy and xs > xe) or (dx < dy and ys > ye)
        if flip:
            xs, xe, ys, ye = xe, xs, ye, ys
        if dx >= dy:
            s = (ye - ys) / dx if dx else 0.0
            for d in range(dx + 1):
                t = dx - d if flip else d
                u.append(t + xs)
                v.append(int(ys + s * t + 0.5))
        else:
            s = (xe - xs) / dy
            for d in range(dy + 1):
                t = dy - d if flip else d
                v.append(t + ys)
                u.append(int(xs + s * t + 0.5))
    bounds: list[int] = []
    for j in range(1, len(u)):
        if u[j] == u[j - 1]:
            continue
        xd = float(u[j] if u[j] < u[j - 1] else u[j] - 1)
        xd = (xd + 0.5) / scale - 0.5
        if math.floor(xd) != xd or xd < 0 or xd > w - 1:
            continue
        yd = float(v[j] if v[j] < v[j - 1] else v[j - 1])
        yd = (yd + 0.5) / scale - 0.5
        yd = math.ceil(min(max(yd, 0.0), float(h)))
        bounds.append(int(xd) * h + int(yd))
    bounds.append(h * w)
    bounds.sort()
    diffs, prev = [], 0
    for b in bounds:
        diffs.append(b - prev)
        prev = b
    counts = [diffs[0]]
    j = 1
    while j < len(diffs):
        if diffs[j] > 0:
            counts.append(diffs[j])
            j += 1
        else:
            j += 1
            if j < len(diffs):
                counts[-1] += diffs[j]
                j += 1
    return counts


def polygon_mask(xy: Sequence[float], h: int, w: int) -> np.ndarray:
    """The uint8 ``(h, w)`` mask of one polygon ``[x0, y0, x1, y1, ...]`` (COCO rule)."""
    return rle_decode(_poly_counts(xy, h, w), h, w)


__all__ = ["polygon_mask", "rle_decode", "rle_encode_string", "rle_string_counts"]
