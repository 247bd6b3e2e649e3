"""ExternalSource (spec §13)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from headrace._core.batch import Batch
from headrace._core.dtype import float32, int16
from headrace._core.tensor import Tensor
from headrace.external_source import ExternalSource

DATA = [np.full((2,), i, np.int32) for i in range(3)]


def values(src: ExternalSource, n: int) -> list[object]:
    out: list[object] = []
    for _ in range(n):
        try:
            out.append(int(np.asarray(src())[0]))
        except StopIteration:
            out.append("stop")
    return out


def test_iterable_cycle_modes() -> None:
    assert values(ExternalSource(DATA), 5) == [0, 1, 2, "stop", "stop"]
    assert values(ExternalSource(DATA, cycle="no"), 4) == [0, 1, 2, "stop"]
    assert values(ExternalSource(DATA, cycle=True), 5) == [0, 1, 2, 0, 1]
    assert values(ExternalSource(DATA, cycle="quiet"), 4) == [0, 1, 2, 0]
    assert values(ExternalSource(DATA, cycle="raise"), 8) == [0, 1, 2, "stop", 0, 1, 2, "stop"]


def test_generator_function_restarts_when_cycling() -> None:
    calls = []

    def gen() -> Iterator[np.ndarray]:
        calls.append(1)
        yield from DATA[:2]

    assert values(ExternalSource(gen, cycle="quiet"), 5) == [0, 1, 0, 1, 0]
    assert len(calls) == 3
    assert values(ExternalSource(gen), 3) == [0, 1, "stop"]


def test_callable_source_and_its_errors() -> None:
    it = iter(DATA)
    src = ExternalSource(lambda: next(it))
    assert values(src, 4) == [0, 1, 2, "stop"]
    with pytest.raises(ValueError, match="cycle"):
        ExternalSource(lambda: DATA[0], cycle="quiet")
    with pytest.raises(ValueError, match="no parameters"):
        ExternalSource(lambda i: DATA[i])
    with pytest.raises(ValueError, match="num_outputs"):
        ExternalSource(DATA, num_outputs=0)
    with pytest.raises(ValueError, match="cycle"):
        ExternalSource(DATA, cycle="sometimes")
    with pytest.raises(TypeError, match="callable, an iterable"):
        ExternalSource(42)


def test_multiple_outputs_layouts_and_dtypes() -> None:
    item = (np.zeros((2, 3, 3), np.uint8), np.arange(4))
    src = ExternalSource([item], num_outputs=2, layout=["HWC", None], dtype=[None, int16])
    img, vec = src()
    assert isinstance(img, Tensor) and img.layout == "HWC" and img.shape == (2, 3, 3)
    assert vec.dtype == int16 and np.asarray(vec).tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="Expected a sequence of size 2, got 3"):
        ExternalSource([item], num_outputs=2, layout=["A", "B", "C"])
    with pytest.raises(ValueError, match="Expected 3 outputs from the source"):
        ExternalSource([item], num_outputs=3)()
    one = ExternalSource([np.ones((2, 2))], dtype=float32, layout="HW")()
    assert one.dtype == float32 and one.layout == "HW"


def test_batches_and_batch_size() -> None:
    b = Batch([np.zeros(2, np.int32), np.ones(3, np.int32)])
    out = ExternalSource([b])()
    assert isinstance(out, Batch) and out.shape == [(2,), (3,)]
    with pytest.raises(ValueError, match="Expected batch size 4, got 2"):
        ExternalSource([b])(batch_size=4)
    assert ExternalSource([b])(batch_size=2).batch_size == 2
    bc = ExternalSource([np.arange(3)])(batch_size=4)
    assert isinstance(bc, Batch) and bc.shape == [(3,)] * 4
    assert all(np.asarray(t).tolist() == [0, 1, 2] for t in bc)
    with pytest.raises(TypeError, match="all tensors or all batches"):
        ExternalSource([(b, np.arange(2))], num_outputs=2)()


def test_empty_tuple_gives_empty_tensor() -> None:
    t = ExternalSource([()])()
    assert isinstance(t, Tensor) and t.shape == (0,)


def test_a_reference_tensor_list_becomes_a_batch() -> None:
    tensors = pytest.importorskip("nvidia.dali.tensors")
    samples = [np.zeros((2, 3), np.float32), np.ones((4, 3), np.float32)]
    out = ExternalSource(lambda: tensors.TensorListCPU(samples))()
    assert isinstance(out, Batch)
    assert out.shape == [(2, 3), (4, 3)]
    for got, want in zip(out, samples, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    uniform = tensors.TensorListCPU([np.full((2,), i, np.int32) for i in range(3)])
    out = ExternalSource(lambda: uniform)()
    assert isinstance(out, Batch) and out.batch_size == 3  # not a dense (3, 2) Tensor


def test_an_iterable_is_asked_for_its_iterator_once_per_pass() -> None:
    """As the reference: ``iter(source)`` once per pass (it was twice: a source that is its own
    iterator, whose __iter__ has side effects, saw them twice)."""

    class Counting:
        def __init__(self) -> None:
            self.calls = 0
            self.i = 0

        def __iter__(self) -> Counting:
            self.calls += 1
            self.i = 0
            return self

        def __next__(self) -> np.ndarray:
            self.i += 1
            if self.i > 2:
                raise StopIteration
            return np.full(2, self.i, np.float32)

    source = Counting()
    src = ExternalSource(source, cycle="quiet")
    assert [src().torch().tolist() for _ in range(3)] == [[1.0, 1.0], [2.0, 2.0], [1.0, 1.0]]
    assert source.calls == 2  # the first pass and the cycle's restart
