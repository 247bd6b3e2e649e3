"""Class-style operators (``ndd._ops``): one class per operator function, named as the
reference names it, running the function with the instance's and the call's arguments."""

from __future__ import annotations

import re

import numpy as np
import pytest

import headrace as ndd
from headrace._dispatch.schema import REGISTRY
from tests._helpers.dali_oracle import dali_ndd

_GRAPH = re.compile(r"(^|[^A-Za-z0-9_])[Gg]raph([ .,)]|$)")


def _images() -> ndd.Batch:
    rng = np.random.default_rng(0)
    return ndd.batch([rng.integers(0, 256, (6 + i, 9, 3), dtype=np.uint8) for i in range(3)],
                     layout="HWC")  # fmt: skip


def _host(x: ndd.Batch) -> list[np.ndarray]:
    return [np.asarray(x.select(i)) for i in range(x.batch_size)]


def test_every_operator_function_has_a_class() -> None:
    ops = ndd._ops  # (importing it registers the operators of the lazy sub-packages too)
    public = [n for n in REGISTRY if not n.startswith("_") and n != "arithmetic_generic_op"]
    assert len(ops._all_functions) == len(ops._all_ops) == len(public)
    for name in public:
        *path, leaf = name.split(".")
        space = ndd._ops
        for part in path:
            space = getattr(space, part)
        cls = getattr(space, ndd._ops.class_name(leaf))
        assert issubclass(cls, ndd._ops.Operator) and cls._schema.Name().endswith(cls.__name__)
    assert ndd._ops.MFCC and ndd._ops.RandomBBoxCrop and ndd._ops.reductions.RMS


def test_instances_run_the_function_with_fixed_and_call_arguments() -> None:
    x = _images()
    flip = ndd._ops.Flip(horizontal=1)
    for got, want in zip(_host(flip(x)), _host(ndd.flip(x, horizontal=1))):
        np.testing.assert_array_equal(got, want)
    resize = ndd._ops.Resize(antialias=False)  # fixed at construction ...
    got = resize(x, size=(4, 5))  # ... the call adds its own
    for a, b in zip(_host(got), _host(ndd.resize(x, size=(4, 5), antialias=False))):
        np.testing.assert_array_equal(a, b)


def test_random_instances_seed_rng_and_successive_calls() -> None:
    def draw(op: ndd._ops.Operator, **kw: object) -> np.ndarray:
        return np.asarray(op(range=[0.0, 1.0], shape=[6], **kw))

    a, b = ndd._ops.random.Uniform(seed=5), ndd._ops.random.Uniform(seed=5)
    first = draw(a)
    np.testing.assert_array_equal(first, draw(b))  # the same seed, the same draws
    assert not np.array_equal(first, draw(a))  # the instance's generator moves on
    r1, r2 = ndd.random.RNG(seed=1), ndd.random.RNG(seed=1)
    np.testing.assert_array_equal(draw(a, rng=r1), draw(b, rng=r2))  # rng overrides the seed
    batch = ndd._ops.random.Normal(max_batch_size=4)(batch_size=3, shape=[2])
    assert isinstance(batch, ndd.Batch) and batch.batch_size == 3


def test_instances_refuse_bad_devices_big_batches_and_changed_inputs() -> None:
    with pytest.raises(ValueError, match="Invalid device"):
        ndd._ops.Flip(device="tpu")
    flip = ndd._ops.Flip(max_batch_size=2, horizontal=1)
    with pytest.raises(RuntimeError, match="max_batch_size"):
        flip(_images())
    one = ndd.tensor(np.zeros((2, 3, 3), np.uint8), layout="HWC")
    flip(one)
    with pytest.raises(RuntimeError, match="not compatible with the previous call"):
        flip(ndd.tensor(np.zeros((2, 3), np.float32), layout="HW"))


def test_docs_and_reader_classes() -> None:
    for f in ndd._ops._all_functions:
        assert len(f.__doc__) > 20 and "TensorList" not in f.__doc__, f._schema.Name()
        assert not _GRAPH.search(f.__doc__), f._schema.Name()
        assert all(m.startswith("_") for m in dir(f))
    for c in ndd._ops._all_ops:
        for doc in (c.__init__.__doc__, c.__call__.__doc__):
            assert len(doc) > 20 and "TensorList" not in doc and not _GRAPH.search(doc)
    assert ndd._ops.readers.File is ndd.readers.File
    assert issubclass(ndd.readers.File, ndd._ops.Reader)
    assert ndd._ops.experimental.readers.Video is ndd.experimental.readers.Video


@pytest.mark.dali
def test_class_names_are_the_references() -> None:
    ref = dali_ndd()._ops
    for cls in ndd._ops._all_ops:
        if cls.__name__ == "Shapes":  # a function only, in the reference
            continue
        space = ref
        for part in cls.__qualname__.split("."):
            space = getattr(space, part, None)
            assert space is not None, f"{cls.__qualname__} is not a class of the reference"


def test_device_takes_every_spelling_of_a_device() -> None:
    for spelling in ("cpu", "cpu:0", ndd.Device("cpu")):
        assert ndd._ops.random.Uniform(max_batch_size=8, device=spelling)().device == "cpu"
    for spelling in ("gpu", "gpu:0", "cuda:0", ndd.Device("gpu", 0)):
        assert ndd._ops.random.Uniform(device=spelling)._device == ndd.Device("gpu", 0)
    torch = pytest.importorskip("torch")
    assert ndd._ops.Flip(device=torch.device("cpu"))._device == "cpu"
    if ndd.Device.gpu_count():  # a GPU, real or fake
        out = ndd._ops.random.Uniform(max_batch_size=8, device="cuda:0")()
        assert out.device.device_type == "gpu" and out.device.device_id == 0


def test_ops_is_the_older_spelling_of_class_ops() -> None:
    assert ndd.ops.random.Uniform is ndd._ops.random.Uniform
    assert ndd.ops.Resize is ndd._ops.Resize
    out = ndd.ops.random.Uniform(max_batch_size=8, device="cpu")(batch_size=3)
    assert out.batch_size == 3 and out.device == "cpu"
    from headrace.ops import geometry  # the family modules are still found first

    assert geometry.__name__ == "headrace.ops.geometry"
    with pytest.raises(AttributeError, match="no attribute 'NoSuchOperator'"):
        _ = ndd.ops.NoSuchOperator
