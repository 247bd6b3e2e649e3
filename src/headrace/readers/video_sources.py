"""What the video readers share: the files to read (``filenames`` / ``file_list`` /
``file_root``), their frame indexes, and a dataset of clips (a file and the frame numbers of one
output sequence) decoded with PyAV.

Examples
--------
>>> clip_frames(10, 8, 4, 1)
[8, 9, -1, -1]
>>> uniform_frames(0, 3, 5)
[0, 1, 1, 2, 2]
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import handoff as _ho
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import Device
from headrace._core.errors import DecodeError, InvalidArgumentError, InvalidTypeError
from headrace._core.tensor import Tensor
from headrace.backends.shared.video import VideoIndex, build_index, decode_frames
from headrace.codecs.convert import rgb_to_ycbcr
from headrace.readers._base import as_path, as_paths
from headrace.readers.file import MissingFileError, scan_folder

#: ``enable_frame_num`` spellings.
_FRAME_NUM = {"none": None, "scalar": "scalar", "sequence": "sequence"}


def frame_num_mode(op: str, v: Any) -> str | None:
    """``None``, ``"scalar"`` or ``"sequence"`` from an ``enable_frame_num`` value."""
    if v is None or v is False:
        return None
    if v is True:
        return "scalar"
    if isinstance(v, str) and v in _FRAME_NUM:
        return _FRAME_NUM[v]
    raise InvalidArgumentError(
        f"{op}: enable_frame_num must be False/'none', True/'scalar' or 'sequence', got {v!r}."
    )


def image_type_name(op: str, image_type: Any) -> str:
    """``"RGB"`` or ``"YCBCR"`` from an ``image_type`` value (name or enum member)."""
    name = "RGB" if image_type is None else str(getattr(image_type, "name", image_type)).upper()
    if name not in ("RGB", "YCBCR"):
        raise InvalidArgumentError(f"{op}: image_type must be RGB or YCbCr, got {image_type}.")
    return name


def parse_video_list(
    op: str, path: str, root: str | None
) -> list[tuple[str, int, float | None, float | None]]:
    """``(path, label, start, end)`` of every ``file label [start [end]]`` line."""
    if not os.path.isfile(path):
        raise MissingFileError(errno.ENOENT, f"{op}: file_list does not exist", path)
    base = root if root is not None else os.path.dirname(os.path.abspath(path))
    out: list[tuple[str, int, float | None, float | None]] = []
    with open(path, encoding="utf-8") as f:
        for k, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                if len(parts) > 4:
                    raise ValueError("too many fields")
                label = int(parts[1]) if len(parts) > 1 else 0
                start = float(parts[2]) if len(parts) > 2 else None
                end = float(parts[3]) if len(parts) > 3 else None
            except ValueError as e:
                raise InvalidArgumentError(
                    f"{op}: {path}:{k}: expected 'file label [start [end]]' ({e}): {line!r}."
                ) from None
            out.append((os.path.join(base, parts[0]), label, start, end))
    if not out:
        raise MissingFileError(errno.ENOENT, f"{op}: file_list lists no files", path)
    return out


def _short(op: str) -> str:
    return op.rsplit("readers.", 1)[-1]


@dataclass
class Sources:
    """The files to read, their labels (``None``: no label output) and ``file_list`` ranges."""

    paths: list[str]
    labels: list[int] | None
    ranges: list[tuple[float | None, float | None]]


def resolve_sources(
    op: str, filenames: Any, labels: Any, file_list: Any, file_root: Any
) -> Sources:
    """The files named by ``filenames`` (with ``labels``), ``file_list`` or ``file_root``."""
    root = os.fsdecode(file_root) if file_root is not None else None
    if filenames is not None and file_list is not None:
        raise InvalidArgumentError(f"{op}: give filenames or file_list, not both.")
    if filenames is not None:
        if isinstance(filenames, (str, bytes, os.PathLike)):
            filenames = [filenames]
        if not isinstance(filenames, Sequence):
            raise InvalidTypeError(f"{op}: filenames must be a list of paths.")
        paths = [
            os.path.join(root, p) if root else p
            for p in as_paths(filenames, "filenames", _short(op))
        ]
        labs = None if labels is None else [int(v) for v in np.asarray(labels).reshape(-1)]
        if labs is not None and len(labs) != len(paths):
            raise InvalidArgumentError(
                f"{op}: {len(paths)} filenames but {len(labs)} labels; give one per file."
            )
        src = Sources(paths, labs, [(None, None)] * len(paths))
    elif file_list is not None:
        entries = parse_video_list(op, as_path(file_list, "file_list", _short(op)), root)
        src = Sources(
            [e[0] for e in entries], [e[1] for e in entries], [(e[2], e[3]) for e in entries]
        )
    elif root is not None:
        paths, labs = scan_folder(root, ["*"])
        src = Sources(paths, labs, [(None, None)] * len(paths))
    else:
        raise InvalidArgumentError(f"{op}: give filenames, file_list or file_root.")
    if not src.paths:
        raise InvalidArgumentError(f"{op}: no files to read.")
    return src


def index_files(op: str, paths: list[str], vfr_check: bool) -> list[VideoIndex]:
    """Each file's frame index; a missing or unreadable file (or, with ``vfr_check``, one of
    variable frame rate) is an error naming it."""
    out: list[VideoIndex] = []
    for p in paths:
        if not os.path.isfile(p):
            raise MissingFileError(errno.ENOENT, f"{op}: no such video file", p)
        try:
            idx = build_index(op, p)
        except Exception as e:  # av.error.FFmpegError, ValueError
            raise DecodeError(f"{op}: {p!r}: cannot open the video ({e}).") from e
        if vfr_check and idx.variable_rate():
            raise DecodeError(
                f"{op}: {p!r} has a variable frame rate (uneven frame intervals: a VFR file, "
                "or frames missing from a damaged one); pass skip_vfr_check=True to read it "
                "anyway (frames numbered in presentation order)."
            )
        out.append(idx)
    return out


def clip_frames(end: int, start: int, length: int, stride: int, fill: int = -1) -> list[int]:
    """The frame numbers of a clip from ``start``, ``stride`` apart; those at or past ``end``
    are ``fill``."""
    return [k if k < end else fill for k in range(start, start + length * stride, stride)]


def uniform_frames(a: int, b: int, length: int) -> list[int]:
    """``length`` frame numbers spread evenly over ``[a, b)`` (first and last included), rounded
    half away from zero."""
    return [int(np.floor(x + 0.5)) for x in np.linspace(a, b - 1, length)]


@dataclass(frozen=True)
class ClipOutputs:
    """How a clip becomes output arrays."""

    dtype: _dt.DType = _dt.uint8
    normalized: bool = False
    ycbcr: bool = False
    frame_num: str | None = None
    timestamps: bool = False
    timestamps_f64: bool = False  # (experimental.readers.Video gives them as float64)
    fill: np.ndarray | None = None  # per-channel value of frame number -1 (default 0)

    def out_types(self, labels: bool) -> tuple[tuple[_dt.DType, str | None], ...]:
        """``(dtype, layout)`` of each output: frames, [labels], [frame numbers], [times]."""
        out: tuple[tuple[_dt.DType, str | None], ...] = ((self.dtype, "FHWC"),)
        if labels:
            out += ((_dt.int32, None),)
        if self.frame_num is not None:
            out += ((_dt.int32, None),)
        if self.timestamps:
            out += ((_dt.float64 if self.timestamps_f64 else _dt.float32, None),)
        return out


class ClipDataset:
    """The clips of a video reader: ``(file, first frame, frame numbers)`` each, frame number
    -1 meaning a padding frame; ``read(i)`` decodes clip ``i``."""

    read_errors = (OSError, DecodeError)

    def __init__(
        self,
        op: str,
        paths: list[str],
        labels: list[int] | None,
        indexes: list[VideoIndex],
        clips: list[tuple[int, int, tuple[int, ...]]],
        outputs: ClipOutputs,
    ) -> None:
        self.op, self.paths, self.labels, self.indexes = op, paths, labels, indexes
        self.clips, self.outputs = clips, outputs

    def __len__(self) -> int:
        return len(self.clips)

    def source(self, index: int) -> str:
        f, first, _ = self.clips[index]
        return f"{self.paths[f]}[{first}]"

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        c = self.outputs
        f, first, nums = self.clips[index]
        path, idx = self.paths[f], self.indexes[f]
        valid = [k for k in nums if k >= 0]
        try:
            got, _ = decode_frames(self.op, path, valid or [0], idx)
        except Exception as e:  # av.error.FFmpegError, ValueError
            if isinstance(e, (MemoryError, ImportError)):
                raise
            raise DecodeError(f"{self.op}: sample {index} ({path!r}): cannot decode ({e}).") from e
        shape = next(iter(got.values())).shape
        pad = np.zeros(shape, np.uint8)
        if c.fill is not None:
            pad[...] = c.fill
        video = np.stack([got[k] if k >= 0 else pad for k in nums])
        if c.ycbcr:
            video = rgb_to_ycbcr((video[..., 0], video[..., 1], video[..., 2]), np.dtype(np.uint8))
        if c.dtype is _dt.float32:
            video = video.astype(np.float32)
            if c.normalized:
                video *= np.float32(1 / 255)
        out: list[np.ndarray] = [video]
        if self.labels is not None:
            out.append(np.array([self.labels[f]], np.int32))
        if c.frame_num == "scalar":
            out.append(np.array([first], np.int32))
        elif c.frame_num == "sequence":
            out.append(np.array(nums, np.int32))
        if c.timestamps:
            ts = idx.timestamps()
            tdt = np.float64 if c.timestamps_f64 else np.float32
            out.append(np.array([ts[k] if k >= 0 else -1.0 for k in nums], tdt))
        return tuple(out)


def moved(outputs: tuple[Any, ...], device: Device) -> tuple[Any, ...]:
    """A reader's host outputs (Tensors or Batches) uploaded to ``device`` (a no-op on CPU)."""
    if device.device_type == "cpu":
        return outputs
    res: list[Any] = []
    for x in outputs:  # (uploaded on the current stream: marked for consumers on other streams)
        if isinstance(x, Tensor):
            data = _st.move(x._data, device, x._dtype)
            t = Tensor._wrap(data, x._dtype, x._layout, device, ready=_ho.mark(data))
            t._source = x._source
            res.append(t)
        else:
            samples = [_st.move(s, device, x._dtype) for s in x._samples]
            ready = _ho.mark(samples[0]) if samples else None
            b = Batch._wrap(samples, x._dtype, x._layout, device, ready=ready)
            b._sources = x._sources
            res.append(b)
    return tuple(res)


__all__ = [
    "ClipDataset",
    "ClipOutputs",
    "Sources",
    "clip_frames",
    "frame_num_mode",
    "image_type_name",
    "index_files",
    "moved",
    "parse_video_list",
    "resolve_sources",
    "uniform_frames",
]
