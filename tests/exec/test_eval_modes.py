import sys
import threading
import traceback

import numpy as np
import pytest

import headrace as ndd


def test_mode_order_and_stack():
    assert ndd.EvalMode.current() is ndd.EvalMode.eager
    assert ndd.EvalMode.default is ndd.EvalMode.eager
    assert len(tuple(ndd.EvalMode)) == 4
    assert ndd.EvalMode.deferred < ndd.EvalMode.eager < ndd.EvalMode.sync_cpu
    assert ndd.EvalMode.sync_full.value > ndd.EvalMode.sync_cpu.value
    with ndd.EvalMode.deferred:
        assert ndd.EvalMode.current() is ndd.EvalMode.deferred
        seen = []
        t = threading.Thread(target=lambda: seen.append(ndd.EvalMode.current()))
        t.start()
        t.join()
        assert seen == [ndd.EvalMode.eager]
    assert ndd.EvalMode.current() is ndd.EvalMode.eager


MODES = [ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full]


@pytest.mark.parametrize("mode", MODES)
def test_modes_give_equal_results(mode, device):
    x = ndd.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), layout="HW", device=device)
    with mode:
        y = ndd.transpose(x * 2 + 1, perm=[1, 0])
        z = ndd.cast(y, dtype=ndd.uint8)
    assert z.layout == "WH" and z.dtype is ndd.uint8
    expected = (np.arange(12).reshape(3, 4) * 2 + 1).T
    assert np.array_equal(np.asarray(z.cpu()), expected)


def test_deferred_runs_only_on_demand():
    calls = []
    x = ndd.tensor(np.ones(3, np.float32))
    with ndd.EvalMode.deferred:
        y = x + 1
        assert y._data is None  # nothing ran yet
        calls.append(np.asarray(y).tolist())
    assert calls == [[2, 2, 2]]


def test_external_data_runs_synchronously():
    with pytest.raises(ValueError, match="perm"):
        ndd.transpose(np.zeros((2, 2)), perm=[0, 0])


def _fail_line():
    x = ndd.tensor(np.zeros((2, 2)))
    return ndd.transpose(x, perm=[0, 0]), sys._getframe().f_lineno


@pytest.mark.parametrize("mode", [ndd.EvalMode.deferred, ndd.EvalMode.eager])
def test_async_error_same_type_cause_and_user_line(mode):
    with mode:
        y, line = _fail_line()
        with pytest.raises(ValueError) as info:
            y.evaluate()
    err = info.value
    from headrace._core.displaced import DisplacedEvaluationError

    assert isinstance(err, DisplacedEvaluationError)
    with ndd.EvalMode.sync_cpu, pytest.raises(ValueError) as sync_info:
        _fail_line()
    assert str(err.__cause__) == str(sync_info.value)
    last = traceback.extract_tb(err.__cause__.__traceback__)[-1]
    assert last.filename == __file__ and last.lineno == line
    assert last.name == "_fail_line"


@pytest.mark.parametrize("mode", [ndd.EvalMode.deferred, ndd.EvalMode.eager])
def test_async_error_cause_ends_at_the_call_line_not_the_evaluation_line(mode):
    # The failing call and the line using its result are in the same (still running) frame.
    x = ndd.tensor(np.zeros((2, 2)))
    with mode:
        y = ndd.transpose(x, perm=[0, 0])
        call_line = sys._getframe().f_lineno - 1
        with pytest.raises(ValueError) as info:
            y.evaluate()
    last = traceback.extract_tb(info.value.__cause__.__traceback__)[-1]
    assert (last.filename, last.lineno) == (__file__, call_line)
    assert last.line == "y = ndd.transpose(x, perm=[0, 0])"


def test_sync_error_at_call():
    x = ndd.tensor(np.zeros((2, 2)))
    with ndd.EvalMode.sync_cpu, pytest.raises(ValueError, match="not a permutation"):
        ndd.transpose(x, perm=[1, 1])


def test_calls_from_many_threads_agree():
    x = ndd.tensor(np.arange(100, dtype=np.int32))
    results = [None] * 8

    def work(i):
        y = x
        for _ in range(20):
            y = y + 1
        results[i] = np.asarray(y).copy()

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r in results:
        assert np.array_equal(r, np.arange(100) + 20)


def test_num_threads_rules(monkeypatch):
    ndd.set_num_threads(3)
    assert ndd.get_num_threads() == 3
    assert ndd.EvalContext.current().num_threads == 3
    ndd.set_num_threads(None)
    monkeypatch.setenv("DALI_NUM_THREADS", "5")
    assert ndd.get_num_threads() == 5
    with pytest.raises(TypeError):
        ndd.set_num_threads(1.5)
    with pytest.raises(ValueError):
        ndd.set_num_threads(0)
    with pytest.raises(ValueError):
        ndd.set_num_threads(10**9)


def test_eval_context_rules():
    ctx = ndd.EvalContext(num_threads=2)
    with ctx as c:
        assert c is ctx and ndd.EvalContext.current() is ctx
        assert ndd.EvalContext.get() is ctx  # (the older spelling)
        errors = []

        def other():
            try:
                with ctx:
                    pass
            except RuntimeError as e:
                errors.append(str(e))

        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert errors and "EvalContext" in errors[0]
    assert ndd.EvalContext.current() is ndd.EvalContext.default() is ndd.EvalContext.get()


def test_leaving_context_evaluates_deferred():
    x = ndd.tensor(np.ones(2, np.float32))
    with ndd.EvalContext(), ndd.EvalMode.deferred:
        y = x * 3
    assert y._data is not None


def test_streams():
    s = ndd.stream(stream=5)
    assert s.handle == 5 and s.__cuda_stream__() == (0, 5) and s == ndd.Stream(5)
    assert ndd.stream(stream=None) is None
    with pytest.raises(ValueError):
        ndd.Stream(None)
    made = ndd.stream()
    assert isinstance(made, ndd.Stream) and made != ndd.stream()
    assert ndd.get_current_stream() is ndd.get_current_stream()
    assert ndd.EvalContext.default().cuda_stream == ndd.get_current_stream()
    ndd.set_current_stream(s)
    try:
        assert ndd.get_current_stream() == s
        assert ndd.EvalContext.default().cuda_stream == s
    finally:
        ndd.set_current_stream(None)
    ndd.set_default_stream(9)
    try:
        assert ndd.get_default_stream() == ndd.Stream(9)
    finally:
        ndd.set_default_stream(None)
    assert ndd.EvalContext(cuda_stream=3).cuda_stream == ndd.Stream(3)


def test_mixed_device_is_rejected_with_a_hint():
    x = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    with pytest.raises(ValueError, match=r'Invalid device type: mixed.*device="gpu"'):
        ndd.flip(x, device="mixed")
    with pytest.raises(ValueError, match="Invalid device"):
        ndd.flip(x, device="tpu")


def test_mixed_device_means_gpu_for_the_decoders():
    """The reference runs its decoders on a "mixed" backend; device="mixed" asks for them."""
    from tests._helpers.videos import has_av, write_video

    if not ndd.Device.gpu_count():
        pytest.skip("no GPU (real or fake)")
    import cv2

    png = np.frombuffer(cv2.imencode(".png", np.zeros((8, 6, 3), np.uint8))[1], np.uint8)
    assert ndd.decoders.image(png, device="mixed").device.device_type == "gpu"
    assert ndd.decoders.image_slice(png, start=[0, 0], end=[4, 4], device="mixed").device == "gpu"
    if has_av():
        video = ndd.decoders.video(write_video(n=4), device="mixed")
        assert video.device.device_type == "gpu" and video.shape == (4, 48, 64, 3)
