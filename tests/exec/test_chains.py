"""Sample-major chains of planned operators (``headrace._dispatch.chain``).

A chain must give exactly the results of running its calls one by one (``sync_cpu`` runs each
call at once, so it never chains), keep every intermediate result usable, and raise a failing
stage's error from that stage, naming the operator and the sample.
"""

import threading

import numpy as np
import pytest

import headrace as ndd
import headrace._dispatch.chain as chain_mod
from headrace._core.errors import ShapeError

SR = 16000


@pytest.fixture
def chains(monkeypatch):
    """The stage names of every chain that ran sample-major to the end during the test."""
    seen: list[tuple[str, ...]] = []
    real = chain_mod._run_sample_major

    def spy(stages, input_batch, keep):
        out = real(stages, input_batch, keep)  # raises when the chain gives up
        seen.append(tuple(s.name for s in stages))
        return out

    monkeypatch.setattr(chain_mod, "_run_sample_major", spy)
    return seen


def _signals(n=6):
    rng = np.random.default_rng(3)
    lengths = rng.integers(SR // 3, SR, n)
    return [rng.normal(0, 0.1, k).astype(np.float32) for k in lengths]


def _speech(x):
    x = ndd.preemphasis_filter(x)
    spec = ndd.spectrogram(x, nfft=512, window_length=400, window_step=160)
    mel = ndd.mel_filter_bank(spec, nfilter=40, sample_rate=SR)
    db = ndd.to_decibels(mel, cutoff_db=-80)
    return spec, mel, ndd.normalize(db, axes=[1])


def _arrays(b):
    return [np.asarray(t) for t in b.evaluate().tensors]


@pytest.mark.parametrize("mode", [ndd.EvalMode.eager, ndd.EvalMode.deferred])
def test_speech_chain_equals_call_by_call(mode, chains):
    sig = _signals()
    with ndd.EvalMode.sync_cpu:
        expected = [_arrays(b) for b in _speech(ndd.batch(sig))]
    assert chains == []  # calls run at once never chain
    with mode:
        got = _speech(ndd.batch(sig))
        last = _arrays(got[2])  # evaluating the last call runs the pending ones with it
    # (mel_filter_bank runs as one whole-batch product where its input is dense, so it is not
    # chained: this batch's signals differ in length, and it runs per sample after the chain)
    assert ("preemphasis_filter", "spectrogram") in chains, chains
    for b, want in zip(got, expected):
        have = last if b is got[2] else _arrays(b)  # intermediates stay usable
        assert len(have) == len(want)
        for h, w in zip(have, want):
            assert h.shape == w.shape and h.dtype == w.dtype
            np.testing.assert_array_equal(h, w)


def test_image_chain_with_random_draws_equals_call_by_call(chains):
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (rng.integers(40, 90), rng.integers(40, 90), 3), np.uint8)
            for _ in range(5)]  # fmt: skip

    def pipe():
        x = ndd.batch(imgs, layout="HWC")
        r = ndd.random_resized_crop(x, size=(32, 32), rng=ndd.random.RNG(seed=7))
        f = ndd.flip(r, horizontal=1)
        return r, ndd.crop_mirror_normalize(f, crop=(24, 24), mean=[10.0], std=[3.0],
                                            dtype=ndd.float32)  # fmt: skip

    with ndd.EvalMode.sync_cpu:
        want = [_arrays(b) for b in pipe()]
    with ndd.EvalMode.deferred:
        got = pipe()
        last = _arrays(got[1])
    assert chains and len(chains[-1]) == 3, chains
    for h, w in zip(_arrays(got[0]) + last, want[0] + want[1]):
        np.testing.assert_array_equal(h, w)


def test_failing_stage_raises_its_own_error_and_keeps_earlier_results(chains):
    imgs = [np.full((40, 40, 3), i, np.uint8) for i in range(4)]
    imgs[2] = np.zeros((10, 10, 3), np.uint8)  # too small for the crop: refused, sample 2
    with ndd.EvalMode.deferred:
        x = ndd.batch(imgs, layout="HWC")
        y = ndd.flip(x, horizontal=1)
        z = ndd.crop(y, crop=(20, 20), out_of_bounds_policy="error")
        w = ndd.flip(z, vertical=1)
    with pytest.raises(ShapeError, match=r"^crop: sample 2: the window"):
        w.evaluate()
    assert chains == []  # the chain gave up; the calls ran one by one
    flipped = _arrays(y)  # the stage before the failing one is intact
    assert [a.shape for a in flipped] == [im.shape for im in imgs]
    assert [int(a[0, 0, 0]) for a in flipped] == [0, 1, 0, 3]
    with pytest.raises(ShapeError, match=r"^crop: sample 2"):
        z.evaluate()


def test_dense_outputs_and_types_survive_a_chain(chains):
    imgs = [np.full((20, 30, 3), i, np.uint8) for i in range(4)]
    with ndd.EvalMode.deferred:
        x = ndd.resize(ndd.batch(imgs, layout="HWC"), size=(16, 16))
        y = ndd.crop_mirror_normalize(x, dtype=ndd.float32, mean=[1.0], std=[2.0])
        t = y.torch()
    assert chains == [("resize", "crop_mirror_normalize")]
    assert tuple(t.shape) == (4, 3, 16, 16) and y.layout == "CHW" and y.dtype is ndd.float32
    for i in range(4):
        assert float(t[i].mean()) == pytest.approx((i - 1.0) / 2.0)
    assert x.dtype is ndd.uint8 and x.layout == "HWC"


def test_samples_of_other_shapes_leave_the_dense_output(chains):
    """Samples planned to different shapes: the chain's output is ragged, with the values of
    the call-by-call run."""
    rng = np.random.default_rng(8)
    imgs = [rng.integers(0, 256, (20 + 3 * i, 30, 3), dtype=np.uint8) for i in range(5)]
    sizes = [[12, 16], [12, 16], [10, 14], [12, 16], [9, 9]]

    def run():
        x = ndd.resize(ndd.batch(imgs, layout="HWC"), size=ndd.batch([np.int32(s) for s in sizes]))
        return ndd.crop_mirror_normalize(x, dtype=ndd.float32, mean=[1.0], std=[2.0])

    with ndd.EvalMode.deferred:
        y = run()
        got = _arrays(y)
    assert chains == [("resize", "crop_mirror_normalize")]
    assert [a.shape for a in got] == [(3, *s) for s in sizes]
    with ndd.EvalMode.sync_cpu:  # call by call
        want = _arrays(run())
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


def test_batch_statistics_are_never_chained(chains):
    sig = _signals(3)
    with ndd.EvalMode.deferred:
        y = ndd.normalize(ndd.preemphasis_filter(ndd.batch(sig)), batch=True)
        got = np.concatenate([a.ravel() for a in _arrays(y)])
    assert chains == []
    assert abs(float(got.mean())) < 1e-5 and float(got.std()) == pytest.approx(1.0, rel=1e-4)


def test_an_interrupted_chain_leaves_its_calls_to_whoever_needs_them(monkeypatch):
    imgs = [np.full((20, 30, 3), i, np.uint8) for i in range(4)]
    real = chain_mod._run_sample_major
    calls = []

    def interrupted(stages, input_batch, keep):
        calls.append(len(stages))
        if len(calls) == 1:
            raise KeyboardInterrupt  # Ctrl-C in the middle of the chain
        return real(stages, input_batch, keep)

    monkeypatch.setattr(chain_mod, "_run_sample_major", interrupted)
    got: list = []
    alive = []
    with ndd.EvalMode.deferred:
        x = ndd.flip(ndd.batch(imgs, layout="HWC"), horizontal=1)
        y = ndd.flip(x, vertical=1)
        z = ndd.flip(y, horizontal=1)
        try:
            z.evaluate()  # the chain x -> y -> z is interrupted; z keeps the interruption
        except KeyboardInterrupt:
            t = threading.Thread(target=lambda: got.append(_arrays(y)))  # another thread needs y
            t.start()
            t.join(timeout=30)
            alive.append(t.is_alive())
    assert alive == [False], "not interrupted, or the interrupted chain kept its calls"
    assert [int(a[0, 0, 0]) for a in got[0]] == [0, 1, 2, 3]
    assert calls == [3, 2]  # x and y were given back, and the other thread chained them


def test_intermediates_nobody_holds_are_not_kept(monkeypatch):
    """A chain keeps the intermediate batches a variable still refers to, and drops the
    others (they could never be read)."""
    kept = []
    real = chain_mod._run_sample_major

    def spy(stages, input_batch, keep):
        kept.append(list(keep))
        return real(stages, input_batch, keep)

    monkeypatch.setattr(chain_mod, "_run_sample_major", spy)
    imgs = [np.random.default_rng(i).random((30, 40)).astype(np.float32) for i in range(4)]
    with ndd.EvalMode.deferred:
        held = ndd.flip(ndd.batch(imgs, layout="HW"), horizontal=1)
        y = ndd.normalize(ndd.flip(held, vertical=1), axes=[1])
        y.evaluate()
    assert kept == [[True, False, True]]  # held: kept; the vertical flip: dropped
    with ndd.EvalMode.sync_cpu:
        want = ndd.normalize(
            ndd.flip(ndd.flip(ndd.batch(imgs, layout="HW"), horizontal=1), vertical=1), axes=[1]
        )
    for a, b in zip(y.tensors, want.tensors, strict=True):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    for a, im in zip(held.tensors, imgs, strict=True):
        assert np.array_equal(np.asarray(a), im[:, ::-1])


def test_a_dropped_intermediate_read_after_all_is_computed_again(monkeypatch, chains):
    """Should a dropped intermediate be read (the guess was wrong), its call runs again (and
    so does the dropped call before it) and gives the same values."""
    monkeypatch.setattr(chain_mod, "_observable", lambda consumer: False)
    imgs = [np.random.default_rng(i).random((30, 40, 3)).astype(np.float32) for i in range(3)]
    with ndd.EvalMode.deferred:
        x = ndd.batch(imgs, layout="HWC")
        flipped = ndd.flip(x, horizontal=1)
        mid = ndd.brightness(flipped, brightness=1.5)
        out = ndd.normalize(mid, axes=[0, 1])
        out.evaluate()
        again = [np.asarray(t) for t in mid.tensors]  # dropped by the chain: recomputed
    assert chains == [("flip", "brightness", "normalize")]
    for a, im in zip(again, imgs, strict=True):
        assert np.allclose(a, im[:, ::-1] * 1.5, rtol=1e-6)
    assert np.array_equal(np.asarray(flipped.tensors[1]), imgs[1][:, ::-1])


def _resize_windows(monkeypatch):
    """The ``window`` each resize kernel call got (None: the whole output)."""
    import headrace.backends.cpu.resize as resize_mod

    seen = []
    real = resize_mod.resize

    def spy(x, layout, **kw):
        seen.append(kw.get("window"))
        return real(x, layout, **kw)

    monkeypatch.setattr(resize_mod, "resize", spy)
    return seen


def _photos(n=5):
    rng = np.random.default_rng(4)
    out = []
    for _ in range(n):
        h, w = int(rng.integers(60, 120)), int(rng.integers(60, 120))
        out.append(np.clip(rng.normal(128, 40, (h, w, 3)), 0, 255).astype(np.uint8))
    return out


@pytest.mark.parametrize("interp", ["linear", "cubic", "nn"])
def test_resize_makes_only_the_window_a_crop_reads(monkeypatch, chains, interp):
    """resize -> crop_mirror_normalize / crop: nobody else sees the resized images, so the
    resize computes only the crop's rows and columns, with the same results."""
    imgs = _photos()
    kind = {"linear": ndd.types.INTERP_LINEAR, "cubic": ndd.types.INTERP_CUBIC,
            "nn": ndd.types.INTERP_NN}[interp]  # fmt: skip

    def pipe():
        x = ndd.batch(imgs, layout="HWC")
        r = ndd.resize(x, resize_shorter=64, interp_type=kind)
        a = ndd.crop_mirror_normalize(r, crop=(48, 40), mirror=1, mean=[100.0], std=[50.0])
        del r  # (only the crop refers to it)
        b = ndd.crop(ndd.resize(x, size=(70, 90), interp_type=kind), crop=(33, 41),
                     crop_pos_x=0.1, crop_pos_y=0.9)  # fmt: skip
        return a, b

    with ndd.EvalMode.sync_cpu:
        want = [_arrays(o) for o in pipe()]
    windows = _resize_windows(monkeypatch)
    with ndd.EvalMode.deferred:
        got = [_arrays(o) for o in pipe()]
    assert ("resize", "crop_mirror_normalize") in chains and ("resize", "crop") in chains
    if interp == "nn":  # a cheap remap of the whole image: left whole
        assert windows == [None] * (2 * len(imgs)), windows
    else:
        assert len(windows) == 2 * len(imgs) and all(w is not None for w in windows), windows
    for g, w in zip(got, want, strict=True):
        for a, b in zip(g, w, strict=True):
            np.testing.assert_array_equal(a, b)


def test_resize_stays_whole_when_seen_or_when_the_crop_pads(monkeypatch, chains):
    imgs = _photos(3)
    windows = _resize_windows(monkeypatch)
    with ndd.EvalMode.deferred:
        x = ndd.batch(imgs, layout="HWC")
        held = ndd.resize(x, size=(50, 50))  # a variable refers to it: kept whole
        a = ndd.crop(held, crop=(20, 20))
        padded = ndd.crop(ndd.resize(x, size=(50, 50)), crop=(60, 60),
                          out_of_bounds_policy="pad")  # fmt: skip
        a.evaluate()
        padded.evaluate()
    assert windows == [None] * 6, windows
    assert [tuple(t.shape) for t in held.tensors] == [(50, 50, 3)] * 3
    assert [tuple(t.shape) for t in padded.tensors] == [(60, 60, 3)] * 3
