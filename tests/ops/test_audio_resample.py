"""``audio_resample`` on long synthetic signals (sines, chirps, noise): the filter-bank path (rate
ratios with a short period) against the reference and against the taps computed directly.

Stated accuracy against the reference (DALI, CPU): SNR >= 110 dB for every rate pair and quality
(float32 summation order only; measured 116-170 dB by ``bench/audio_resample.py``), and the
largest difference <= 2e-5 on signals within [-1, 1].
"""

from __future__ import annotations

import numpy as np
import pytest

import headrace as ndd
from headrace.backends.shared.resampling import (
    filter_bank,
    resampling_padding,
    resampling_taps,
)

PAIRS = [(44100, 16000), (48000, 16000), (16000, 44100), (8000, 16000), (22050, 16000)]


def _signal(kind: str, rate: int, seconds: float, ch: int = 0) -> np.ndarray:
    n = round(seconds * rate)
    t = np.arange(n) / rate
    if kind == "sine":
        x = 0.5 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 3000 * t)
    elif kind == "chirp":
        x = 0.7 * np.sin(2 * np.pi * (100 * t + (0.45 * rate - 100) * t * t / (2 * seconds)))
    else:
        x = 0.3 * np.random.default_rng(rate).standard_normal(n)
    x = x.astype(np.float32)
    return np.stack([x, -0.5 * x], 1) if ch else x


def _snr(y: np.ndarray, ref: np.ndarray) -> float:
    err = np.sum((y.astype(np.float64) - ref) ** 2)
    return float(10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / max(err, 1e-300)))


def _direct(x: np.ndarray, a: float, b: float, n_out: int, lobes: int) -> np.ndarray:
    """Every output's taps computed on their own (no filter bank), summed in float64."""
    left, right = resampling_padding(lobes)
    p = np.concatenate([np.zeros(left), x.astype(np.float64), np.zeros(right)])
    first, w = resampling_taps(a, b, lobes, 0, n_out)
    return (p[first[:, None] + left + np.arange(2 * lobes)] * w).sum(1)


@pytest.mark.dali
@pytest.mark.parametrize(("a", "b"), PAIRS)
@pytest.mark.parametrize("quality", [0, 50, 100])
@pytest.mark.parametrize("kind", ["sine", "chirp", "noise"])
def test_long_signals_match_reference(a: int, b: int, quality: int, kind: str) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    x = _signal(kind, a, 3.0)  # several filter-bank periods (7680 outputs at 44.1 -> 16 kHz)
    kw = {"in_rate": float(a), "out_rate": float(b), "quality": quality}
    ref = np.asarray(dndd.audio_resample(dndd.as_tensor(x), **kw))
    got = np.asarray(ndd.audio_resample(ndd.as_tensor(x), **kw))
    assert got.shape == ref.shape and got.dtype == ref.dtype
    assert _snr(got, ref) >= 110
    assert np.abs(got.astype(np.float64) - ref).max() <= 2e-5


@pytest.mark.dali
def test_stereo_int16_long_signal_matches_reference() -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    x = (_signal("chirp", 44100, 2.0, ch=2) * 30000).astype(np.int16)
    kw = {"in_rate": 44100.0, "out_rate": 16000.0}
    ref = np.asarray(dndd.audio_resample(dndd.as_tensor(x), **kw))
    got = np.asarray(ndd.audio_resample(ndd.as_tensor(x), **kw))
    assert got.shape == ref.shape == (32000, 2) and got.dtype == ref.dtype == np.int16
    assert np.abs(got.astype(np.int32) - ref).max() <= 1


@pytest.mark.parametrize(("a", "b"), PAIRS)
@pytest.mark.parametrize("lobes", [3, 16])
def test_filter_bank_equals_direct_taps(a: int, b: int, lobes: int) -> None:
    """The cached period's weights, shifted period by period, are the taps of every output."""
    x = _signal("noise", a, 2.5)
    n_out = -(-x.size * b // a)
    assert filter_bank(float(a), float(b), lobes, n_out) is not None
    want = _direct(x, float(a), float(b), n_out, lobes)
    got = ndd.audio_resample(
        ndd.as_tensor(x), in_rate=a, out_rate=b, quality=0 if lobes == 3 else 50
    )
    assert np.abs(np.asarray(got) - want).max() <= 2e-6


def test_long_period_ratios_use_direct_taps() -> None:
    """A ratio without a short period (scale 1.37 in float32) computes its taps chunk by chunk."""
    scale = float(np.float32(1.37))
    x = _signal("chirp", 16000, 1.0)
    n_out = -(-x.size * 137 // 100)
    assert filter_bank(1.0, scale, 16, n_out) is None
    got = np.asarray(ndd.audio_resample(ndd.as_tensor(x), scale=scale))
    assert np.abs(got - _direct(x, 1.0, scale, got.size, 16)).max() <= 2e-6


def test_channels_are_resampled_alike() -> None:
    x = _signal("chirp", 48000, 1.0, ch=2)
    y = np.asarray(ndd.audio_resample(ndd.as_tensor(x), in_rate=48000, out_rate=16000))
    mono = np.asarray(
        ndd.audio_resample(ndd.as_tensor(x[:, 0].copy()), in_rate=48000, out_rate=16000)
    )
    assert y.shape == (16000, 2)
    np.testing.assert_array_equal(y[:, 0], mono)
    np.testing.assert_allclose(y[:, 1], -0.5 * mono, atol=1e-7)


@pytest.mark.parametrize("lobes_q", [0, 50])
def test_torch_kernel_equals_cpu_on_long_stereo(lobes_q: int) -> None:
    torch = pytest.importorskip("torch")
    from headrace.backends.cpu.resampling import resample as cpu_resample
    from headrace.backends.shared.common import resampling_lobes
    from headrace.backends.torch.resampling import resample as torch_resample

    x = _signal("noise", 44100, 2.0, ch=2)
    lobes = resampling_lobes(lobes_q)
    want = cpu_resample(x, 44100.0, 16000.0, 32000, lobes, np.dtype(np.float32))
    got = torch_resample(torch.from_numpy(x), 44100.0, 16000.0, 32000, lobes, torch.float32)
    np.testing.assert_allclose(got.numpy(), want, atol=2e-6)


def test_resampled_sine_keeps_its_frequency() -> None:
    """Downsampling a 1 kHz sine from 48 kHz: the analytic 1 kHz sine at 16 kHz, SNR >= 60 dB
    away from the ends."""
    t = np.arange(48000 * 2) / 48000
    y = np.asarray(
        ndd.audio_resample(
            ndd.as_tensor(np.sin(2 * np.pi * 1000 * t).astype(np.float32)),
            in_rate=48000,
            out_rate=16000,
        )
    )
    want = np.sin(2 * np.pi * 1000 * np.arange(y.size) / 16000)
    core = slice(200, -200)
    assert _snr(y[core], want[core]) >= 60
