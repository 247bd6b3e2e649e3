"""Stream API behaviour (runs everywhere; streams are plain handles without CUDA).

CUDA behaviour (ops on the context's stream, event hand-off) is in ``test_streams_cuda.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest

import headrace as ndd
from headrace._core import handoff
from headrace.ops.geometry import FLIP


@pytest.fixture(autouse=True)
def _clean_streams() -> Iterator[None]:
    yield
    ndd.set_current_stream(None)
    ndd.set_default_stream(None)


class _Foreign:
    """A stream of another library (``__cuda_stream__`` protocol)."""

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)


def test_streams_compare_by_handle_with_handles_and_foreign_streams() -> None:
    s1, s2 = ndd.stream(device_id=0), ndd.stream()
    assert s1.device_id == 0 and s2.device_id == 0
    assert s1 != s2 and s2 != s1
    assert s1 == s1.handle and s2 == s2.handle
    assert ndd.stream(stream=1) == 1 and ndd.stream(stream=1) != 2
    assert ndd.Stream(_Foreign(77)) == _Foreign(77) == ndd.Stream(77)
    assert ndd.Stream(77) != _Foreign(78)
    assert len({ndd.Stream(5), ndd.Stream(5), ndd.Stream(6)}) == 2
    assert ndd.Stream(5) != "5"


def test_stream_wraps_without_rewrapping_and_rejects_bad_values() -> None:
    s = ndd.stream()
    assert ndd.stream(stream=s) is s
    assert ndd.stream(stream=None) is None
    with pytest.raises(ValueError, match="None"):
        ndd.Stream(None)
    with pytest.raises(TypeError, match="str"):
        ndd.Stream("stream")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="device"):
        ndd.stream(stream=s, device_id=s.device_id + 1)


def test_default_stream_is_per_device_and_cleared_by_none() -> None:
    assert ndd.get_default_stream() is None
    ndd.set_default_stream(21)
    assert ndd.get_default_stream() == 21
    assert ndd.get_default_stream(device_id=0) == 21  # "no device" means the current one
    ndd.set_default_stream(None, device_id=0)
    assert ndd.get_default_stream() is None


def test_context_stream_precedence_explicit_current_default_lazy() -> None:
    ctx = ndd.EvalContext(device_id=0)
    lazy = ctx.cuda_stream
    assert isinstance(lazy, ndd.Stream) and ctx.cuda_stream is lazy  # stable across reads
    assert ndd.EvalContext(device_id=0).cuda_stream != lazy  # every context owns its own

    ndd.set_default_stream(31)
    assert ctx.cuda_stream is lazy  # a context keeps the stream it has (as the reference)
    assert ndd.EvalContext(device_id=0).cuda_stream == 31  # contexts made now take the default
    ndd.set_current_stream(32)
    assert ndd.get_current_stream() == 32
    assert ndd.EvalContext.default().cuda_stream == 32  # the thread's default context follows
    assert ndd.EvalContext(device_id=0).cuda_stream == 32  # so do contexts made from now on
    assert ctx.cuda_stream is lazy  # contexts made before keep theirs
    explicit = ndd.stream()
    with ndd.EvalContext(cuda_stream=explicit) as ectx:
        assert ndd.EvalContext.current() is ectx and ectx.cuda_stream is explicit
    ndd.set_current_stream(None)
    assert ndd.get_current_stream() == 31
    ndd.set_default_stream(None)
    assert ndd.get_current_stream() is ndd.get_current_stream()
    assert ndd.get_current_stream() not in (31, 32)


def test_explicit_stream_keeps_its_identity_and_raw_handles_are_wrapped() -> None:
    s = ndd.stream()
    assert ndd.EvalContext(cuda_stream=s).cuda_stream is s
    assert ndd.EvalContext(cuda_stream=3).cuda_stream == ndd.Stream(3)
    assert ndd.EvalContext(cuda_stream=_Foreign(4)).cuda_stream == 4


def test_current_stream_is_thread_local() -> None:
    ndd.set_current_stream(41)
    seen: list[object] = []

    def other() -> None:
        seen.append(ndd.get_current_stream())
        ndd.set_current_stream(42)
        seen.append(ndd.get_current_stream())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen[0] != 41 and seen[1] == 42
    assert ndd.get_current_stream() == 41


def _probe_kernel(monkeypatch: pytest.MonkeyPatch, seen: list[object]) -> None:
    """Wrap flip's GPU kernel to see the KernelContext it gets (a probe, not a mock)."""
    kern = FLIP.kernel_for(ndd.Device("gpu"))

    def probe(kc, batches, vals):  # type: ignore[no-untyped-def]
        seen.append(kc.ctx)
        return kern(kc, batches, vals)

    monkeypatch.setitem(FLIP.kernels, "gpu", probe)


def _np(t: object) -> np.ndarray:
    return t.cpu().numpy()  # type: ignore[attr-defined, no-any-return]


def _images() -> ndd.Batch:
    rng = np.random.default_rng(0)
    return ndd.batch([rng.integers(0, 255, (6, 5, 3), np.uint8) for _ in range(3)], device="gpu")


def test_gpu_calls_use_the_context_of_the_call_site(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    _probe_kernel(monkeypatch, seen)
    x = _images()
    ctx = ndd.EvalContext(device_id=0, cuda_stream=ndd.stream())
    with ndd.EvalMode.deferred, ctx:
        y = ndd.flip(x, horizontal=1, vertical=0)
    with ndd.EvalContext(device_id=0):  # evaluated elsewhere: still the call's context
        got = y.torch()
    assert seen == [ctx]
    np.testing.assert_array_equal(_np(got), _np(x.torch())[:, :, ::-1])


def test_sync_full_runs_at_the_call_and_gives_the_same_result() -> None:
    x = _images()
    with ndd.EvalMode.sync_full:
        y = ndd.flip(x, horizontal=0, vertical=1)
        assert y._samples is not None  # computed at the call
    np.testing.assert_array_equal(_np(y.torch()), _np(x.torch())[:, ::-1])


def test_gpu_results_reach_torch_numpy_and_dlpack() -> None:
    import torch

    x = _images()
    y = ndd.flip(x, horizontal=1, vertical=0)
    want = _np(x.torch())[:, :, ::-1]
    np.testing.assert_array_equal(_np(y.torch()), want)
    t = y.tensors[1]
    np.testing.assert_array_equal(_np(torch.from_dlpack(t)), want[1])
    np.testing.assert_array_equal(np.asarray(t.cpu()), want[1])
    np.testing.assert_array_equal(_np(t[1:3].torch()), want[1][1:3])
    assert int(ndd.tensor([7], device="gpu")[0]) == 7


def test_per_sample_gpu_arguments_give_the_cpu_results() -> None:
    x = _images()
    flags = ndd.batch(np.array([1, 0, 1], np.int32))
    on_cpu = _np(ndd.flip(x, horizontal=flags, vertical=0).torch())
    on_gpu = _np(ndd.flip(x, horizontal=flags.gpu(), vertical=0).torch())
    np.testing.assert_array_equal(on_gpu, on_cpu)
    np.testing.assert_array_equal(on_gpu[1], _np(x.torch())[1])


def test_handoff_is_a_no_op_without_cuda() -> None:
    import torch

    assert handoff.mark(torch.zeros(2)) is None  # fake-GPU data: torch CPU tensors
    assert handoff.mark(np.zeros(2)) is None
    assert handoff.first_cuda([np.zeros(1), torch.zeros(1)]) is None
    handoff.wait_on_current(None, [torch.zeros(2)])
    if not torch.cuda.is_available():
        assert _images()._ready is None
