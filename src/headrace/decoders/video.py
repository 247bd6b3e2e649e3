"""``decoders.video``: in-memory video files (1-D uint8) to ``FHWC`` uint8 RGB frame sequences.

Decoding runs on the host with PyAV (FFmpeg; ``pip install headrace[video]``), on the worker
threads; on ``device="gpu"`` the frames are uploaded once decoded. The kernel is ``video`` in
``backends/shared/video.py``.

Examples
--------
>>> import headrace as ndd
>>> callable(ndd.decoders.video)
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._dispatch.args import Arg, forward_args, to_bool, to_int, to_ints, to_str
from headrace._dispatch.schema import OpSchema
from headrace.backends.shared.video import PAD_MODES


def _pad_mode(v: Any) -> str:
    m = to_str(v)
    if m not in PAD_MODES:
        raise ValueError(f"pad_mode must be one of {sorted(PAD_MODES)}, got {m!r}")
    return m


def _fill(v: Any) -> np.ndarray:
    f = to_ints(v).reshape(-1)
    if f.size == 0 or np.any((f < 0) | (f > 255)):
        raise ValueError(f"fill_value must be one or more values in [0, 255], got {f.tolist()}")
    return f.astype(np.uint8)


def _opt_int(v: Any) -> int | None:
    return None if v is None else to_int(v)


def _frames(v: Any) -> np.ndarray | None:
    return None if v is None else to_ints(v).reshape(-1)


DECODE_VIDEO = OpSchema(
    "decoders.video",
    "decoders",
    mixed=True,
    args=(
        Arg("affine", to_bool, True, doc="Pin decoder threads (no effect here)."),
        Arg("build_index", to_bool, True, doc="Index the frames first, then seek."),
        Arg("end_frame", _opt_int, None, per_sample=True, doc="Last frame (exclusive)."),
        Arg("fill_value", _fill, np.zeros(1, np.uint8), doc="Padding value(s) (constant)."),
        Arg("frames", _frames, None, per_sample=True, doc="Frame numbers to extract."),
        Arg("pad_mode", _pad_mode, "constant", per_sample=True, doc="Padding of short videos."),
        Arg("sequence_length", _opt_int, None, per_sample=True, doc="Frames to extract."),
        Arg("start_frame", _opt_int, None, per_sample=True, doc="First frame to extract."),
        Arg("stride", _opt_int, None, per_sample=True, doc="Distance between frames."),
    ),
    kernel="video",
    cpu_only_inputs=True,
    inline_bytes=0,
)


def video(
    encoded: Any,
    /,
    *,
    affine: bool | None = None,
    build_index: bool | None = None,
    end_frame: Any = None,
    fill_value: Any = None,
    frames: Any = None,
    pad_mode: Any = None,
    sequence_length: Any = None,
    start_frame: Any = None,
    stride: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Decode video files held in memory into sequences of RGB frames.

    Any container and codec FFmpeg reads (H.264, HEVC, VP8/9, MJPEG, AV1, MPEG-4, FFV1 ...).
    Frames are numbered from 0 in presentation order.

    Parameters
    ----------
    encoded : Tensor or Batch
        Encoded video files, 1-D uint8 (as ``readers.File`` gives them).
    affine : bool, optional
        Accepted for compatibility (thread pinning of the reference's GPU decoder); no effect.
    build_index : bool, optional
        Index the frames (timestamps, key frames) before decoding, then seek to the key frame
        before the first selected frame (default True). Without it the decoder reads from
        the start and stops after the last selected frame.
    end_frame : int or Batch, optional
        Extract ``range(start_frame, end_frame, stride)`` (exclusive end). Not with ``frames``
        or ``sequence_length``.
    fill_value : int or list of int, optional
        Padding value(s) for ``pad_mode="constant"`` (default 0): one for all channels, or one
        per channel, in [0, 255].
    frames : list of int or Batch, optional
        The frame numbers to extract, in any order, repeats allowed. Not with ``start_frame``,
        ``sequence_length``, ``stride`` or ``end_frame``. Numbers past the end are an error with
        ``pad_mode="none"``, else padded (with ``fill_value`` for ``"constant"``, with the
        last frame otherwise).
    pad_mode : str or Batch, optional
        When the selection runs past the end of the video: ``"none"`` (shorter sequence),
        ``"constant"`` (default: frames of ``fill_value``), ``"edge"``/``"repeat"`` (the
        video's last frame), ``"reflect_1001"``/``"symmetric"`` (ABC → ABCCBA),
        ``"reflect_101"``/``"reflect"`` (ABC → ABCBA). Like the reference, the frame *numbers*
        past the end are mirrored at the video's last frame, then ``stride`` applies: frames
        8, 10, 12, 14 of a 12-frame video with ``"reflect"`` are frames 8, 10, 10, 8.
    sequence_length : int or Batch, optional
        Extract this many frames from ``start_frame``, ``stride`` apart.
    start_frame : int or Batch, optional
        First frame to extract (default 0).
    stride : int or Batch, optional
        Distance between extracted frames (default 1).
    device : {"cpu", "gpu"}, optional
        ``"gpu"``: decoded on the host (PyAV), the frames uploaded. GPU decoding (NVDEC, for
        example through PyNvVideoCodec) is not implemented.

    Returns
    -------
    Tensor or Batch
        uint8 ``FHWC`` RGB frames.

    Raises
    ------
    DecodeError
        A sample is not a readable video (or has no video stream); the message names the sample
        and its file.
    InvalidArgumentError
        Contradictory frame selection arguments (named with the sample).
    ImportError
        PyAV is not installed (``pip install headrace[video]``).

    Examples
    --------
    >>> import io, av, numpy as np
    >>> import headrace as ndd
    >>> buf = io.BytesIO()
    >>> with av.open(buf, "w", format="matroska") as c:
    ...     s = c.add_stream("ffv1", rate=25)
    ...     s.width, s.height, s.pix_fmt = 32, 16, "bgr0"
    ...     for k in range(10):
    ...         img = np.full((16, 32, 3), 20 * k, np.uint8)
    ...         for p in s.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
    ...             c.mux(p)
    ...     for p in s.encode():
    ...         c.mux(p)
    >>> raw = ndd.as_tensor(np.frombuffer(buf.getvalue(), np.uint8))
    >>> clip = ndd.decoders.video(raw, start_frame=6, sequence_length=6, stride=2, pad_mode="edge")
    >>> clip.shape, np.asarray(clip)[:, 0, 0, 0].tolist()
    ((6, 16, 32, 3), [120, 160, 180, 180, 180, 180])
    """
    return DECODE_VIDEO.call((encoded,), **forward_args(locals(), "encoded"))


__all__ = ["video"]
