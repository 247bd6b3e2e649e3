"""The reference's own enum values (``nvidia.dali.types``) work wherever ours do."""

from __future__ import annotations

import numpy as np
import pytest

import headrace as ndd
from headrace import types as hr_types


@pytest.fixture
def dali_types():
    """``nvidia.dali.types`` (imported per test: a module-level import would load DALI in every
    test process at collection, beside PyAV's FFmpeg)."""
    return pytest.importorskip("nvidia.dali.types")


@pytest.mark.parametrize("name", ["INT8", "UINT16", "INT64", "FLOAT", "FLOAT16", "BOOL"])
def test_dtype_accepts_reference_type_ids(name, dali_types):
    ours = ndd.dtype(getattr(hr_types, name))
    assert ndd.dtype(getattr(dali_types, name)) is ours
    assert ndd.dtype(getattr(dali_types.DALIDataType, name)) is ours
    assert ndd.type_id(getattr(dali_types, name)) is getattr(hr_types, name)


def test_cast_and_tensor_take_a_reference_dtype(dali_types):
    x = ndd.Tensor(np.arange(3, dtype=np.int32))
    assert ndd.cast(x, dtype=dali_types.DALIDataType.FLOAT).dtype is ndd.float32
    t = ndd.Tensor(np.arange(3), dtype=dali_types.UINT8)
    assert t.dtype is ndd.uint8
    np.testing.assert_array_equal(np.asarray(t), [0, 1, 2])


@pytest.mark.parametrize(
    ("name", "dtype", "expected"),
    [("INTERP_CUBIC", ndd.InterpType, 2), ("GRAY", ndd.ImageType, 2), ("FLOAT", ndd.DataType, 9)],
)
def test_tensors_of_reference_enum_values_take_the_enum_dtype(name, dtype, expected, dali_types):
    value = getattr(dali_types, name)
    t = ndd.Tensor(value)
    assert t.dtype is dtype
    assert int(np.asarray(t)) == expected
    lst = ndd.Tensor([value, value])
    assert lst.dtype is dtype and lst.shape == (2,)
    b = ndd.Batch([value, value])
    assert b.dtype is dtype and [int(np.asarray(s)) for s in b] == [expected, expected]


def test_operators_take_reference_interp_and_image_types(dali_types):
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (8, 10, 3), dtype=np.uint8)
    ours = ndd.resize(ndd.Tensor(img), size=(4, 5), interp_type=ndd.types.INTERP_CUBIC)
    theirs = ndd.resize(ndd.Tensor(img), size=(4, 5), interp_type=dali_types.INTERP_CUBIC)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    gray = ndd.color_space_conversion(
        ndd.Tensor(img, layout="HWC"), image_type=dali_types.RGB, output_type=dali_types.GRAY
    )
    assert gray.shape == (8, 10, 1)


def test_native_leaves_other_values_alone(dali_types):
    assert hr_types.native(3) == 3
    assert hr_types.native("rgb") == "rgb"
    assert hr_types.native([dali_types.RGB, dali_types.BGR]) == [hr_types.RGB, hr_types.BGR]
