"""CPU decoder kernels: image decoding (with optional per-sample windows), ``.npy`` decoding,
decompression, header peeking and whole-file reads.

``image``, ``numpy`` and ``inflate`` are host kernels of :mod:`headrace.backends.shared.host` (the
torch backend runs them too, then uploads); the decoders' arguments, windows and error policy
come from the ops layer (:mod:`headrace.decoders`).

Examples
--------
>>> import headrace as ndd
>>> from headrace._dispatch.schema import REGISTRY
>>> REGISTRY["decoders.image_crop"].kernel, REGISTRY["io.file.read"].kernel
('image', 'file_read')
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from headrace import codecs
from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace._core.saturate import saturate
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.backends.cpu.resampling import resample
from headrace.backends.shared.common import audio_conversion, resampled_length
from headrace.backends.shared.host import image, inflate, numpy
from headrace.backends.shared.video import video
from headrace.codecs.readfile import read_file

#: libsndfile's "Error opening <_io.BytesIO object at 0x...>: " prefix (it names no file here)
_LIBSNDFILE_OPENING = re.compile(r"Error opening <[^>]*>:\s*")


def peek_image_shape(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> tuple[Batch]:
    """The ``(H, W, C)`` of every encoded sample, read from its header."""
    samples = ins[0]._samples
    assert samples is not None
    dt = v["dtype"] or _dt.int64
    kw: dict[str, Any] = {"adjust_orientation": v["adjust_orientation"], "op": kc.name}
    if v["image_type"] is not None:
        kw["output_type"] = v["image_type"]
    outs = kc.map(lambda i: np.asarray(codecs.peek_shape(samples[i], **kw), dtype=dt.numpy))
    return (Batch._wrap(outs, dt, None, kc.device),)


def file_read(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> tuple[Batch]:
    """The bytes of the files named by UTF-8 encoded paths; the paths become the sources."""
    samples = ins[0]._samples
    assert samples is not None
    paths = [bytes(np.asarray(s, dtype=np.uint8)).decode("utf-8") for s in samples]

    def one(i: int) -> np.ndarray:
        try:
            return read_file(paths[i])
        except OSError as e:
            raise FileNotFoundError(f"io.file.read: cannot read {paths[i]!r}: {e}") from None

    out = Batch._wrap(kc.map(one), _dt.uint8, None, kc.device)
    out._sources = paths
    return (out,)


# --- audio -------------------------------------------------------------------------------------
_DIRECT = (np.dtype(np.int16), np.dtype(np.int32))  # output types libsndfile reads itself


def decode_audio(
    data: np.ndarray,
    v: dict[str, Any],
    rate_out: float,
    span: tuple[float, float | None] | None = None,
) -> tuple[np.ndarray, float, float]:
    """One file's signal (``(time, channels)`` or downmixed 1-D) as ``v`` asks, its rate, and the
    file's own rate. ``span = (offset, duration)`` in seconds (duration ``None``: to the end)
    keeps only that part, cut at the file's rate before anything else: samples
    ``floor(offset * rate)`` on, ``floor(duration * rate)`` of them (as the reference's NeMo
    reader cuts a manifest entry)."""
    import io

    import soundfile as sf

    dt: _dt.DType = v["dtype"]
    np_dt = np.dtype(dt.numpy)
    with sf.SoundFile(io.BytesIO(memoryview(np.ascontiguousarray(data)))) as f:
        rate = file_rate = float(f.samplerate)
        resampling = rate_out > 0 and rate_out != rate
        if np_dt in _DIRECT and not resampling and (not v["downmix"] or f.channels == 1):
            # libsndfile's own integer read: exact (a float32 round trip moved a third of the
            # samples of 16-bit files by one level)
            x = _cut(f.read(dtype=np_dt.name, always_2d=True), span, rate)
            return (x[:, 0] if v["downmix"] else x), rate, file_rate
        x = _cut(f.read(dtype="float32", always_2d=True), span, rate)
    if v["downmix"]:
        x = x.mean(axis=1, dtype=np.float32)
    if resampling:
        n_out = resampled_length(x.shape[0], rate, rate_out)
        x = resample(x, rate, rate_out, n_out, v["lobes"], np.dtype(np.float32))
        rate = rate_out
    if np_dt != np.float32:  # int16 or int32: a scale, no offset
        k = audio_conversion(np.dtype(np.float32), np_dt).scale
        x = saturate(x * np.float32(k), np_dt)
    return x, rate, file_rate


def _cut(x: np.ndarray, span: tuple[float, float | None] | None, rate: float) -> np.ndarray:
    if span is None:
        return x
    offset, duration = span
    start = max(int(np.floor(offset * rate)), 0)
    stop = None if duration is None else start + max(int(np.floor(duration * rate)), 0)
    return x[start:stop]


def audio(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> tuple[Batch, Batch]:
    """Decode every sample's audio file on the worker threads (``v``: the decoder's arguments,
    ``lobes`` of the resampler, and ``report_skipped`` for ``on_error="skip"``)."""
    x = ins[0]
    samples = x._samples
    assert samples is not None
    if x._dtype is not _dt.uint8 or any(s.ndim != 1 for s in samples):
        raise InvalidArgumentError(
            f"{kc.name}: the input must be encoded audio files (1-D uint8). Read files with "
            "ndd.readers.File or ndd.io.file.read."
        )
    skip = v["on_error"] == "skip"
    per = has_per_sample(v)

    def one(i: int) -> tuple[np.ndarray, float, float] | None:
        a = sample_args(v, i) if per else v
        try:
            return decode_audio(samples[i], a, a["sample_rate"])
        except Exception as e:  # soundfile.LibsndfileError, RuntimeError: unreadable data
            if isinstance(e, (InvalidArgumentError, MemoryError)):
                raise
            if skip:
                return None
            where = kc.source(i)
            detail = _LIBSNDFILE_OPENING.sub("", str(e)).strip() or type(e).__name__
            raise DecodeError(
                f"{kc.name}: sample {i}{f' ({where!r})' if where else ''}: cannot decode the "
                f"audio file ({detail})."
            ) from e

    outs = kc.map(one)
    keep = [i for i, o in enumerate(outs) if o is not None]
    if len(keep) < len(outs):
        if x._step is not None:
            x._step.record(kc.name, len(outs), tuple(keep), x._sources)
        v["report_skipped"](kc, [i for i, o in enumerate(outs) if o is None])
    got = [o for o in outs if o is not None]
    sig = Batch._wrap([o[0] for o in got], v["dtype"], None, CPU)
    rates = Batch._wrap([np.array(o[1], np.float32) for o in got], _dt.float32, None, CPU)
    for b in (sig, rates):
        if skip:
            b._kept = tuple(keep)
        if x._sources is not None:
            b._sources = [x._sources[i] for i in keep]
    return sig, rates


__all__ = [
    "audio",
    "decode_audio",
    "file_read",
    "image",
    "inflate",
    "numpy",
    "peek_image_shape",
    "video",
]
