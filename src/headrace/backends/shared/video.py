"""Video decoding on the host with PyAV (FFmpeg): frame indices, frame-accurate seeking,
sequence padding.

PyAV is an optional dependency (``pip install headrace[video]``), imported on first use. Frames
are numbered in presentation order from 0; a file's *index* (the presentation timestamps of all
its frames, read from the demuxed packets without decoding) turns a frame number into a
timestamp to seek to, so a clip deep in a long file decodes from the key frame before it only.

Examples
--------
>>> [pad_frame(k, 3, "symmetric") for k in range(3, 6)]
[2, 1, 0]
>>> [pad_frame(k, 3, "reflect") for k in range(3, 6)]
[1, 0, 1]
"""

from __future__ import annotations

import importlib
import io
import os
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace._dispatch.args import has_per_sample, sample_args

#: ``pad_mode`` spellings and the padding each one means.
PAD_MODES = {
    "none": "none",
    "constant": "constant",
    "edge": "edge",
    "repeat": "edge",
    "reflect_1001": "symmetric",
    "symmetric": "symmetric",
    "reflect_101": "reflect",
    "reflect": "reflect",
}


def load_av(op: str) -> Any:
    """The ``av`` module, or an ImportError saying which extra to install."""
    try:
        return importlib.import_module("av")
    except ImportError as e:
        raise ImportError(
            f"{op} needs PyAV: pip install headrace[video]  (or: pip install 'av>=12')."
        ) from e


def _open(av: Any, src: str | np.ndarray) -> Any:
    if isinstance(src, (str, os.PathLike)):
        return av.open(os.fspath(src))
    return av.open(io.BytesIO(memoryview(np.ascontiguousarray(src))))


@dataclass(frozen=True)
class VideoIndex:
    """The frames of a file's first video stream: presentation timestamps (stream time base) in
    presentation order, key-frame flags, the time base (seconds) and the average frame rate."""

    pts: np.ndarray
    keyframe: np.ndarray
    time_base: float
    fps: float

    def __len__(self) -> int:
        return len(self.pts)

    def timestamps(self) -> np.ndarray:
        """Each frame's presentation time in seconds (float32)."""
        return (self.pts.astype(np.float64) * self.time_base).astype(np.float32)

    def variable_rate(self) -> bool:
        """Whether the frames are not evenly spaced (beyond one tick of rounding)."""
        if len(self.pts) < 3:
            return False
        d = np.diff(self.pts)
        return bool(d.max() - d.min() > 1)


def build_index(op: str, src: str | np.ndarray) -> VideoIndex:
    """Demux ``src`` (a path or the file's bytes) and index its first video stream's frames."""
    av = load_av(op)
    with _open(av, src) as c:
        if not c.streams.video:
            raise ValueError("no video stream")
        s = c.streams.video[0]
        pts: list[int] = []
        keys: list[bool] = []
        for p in c.demux(s):
            if p.size == 0 or p.pts is None:
                continue
            pts.append(int(p.pts))
            keys.append(bool(p.is_keyframe))
        order = np.argsort(np.asarray(pts, np.int64), kind="stable")
        tb = float(s.time_base) if s.time_base is not None else 0.0
        rate = s.average_rate or s.guessed_rate
        fps = float(rate) if rate else (1.0 / tb if tb else 0.0)
    return VideoIndex(np.asarray(pts, np.int64)[order], np.asarray(keys, bool)[order], tb, fps)


_local = threading.local()
#: Every reformatter made, kept alive for the life of the process. After ``fork`` the child drops
#: the other threads' thread-locals; freeing a reformatter there waits forever on swscale's
#: worker threads, which the child does not have (a DataLoader worker forked after video decoding
#: hung in ``sws_freeContext``). Held here, they are never freed in a child. One per thread.
_REFORMATTERS: list[Any] = []


def _rgb(frame: Any) -> np.ndarray:
    """A decoded frame as RGB ``HxWx3`` uint8, through this thread's reformatter (it keeps its
    swscale context between frames of the same size and format: ~4x faster than creating one
    per frame, same pixels)."""
    r = getattr(_local, "reformatter", None)
    if r is None:
        from av.video.reformatter import VideoReformatter

        r = _local.reformatter = VideoReformatter()
        _REFORMATTERS.append(r)
    return r.reformat(frame, format="rgb24").to_ndarray()


def _decode_wanted(c: Any, s: Any, index: VideoIndex, need: list[int]) -> dict[int, np.ndarray]:
    """Frames ``need`` (sorted, in range) of stream ``s``, decoded from the key frame before the
    first one. A stream of key frames only (MJPEG, intra-only codecs) has its other packets
    skipped undecoded."""
    by_pts = {int(p): k for k, p in enumerate(index.pts)}
    if need[0] > 0:
        c.seek(int(index.pts[need[0]]), backward=True, any_frame=False, stream=s)
    want = set(need)
    got: dict[int, np.ndarray] = {}

    def take(frames: Any) -> bool:  # True once every wanted frame is there, or past them
        for f in frames:
            k = by_pts.get(int(f.pts)) if f.pts is not None else None
            if k is None:
                continue
            if k in want:
                got[k] = _rgb(f)
                want.discard(k)
                if not want:
                    return True
            elif k > need[-1]:
                return True
        return False

    if bool(index.keyframe.all()):
        done = False
        for p in c.demux(s):
            k = by_pts.get(int(p.pts)) if p.pts is not None else None
            if p.size and k is not None and k in want and take(s.decode(p)):
                done = True
                break
            if k is not None and k > need[-1]:
                break
        if not done:
            take(s.decode(None))  # frames still inside a frame-threaded decoder
    else:
        take(c.decode(s))
    if want:
        raise ValueError(f"frames {sorted(want)[:4]} missing from the stream")
    return got


def decode_frames(
    op: str, src: str | np.ndarray, wanted: list[int] | None, index: VideoIndex | None = None
) -> tuple[dict[int, np.ndarray], int]:
    """The frames numbered ``wanted`` (RGB, ``HxWx3`` uint8; ``None``: all) that the file has,
    and how many frames the file has (counted up to the last one needed when there is no
    ``index``).

    With an ``index`` the decoder seeks to the key frame before the first wanted frame; without
    one it decodes from the start and stops after the last wanted frame.
    """
    av = load_av(op)
    every = wanted is None
    if wanted is None:
        wanted = list(range(len(index))) if index is not None else []
    need = sorted({i for i in wanted if i >= 0 and (index is None or i < len(index))})
    got: dict[int, np.ndarray] = {}
    if index is not None and not need:
        return got, len(index)
    with _open(av, src) as c:
        if not c.streams.video:
            raise ValueError("no video stream")
        s = c.streams.video[0]
        s.thread_type = "AUTO"
        if index is not None:
            return _decode_wanted(c, s, index, need), len(index)
        last = need[-1] if need else -1
        want = set(need)
        n = 0
        for f in c.decode(s):
            if every or n in want:
                got[n] = _rgb(f)
            n += 1
            if not every and n > last:
                break
        return got, n


def pad_frame(k: int, n: int, mode: str) -> int:
    """The frame of a video of ``n`` frames that stands for frame ``k >= n`` under ``mode``
    (``"edge"``, ``"symmetric"`` or ``"reflect"``, as ``numpy.pad`` of the frame numbers)."""
    if n <= 0:
        raise ValueError("no frame to pad from")
    return int(np.pad(np.arange(n), (0, k - n + 1), mode=mode if n > 1 else "edge")[k])


__all__ = ["PAD_MODES", "VideoIndex", "build_index", "decode_frames", "load_av", "pad_frame"]


# --- decoders.video ----------------------------------------------------------------------------
def frame_selection(a: dict[str, Any], n_hint: int | None) -> list[int] | None:
    """The frame numbers ``decoders.video``'s arguments ``a`` select (``None``: every frame);
    ``n_hint`` is the number of frames when known (needed for ``end_frame`` alone)."""
    if a["frames"] is not None:
        return [int(f) for f in np.asarray(a["frames"]).reshape(-1)]
    start = a["start_frame"] or 0
    stride = a["stride"] or 1
    if a["sequence_length"] is not None:
        return [start + k * stride for k in range(a["sequence_length"])]
    if a["end_frame"] is not None:
        return list(range(start, a["end_frame"], stride))
    if start == 0 and stride == 1:
        return None
    return None if n_hint is None else list(range(start, n_hint, stride))


def _check_selection(a: dict[str, Any]) -> None:
    if a["frames"] is not None and any(
        a[k] is not None for k in ("start_frame", "sequence_length", "stride", "end_frame")
    ):
        raise ValueError(
            "frames cannot be combined with start_frame, sequence_length, stride or end_frame"
        )
    if a["sequence_length"] is not None and a["end_frame"] is not None:
        raise ValueError("sequence_length and end_frame cannot be given together")
    for k in ("start_frame", "sequence_length", "end_frame"):
        if a[k] is not None and a[k] < 0:
            raise ValueError(f"{k} must be >= 0, got {a[k]}")
    if a["stride"] is not None and a["stride"] < 1:
        raise ValueError(f"stride must be >= 1, got {a['stride']}")
    if a["frames"] is not None and np.any(np.asarray(a["frames"]) < 0):
        raise ValueError("frames must be non-negative")


def decode_video(op: str, data: np.ndarray, a: dict[str, Any]) -> np.ndarray:
    """One in-memory file's frames as ``decoders.video``'s arguments ``a`` select, ``FHWC``."""
    index = build_index(op, data) if a["build_index"] else None
    n_hint = len(index) if index is not None else None
    sel = frame_selection(a, n_hint)
    if sel is None and index is None and ((a["start_frame"] or 0), (a["stride"] or 1)) != (0, 1):
        index = build_index(op, data)
        sel = frame_selection(a, len(index))
    got, n = decode_frames(op, data, sel, index)
    if sel is None:
        sel = list(range(n))
    if not got and n == 0:
        raise ValueError("the stream has no frames")
    shape = next(iter(got.values())).shape if got else None
    if shape is None:
        # nothing selected is in the video: decode frame 0 for the frame size
        first, _ = decode_frames(op, data, [0], index)
        shape = first[0].shape
    mode = PAD_MODES[a["pad_mode"]]
    fill = a["fill_value"]
    if fill.size not in (1, shape[-1]):
        raise ValueError(
            f"fill_value has {fill.size} values; give one, or one per channel ({shape[-1]})"
        )
    past = [f for f in sel if f >= n]
    if past and mode == "none":
        if a["frames"] is not None:
            raise ValueError(f"frames {past[:4]} are beyond the video's {n} frames")
        sel = [f for f in sel if f < n]
        if not sel:
            return np.zeros((0, *shape), np.uint8)
    if past and mode != "constant":  # frame numbers past the end mirrored or repeated
        m = "edge" if a["frames"] is not None else mode
        sel = [f if f < n else pad_frame(f, n, m) for f in sel]
        more = sorted({f for f in sel if f not in got})
        if more:
            got.update(decode_frames(op, data, more, index)[0])
    pad = np.empty(shape, np.uint8)
    pad[...] = fill
    return np.stack([got.get(f, pad) if f < n else pad for f in sel])


def video(kc: Any, ins: list[Any], v: dict[str, Any]) -> tuple[Any]:
    """``decoders.video``: decode every sample's video file on the worker threads."""
    x = ins[0]
    samples = x._samples
    assert samples is not None
    if x._dtype is not _dt.uint8 or any(s.ndim != 1 for s in samples):
        raise InvalidArgumentError(
            f"{kc.name}: the input must be encoded video files (1-D uint8). Read files with "
            "ndd.readers.File or ndd.io.file.read."
        )
    load_av(kc.name)
    per = has_per_sample(v)

    def one(i: int) -> np.ndarray:
        a = sample_args(v, i) if per else v
        try:
            _check_selection(a)
        except ValueError as e:
            raise InvalidArgumentError(f"{kc.name}: sample {i}: {e}.") from None
        try:
            return decode_video(kc.name, samples[i], a)
        except Exception as e:  # av.error.FFmpegError, ValueError: unreadable data
            if isinstance(e, (InvalidArgumentError, MemoryError, ImportError)):
                raise
            where = kc.source(i)
            raise DecodeError(
                f"{kc.name}: sample {i}{f' ({where!r})' if where else ''}: cannot decode the "
                f"video ({e})."
            ) from e

    out = Batch._wrap(kc.map(one), _dt.uint8, "FHWC", CPU)
    if x._sources is not None:
        out._sources = list(x._sources)
    return (out,)


__all__ += ["decode_video", "frame_selection", "video"]
