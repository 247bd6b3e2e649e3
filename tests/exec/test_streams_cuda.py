"""CUDA streams on a real GPU: ops run on their context's stream; results reach other streams
through events, without device-wide synchronisation, and stay valid there.

Skipped without CUDA. ``torch.cuda._sleep`` keeps a stream busy so that a missing wait shows
up as wrong data, not as a timing difference.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import headrace as ndd
from headrace.ops.geometry import FLIP

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

_BUSY = 1_000_000_000  # GPU clock cycles (~0.5 s): a stream busy far longer than a launch


@pytest.fixture(autouse=True)
def _clean_streams() -> Iterator[None]:
    warm = ndd.as_batch(torch.zeros((2, 4, 4, 3), dtype=torch.uint8, device="cuda"), layout="HWC")
    ndd.flip(warm).cpu().evaluate()  # backend imports and first launches happen here
    # CUDA loads kernels lazily, and loading one can wait for work already running on the GPU: the
    # kernels the tests queue behind a busy stream are loaded here, before any stream is busy
    t = warm.torch()
    t.to(torch.int64).sum().item()
    t.clone().cpu()
    torch.zeros(t.shape, dtype=torch.uint8, device="cuda").flip(2).cpu()
    torch.cuda.synchronize()
    yield
    ndd.set_current_stream(None)
    ndd.set_default_stream(None)
    torch.cuda.synchronize()


def _images(n: int = 4, h: int = 512, w: int = 768, seed: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, h, w, 3), dtype=np.uint8)


def _probe(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, object]]:
    """Wrap flip's GPU kernel to see the stream current inside it (a probe, not a mock)."""
    seen: list[tuple[object, object]] = []
    kern = FLIP.kernel_for(ndd.Device("gpu"))

    def probe(kc, batches, vals):  # type: ignore[no-untyped-def]
        seen.append((torch.cuda.current_stream(), kc.stream))
        return kern(kc, batches, vals)

    monkeypatch.setitem(FLIP.kernels, "gpu", probe)
    return seen


@pytest.mark.parametrize("mode", ["eager", "deferred", "sync_cpu"])
def test_ops_run_on_the_explicit_context_stream(monkeypatch, mode) -> None:  # type: ignore[no-untyped-def]
    seen = _probe(monkeypatch)
    s = torch.cuda.Stream()
    x = ndd.as_batch(torch.from_numpy(_images(2, 16, 16)).cuda(), layout="HWC")
    with getattr(ndd.EvalMode, mode), ndd.EvalContext(cuda_stream=s):
        y = ndd.flip(x, horizontal=1, vertical=0)
    y.evaluate()
    assert seen == [(s, s)]


def test_default_context_owns_a_stream_and_follows_set_current_stream(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen = _probe(monkeypatch)
    x = ndd.as_batch(torch.from_numpy(_images(2, 16, 16)).cuda(), layout="HWC")
    ndd.flip(x).evaluate()
    own = ndd.get_current_stream().torch_stream()
    assert seen[-1] == (own, own) and own != torch.cuda.default_stream()
    side = torch.cuda.Stream()
    ndd.set_current_stream(side)
    ndd.flip(x).evaluate()
    assert seen[-1] == (side, side)


def test_a_call_keeps_the_stream_it_was_issued_with(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen = _probe(monkeypatch)
    x = ndd.batch(list(_images(2, 16, 16)), device="gpu", layout="HWC")  # not external data
    first = torch.cuda.Stream()
    ndd.set_current_stream(first)
    with ndd.EvalMode.deferred:
        y = ndd.flip(x)
    ndd.set_current_stream(torch.cuda.Stream())  # later changes do not move issued calls
    y.evaluate()
    assert seen == [(first, first)]


def test_torch_result_is_correct_on_another_stream_without_a_full_sync(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls = []
    real_sync = torch.cuda.synchronize
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: calls.append(a) or real_sync(*a))
    data = _images()
    x = ndd.as_batch(torch.from_numpy(data).cuda(), layout="HWC")
    producer = torch.cuda.Stream()
    with ndd.EvalContext(cuda_stream=producer):
        with torch.cuda.stream(producer):
            torch.cuda._sleep(_BUSY)  # the op's work queues behind this
        y = ndd.flip(x, horizontal=1, vertical=0)
        consumer = torch.cuda.Stream()
        with torch.cuda.stream(consumer):
            t = y.torch()
            total = t.to(torch.int64).sum()  # queued on the consumer, right away
            assert not producer.query()  # the host did not wait for the producer
            got = t.cpu().numpy()  # waits for the consumer stream only
    assert calls == []
    np.testing.assert_array_equal(got, data[:, :, ::-1])
    assert int(total) == int(data.astype(np.int64).sum())


def test_dlpack_consumer_stream_waits_for_the_producer() -> None:
    data = _images(1, 1024, 1024)[0]
    producer = torch.cuda.Stream()
    with ndd.EvalContext(cuda_stream=producer):
        x = ndd.as_tensor(torch.from_numpy(data).cuda(), layout="HWC")
        with torch.cuda.stream(producer):
            torch.cuda._sleep(_BUSY)
        y = ndd.flip(x, horizontal=0, vertical=1)
        consumer = torch.cuda.Stream()
        with torch.cuda.stream(consumer):
            t = torch.from_dlpack(y)  # passes the consumer's stream to __dlpack__
            got = t.clone()
        consumer.synchronize()
    np.testing.assert_array_equal(got.cpu().numpy(), data[::-1])


def test_memory_stays_valid_for_the_consumer_after_release() -> None:
    data = _images(2, 1024, 1024, seed=1)
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    with ndd.EvalContext(cuda_stream=producer):
        x = ndd.as_batch(torch.from_numpy(data).cuda(), layout="HWC")
        y = ndd.flip(x, horizontal=1, vertical=0)
        with torch.cuda.stream(consumer):
            torch.cuda._sleep(_BUSY)  # the consumer reads late...
            t = y.torch()
            copy = t.clone()
        del t, y  # ...after every reference is gone
        with torch.cuda.stream(producer):  # the producer reuses freed memory at once
            junk = [torch.zeros(data.shape, dtype=torch.uint8, device="cuda") for _ in range(4)]
    consumer.synchronize()
    del junk
    np.testing.assert_array_equal(copy.cpu().numpy(), data[:, :, ::-1])


def test_inputs_made_on_the_users_stream_are_waited_for() -> None:
    data = _images(2, 1024, 1024, seed=2)
    side = torch.cuda.Stream()
    src = torch.from_numpy(data).pin_memory()
    with torch.cuda.stream(side):
        torch.cuda._sleep(_BUSY)
        dev = torch.empty(data.shape, dtype=torch.uint8, device="cuda")
        dev.copy_(src, non_blocking=True)  # written late, on the user's stream
        x = ndd.as_batch(dev, layout="HWC")  # imported on that stream
    with ndd.EvalContext(cuda_stream=torch.cuda.Stream()):
        y = ndd.flip(x, horizontal=0, vertical=1)
        got = y.cpu().torch().cpu().numpy()
    np.testing.assert_array_equal(got, data[:, ::-1])


def test_sync_full_waits_for_the_context_stream_only() -> None:
    other, mine = torch.cuda.Stream(), torch.cuda.Stream()
    x = ndd.as_batch(torch.from_numpy(_images(2, 64, 64)).cuda(), layout="HWC")
    torch.cuda.synchronize()
    with torch.cuda.stream(other):
        torch.cuda._sleep(_BUSY * 4)
    with ndd.EvalMode.sync_full, ndd.EvalContext(cuda_stream=mine):
        ndd.flip(x)
        assert mine.query()  # the call's stream is done...
        assert not other.query()  # ...and the device was not synchronised


def test_per_sample_gpu_arguments_match_cpu_arguments() -> None:
    data = _images(3, 32, 32, seed=3)
    x = ndd.as_batch(torch.from_numpy(data).cuda(), layout="HWC")
    flags = ndd.batch(np.array([1, 0, 1], np.int32))
    on_gpu = ndd.flip(x, horizontal=flags.gpu(), vertical=0).torch().cpu().numpy()
    want = data.copy()
    want[[0, 2]] = data[[0, 2], :, ::-1]
    np.testing.assert_array_equal(on_gpu, want)


def test_upload_and_cpu_copy_round_trip_on_a_context_stream() -> None:
    data = _images(2, 256, 256, seed=4)
    with ndd.EvalContext(cuda_stream=torch.cuda.Stream()):
        x = ndd.batch(list(data), device="gpu", layout="HWC")
        y = ndd.flip(x, horizontal=1, vertical=1)
        back = y.cpu()
    np.testing.assert_array_equal(back.torch().cpu().numpy(), data[:, ::-1, ::-1])
    t = ndd.tensor(data[0], device="gpu")
    assert t.torch().is_cuda and int(t[0, 0, 0]) == int(data[0, 0, 0, 0])


def test_gpu_reader_outputs_and_raw_tensor_arguments_are_waited_for(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A reader's upload and a user's kernel writing a raw torch argument run on the caller's
    stream: an op on another stream must wait for both (their ready marks)."""
    imgs = _images(4, 256, 384, seed=3)
    for i, im in enumerate(imgs):
        np.save(tmp_path / f"{i}.npy", im)
    reader = ndd.readers.Numpy(file_root=str(tmp_path), device="gpu")
    ctx = ndd.EvalContext(cuda_stream=torch.cuda.Stream())
    for _ in range(2):
        torch.cuda._sleep(_BUSY)  # the default stream: the upload waits behind this
        (arrays,) = next(iter(reader.next_epoch(batch_size=4)))
        with ctx:
            flipped = ndd.flip(arrays, horizontal=1, vertical=0)
            out = flipped.torch()
        torch.cuda.synchronize()
        assert np.array_equal(out.cpu().numpy(), imgs[:, :, ::-1])
    fill = torch.zeros((), device="cuda")
    torch.cuda._sleep(_BUSY)
    fill.fill_(3.0)  # written on the default stream after a long wait
    with ctx:
        b = ndd.brightness_contrast(ndd.as_batch(torch.ones((2, 2, 2, 3), device="cuda"),
                                                 layout="HWC"), brightness=fill)  # fmt: skip
        res = b.torch()
    torch.cuda.synchronize()
    assert torch.equal(res.cpu(), torch.full((2, 2, 2, 3), 3.0))
