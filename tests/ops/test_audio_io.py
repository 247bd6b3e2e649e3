"""``decoders.audio`` and ``audio_resample`` against the reference (DALI, CPU) on synthetic
signals written with soundfile; resampling error bounds in float32 units."""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf

import headrace as ndd
from headrace._core.errors import InvalidArgumentError

RATE = 16000


def _signal(n: int = 4000, ch: int = 2, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n) / RATE
    chirp = np.sin(2 * np.pi * (200 + 3000 * t) * t)
    x = 0.4 * chirp[:, None] + 0.05 * rng.standard_normal((n, ch))
    return x.astype(np.float32)


def _file(x: np.ndarray, fmt: str = "WAV", sub: str = "PCM_16", rate: int = RATE) -> np.ndarray:
    buf = io.BytesIO()
    sf.write(buf, x, rate, format=fmt, subtype=sub)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


def _dali() -> object:
    return pytest.importorskip("nvidia.dali.experimental.dynamic")


@pytest.mark.dali
@pytest.mark.parametrize(
    "kw",
    [
        {"in_rate": 16000.0, "out_rate": 22050.0},
        {"in_rate": 44100.0, "out_rate": 16000.0, "quality": 0},
        {"scale": 1.37},
        {"scale": 0.5},  # (short periods: one product per phase, see below)
        {"in_rate": 16000.0, "out_rate": 24000.0},
        {"out_length": 2999, "quality": 100},
    ],
)
@pytest.mark.parametrize("kind", ["mono", "stereo", "int16"])
def test_resample_matches_reference(kw: dict[str, float], kind: str) -> None:
    dndd = _dali()
    x = _signal(ch=1 if kind == "mono" else 2)
    x = x[:, 0].copy() if kind == "mono" else x
    if kind == "int16":
        x = (x * 30000).astype(np.int16)
    ref = np.asarray(dndd.audio_resample(dndd.as_tensor(x), **kw))  # type: ignore[attr-defined]
    got = np.asarray(ndd.audio_resample(ndd.as_tensor(x), **kw))
    assert got.shape == ref.shape and got.dtype == ref.dtype
    # float32 summation order only: <= 6e-6 (64 lobes), integers within one rounding step
    tol = 1 if kind == "int16" else 6e-6
    assert np.abs(got.astype(np.float64) - ref).max() <= tol


@pytest.mark.dali
@pytest.mark.parametrize(
    ("fmt", "sub"), [("WAV", "PCM_16"), ("FLAC", "PCM_24"), ("OGG", "VORBIS"), ("WAV", "FLOAT")]
)
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"downmix": True},
        {"sample_rate": 22050.0},
        {"sample_rate": 8000.0, "downmix": True, "quality": 80},
        {"dtype": "int32", "downmix": True},
    ],
)
def test_decode_matches_reference(fmt: str, sub: str, kw: dict[str, object]) -> None:
    dndd = _dali()
    raw = _file(_signal(), fmt, sub)
    dkw = {k: getattr(dndd, v) if k == "dtype" else v for k, v in kw.items()}  # type: ignore[arg-type]
    hkw = {k: getattr(ndd, v) if k == "dtype" else v for k, v in kw.items()}  # type: ignore[arg-type]
    ra, rr = dndd.decoders.audio(dndd.as_tensor(raw), **dkw)  # type: ignore[attr-defined]
    ga, gr = ndd.decoders.audio(ndd.as_tensor(raw), **hkw)
    ra, ga = np.asarray(ra), np.asarray(ga)
    assert ga.shape == ra.shape and ga.dtype == ra.dtype
    assert float(np.asarray(gr)) == float(np.asarray(rr))
    tol = 512 if ga.dtype == np.int32 else 2e-6  # int32: float32 rounding of 2^31-scaled values
    assert np.abs(ga.astype(np.float64) - ra).max() <= tol


def test_decode_shapes_rates_and_batch() -> None:
    files = [_file(_signal(300, 1)), _file(_signal(500, 2), "FLAC", rate=8000)]
    a, r = ndd.decoders.audio(ndd.batch(files), sample_rate=ndd.batch([np.float32(8000)] * 2))
    assert [t.shape for t in a] == [(150, 1), (500, 2)]
    assert [float(np.asarray(t)) for t in r] == [8000.0, 8000.0]
    assert r.dtype == ndd.float32
    m, _ = ndd.decoders.audio(ndd.as_tensor(files[1]), downmix=True, dtype=ndd.int16)
    assert m.shape == (500,) and m.dtype == ndd.int16


def test_corrupt_file_is_named_and_skippable() -> None:
    good = _file(_signal(200))
    bad = np.frombuffer(b"RIFF\x10\x00\x00\x00WAVEjunkjunkjunk", np.uint8).copy()
    b = ndd.batch([good, bad, good])
    with pytest.raises(ndd.DecodeError, match=r"decoders.audio.*sample 1") as raised:
        np.asarray(ndd.decoders.audio(b)[0].tensors[0])
    message = str(raised.value)
    assert message.count("sample 1") == 1, message  # named once
    assert "<_io.BytesIO" not in message  # (libsndfile's name for the in-memory file)
    with pytest.warns(UserWarning, match="skipped 1"):
        a, r = ndd.decoders.audio(b, on_error="skip")
        assert a.batch_size == 2 and r.batch_size == 2
    with pytest.raises(ValueError, match="dtype"):
        ndd.decoders.audio(ndd.as_tensor(good), dtype=ndd.uint8)


def test_resample_arguments_checked() -> None:
    x = ndd.as_tensor(np.zeros(10, np.float32))
    for kw in ({}, {"scale": 2.0, "out_length": 5}, {"in_rate": 1.0}, {"scale": -1.0}):
        with pytest.raises(InvalidArgumentError, match="audio_resample"):
            np.asarray(ndd.audio_resample(x, **kw))
    with pytest.raises(InvalidArgumentError, match="sample 0"):
        np.asarray(ndd.audio_resample(ndd.as_tensor(np.zeros((2, 2, 2))), scale=2.0))


def test_resample_preserves_a_sine() -> None:
    """Upsampling a band-limited sine: SNR against the analytic signal (away from the ends)."""
    n, f = 8000, 440.0
    x = np.sin(2 * np.pi * f * np.arange(n) / RATE).astype(np.float32)
    y = np.asarray(ndd.audio_resample(ndd.as_tensor(x), in_rate=RATE, out_rate=44100.0))
    want = np.sin(2 * np.pi * f * np.arange(y.size) / 44100.0)
    core = slice(500, -500)
    snr = 10 * np.log10(np.sum(want[core] ** 2) / np.sum((y[core] - want[core]) ** 2))
    assert snr > 60


@pytest.mark.parametrize("rates", [(2.0, 1.0), (1.0, 2.0), (3.0, 2.0), (16000.0, 8000.0)])
def test_short_period_ratios_take_one_product_per_phase(rates):
    """Rate ratios with a short period resample each phase as one matrix-vector product over
    a strided view of the windows (where every period of the filter bank repeats the first
    exactly): the chunked path's values up to float32 summation order."""
    import headrace.backends.cpu.resampling as rs

    x = np.sin(np.arange(5000) / 7.0).astype(np.float32) * 0.5
    stereo = np.stack([x, x[::-1].copy()], axis=1)
    n_out = round(x.size * rates[1] / rates[0])
    assert rs._phases(*rates, 16, n_out) is not None
    for sig in (x, stereo):
        got = rs.resample(sig, *rates, n_out, 16, np.dtype(np.float32))
        saved, rs._phases = rs._phases, lambda *a: None  # the chunked path
        try:
            want = rs.resample(sig, *rates, n_out, 16, np.dtype(np.float32))
        finally:
            rs._phases = saved
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
