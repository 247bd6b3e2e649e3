"""Speech features against the reference (``@pytest.mark.dali``) and closed forms.

Signals: sines, a chirp and noise, synthesised with numpy. Tolerances are relative to the largest
magnitude of the reference's output (``rel``).
"""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.dali_oracle import dali_ndd, dali_run

import headrace as ndd
from headrace._core.errors import InvalidArgumentError

SR = 16000


def _signals() -> list[np.ndarray]:
    rng = np.random.default_rng(17)
    t = np.arange(4000) / SR
    sine = 0.5 * np.sin(2 * np.pi * 440 * t)
    chirp = np.sin(2 * np.pi * (100 + 3000 * t) * t)[:3111]
    noise = rng.standard_normal(2500) * 0.1
    return [s.astype(np.float32) for s in (sine, chirp, noise)]


def _rel(a: list[np.ndarray], b: list[np.ndarray]) -> float:
    return max(float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)) for x, y in zip(a, b))


def _ours(fn, samples, layout=None, device="cpu", **kw):
    out = fn(ndd.batch(samples, layout=layout, device=device), **kw)
    return [np.asarray(t.cpu()) for t in out.tensors] if not isinstance(out, tuple) else out


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize(
    "kw",
    [{}, {"preemph_coeff": 0.5, "border": "zero"}, {"border": "reflect"}],
)
def test_preemphasis_matches_reference(kw, device):
    x = _signals()
    ref = dali_run("preemphasis_filter", x, **kw)
    assert _rel(_ours(ndd.preemphasis_filter, x, device=device, **kw), ref) < 1e-6


@pytest.mark.dali
def test_preemphasis_int16_to_int16():
    x = [(s * 20000).astype(np.int16) for s in _signals()]
    ref = dali_run("preemphasis_filter", x, dtype=dali_ndd().int16)
    ours = _ours(ndd.preemphasis_filter, x, dtype=ndd.int16)
    assert max(np.abs(a.astype(int) - b.astype(int)).max() for a, b in zip(ours, ref)) <= 1


SPEC_CASES = [
    {"nfft": 512, "window_length": 400, "window_step": 160},
    {"window_length": 256, "window_step": 100, "center_windows": False, "power": 1},
    {"nfft": 300, "window_length": 255, "window_step": 77, "reflect_padding": False,
     "layout": "tf"},
    {"window_length": 64, "window_step": 32, "window_fn": np.hamming(64).tolist()},
]  # fmt: skip


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("kw", SPEC_CASES)
def test_spectrogram_matches_reference(kw, device):
    x = _signals()
    d = dali_ndd()
    ref = [np.asarray(t) for t in d.spectrogram(d.batch(x), **kw).tensors]  # (kw has `layout`)
    out = ndd.spectrogram(ndd.batch(x, device=device), **kw)
    assert out.layout == kw.get("layout", "ft")
    assert _rel([np.asarray(t.cpu()) for t in out.tensors], ref) < 2e-6


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("kw", [{}, {"nfft": 64, "power": 1}, {"axis": 0, "nfft": 20}])
def test_power_spectrum_matches_reference(kw, device):
    rng = np.random.default_rng(1)
    x = [rng.standard_normal((30, 50)).astype(np.float32) for _ in range(2)]
    ref = dali_run("power_spectrum", x, **kw)
    assert _rel(_ours(ndd.power_spectrum, x, device=device, **kw), ref) < 2e-6


def _spectra() -> list[np.ndarray]:
    spec = ndd.spectrogram(ndd.batch(_signals()), nfft=512, window_length=400, window_step=160)
    return [np.asarray(t) for t in spec.tensors]


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize(
    "kw",
    [
        {"nfilter": 64, "sample_rate": SR},
        {"nfilter": 40, "sample_rate": SR, "mel_formula": "htk", "normalize": False},
        {"nfilter": 20, "sample_rate": SR, "freq_low": 300, "freq_high": 6000},
    ],
)
def test_mel_filter_bank_matches_reference(kw, device):
    s = _spectra()
    ref = dali_run("mel_filter_bank", s, layout="ft", **kw)
    assert _rel(_ours(ndd.mel_filter_bank, s, "ft", device, **kw), ref) < 1e-5  # seen: 2e-6
    st = [np.ascontiguousarray(v.T) for v in s]
    ref = dali_run("mel_filter_bank", st, layout="tf", **kw)
    assert _rel(_ours(ndd.mel_filter_bank, st, "tf", device, **kw), ref) < 1e-5


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("kw", [{}, {"multiplier": 20.0, "reference": 2.0, "cutoff_db": -40.0}])
def test_to_decibels_matches_reference(kw, device):
    s = _spectra()
    ref = dali_run("to_decibels", s, **kw)
    ours = _ours(ndd.to_decibels, s, device=device, **kw)
    assert max(float(np.abs(a - b).max()) for a, b in zip(ours, ref)) < 1e-4  # dB, absolute


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"n_mfcc": 13, "normalize": True, "lifter": 22.0},
        {"dct_type": 1, "n_mfcc": 10},
        {"dct_type": 3, "normalize": True},
        {"dct_type": 4, "axis": 1, "n_mfcc": 5},
    ],
)
def test_mfcc_matches_reference(kw, device):
    mel = ndd.to_decibels(ndd.mel_filter_bank(ndd.batch(_spectra(), layout="ft"), nfilter=40,
                                              sample_rate=SR))  # fmt: skip
    m = [np.asarray(t) for t in mel.tensors]
    ref = dali_run("mfcc", m, **kw)
    assert _rel(_ours(ndd.mfcc, m, device=device, **kw), ref) < 2e-6


NS_CASES = [{}, {"window_length": 128, "cutoff_db": -30.0}, {"window_length": 100,
            "reset_interval": -1, "reference_power": 0.01}]  # fmt: skip


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("kw", NS_CASES)
def test_nonsilent_region_matches_reference(kw, device):
    rng = np.random.default_rng(3)
    sig = [np.concatenate([np.zeros(3000), rng.standard_normal(1000) * a, np.zeros(2000)])
           for a in (1.0, 0.05)]  # fmt: skip
    sig += [np.zeros(5000), rng.standard_normal(50), np.zeros(0)]
    sig = [s.astype(np.float32) for s in sig]
    wants = _isolated_reference("tests.ops.test_speech:_reference_nonsilent", sig, kw)
    b, n = ndd.nonsilent_region(ndd.batch(sig, device=device), **kw)
    for i, want in enumerate(wants):
        assert (int(b.tensors[i].torch()), int(n.tensors[i].torch())) == want, i
    assert b.dtype == ndd.int32


def _reference_nonsilent(sig: list[np.ndarray], kw: dict) -> list[tuple[int, int]]:
    """The reference's (begin, length) per sample (run in the reference's own process)."""
    d = dali_ndd()
    rb, rl = d.nonsilent_region(d.batch(sig), **kw)
    return [(int(np.asarray(b)), int(np.asarray(n))) for b, n in zip(rb.tensors, rl.tensors)]


def _isolated_reference(func: str, *args):  # type: ignore[no-untyped-def]
    """``func(*args)`` in the reference's separate process (:mod:`tests._helpers.dali_isolated`).

    The reference's process has crashed on this operator in a test process that had also
    loaded PyAV (both bundle FFmpeg); run there, a crash is retried once in a fresh process and
    then reported as a skip of the oracle, never as a dead test worker."""
    from tests._helpers import dali_isolated as iso

    for attempt in range(2):
        try:
            return iso.call(func, *args)
        except iso.IsolatedCrash as e:
            if attempt:
                pytest.skip(f"the reference crashed twice: {e}")
    raise AssertionError("unreachable")


def test_nonsilent_region_closed_form():
    """Power windows of a burst between zeros: the region spans the windows that touch it."""
    sig = np.zeros(6000, np.float32)
    sig[2500:3100] = 0.5
    b, n = ndd.nonsilent_region(sig, window_length=256, cutoff_db=-20.0)
    # mean power of a window = 0.25 * overlap / 256; >= 0.0025 (-20 dB of the max 0.25) needs
    # an overlap of at least 2.56 samples: windows starting at 2500 - 256 + 3 .. 3100 - 3,
    # the region from the first window's start to the last one's end
    assert (int(np.asarray(b)), int(np.asarray(n))) == (2247, 3097 + 256 - 2247)


def test_errors_name_op_and_argument():
    x = ndd.tensor(np.zeros(100, np.float32))
    with pytest.raises(InvalidArgumentError, match=r"nonsilent_region.*reset_interval"):
        ndd.nonsilent_region(x, reset_interval=0)
    with pytest.raises(InvalidArgumentError, match=r"spectrogram: .*nfft"):
        ndd.spectrogram(x, nfft=16, window_length=32).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"mfcc: .*n_mfcc"):
        ndd.mfcc(ndd.tensor(np.zeros((4, 3), np.float32)), n_mfcc=0).evaluate()
    with pytest.raises(Exception, match="sample 1"):
        ndd.spectrogram(
            ndd.batch([np.zeros(10, np.float32), np.zeros((2, 2), np.float32)])
        ).evaluate()


def test_speech_pipeline_normalize_and_slice():
    """Audio use of ``normalize`` (per-band statistics over time) and ``slice`` (the region
    ``nonsilent_region`` finds)."""
    x = np.concatenate([np.zeros(2000), _signals()[0], np.zeros(1000)]).astype(np.float32)
    b = ndd.batch([x])
    begin, length = ndd.nonsilent_region(b, window_length=64)
    cut = ndd.slice(b, begin, length, axes=[0])
    assert cut.tensors[0].shape[0] == int(length.tensors[0].torch())
    spec = ndd.spectrogram(cut, nfft=512, window_length=400, window_step=160)
    mel = ndd.to_decibels(ndd.mel_filter_bank(spec, nfilter=40, sample_rate=SR))
    z = np.asarray(ndd.normalize(mel, axes=[1]).tensors[0])
    assert np.abs(z.mean(axis=1)).max() < 1e-4
    assert np.abs(z.std(axis=1) - 1).max() < 1e-3


@pytest.mark.parametrize("nfft", [301, 256, 255])
@pytest.mark.parametrize("layout", ["ft", "tf"])
@pytest.mark.parametrize("power", [1, 2])
def test_spectrogram_closed_form(nfft, layout, power):
    """Odd and even FFT sizes, both layouts, magnitude and power against a float64 STFT."""
    x = _signals()
    win, step = 255, 77
    window = np.hamming(win)
    out = ndd.spectrogram(ndd.batch(x), nfft=nfft, window_length=win, window_step=step,
                          window_fn=window.tolist(), center_windows=False, power=power,
                          layout=layout)  # fmt: skip
    for sig, got in zip(x, out.tensors):
        frames = 1 + (sig.size - win) // step
        fr = np.stack([sig[i * step : i * step + win] * window for i in range(frames)])
        want = np.abs(np.fft.rfft(fr, n=nfft, axis=1)) ** power
        want = want.T if layout == "ft" else want
        got = np.asarray(got)
        assert got.shape == want.shape and got.dtype == np.float32
        assert np.abs(got - want).max() <= 2e-6 * np.abs(want).max()


def test_spectrogram_of_a_signal_shorter_than_the_window():
    """Refused, naming the sample (the reference: "Signal is too short")."""
    x = ndd.batch([np.ones(100, np.float32), np.ones(10, np.float32)])
    with pytest.raises(InvalidArgumentError, match=r"sample 1: the signal \(10 samples\) is too"):
        ndd.spectrogram(x, nfft=64, window_length=64, window_step=16,
                        center_windows=False).evaluate()  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint8, np.int32])
@pytest.mark.parametrize("window", [1, 7, 2048, 6000])
def test_moving_power_equals_cumsum_of_squares(dtype, window):
    """The running mean power behind nonsilent_region: bit for bit the float64 prefix sums of
    the squares (numpy.cumsum), whichever OpenCV call computes them for this input type."""
    from headrace.backends.cpu.speech import moving_power

    rng = np.random.default_rng(3)
    x = (rng.normal(0, 0.1, 5000) * (1 if np.dtype(dtype).kind == "f" else 300)).astype(dtype)
    sq = np.square(x, dtype=np.float64)
    if x.size <= window:
        want = np.array([sq.sum() / window])
    else:
        c = np.concatenate([[0.0], np.cumsum(sq)])
        want = (c[window:] - c[:-window]) / window
    np.testing.assert_array_equal(moving_power(x, window), want)


@pytest.mark.parametrize(
    "kw", [{}, {"cutoff_db": -80.0}, {"reference": 2.0}, {"reference": 1.0, "multiplier": 20.0}]
)
def test_to_decibels_of_a_uniform_batch_equals_each_sample_alone(kw):
    """Same-shape float32 samples go through the whole-batch kernel; each sample keeps its own
    reference (its maximum by default), a sample of zeros its ratios of 1, without warnings."""
    import warnings

    rng = np.random.default_rng(5)
    xs = [np.abs(rng.standard_normal((64, 40))).astype(np.float32) * k for k in (1, 3, 0, 7)]
    xs[3][0, 0] = np.nan
    with ndd.EvalMode.sync_cpu, warnings.catch_warnings():
        warnings.simplefilter("error")  # (the zero sample must not warn)
        got = [np.asarray(t) for t in ndd.to_decibels(ndd.as_batch(xs), **kw).tensors]
    with ndd.EvalMode.sync_cpu:
        alone = [np.asarray(ndd.to_decibels(ndd.tensor(x), **kw)) for x in xs]
    for g, a in zip(got, alone, strict=True):
        np.testing.assert_array_equal(g, a)


def _same_length_signals(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    t = np.arange(3200) / SR
    return [
        (np.sin(2 * np.pi * (200 + 90 * k) * t) + 0.05 * rng.standard_normal(t.size)).astype(
            np.float32
        )
        for k in range(n)
    ]


@pytest.mark.parametrize("layout", ["ft", "tf"])
def test_whole_batch_speech_kernels_equal_each_sample_alone(layout):
    """A batch of same-length signals: the spectrogram fills one dense array, and the filter
    bank, the DCT, dB and normalize run as whole-batch products split over 2 threads; every
    sample equals what the same call gives it alone (per-sample kernels)."""
    xs = _same_length_signals(9)
    spec_kw = dict(nfft=256, window_length=200, window_step=80, layout=layout)
    axis = 0 if layout == "ft" else 1

    def steps(x):
        s = ndd.spectrogram(x, **spec_kw)
        m = ndd.mel_filter_bank(s, nfilter=40, sample_rate=SR)
        d = ndd.to_decibels(m, cutoff_db=-80)
        n = ndd.normalize(d, axes=[1 - axis])
        c = ndd.mfcc(n, n_mfcc=13, axis=axis)
        return s, m, d, n, c

    with ndd.EvalContext(num_threads=2), ndd.EvalMode.sync_cpu:
        batch_steps = steps(ndd.batch(xs))
        assert batch_steps[0]._dense is not None  # (the spectrogram's dense array)
        alone = [steps(ndd.tensor(x)) for x in xs]
    for k, out in enumerate(batch_steps):
        for i, t in enumerate(out.tensors):
            want = np.asarray(alone[i][k])
            np.testing.assert_array_equal(np.asarray(t), want)


def test_whole_batch_kernels_split_over_the_calls_own_context(monkeypatch):
    """The executor thread runs the eager calls of every context: a kernel that splits a batch
    over a pool takes the pool of the context the call was made in."""
    import headrace.backends.cpu.speech as speech_kernels
    from headrace._exec.context import calling_context

    seen = []
    real = speech_kernels.parallel_parts

    def spy(n, fn, *a, **k):
        seen.append(calling_context())
        return real(n, fn, *a, **k)

    monkeypatch.setattr(speech_kernels, "parallel_parts", spy)
    xs = [np.abs(np.random.default_rng(k).standard_normal((64, 50))).astype(np.float32)
          for k in range(12)]  # fmt: skip
    with ndd.EvalContext(num_threads=3) as ctx, ndd.EvalMode.eager:
        got = ndd.to_decibels(ndd.batch(xs)).evaluate()
    assert seen == [ctx]
    with ndd.EvalMode.sync_cpu:
        alone = [np.asarray(ndd.to_decibels(ndd.tensor(x))) for x in xs]
    for t, a in zip(got.tensors, alone, strict=True):
        np.testing.assert_array_equal(np.asarray(t), a)
