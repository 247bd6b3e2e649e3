"""``decoders.audio``: WAV, FLAC, OGG/Vorbis (everything libsndfile reads) to signals and their
sampling rates.

Files are decoded with ``soundfile`` on the worker threads; ``sample_rate`` resamples them with
the reference's windowed-sinc resampler (see :mod:`headrace.ops.resampling`), ``downmix``
averages the channels first. The kernel is ``audio`` in ``backends/cpu/decoders.py``; like the
reference's, this decoder runs on the CPU only.

Examples
--------
>>> import io, numpy as np, soundfile as sf
>>> import headrace as ndd
>>> buf = io.BytesIO(); sf.write(buf, np.zeros((80, 2), np.float32), 8000, format="WAV")
>>> audio, rate = ndd.decoders.audio(ndd.as_tensor(np.frombuffer(buf.getvalue(), np.uint8)))
>>> audio.shape, float(rate)
((80, 2), 8000.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._dispatch.args import Arg, forward_args, to_bool, to_dtype, to_float
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema
from headrace.backends.shared.common import resampling_lobes
from headrace.decoders.image import _note_skipped, _on_error, call_decoder

#: Output types the decoder gives (as the reference's).
AUDIO_DTYPES = (_dt.int16, _dt.int32, _dt.float32)


def _audio_dtype(v: Any) -> _dt.DType:
    d = to_dtype(v)
    if d not in AUDIO_DTYPES:
        raise ValueError(f"dtype must be int16, int32 or float32, got {d}")
    return d


def _rate(v: Any) -> float:
    r = float(np.float32(to_float(v)))
    if r < 0:
        raise ValueError(f"sample_rate must be positive (or 0: the file's own), got {r:g}")
    return r


def _quality(v: Any) -> float:
    q = to_float(v)
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"quality must be in [0, 100], got {q:g}")
    return q


def _prepare(kc: KernelContext, ins: list[Any], v: dict[str, Any]) -> dict[str, Any]:
    return {**v, "lobes": resampling_lobes(v["quality"]), "report_skipped": _note_skipped}


DECODE_AUDIO = OpSchema(
    "decoders.audio",
    "decoders",
    args=(
        Arg("sample_rate", _rate, 0.0, per_sample=True, doc="Resample to this rate (0: keep)."),
        Arg("downmix", to_bool, False, doc="Average the channels into one 1-D signal."),
        Arg("dtype", _audio_dtype, _dt.float32, doc="int16, int32 or float32 (default)."),
        Arg("quality", _quality, 50.0, doc="Resampling quality, 0-100."),
        Arg("on_error", _on_error, "raise", doc="'raise' or 'skip' undecodable samples."),
    ),
    devices=("cpu",),
    num_outputs=2,
    kernel="audio",
    prepare=_prepare,
    cpu_only_inputs=True,
    inline_bytes=0,
)


def audio(
    input: Any,
    /,
    *,
    sample_rate: Any = None,
    downmix: bool | None = None,
    dtype: Any = None,
    quality: float | None = None,
    on_error: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Decode audio files (WAV, FLAC, OGG/Vorbis, AIFF ... what libsndfile reads).

    Parameters
    ----------
    input : Tensor or Batch
        Encoded files, 1-D uint8 (as ``readers.File`` gives them).
    sample_rate : float or Batch, optional
        Resample to this rate (per sample; default 0: the file's own rate), with the
        windowed-sinc resampler of ``audio_resample``; the length becomes ``ceil(n * rate /
        file_rate)``.
    downmix : bool, optional
        Average the channels into a 1-D signal (before resampling). Without it the output is
        ``(time, channels)``, mono files included.
    dtype : DType, optional
        float32 (default, in [-1, 1]), int16 or int32 (full-scale integers; read exactly from
        PCM files, otherwise scaled from float, rounded and saturated).
    quality : float, optional
        Resampling quality 0-100 (default 50; see ``audio_resample``).
    on_error : {"raise", "skip"}, optional
        Keyword of headrace: ``"skip"`` drops undecodable samples from both outputs (with a
        warning; ``kept`` names the samples kept), as the image decoders do.
    device : {"cpu"}, optional

    Returns
    -------
    (Tensor, Tensor) or (Batch, Batch)
        The signals and their sampling rates (float32 scalars: ``sample_rate`` when given).

    Raises
    ------
    DecodeError
        A sample is not a readable audio file (unknown format, corrupt or truncated header);
        the message names the sample and its file.

    Examples
    --------
    >>> import io, numpy as np, soundfile as sf
    >>> import headrace as ndd
    >>> t = np.arange(1600) / 16000
    >>> buf = io.BytesIO()
    >>> sf.write(buf, np.sin(2 * np.pi * 440 * t), 16000, format="FLAC")
    >>> raw = ndd.as_tensor(np.frombuffer(buf.getvalue(), np.uint8))
    >>> audio, rate = ndd.decoders.audio(raw, sample_rate=8000, downmix=True)
    >>> audio.shape, audio.dtype == ndd.float32, float(rate)
    ((800,), True, 8000.0)
    """
    out = call_decoder(DECODE_AUDIO, input, forward_args(locals(), "input"))
    step = getattr(input, "_step", None) if on_error == "skip" else None
    if step is not None and isinstance(out, tuple) and isinstance(out[0], Batch):
        step.watch(out[0])
    return out


__all__ = ["AUDIO_DTYPES", "audio"]
