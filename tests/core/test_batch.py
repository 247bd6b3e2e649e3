import numpy as np
import pytest
import torch

import headrace as ndd


def test_ragged_batch_properties():
    b = ndd.batch([np.zeros((2, 3), np.uint8), np.ones((4, 1), np.uint8)], layout="HW")
    assert b.batch_size == 2 and b.shape == [(2, 3), (4, 1)]
    assert b.dtype is ndd.uint8 and b.layout == "HW" and b.ndim == 2


def test_no_getitem_no_len():
    b = ndd.batch([[1], [2]])
    with pytest.raises(TypeError):
        b[0]
    with pytest.raises(TypeError):
        len(b)


def test_dense_array_outer_dim_is_batch():
    a = np.zeros((4, 10, 10, 3), np.uint8)
    b = ndd.as_batch(a, layout="HWC")
    assert b.batch_size == 4 and b.layout == "HWC"
    assert np.shares_memory(np.asarray(b.tensors[1]), a)
    t = b.torch()
    assert t.data_ptr() == a.ctypes.data  # zero copy for dense storage
    with pytest.raises(ValueError, match="scalar"):
        ndd.batch(np.float32(1))


def test_construction_errors():
    with pytest.raises(TypeError, match="index 1"):
        ndd.batch([np.zeros(2), None])
    with pytest.raises(ValueError, match="list of Batch"):
        ndd.batch([ndd.batch([[1]])])
    with pytest.raises(ValueError, match="Element type"):
        ndd.batch([])
    e = ndd.batch([], dtype=ndd.float32)
    assert e.batch_size == 0 and e.shape == []


def test_tensors_and_select():
    b = ndd.batch([[1], [2], [3]])
    assert b.tensors[1].item() == 2
    assert len(b.tensors[1:]) == 2
    assert [t.item() for t in b.tensors[[2, 0]]] == [3, 1]
    assert b.select(...) is b
    assert b.select([0, 2]).batch_size == 2
    assert [t.item() for t in b] == [1, 2, 3]
    _, _, d = b
    assert d.item() == 3


def test_as_batch_keeps_sample_storage():
    xs = [np.arange(3), np.arange(5)]
    b = ndd.as_batch([ndd.as_tensor(x) for x in xs])
    for x, t in zip(xs, b):
        assert np.shares_memory(np.asarray(t), x)
    assert ndd.as_batch(b) is b


def test_slice_per_sample_and_broadcast():
    b = ndd.batch([np.arange(6).reshape(2, 3), np.arange(8).reshape(2, 4)], layout="XY")
    s = b.slice[..., 1]
    assert s.layout == "X" and [np.asarray(t).tolist() for t in s] == [[1, 4], [1, 5]]
    p = b.slice[ndd.as_batch([1, 0]), ndd.as_batch([1, 2])]
    assert [t.item() for t in p] == [4, 2]
    assert b.slice[:] is b
    half = b.slice[:, 0 : ndd.batch([2, 3])]
    assert half.shape == [(2, 2), (2, 3)]


def test_torch_conversion_rules():
    r = ndd.batch([np.ones(2, np.float32), np.ones(3, np.float32)])
    with pytest.raises(ValueError, match="pad"):
        r.torch()
    with pytest.raises(RuntimeError):
        r.torch()
    assert r.torch(pad=True).tolist() == [[1, 1, 0], [1, 1, 1]]
    u = ndd.batch([np.ones(2), np.zeros(2)])
    with pytest.raises(ValueError, match="without a copy"):
        u.torch(copy=False)
    assert u.torch().shape == (2, 2)
    t = ndd.as_tensor(r, pad=True)
    assert t.shape == (2, 3)
    with pytest.raises(ValueError, match="non-uniform"):
        ndd.as_tensor(r).evaluate()


def test_broadcast():
    b = ndd.Batch.broadcast(ndd.tensor([1, 2]), 3)
    assert b.shape == [(2,)] * 3
    with pytest.raises(ValueError, match="Cannot broadcast a Batch"):
        ndd.Batch.broadcast(b, 2)


def test_gpu_batch_roundtrip(device):
    b = ndd.batch([np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)], device=device)
    assert b.device.device_type == device
    t = b.torch(pad=True)
    assert isinstance(t, torch.Tensor) and t.shape == (2, 3)
    assert [np.asarray(x.cpu()).tolist() for x in b.cpu()] == [[0, 1, 2], [0, 1]]


def test_repr():
    r = repr(ndd.batch([[1, 2], [3, 4]]))
    assert r.startswith("Batch(") and "num_samples=2" in r and "shape=[(2,), (2,)]" in r


def test_as_tensor_of_ragged_batch_fails_at_use_in_eager_mode():
    r = ndd.batch([np.ones(2, np.float32), np.ones(3, np.float32)])
    with ndd.EvalMode.eager:
        t = ndd.as_tensor(r)  # nothing raised yet
    with pytest.raises(ValueError, match="non-uniform"):
        t.evaluate()
    with ndd.EvalMode.sync_cpu, pytest.raises(ValueError, match="non-uniform"):
        ndd.as_tensor(r)
    assert ndd.as_tensor(r, pad=True).shape == (2, 3)


@pytest.mark.parametrize(
    ("samples", "dtype", "shapes"),
    [
        # the first sample's type is the batch's; an empty list's is float32 (the reference)
        ([[7, 8], [], [9]], ndd.int32, [(2,), (0,), (1,)]),
        ([[], [], [2.5, 3.5]], ndd.float32, [(0,), (0,), (2,)]),
        ([[], [True]], ndd.float32, [(0,), (1,)]),
        # with nothing else to go by, the empty samples keep the default float type
        ([[], []], ndd.float32, [(0,), (0,)]),
    ],
)
def test_empty_list_sample_takes_the_batch_dtype(samples, dtype, shapes):
    b = ndd.as_batch(samples, layout="X")
    assert b.dtype == dtype
    assert b.shape == shapes
    assert all(t.dtype == dtype for t in b.tensors)
    flat = [v for t in b.tensors for v in np.asarray(t).tolist()]
    assert flat == [v for s in samples for v in s]
    # and the ragged batch pads into one dense tensor of that type
    dense = np.asarray(ndd.as_tensor(b, pad=True))
    assert dense.dtype == dtype.numpy
    assert dense.shape == (len(samples), max(len(s) for s in samples))


def test_samples_of_different_dtypes_take_the_first_ones():
    # (as in the reference: Python numbers by a plain conversion, [[1, 2], [1.5]] is int32
    # [[1, 2], [1]]; arrays rounded and saturated)
    mixed = ndd.as_batch([[1, 2], [1.5]])
    assert mixed.dtype == ndd.int32 and mixed.select(1).torch().tolist() == [1]
    arrays = ndd.as_batch([np.zeros(0, np.uint8), np.int16([2, 300, -4])])
    assert arrays.dtype == ndd.uint8 and arrays.select(1).torch().tolist() == [2, 255, 0]


def test_batch_of_arrays_keeps_them_and_checks_kinds() -> None:
    """A list of numpy arrays of one dtype and rank is taken as it is (no copy); mixed
    dtypes (converted to the first's), ranks or unsupported types take the per-sample path."""
    xs = [np.arange(k + 1, dtype=np.int16) for k in range(5)]
    b = ndd.as_batch(xs)
    assert b.dtype == ndd.int16 and b.batch_size == 5
    assert all(np.shares_memory(np.asarray(t), x) for t, x in zip(b.tensors, xs))
    copied = ndd.batch(xs)  # (batch copies, as_batch does not)
    assert not any(np.shares_memory(np.asarray(t), x) for t, x in zip(copied.tensors, xs))
    assert ndd.batch([np.zeros(2, np.int16), np.zeros(2, np.int32)]).dtype == ndd.int16
    with pytest.raises(Exception, match="number of dimensions"):
        ndd.batch([np.zeros(2, np.int16), np.zeros((2, 2), np.int16)])
    with pytest.raises(Exception, match="Unsupported numpy dtype"):
        ndd.batch([np.zeros(2, np.complex64), np.zeros(2, np.complex64)])
    assert ndd.batch(xs, dtype=ndd.float32).dtype == ndd.float32


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_tensors_and_batches_pickle_and_copy_without_their_ready_marks(device: str) -> None:
    """Pickling or copying keeps the values (a pending result is computed first) and drops
    what does not pickle: a GPU result's ready mark holds a CUDA event and stream (stood in
    for here by locks, which do not pickle either), its producer call and step bookkeeping."""
    import copy
    import pickle
    import threading

    def values(x):  # type: ignore[no-untyped-def]
        parts = x.tensors if isinstance(x, ndd.Batch) else [x]
        return [np.asarray(p.torch().cpu()) for p in parts]

    imgs = [np.arange(24, dtype=np.uint8).reshape(2, 4, 3) + i for i in range(3)]
    lazy = ndd.flip(ndd.batch(imgs, layout="HWC", device=device), horizontal=1)
    plain = ndd.as_tensor(np.arange(5, dtype=np.int32), device=device)
    for x in (lazy, plain, lazy.select(1)):
        want = values(x)
        object.__setattr__(x, "_ready", (threading.Lock(), threading.Lock()))
        for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x), copy.copy(x)):
            assert y._ready is None
            assert (y.device, y.dtype, y.layout) == (x.device, x.dtype, x.layout)
            assert all(np.array_equal(a, b) for a, b in zip(values(y), want, strict=True))
