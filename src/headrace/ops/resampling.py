"""``audio_resample``: resample signals (1-D, or time × channels) with a windowed sinc.

The resampler is the reference's method: each output is the sum of ``2 * lobes`` input samples
around its position, weighted by a Hann-windowed sinc read from a table of ``64 * lobes + 1``
points with linear interpolation; ``quality`` (0-100) picks the lobes (3 at 0, 16 at the default
50, 64 at 100). The weights come from
:func:`headrace.backends.shared.resampling.resampling_chunks`, the same for the CPU (numpy) and
the torch kernels, so results match the reference to float32 rounding (summation order only).
Rate ratios with a short period (44.1 kHz to 16 kHz, 48 kHz to 16 kHz, 8 kHz to 16 kHz ...) reuse
a cached filter bank of one period's weights, which makes long signals several times faster.
Like the reference, it does not low-pass the signal before downsampling.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> x = np.sin(np.arange(160, dtype=np.float32) / 5)
>>> ndd.audio_resample(ndd.as_tensor(x), in_rate=16000, out_rate=8000).shape
(80,)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import Arg, forward_args, sample_args, to_dtype, to_float, to_int
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema
from headrace.backends.shared.common import resampled_length, resampling_lobes

Vals = dict[str, Any]


def _f32(v: Any) -> float:
    """A float argument as the reference stores it (float32)."""
    return float(np.float32(to_float(v)))


def _quality(v: Any) -> float:
    q = to_float(v)
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"quality must be in [0, 100], got {q:g}")
    return q


def resample_plan(
    name: str, n_in: int, in_rate: Any, out_rate: Any, scale: Any, out_length: Any
) -> tuple[float, float, int]:
    """``(in_rate, out_rate, out_length)`` of one signal of ``n_in`` samples from exactly one of
    ``in_rate`` and ``out_rate`` together, ``scale`` or ``out_length``.

    Examples
    --------
    >>> resample_plan("op", 100, None, None, 1.5, None)
    (1.0, 1.5, 150)
    >>> resample_plan("op", 10, 2.0, 3.0, None, None)
    (2.0, 3.0, 15)
    """
    given = [
        k
        for k, on in (
            ("in_rate/out_rate", in_rate is not None or out_rate is not None),
            ("scale", scale is not None),
            ("out_length", out_length is not None),
        )
        if on
    ]
    if len(given) != 1:
        raise InvalidArgumentError(
            f"{name}: give exactly one of in_rate and out_rate (together), scale or out_length; "
            f"got {', '.join(given) or 'none'}."
        )
    if scale is not None:
        if not scale > 0:
            raise InvalidArgumentError(f"{name}: scale must be positive, got {scale:g}.")
        return 1.0, scale, resampled_length(n_in, 1.0, scale)
    if out_length is not None:
        if out_length < 0:
            raise InvalidArgumentError(f"{name}: out_length must be >= 0, got {out_length}.")
        return float(max(n_in, 1)), float(out_length), int(out_length)
    if in_rate is None or out_rate is None:
        raise InvalidArgumentError(f"{name}: in_rate and out_rate must be given together.")
    if not (in_rate > 0 and out_rate > 0):
        raise InvalidArgumentError(
            f"{name}: in_rate and out_rate must be positive, got {in_rate:g} and {out_rate:g}."
        )
    return in_rate, out_rate, resampled_length(n_in, in_rate, out_rate)


def _plans(kc: KernelContext, ins: list[Batch | None], v: Vals) -> Vals:
    """Every sample's ``(in_rate, out_rate, out_length)``, checked against its shape."""
    x = ins[0]
    assert x is not None and x._samples is not None
    plans = []
    for i, s in enumerate(x._samples):
        if s.ndim not in (1, 2):
            raise InvalidArgumentError(
                f"{kc.name}: sample {i} has {s.ndim} dimensions; a signal is 1-D or "
                "(time, channels)."
            )
        a = sample_args(v, i)
        plans.append(
            resample_plan(
                f"{kc.name}: sample {i}",
                int(s.shape[0]),
                a["in_rate"],
                a["out_rate"],
                a["scale"],
                a["out_length"],
            )
        )
    return {"plans": plans, "lobes": resampling_lobes(v["quality"]), "dtype": v["dtype"]}


AUDIO_RESAMPLE = OpSchema(
    "audio_resample",
    "resampling",
    args=(
        Arg("in_rate", _f32, None, per_sample=True, doc="Input sampling rate."),
        Arg("out_rate", _f32, None, per_sample=True, doc="Output sampling rate."),
        Arg("scale", _f32, None, per_sample=True, doc="Output length / input length."),
        Arg("out_length", to_int, None, per_sample=True, doc="Output length in samples."),
        Arg("quality", _quality, 50.0, doc="0-100: 3 to 64 sinc lobes (16 at 50)."),
        Arg("dtype", to_dtype, None, doc="Output type (default: the input's)."),
    ),
    prepare=_plans,
)


def audio_resample(
    input: Any,
    /,
    *,
    in_rate: Any = None,
    out_rate: Any = None,
    scale: Any = None,
    out_length: Any = None,
    quality: float | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Resample audio (1-D signals, or time × channels) with a windowed sinc.

    Give exactly one of: ``in_rate`` and ``out_rate`` (output length ``ceil(n * out_rate /
    in_rate)``), ``scale`` (``ceil(n * scale)``) or ``out_length``. The signal is zero beyond its
    ends; channels are resampled alike. Rates and scale are float32, as in the reference.

    Parameters
    ----------
    input : Tensor or Batch
        Signals, 1-D or ``(time, channels)``, of any numeric type.
    in_rate, out_rate : float or Batch, optional
        Input and output sampling rates (per sample).
    scale : float or Batch, optional
        Output length over input length (per sample).
    out_length : int or Batch, optional
        Output length (per sample).
    quality : float, optional
        0-100 (default 50): sinc lobes ``round(0.007 q^2 - 0.09 q + 3)`` on each side (3, 16,
        64 at 0, 50, 100): slower and sharper as it grows.
    dtype : DType, optional
        Output type (default: the input's, values kept). Another type is normalized to its
        range, read as [-1, 1]: signed integers as fractions of their maximum (int16 to float32
        divides by 32767), unsigned ones with half their range at 0 (float to uint8: -1, 0, 1
        to 0, 128, 255; uint16 0 to float -1). Where an unsigned type takes part the input is
        converted before it is resampled, as in the reference. Integer outputs round (halves
        away from zero) and saturate.
    device : {"cpu", "gpu"}, optional

    Returns
    -------
    Tensor or Batch
        The resampled signals, with the input's layout.

    Raises
    ------
    InvalidArgumentError
        Not exactly one way of giving the length, a non-positive rate or scale, a sample that is
        not 1-D or 2-D; the message names the sample.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = np.zeros((100, 2), np.int16); x[50] = 1000
    >>> y = ndd.audio_resample(ndd.as_tensor(x), scale=2.0, dtype=ndd.float32)
    >>> y.shape, round(float(np.asarray(y)[100, 0]) * 32767)
    ((200, 2), 1000)
    """
    return AUDIO_RESAMPLE.call((input,), **forward_args(locals(), "input"))


__all__ = ["audio_resample"]
