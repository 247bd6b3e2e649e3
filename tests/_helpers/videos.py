"""Small test videos written with PyAV: frame ``k`` is coded by its colours, so a decoded frame
names its own number."""

from __future__ import annotations

import importlib.util
import io
import os
from typing import Any

import numpy as np


def has_av() -> bool:
    """Whether PyAV is installed (found without importing it)."""
    return importlib.util.find_spec("av") is not None


def frame(k: int, h: int = 48, w: int = 64) -> np.ndarray:
    """Frame ``k``: red = 7k mod 256, green = k, blue a left/right split by k's parity."""
    img = np.zeros((h, w, 3), np.uint8)
    img[..., 0] = (7 * k) % 256
    img[..., 1] = k
    img[:, : w // 2, 2] = 200 if k % 2 else 50
    return img


def write_video(
    dst: str | os.PathLike[str] | None = None,
    n: int = 32,
    codec: str = "ffv1",
    pix_fmt: str = "bgr0",
    fmt: str = "matroska",
    rate: int = 25,
    h: int = 48,
    w: int = 64,
    **opts: Any,
) -> np.ndarray:
    """Write ``n`` frames (lossless FFV1 in Matroska by default) to ``dst``; return the bytes."""
    import av

    buf = io.BytesIO()
    with av.open(buf, "w", format=fmt) as c:
        s = c.add_stream(codec, rate=rate, options=opts)
        s.width, s.height, s.pix_fmt = w, h, pix_fmt
        for k in range(n):
            for p in s.encode(av.VideoFrame.from_ndarray(frame(k, h, w), format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    data = np.frombuffer(buf.getvalue(), np.uint8).copy()
    if dst is not None:
        data.tofile(os.fspath(dst))
    return data


def pyav_frames(data: np.ndarray) -> list[np.ndarray]:
    """PyAV's own decode of every frame (RGB)."""
    import av

    with av.open(io.BytesIO(data.tobytes())) as c:
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
