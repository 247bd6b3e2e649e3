"""``experimental.readers.Video``: the reference's newer video reader — sequences padded by
``pad_mode``, uniform sampling of whole files, ``file_list`` ranges in frames or seconds.

Examples
--------
>>> experimental_clips(0, 7, 4, 4, 1, "edge")
[(0, (0, 1, 2, 3)), (4, (4, 5, 6, 6))]
>>> experimental_clips(0, 7, 3, 2, 1, "reflect")
[(0, (0, 1, 2)), (2, (2, 3, 4)), (4, (4, 5, 6)), (6, (6, 5, 4))]
>>> experimental_clips(0, 7, 4, 3, 2, "none")
[]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError
from headrace.backends.shared.video import PAD_MODES, load_av, pad_frame
from headrace.readers import video_sources as vs
from headrace.readers._base import Reader
from headrace.readers._outputs import output_device

_OP = "experimental.readers.Video"
_ROUNDING = ("start_down_end_up", "start_up_end_down", "all_up", "all_down")


def experimental_clips(
    a: int, b: int, length: int, step: int, stride: int, pad_mode: str
) -> list[tuple[int, tuple[int, ...]]]:
    """``(first frame, frame numbers)`` of the sequences of a file's frames ``[a, b)``.

    Starts ``a, a + step, ...`` while ``length * stride`` frames from the start fit in the
    range, then (unless ``pad_mode`` is ``"none"``) one more start inside it, padded: padding
    frames are -1 (``"constant"``), else frame numbers mirrored or repeated at the range's end
    (``pad_mode`` a value of ``PAD_MODES``).
    """
    out: list[tuple[int, tuple[int, ...]]] = []
    s = a
    while s + length * stride <= b:
        out.append((s, tuple(range(s, s + length * stride, stride))))
        s += step
    if pad_mode == "none" or s >= b:
        return out
    frames = vs.clip_frames(b, s, length, stride)
    if pad_mode != "constant":
        frames = [k if k < b else a + pad_frame(k - a, b - a, pad_mode)
                  for k in range(s, s + length * stride, stride)]  # fmt: skip
    out.append((s, tuple(frames)))
    return out


def _range(
    op: str, path: str, n: int, fps: float, lo: float | None, hi: float | None, as_frames: bool
) -> tuple[int, int]:
    """First and end (exclusive) frame of the part of a file a ``file_list`` line names."""
    if as_frames:
        a = 0 if lo is None else int(lo)
        b = n if hi is None else int(hi)
        a, b = a + n if a < 0 else a, b + n if b < 0 else b
    else:  # the reference's rounding: the frame before ceil(start * fps), end floor(end * fps)
        a = 0 if lo is None else max(math.ceil(lo * fps) - 1, 0)
        b = n if hi is None else math.floor(hi * fps)
    a, b = max(0, min(a, n)), max(0, min(b, n))
    if a >= b:
        warnings.warn(f"{op}: empty frame range [{a}, {b}) for {path!r}; skipped.", stacklevel=4)
    return a, b


class Video(Reader):
    """Read sequences of ``sequence_length`` frames from video files (the reference's
    ``experimental.readers.Video``): ``FHWC`` uint8 frames, and optionally labels, frame
    numbers and timestamps.

    Each file (or each ``file_list`` range) is cut into sequences starting every ``step``
    frames (default ``sequence_length * stride``), a sequence taking every ``stride``-th frame.
    A sequence is kept while ``sequence_length * stride`` frames from its start lie in the range;
    with a ``pad_mode`` other than ``"none"`` the next start inside the range is kept too, its
    frames past the end padded. ``uniform_sample`` instead takes one sequence per file, spread
    evenly over it.

    Decoding runs on the host with PyAV (any codec FFmpeg reads); ``device="gpu"`` uploads the
    outputs (GPU decoding through NVDEC is not implemented).

    Parameters
    ----------
    max_batch_size, name, num_inputs
        As every reader.
    device : {"cpu", "gpu"}
        ``"gpu"``: decoded on the host, the outputs uploaded.
    filenames, labels, file_root, file_list
        As ``readers.Video`` (``file_list`` lines: ``file label [start [end]]``).
    file_list_format : {"timestamps", "frames"}
        ``file_list`` start/end in seconds (default) or frame numbers (negative: from the end;
        end exclusive). Seconds select frames ``ceil(start * fps) - 1`` to ``floor(end * fps)``
        (exclusive), as the reference 2.4 does; a range without end goes to the end of the file
        (the reference skips such lines as empty).
    file_list_include_end, file_list_rounding
        Accepted and checked; the reference 2.4 gives the same frames for every value, and so
        does headrace.
    sequence_length : int
        Frames per sequence (required).
    step : int
        Frames between sequence starts (default -1: ``sequence_length * stride``).
    stride : int
        Distance between the frames of a sequence (default 1).
    pad_mode : str
        ``"none"`` (default), ``"constant"`` (``fill_value`` frames, frame number and timestamp
        -1), ``"edge"``/``"repeat"``, ``"reflect_1001"``/``"symmetric"``,
        ``"reflect_101"``/``"reflect"`` (frames mirrored at the end of the range).
    fill_value : int or list of int
        Padding value(s) for ``"constant"`` (default 0), one or one per channel, in [0, 255].
    uniform_sample : bool
        One sequence per file: frames ``round(linspace(start, end - 1, sequence_length))``
        (repeated when the file is shorter); ``step``, ``stride`` and ``pad_mode`` are ignored.
    enable_frame_num : bool or str
        ``True``/``"scalar"``: the first frame number (int32, (1,)); ``"sequence"``: every
        frame's (int32, (F,)).
    enable_timestamps : bool
        Every frame's presentation time in seconds (float64, (F,), as the reference).
    image_type : {"RGB", "YCbCr"} or DALIImageType
        Colour space of the frames (default RGB).
    dont_use_mmap
        Accepted for compatibility; no effect.
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
    >>> _ = write_video(d / "a.mkv", [np.full((16, 32, 3), k, np.uint8) for k in range(7)])
    >>> r = ndd.experimental.readers.Video(filenames=[d / "a.mkv"], sequence_length=3,
    ...                                    pad_mode="edge", enable_frame_num="sequence")
    >>> [(np.asarray(v)[:, 0, 0, 0].tolist(), np.asarray(n).tolist()) for v, n in r.next_epoch()]
    [([0, 1, 2], [0, 1, 2]), ([3, 4, 5], [3, 4, 5]), ([6, 6, 6], [6, 6, 6])]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        dont_use_mmap: bool | None = None,
        enable_frame_num: Any = None,
        enable_timestamps: bool | None = None,
        file_list: Any = None,
        file_list_format: str | None = None,
        file_list_include_end: bool | None = None,
        file_list_rounding: str | None = None,
        file_root: Any = None,
        filenames: Any = None,
        fill_value: Any = None,
        image_type: Any = None,
        labels: Any = None,
        pad_mode: str | None = None,
        sequence_length: int | None = None,
        step: int | None = None,
        stride: int | None = None,
        uniform_sample: bool | None = None,
        **kwargs: Any,
    ) -> None:
        self._out_device = output_device(_OP, device)
        super().__init__(max_batch_size, name, "cpu", num_inputs, **kwargs)
        load_av(_OP)
        if sequence_length is None:
            raise InvalidArgumentError(f"{_OP}: sequence_length is required.")
        seq, sd = int(sequence_length), 1 if stride is None else int(stride)
        if seq < 1 or sd < 1:
            raise InvalidArgumentError(
                f"{_OP}: sequence_length and stride must be >= 1 (got {seq}, {sd})."
            )
        st = -1 if step is None else int(step)
        st = seq * sd if st <= 0 else st
        mode = "none" if pad_mode is None else str(pad_mode)
        if mode not in PAD_MODES:
            raise InvalidArgumentError(
                f"{_OP}: pad_mode must be one of {sorted(PAD_MODES)}, got {pad_mode!r}."
            )
        fmt = "timestamps" if file_list_format is None else str(file_list_format)
        if fmt not in ("timestamps", "frames"):
            raise InvalidArgumentError(
                f"{_OP}: file_list_format must be 'timestamps' or 'frames', got {fmt!r}."
            )
        if file_list_rounding is not None and file_list_rounding not in _ROUNDING:
            raise InvalidArgumentError(
                f"{_OP}: file_list_rounding must be one of {list(_ROUNDING)}, "
                f"got {file_list_rounding!r}."
            )
        fill = np.asarray(0 if fill_value is None else fill_value).reshape(-1)
        if fill.size == 0 or fill.size not in (1, 3) or np.any((fill < 0) | (fill > 255)):
            raise InvalidArgumentError(
                f"{_OP}: fill_value must be one or three values in [0, 255], got {fill.tolist()}."
            )
        outputs = vs.ClipOutputs(
            ycbcr=vs.image_type_name(_OP, image_type) == "YCBCR",
            frame_num=vs.frame_num_mode(_OP, enable_frame_num),
            timestamps=bool(enable_timestamps),
            timestamps_f64=True,
            fill=fill.astype(np.uint8),
        )
        src = vs.resolve_sources(_OP, filenames, labels, file_list, file_root)
        indexes = vs.index_files(_OP, src.paths, False)
        clips: list[tuple[int, int, tuple[int, ...]]] = []
        for f, (idx, (lo, hi)) in enumerate(zip(indexes, src.ranges)):
            n = len(idx)
            a, b = _range(_OP, src.paths[f], n, idx.fps, lo, hi, fmt == "frames")
            if a >= b:
                continue
            if uniform_sample:
                frames = vs.uniform_frames(a, b, seq)
                clips.append((f, frames[0], tuple(frames)))
            else:
                found = experimental_clips(a, b, seq, st, sd, PAD_MODES[mode])
                clips += [(f, s, fr) for s, fr in found]
        if not clips:
            raise InvalidArgumentError(
                f"{_OP}: no file has {seq * sd} frames for a sequence (sequence_length={seq}, "
                f"stride={sd}); pass a pad_mode to keep shorter ones."
            )
        self._outputs = outputs.out_types(src.labels is not None)
        self._dataset = vs.ClipDataset(_OP, src.paths, src.labels, indexes, clips, outputs)
        self._finish_init()

    def _wrap(self, samples: Any, sources: Sequence[str | None], batch: bool) -> tuple[Any, ...]:
        return vs.moved(super()._wrap(samples, sources, batch), self._out_device)


__all__ = ["Video", "experimental_clips"]
