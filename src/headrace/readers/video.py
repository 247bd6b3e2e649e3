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

import math
from collections.abc import Sequence
from typing import Any

from headrace._core import dtype as _dt
from headrace._core.errors import InvalidArgumentError
from headrace.backends.shared.video import load_av
from headrace.readers import video_sources as vs
from headrace.readers._base import Reader
from headrace.readers._outputs import output_device

_OP = "readers.Video"


def parse_video_list(
    path: str, root: str | None
) -> list[tuple[str, int, float | None, float | None]]:
    """``(path, label, start, end)`` of every ``file label [start [end]]`` line."""
    return vs.parse_video_list(_OP, path, root)


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
        ``"gpu"``: decoded on the host (PyAV), the outputs uploaded. GPU decoding (NVDEC, for
        example through PyNvVideoCodec) is not implemented.
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
    >>> import pathlib, tempfile, numpy as np
    >>> import headrace as ndd
    >>> from headrace.sample_data import write_video
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_video(d / "a.mkv", [np.full((16, 32, 3), k, np.uint8) for k in range(10)])
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
        op = self._op_name()
        self._out_device = output_device(op, device)
        super().__init__(max_batch_size, name, "cpu", num_inputs, **kwargs)
        load_av(op)
        if sequence_length is None:
            raise InvalidArgumentError(f"{op}: sequence_length is required.")
        seq = int(sequence_length)
        st = -1 if step is None else int(step)
        st = seq if st <= 0 else st
        sd = 1 if stride is None else int(stride)
        if seq < 1 or sd < 1:
            raise InvalidArgumentError(
                f"{op}: sequence_length and stride must be >= 1 (got {seq}, {sd})."
            )
        if channels not in (None, 3):
            raise InvalidArgumentError(f"{op}: channels must be 3 (got {channels}).")
        dt = _dt.uint8 if dtype is None else _dt.dtype(dtype)
        if dt not in (_dt.uint8, _dt.float32):
            raise InvalidArgumentError(f"{op}: dtype must be uint8 or float32, got {dt}.")
        outputs = vs.ClipOutputs(
            dtype=dt,
            normalized=bool(normalized),
            ycbcr=vs.image_type_name(op, image_type) == "YCBCR",
            frame_num=vs.frame_num_mode(op, enable_frame_num),
            timestamps=bool(enable_timestamps),
        )
        src = vs.resolve_sources(op, filenames, labels, file_list, file_root)
        indexes = vs.index_files(op, src.paths, not skip_vfr_check)
        span = (seq - 1) * sd + 1
        clips: list[tuple[int, int, tuple[int, ...]]] = []
        for f, (idx, (lo, hi)) in enumerate(zip(indexes, src.ranges)):
            a, b = self._frame_range(
                len(idx), idx.fps, lo, hi, file_list_frame_num, file_list_include_preceding_frame
            )
            last = b if pad_sequences else b - span + 1
            clips += [(f, s, tuple(vs.clip_frames(b, s, seq, sd))) for s in range(a, last, st)]
        if not clips:
            raise InvalidArgumentError(
                f"{op}: no file has {span} frames for a sequence (sequence_length={seq}, "
                f"stride={sd}); pass pad_sequences=True to keep shorter ones."
            )
        self._outputs = outputs.out_types(src.labels is not None)
        self._dataset = vs.ClipDataset(op, src.paths, src.labels, indexes, clips, outputs)
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

    @classmethod
    def _op_name(cls) -> str:
        return f"readers.{cls.__name__}"

    def _wrap(self, samples: Any, sources: Sequence[str | None], batch: bool) -> tuple[Any, ...]:
        return vs.moved(super()._wrap(samples, sources, batch), self._out_device)


__all__ = ["Video", "parse_video_list"]
