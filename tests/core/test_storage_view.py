"""``Tensor._storage`` / ``Batch._storage``: the reads code written against the reference's
backend objects makes."""

from __future__ import annotations

import numpy as np
import pytest

import headrace as ndd


def test_tensor_storage_reads_the_data_without_a_copy():
    data = np.arange(6, dtype=np.int16).reshape(2, 3)
    t = ndd.as_tensor(data, layout="AB")
    s = t._storage
    assert s.shape() == [2, 3] and s.ndim() == 2 and s.layout() == "AB"
    assert s.dtype == ndd.int16.type_id
    assert s.data_ptr() == data.__array_interface__["data"][0]
    assert s.device_id() == -1
    np.testing.assert_array_equal(np.array(s), data)
    np.testing.assert_array_equal(np.from_dlpack(s), data)
    assert ndd.tensor(5, dtype=ndd.int32)._storage.layout() == ""


def test_storage_given_back_stands_for_its_tensor():
    src = ndd.tensor(np.array([1, 2, 3], np.int32), layout="X")
    wrapped = ndd.as_tensor(src._storage)
    assert wrapped._storage.data_ptr() == src._storage.data_ptr()
    assert wrapped.layout == "X"
    copied = ndd.tensor(src._storage)
    assert copied._storage.data_ptr() != src._storage.data_ptr()
    np.testing.assert_array_equal(np.asarray(copied), [1, 2, 3])
    converted = ndd.as_tensor(src._storage, dtype=ndd.float32)
    assert converted._storage.dtype == ndd.float32.type_id
    assert ndd.flip(src._storage, horizontal=1).shape == (3,)  # operators take it too


def test_lazy_results_are_evaluated_by_storage():
    with ndd.EvalMode.deferred:
        t = ndd.cast(ndd.tensor(np.array([1.25, 2.75], np.float32)), dtype=ndd.int32)
        s = t._storage
    assert s.dtype == ndd.int32.type_id
    np.testing.assert_array_equal(np.array(s), [1, 3])


def test_batch_storage_iterates_over_samples():
    b = ndd.batch([np.zeros((2, 3), np.float64), np.ones((4, 3), np.float64)], layout="AB")
    s = b._storage
    assert len(s) == 2 and s.layout() == "AB" and s.dtype == ndd.float64.type_id
    assert s.shape() == [(2, 3), (4, 3)] and not s.is_dense_tensor()
    np.testing.assert_array_equal(np.array(s[1]), np.ones((4, 3)))
    assert [x.shape() for x in s] == [[2, 3], [4, 3]]
    again = ndd.Batch(s, dtype=ndd.float32)
    assert again.dtype == ndd.float32 and again.layout == "AB"
    assert again.shape == [(2, 3), (4, 3)]


def test_is_same_tensor_tells_views_from_copies():
    b0 = ndd.batch([np.arange(3, dtype=np.int32), np.arange(2, dtype=np.int32)])
    assert ndd.as_batch(b0).tensors[0]._is_same_tensor(b0.tensors[0])
    assert not ndd.batch(b0).tensors[0]._is_same_tensor(b0.tensors[0])


def test_gpu_storage_exports_through_dlpack():
    torch = pytest.importorskip("torch")
    if not ndd.Device.gpu_count():
        pytest.skip("no GPU (real or fake)")
    g = ndd.tensor(np.array([1, 2, 3], np.int32)).gpu()
    assert torch.from_dlpack(g._storage).cpu().tolist() == [1, 2, 3]
    assert g._storage.device_id() == g.device.device_id
    np.testing.assert_array_equal(np.array(g._storage.as_cpu()), [1, 2, 3])
