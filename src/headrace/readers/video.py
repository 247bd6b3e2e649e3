"""``readers.Video``: sequences of frames cut from video files, with labels, frame numbers and
timestamps.

Decoding runs on the host with PyAV (``pip install headrace[video]``); every file is indexed
(frame timestamps, key frames) when the reader is created, and each sequence is decoded from
the key frame before its first frame.

Examples
--------
>>> from headrace.readers import Video
>>> Video.__name__
'Video'
"""

from __future__ import annotations

import errno
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.errors import DecodeError, InvalidArgumentError, InvalidTypeError
from headrace._core.tensor import Tensor
from headrace.backends.shared.video import VideoIndex, build_index, decode_frames, load_av
from headrace.codecs.convert import rgb_to_ycbcr
from headrace.readers._base import Reader, as_path, as_paths
from headrace.readers._outputs import output_device
from headrace.readers.file import MissingFileError, scan_folder

_OP = "readers.Video"
_FRAME_NUM = {"none": None, "scalar": "scalar", "sequence": "sequence"}


def _frame_num_mode(v: Any) -> str | None:
    if v is None or v is False:
        return None
    if v is True:
        return "scalar"
    if isinstance(v, str) and v in _FRAME_NUM:
        return _FRAME_NUM[v]
    raise InvalidArgumentError(
        f"{_OP}: enable_frame_num must be False/'none', True/'scalar' or 'sequence', got {v!r}."
    )


def parse_video_list(
    path: str, root: str | None
) -> list[tuple[str, int, float | None, float | None]]:
    """``(path, label, start, end)`` of every ``file label [start [end]]`` line."""
    if not os.path.isfile(path):
        raise MissingFileError(errno.ENOENT, f"{_OP}: file_list does not exist", path)
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
                    f"{_OP}: {path}:{k}: expected 'file label [start [end]]' ({e}): {line!r}."
                ) from None
            out.append((os.path.join(base, parts[0]), label, start, end))
    if not out:
        raise MissingFileError(errno.ENOENT, f"{_OP}: file_list lists no files", path)
    return out


class _VideoDataset:
    """``(file, first frame)`` of every sequence; ``read(i)`` decodes sequence ``i``."""

    read_errors = (OSError, DecodeError)

    def __init__(
        self,
        paths: list[str],
        labels: list[int] | None,
        indexes: list[VideoIndex],
        starts: list[tuple[int, int]],
        cfg: dict[str, Any],
    ) -> None:
        self.paths, self.labels, self.indexes, self.starts, self.cfg = (
            paths,
            labels,
            indexes,
            starts,
            cfg,
        )

    def __len__(self) -> int:
        return len(self.starts)

    def source(self, index: int) -> str:
        f, s = self.starts[index]
        return f"{self.paths[f]}[{s}]"

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        c = self.cfg
        f, start = self.starts[index]
        path, idx = self.paths[f], self.indexes[f]
        nums = [start + k * c["stride"] for k in range(c["sequence_length"])]
        try:
            got, _ = decode_frames(_OP, path, [k for k in nums if k < c["end"][f]], idx)
        except Exception as e:  # av.error.FFmpegError, ValueError
            if isinstance(e, (MemoryError, ImportError)):
                raise
            raise DecodeError(f"{_OP}: sample {index} ({path!r}): cannot decode ({e}).") from e
        shape = next(iter(got.values())).shape
        frames = [got.get(k) if k < c["end"][f] else None for k in nums]
        pad = np.zeros(shape, np.uint8)
        video = np.stack([fr if fr is not None else pad for fr in frames])
        if c["ycbcr"]:
            video = rgb_to_ycbcr((video[..., 0], video[..., 1], video[..., 2]), np.dtype(np.uint8))
        if c["dtype"] is _dt.float32:
            video = video.astype(np.float32)
            if c["normalized"]:
                video *= np.float32(1 / 255)
        out: list[np.ndarray] = [video]
        if self.labels is not None:
            out.append(np.array([self.labels[f]], np.int32))
        valid = [fr is not None for fr in frames]
        if c["frame_num"] == "scalar":
            out.append(np.array([start], np.int32))
        elif c["frame_num"] == "sequence":
            out.append(np.array([k if v else -1 for k, v in zip(nums, valid)], np.int32))
        if c["timestamps"]:
            ts = idx.timestamps()
            out.append(np.array([ts[k] if v else -1.0 for k, v in zip(nums, valid)], np.float32))
        return tuple(out)


class Video(Reader):
    """Read sequences of ``sequence_length`` frames from video files: ``FHWC`` frames, and
    optionally labels, frame numbers and timestamps.

    Every file is cut into sequences starting at its first frame and every ``step`` frames
    after; a sequence takes every ``stride``-th frame. A sequence must fit in the file unless
    ``pad_sequences``, which keeps the sequences starting in the last frames, their missing
    frames zero (frame number and timestamp -1).

    Parameters
    ----------
    max_batch_size, name, num_inputs
        As every reader.
    device : {"cpu", "gpu"}
        ``"gpu"``: decoded on the host, the outputs uploaded.
    filenames : list of path, optional
        The files (with ``labels``, one label each).
    file_root : path, optional
        A folder of one sub-folder per class (label: index of the sorted sub-folder); with
        ``filenames`` or ``file_list``, the folder their relative paths start at.
    file_list : path, optional
        A text file of ``file label [start [end]]`` lines; ``start``/``end`` are timestamps in
        seconds (first frame ``ceil(start * fps)``, end ``floor(end * fps)``, exclusive; with
        ``file_list_include_preceding_frame`` floor/ceil), or frame numbers with
        ``file_list_frame_num`` (negative: from the end).
    sequence_length : int
        Frames per sequence (required).
    step : int
        Frames between the starts of consecutive sequences (default -1: ``sequence_length``).
    stride : int
        Distance between the frames of a sequence (default 1).
    labels : list of int, optional
        One per file of ``filenames``; with them (or ``file_root``/``file_list``) the reader
        outputs the label (int32, shape (1,)).
    enable_frame_num : bool or str
        ``True``/``"scalar"``: output the sequence's first frame number (int32, (1,));
        ``"sequence"``: every frame's (int32, (F,), -1 for padding); default off.
    enable_timestamps : bool
        Output every frame's presentation time in seconds (float32, (F,), -1 for padding).
    pad_sequences : bool
        Keep incomplete sequences at the ends of files, zero-padded (default False).
    image_type : {"RGB", "YCbCr"} or DALIImageType
        Colour space of the frames (default RGB; YCbCr is BT.601 studio range).
    dtype : DType
        uint8 (default) or float32 (0-255, or 0-1 with ``normalized``).
    normalized : bool
        With float32, divide by 255.
    channels : int
        3 (the only value supported).
    skip_vfr_check : bool
        Variable-frame-rate files are an error unless True (then frames are still numbered in
        presentation order).
    file_list_frame_num, file_list_include_preceding_frame
        How ``file_list`` start/end values are read (see ``file_list``).
    additional_decode_surfaces, dont_use_mmap
        Accepted for compatibility (NVDEC surfaces, memory mapping); no effect.
    **kwargs
        Common reader arguments (``shard_id``, ``num_shards``, ``random_shuffle``, ``seed``,
        ``pad_last_batch``, ``last_batch``, ``on_error`` ...).

    Raises
    ------
    DecodeError
        A file cannot be opened as a video; the message names it.

    Examples
    --------
    >>> import av, pathlib, tempfile, numpy as np
    >>> import headrace as ndd
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with av.open(str(d / "a.mkv"), "w") as c:
    ...     s = c.add_stream("ffv1", rate=25)
    ...     s.width, s.height, s.pix_fmt = 32, 16, "bgr0"
    ...     for k in range(10):
    ...         img = np.full((16, 32, 3), k, np.uint8)
    ...         for p in s.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
    ...             c.mux(p)
    ...     for p in s.encode():
    ...         c.mux(p)
    >>> r = ndd.readers.Video(filenames=[d / "a.mkv"], labels=[7], sequence_length=3, step=4,
    ...                       enable_frame_num=True)
    >>> [(v.shape, np.asarray(v)[:, 0, 0, 0].tolist(), int(lab[0]), int(n[0]))
    ...  for v, lab, n in r.next_epoch()]
    [((3, 16, 32, 3), [0, 1, 2], 7, 0), ((3, 16, 32, 3), [4, 5, 6], 7, 4)]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        additional_decode_surfaces: int | None = None,
        channels: int | None = None,
        dont_use_mmap: bool | None = None,
        dtype: Any = None,
        enable_frame_num: Any = None,
        enable_timestamps: bool | None = None,
        file_list: Any = None,
        file_list_frame_num: bool | None = None,
        file_list_include_preceding_frame: bool | None = None,
        file_root: Any = None,
        filenames: Any = None,
        image_type: Any = None,
        labels: Any = None,
        normalized: bool | None = None,
        pad_sequences: bool | None = None,
        sequence_length: int | None = None,
        skip_vfr_check: bool | None = None,
        step: int | None = None,
        stride: int | None = None,
        **kwargs: Any,
    ) -> None:
        self._out_device = output_device(_OP, device)
        super().__init__(max_batch_size, name, "cpu", num_inputs, **kwargs)
        load_av(_OP)
        if sequence_length is None:
            raise InvalidArgumentError(f"{_OP}: sequence_length is required.")
        seq = int(sequence_length)
        st = -1 if step is None else int(step)
        st = seq if st <= 0 else st
        sd = 1 if stride is None else int(stride)
        if seq < 1 or sd < 1:
            raise InvalidArgumentError(
                f"{_OP}: sequence_length and stride must be >= 1 (got {seq}, {sd})."
            )
        if channels not in (None, 3):
            raise InvalidArgumentError(f"{_OP}: channels must be 3 (got {channels}).")
        dt = _dt.uint8 if dtype is None else _dt.dtype(dtype)
        if dt not in (_dt.uint8, _dt.float32):
            raise InvalidArgumentError(f"{_OP}: dtype must be uint8 or float32, got {dt}.")
        itype = "RGB" if image_type is None else str(getattr(image_type, "name", image_type))
        if itype.upper() not in ("RGB", "YCBCR"):
            raise InvalidArgumentError(f"{_OP}: image_type must be RGB or YCbCr, got {itype}.")
        frame_num = _frame_num_mode(enable_frame_num)
        root = os.fsdecode(file_root) if file_root is not None else None
        sources = sum(x is not None for x in (filenames, file_list))
        if sources > 1:
            raise InvalidArgumentError(f"{_OP}: give filenames or file_list, not both.")
        ranges: list[tuple[float | None, float | None]]
        labs: list[int] | None
        if filenames is not None:
            if isinstance(filenames, (str, bytes, os.PathLike)):
                filenames = [filenames]
            if not isinstance(filenames, Sequence):
                raise InvalidTypeError(f"{_OP}: filenames must be a list of paths.")
            paths = [
                os.path.join(root, p) if root else p
                for p in as_paths(filenames, "filenames", "Video")
            ]
            labs = None if labels is None else [int(v) for v in np.asarray(labels).reshape(-1)]
            if labs is not None and len(labs) != len(paths):
                raise InvalidArgumentError(
                    f"{_OP}: {len(paths)} filenames but {len(labs)} labels; give one per file."
                )
            ranges = [(None, None)] * len(paths)
        elif file_list is not None:
            entries = parse_video_list(as_path(file_list, "file_list", "Video"), root)
            paths = [e[0] for e in entries]
            labs = [e[1] for e in entries]
            ranges = [(e[2], e[3]) for e in entries]
        elif root is not None:
            paths, labs = scan_folder(root, ["*"])
            ranges = [(None, None)] * len(paths)
        else:
            raise InvalidArgumentError(f"{_OP}: give filenames, file_list or file_root.")
        if not paths:
            raise InvalidArgumentError(f"{_OP}: no files to read.")
        indexes: list[VideoIndex] = []
        for p in paths:
            if not os.path.isfile(p):
                raise MissingFileError(errno.ENOENT, f"{_OP}: no such video file", p)
            try:
                idx = build_index(_OP, p)
            except Exception as e:  # av.error.FFmpegError, ValueError
                raise DecodeError(f"{_OP}: {p!r}: cannot open the video ({e}).") from e
            if not skip_vfr_check and idx.variable_rate():
                raise DecodeError(
                    f"{_OP}: {p!r} has a variable frame rate; pass skip_vfr_check=True to read "
                    "it anyway (frames numbered in presentation order)."
                )
            indexes.append(idx)
        span = (seq - 1) * sd + 1
        starts: list[tuple[int, int]] = []
        ends: list[int] = []
        for f, (idx, (lo, hi)) in enumerate(zip(indexes, ranges)):
            n = len(idx)
            a, b = self._frame_range(
                n, idx.fps, lo, hi, file_list_frame_num, file_list_include_preceding_frame
            )
            ends.append(b)
            last = b if pad_sequences else b - span + 1
            starts += [(f, s) for s in range(a, last, st)]
        if not starts:
            raise InvalidArgumentError(
                f"{_OP}: no file has {span} frames for a sequence (sequence_length={seq}, "
                f"stride={sd}); pass pad_sequences=True to keep shorter ones."
            )
        cfg = {
            "sequence_length": seq,
            "stride": sd,
            "end": ends,
            "dtype": dt,
            "normalized": bool(normalized),
            "ycbcr": itype.upper() == "YCBCR",
            "frame_num": frame_num,
            "timestamps": bool(enable_timestamps),
        }
        self._outputs = ((dt, "FHWC"),)
        if labs is not None:
            self._outputs += ((_dt.int32, None),)
        if frame_num is not None:
            self._outputs += ((_dt.int32, None),)
        if enable_timestamps:
            self._outputs += ((_dt.float32, None),)
        self._dataset = _VideoDataset(paths, labs, indexes, starts, cfg)
        self._finish_init()

    @staticmethod
    def _frame_range(
        n: int, fps: float, lo: float | None, hi: float | None, as_frames: Any, preceding: Any
    ) -> tuple[int, int]:
        """First and end (exclusive) frame of a file's part to read."""
        if as_frames:
            a = 0 if lo is None else int(lo)
            b = n if hi is None else int(hi)
            a = a + n if a < 0 else a
            b = b + n if b < 0 else b
        else:
            up, down = (math.floor, math.ceil) if preceding else (math.ceil, math.floor)
            a = 0 if lo is None else int(up(lo * fps))
            b = n if hi is None or hi <= 0 else int(down(hi * fps))
        return max(0, min(a, n)), max(0, min(b, n))

    def _wrap(self, samples: Any, sources: list[str | None], batch: bool) -> tuple[Any, ...]:
        out = super()._wrap(samples, sources, batch)
        if self._out_device.device_type == "cpu":
            return out
        moved: list[Any] = []
        for x in out:
            if isinstance(x, Tensor):
                t = Tensor._wrap(_st.move(x._data, self._out_device, x._dtype), x._dtype,
                                 x._layout, self._out_device)  # fmt: skip
                t._source = x._source
                moved.append(t)
            else:
                b = Batch._wrap([_st.move(s, self._out_device, x._dtype) for s in x._samples],
                                x._dtype, x._layout, self._out_device)  # fmt: skip
                b._sources = x._sources
                moved.append(b)
        return tuple(moved)


__all__ = ["Video", "parse_video_list"]
