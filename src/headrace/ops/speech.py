"""Speech features: pre-emphasis, spectrogram, power spectrum, mel filter bank, decibels, MFCC and
the non-silent region of a signal.

A typical front end is ``preemphasis_filter`` → ``spectrogram`` (layout ``"ft"``: frequency ×
time) → ``mel_filter_bank`` → ``to_decibels`` → ``normalize`` (or ``mfcc``). All outputs are
float32; windows, filter banks and DCT matrices are computed once per shape on the host.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> t = np.arange(16000, dtype=np.float32) / 16000
>>> audio = ndd.tensor(np.sin(2 * np.pi * 440 * t))
>>> spec = ndd.spectrogram(ndd.preemphasis_filter(audio), nfft=512, window_length=400,
...                        window_step=160)
>>> spec.shape, spec.layout
((257, 101), 'ft')
>>> mel = ndd.to_decibels(ndd.mel_filter_bank(spec, nfilter=64, sample_rate=16000))
>>> mel.shape
(64, 101)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from headrace._core.batch import Batch
from headrace._core.tensor import Tensor
from headrace._dispatch.args import (
    Arg,
    forward_args,
    to_bool,
    to_dtype,
    to_float,
    to_floats,
    to_int,
    to_str,
)
from headrace._dispatch.schema import OpSchema, Planned
from headrace.ops import _speech_params as P

__all__ = [
    "mel_filter_bank",
    "mfcc",
    "nonsilent_region",
    "power_spectrum",
    "preemphasis_filter",
    "spectrogram",
    "to_decibels",
]

TensorOrBatch = Tensor | Batch
Vals = dict[str, Any]


def _schema(name: str, plan: Planned | None, *args: Arg, **kw: Any) -> OpSchema:
    """A speech op: kernels named ``name`` (or ``kernel=``) in ``backends/<backend>/speech.py``."""
    return OpSchema(name, "speech", args=args, planned=plan, **kw)


def _spectrogram_args(kc: Any, ins: Any, vals: Vals) -> Vals:
    """The output ``layout`` argument reaches the plan as ``layout_out`` (the plan's ``layout``
    is the input's)."""
    out = {k: v for k, v in vals.items() if k != "layout"}
    out["layout_out"] = vals.get("layout")
    return out


def _spectrogram_layout(layout: str | None, plans: Sequence[Any], vals: Vals) -> str:
    return vals.get("layout_out") or "ft"


def _no_layout(layout: str | None, plans: Sequence[Any], vals: Vals) -> str | None:
    return layout


PREEMPHASIS_FILTER = _schema(
    "preemphasis_filter",
    Planned(P.preemphasis_params, light=True),
    Arg("preemph_coeff", to_float, 0.97, per_sample=True, doc="Pre-emphasis coefficient."),
    Arg("border", to_str, "clamp", doc="x[-1]: 'zero', 'clamp' (x[0]) or 'reflect' (x[1])."),
    Arg("dtype", to_dtype, None, doc="Output type (float32)."),
)
SPECTROGRAM = _schema(
    "spectrogram",
    Planned(
        P.spectrogram_params,
        prepare=_spectrogram_args,
        out_layout=_spectrogram_layout,
        chainable=True,  # the prepare step renames an argument
        dense=True,
    ),
    Arg("nfft", to_int, None, doc="FFT size (default: window_length)."),
    Arg("window_length", to_int, 512, doc="Window size in samples."),
    Arg("window_step", to_int, 256, doc="Hop between windows in samples."),
    Arg("window_fn", to_floats, None, doc="Window samples (default: Hann)."),
    Arg("power", to_int, 2, doc="1: magnitude, 2: power."),
    Arg("center_windows", to_bool, True, doc="Pad so window t is centred at t * window_step."),
    Arg("reflect_padding", to_bool, True, doc="Centre padding mirrors the signal (else zeros)."),
    Arg("layout", to_str, "ft", doc="Output layout, 'ft' or 'tf'."),
)
POWER_SPECTRUM = _schema(
    "power_spectrum",
    Planned(P.power_spectrum_params),
    Arg("axis", to_int, -1, doc="Axis transformed (default: the last)."),
    Arg("nfft", to_int, None, doc="FFT size (default: the axis' extent)."),
    Arg("power", to_int, 2, doc="1: magnitude, 2: power."),
)
MEL_FILTER_BANK = _schema(
    "mel_filter_bank",
    Planned(P.mel_params),
    Arg("nfilter", to_int, 128, doc="Number of mel bands."),
    Arg("sample_rate", to_float, 44100.0, doc="Sampling rate of the signal in Hz."),
    Arg("freq_low", to_float, 0.0, doc="Lowest frequency in Hz."),
    Arg("freq_high", to_float, 0.0, doc="Highest frequency in Hz (0: sample_rate / 2)."),
    Arg("mel_formula", to_str, "slaney", doc="'slaney' or 'htk'."),
    Arg("normalize", to_bool, True, doc="Scale each triangle to unit area."),
    kernel="matrix_along_axis",
)
TO_DECIBELS = _schema(
    "to_decibels",
    Planned(P.decibels_params, light=True),
    Arg("multiplier", to_float, 10.0, doc="10 for power, 20 for amplitude."),
    Arg("reference", to_float, 0.0, doc="Reference magnitude (0: the sample's maximum)."),
    Arg("cutoff_db", to_float, -200.0, doc="Floor of the result in dB."),
)
MFCC = _schema(
    "mfcc",
    Planned(P.mfcc_params),
    Arg("axis", to_int, 0, doc="Axis of the mel bands."),
    Arg("dct_type", to_int, 2, doc="DCT type, 1..4."),
    Arg("lifter", to_float, 0.0, doc="Cepstral liftering coefficient (0: none)."),
    Arg("n_mfcc", to_int, 20, doc="Number of coefficients kept."),
    Arg("normalize", to_bool, False, doc="Orthonormal DCT (not for type 1)."),
    kernel="matrix_along_axis",
)
NONSILENT_REGION = _schema(
    "nonsilent_region",
    None,
    Arg("cutoff_db", to_float, -60.0, doc="Threshold in dB relative to the reference power."),
    Arg("reference_power", to_float, 0.0, doc="Reference power (0: the maximum)."),
    Arg("reset_interval", to_int, 8192, doc="Running-sum recomputation interval (-1: never)."),
    Arg("window_length", to_int, 2048, doc="Window of the moving mean power."),
    num_outputs=2,
    check=P.check_nonsilent_args,
)


def preemphasis_filter(
    input: Any,
    /,
    *,
    preemph_coeff: float | TensorOrBatch | None = None,
    border: str | None = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Pre-emphasis: ``y[t] = x[t] - preemph_coeff * x[t - 1]``, computed in float32.

    Parameters
    ----------
    input : Tensor or Batch
        1-D signals of any numeric type.
    preemph_coeff : float or Batch, optional
        Coefficient, may vary per sample (default 0.97).
    border : str, optional
        The value of ``x[-1]``: ``"clamp"`` (``x[0]``, default), ``"zero"`` or ``"reflect"``
        (``x[1]``).
    dtype : DType, optional
        Output type (default float32); integers round and saturate.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        The filtered signals, same shape.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.preemphasis_filter(ndd.tensor([1.0, 2.0, 4.0]), preemph_coeff=0.5,
    ...                        border="zero").torch().tolist()
    [1.0, 1.5, 3.0]
    """
    return PREEMPHASIS_FILTER.call((input,), **forward_args(locals(), "input"))


def spectrogram(
    input: Any,
    /,
    *,
    nfft: int | None = None,
    window_length: int | None = None,
    window_step: int | None = None,
    window_fn: Sequence[float] | None = None,
    power: int | None = None,
    center_windows: bool | None = None,
    reflect_padding: bool | None = None,
    layout: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Short-time Fourier transform magnitudes (or powers) of 1-D signals.

    Parameters
    ----------
    input : Tensor or Batch
        1-D signals of any numeric type.
    nfft : int, optional
        FFT size, at least ``window_length`` (default: ``window_length``); ``nfft // 2 + 1``
        frequency bins.
    window_length, window_step : int, optional
        Window size and hop in samples (defaults 512 and 256).
    window_fn : list of float, optional
        ``window_length`` window samples (default: Hann, ``0.5 - 0.5 cos(2 pi (i + 0.5) / N)``).
    power : int, optional
        1 for the magnitude, 2 (default) for the power.
    center_windows : bool, optional
        Window ``t`` centred at ``t * window_step`` (default True): the signal is padded by
        ``window_length // 2`` on both sides and gives ``length // window_step + 1`` windows;
        otherwise ``(length - window_length) // window_step + 1``.
    reflect_padding : bool, optional
        The centre padding mirrors the signal (default True) or is zero.
    layout : str, optional
        ``"ft"`` (default: frequency × time) or ``"tf"``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        float32 spectrograms with layout ``layout``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.spectrogram(ndd.tensor(np.ones(1000, np.float32)), window_length=64,
    ...                 window_step=32, layout="tf").shape
    (32, 33)
    """
    return SPECTROGRAM.call((input,), **forward_args(locals(), "input"))


def power_spectrum(
    input: Any,
    /,
    *,
    axis: int | None = None,
    nfft: int | None = None,
    power: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Power (or magnitude) of the real FFT along one axis.

    Parameters
    ----------
    input : Tensor or Batch
        Real signals of any numeric type and rank.
    axis : int, optional
        Axis transformed (default -1).
    nfft : int, optional
        FFT size: the axis is zero-padded or cut to it (default: its extent); it becomes
        ``nfft // 2 + 1`` bins.
    power : int, optional
        1 for ``|X|``, 2 (default) for ``|X|^2``.
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        float32, the axis replaced by the bins.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.power_spectrum(ndd.tensor([1.0, 1.0, 1.0, 1.0])).torch().tolist()
    [16.0, 0.0, 0.0]
    """
    return POWER_SPECTRUM.call((input,), **forward_args(locals(), "input"))


def mel_filter_bank(
    input: Any,
    /,
    *,
    nfilter: int | None = None,
    sample_rate: float | None = None,
    freq_low: float | None = None,
    freq_high: float | None = None,
    mel_formula: str | None = None,
    normalize: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Mel-scale triangular filters applied to the frequency axis of spectrograms.

    Parameters
    ----------
    input : Tensor or Batch
        float32 spectrograms; the layout's ``f`` is the frequency axis (without a layout the
        second-to-last). ``nfft`` is ``2 * (bins - 1)``.
    nfilter : int, optional
        Number of mel bands (default 128).
    sample_rate : float, optional
        The signal's sampling rate in Hz (default 44100).
    freq_low, freq_high : float, optional
        Frequency range in Hz (defaults 0 and ``sample_rate / 2``).
    mel_formula : str, optional
        ``"slaney"`` (default) or ``"htk"``.
    normalize : bool, optional
        Divide each triangle by its width in Hz / 2 (unit area; default True).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        float32, the frequency axis replaced by ``nfilter`` bands; same layout.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> spec = ndd.tensor(np.ones((257, 10), np.float32), layout="ft")
    >>> ndd.mel_filter_bank(spec, nfilter=40, sample_rate=16000).shape
    (40, 10)
    """
    return MEL_FILTER_BANK.call((input,), **forward_args(locals(), "input"))


def to_decibels(
    input: Any,
    /,
    *,
    multiplier: float | None = None,
    reference: float | None = None,
    cutoff_db: float | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Decibels: ``multiplier * log10(max(10 ** (cutoff_db / multiplier), x / reference))``.

    Parameters
    ----------
    input : Tensor or Batch
        float32 magnitudes or powers.
    multiplier : float, optional
        10 (default) for powers, 20 for magnitudes.
    reference : float, optional
        Reference value; 0 (default) uses each sample's maximum.
    cutoff_db : float, optional
        Floor of the result (default -200).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        float32, same shape and layout.

    Examples
    --------
    >>> import headrace as ndd
    >>> [round(v, 4) for v in ndd.to_decibels(ndd.tensor([1.0, 10.0, 100.0])).torch().tolist()]
    [-20.0, -10.0, 0.0]
    """
    return TO_DECIBELS.call((input,), **forward_args(locals(), "input"))


def mfcc(
    input: Any,
    /,
    *,
    axis: int | None = None,
    dct_type: int | None = None,
    lifter: float | None = None,
    n_mfcc: int | None = None,
    normalize: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Mel-frequency cepstral coefficients: a DCT along the mel axis of (dB) mel spectrograms.

    Parameters
    ----------
    input : Tensor or Batch
        float32 mel spectrograms.
    axis : int, optional
        The mel axis (default 0).
    dct_type : int, optional
        DCT type 1, 2 (default), 3 or 4; unnormalised sums are half of the textbook ones
        (``X_k = sum_n x_n cos(pi k (n + 0.5) / N)`` for type 2).
    lifter : float, optional
        Liftering: coefficient ``k`` times ``1 + lifter / 2 * sin(pi (k + 1) / lifter)``
        (default 0: none).
    n_mfcc : int, optional
        Number of coefficients kept (default 20; at most the axis' extent).
    normalize : bool, optional
        Orthonormal DCT (default False; not for type 1).
    device, batch_size
        As for every operator.

    Returns
    -------
    Tensor or Batch
        float32, the axis replaced by ``n_mfcc`` coefficients.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> ndd.mfcc(ndd.tensor(np.ones((4, 2), np.float32)), n_mfcc=2).torch().tolist()
    [[4.0, 4.0], [0.0, 0.0]]
    """
    return MFCC.call((input,), **forward_args(locals(), "input"))


def nonsilent_region(
    input: Any,
    /,
    *,
    cutoff_db: float | None = None,
    reference_power: float | None = None,
    reset_interval: int | None = None,
    window_length: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """The begin and length of the non-silent part of 1-D signals.

    The short-term power is the mean of ``x**2`` over windows of ``window_length`` samples;
    a window is non-silent when its power is at least ``reference_power`` (default: the
    largest window power) times ``10 ** (cutoff_db / 10)``. The region runs from the first
    sample of the first non-silent window to the last sample of the last one; a signal
    shorter than a window is one window.

    Parameters
    ----------
    input : Tensor or Batch
        1-D signals of any numeric type.
    cutoff_db : float, optional
        Threshold in dB below the reference (default -60).
    reference_power : float, optional
        Reference power (default 0: the maximum).
    reset_interval : int, optional
        How often the reference recomputes its running sum (default 8192, -1: never); -1 or
        positive. Sums here are exact (float64), so it has no effect (the reference also
        wants a multiple of ``window_length`` for float input; any is taken here).
    window_length : int, optional
        Window size in samples (default 2048).
    device, batch_size
        As for every operator.

    Returns
    -------
    tuple of Tensor or Batch
        ``(begin, length)``, int32 scalars; ``(0, 0)`` when everything is silent.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = np.zeros(1000, np.float32); x[400:500] = 1
    >>> begin, length = ndd.nonsilent_region(ndd.tensor(x), window_length=16)
    >>> int(begin.torch()), int(length.torch())
    (385, 130)
    """
    return NONSILENT_REGION.call((input,), **forward_args(locals(), "input"))
