import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import headrace as ndd
from headrace._core.dtype import promote

NUMERIC = [
    ndd.int8,
    ndd.int16,
    ndd.int32,
    ndd.int64,
    ndd.uint8,
    ndd.uint16,
    ndd.uint32,
    ndd.uint64,
    ndd.float16,
    ndd.float32,
    ndd.float64,
]


@pytest.mark.parametrize("t", NUMERIC + [ndd.bool])
def test_dtype_roundtrip_is_identical(t):
    np_t = t.numpy
    assert ndd.dtype(np_t) is t
    assert ndd.dtype(np_t.type) is t
    assert ndd.dtype(t.name) is t
    assert ndd.dtype(t) is t


def test_torch_dtypes_map_to_constants():
    assert ndd.dtype(torch.float32) is ndd.float32
    assert ndd.dtype(torch.bfloat16) is ndd.bfloat16
    assert ndd.dtype(torch.bool) is ndd.bool


def test_names_bytes_and_type_ids():
    assert [t.name for t in (ndd.int32, ndd.uint8, ndd.float16, ndd.bfloat16)] == [
        "i32",
        "u8",
        "f16",
        "bfloat16",
    ]
    assert ndd.float64.bytes == 8 and ndd.bool.bytes == 1
    assert int(ndd.type_id(ndd.float32)) == int(ndd.types.FLOAT)
    assert ndd.bfloat16.type_id is None
    with pytest.raises(ValueError, match="Invalid dtype"):
        ndd.type_id("f32")


def test_parse_and_equality():
    t = ndd.DType.parse("f32e8m23")
    assert t == ndd.float32 and hash(t) == hash(ndd.float32)
    assert ndd.DType.parse("i24").bits == 24
    with pytest.raises(ValueError):
        ndd.DType.parse("f32e8m0")
    with pytest.raises(ValueError):
        ndd.DType.parse("x12")
    assert ndd.DataType != ndd.ImageType  # enum kind compares type ids
    assert repr(ndd.int8).startswith("DType(kind=")


def test_builtin_types_rejected():
    with pytest.raises(ValueError, match="built-in"):
        ndd.dtype(int)


def test_dtype_call_creates_tensor():
    t = ndd.float32([1, 2])
    assert t.dtype is ndd.float32
    with pytest.raises(ValueError, match="dtype cannot be overridden"):
        ndd.float32([1], dtype=ndd.int8)


INTS = [ndd.int8, ndd.int16, ndd.int32, ndd.int64, ndd.uint8, ndd.uint16, ndd.uint32]


@given(st.sampled_from(NUMERIC + [ndd.bool]), st.sampled_from(NUMERIC + [ndd.bool]))
def test_promotion_matches_reference_table(a, b):
    r = promote(a, b)
    assert r == promote(b, a)
    if a.is_float or b.is_float:
        floats = [t for t in (a, b) if t.is_float]
        assert r is max(floats, key=lambda t: t.bits)
    elif a is ndd.bool:
        assert r is b
    elif b is ndd.bool:
        assert r is a
    elif a.kind is b.kind:
        assert r.bits == max(a.bits, b.bits) and r.kind is a.kind
    else:
        s, u = (a, b) if a.kind is ndd.DType.Kind.signed else (b, a)
        if s.bits <= u.bits:
            assert r.kind is ndd.DType.Kind.signed and r.bits == min(2 * u.bits, 64)
        else:
            assert r is s


def test_python_data_narrowing_but_arrays_keep_type():
    assert ndd.tensor(3).dtype is ndd.int32
    assert ndd.tensor(3.5).dtype is ndd.float32
    assert ndd.tensor([True, False]).dtype is ndd.bool
    assert ndd.tensor(np.float64(1.0)).dtype is ndd.float64
    assert ndd.tensor(np.zeros(2, np.int64)).dtype is ndd.int64
    assert ndd.tensor([ndd.types.INTERP_CUBIC]).dtype is ndd.InterpType


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_bfloat16_casts_and_prints_its_values_against_torch(device: str) -> None:
    """bfloat16 on the host is stored as its bits: casts to and from it convert the values (as
    torch rounds them: to nearest, ties to even) and printing shows the values, on both
    devices (the GPU's storage is torch's own bfloat16)."""
    vals = np.array([1.5, 2.25, -3.0, 1.00390625, 1.01171875, 65504.0, -1e-3, 0.0], np.float32)
    x = ndd.as_tensor(vals, device=device)
    y = ndd.cast(x, dtype=ndd.bfloat16)
    want = torch.from_numpy(vals).to(torch.bfloat16)
    assert torch.equal(y.torch().cpu(), want)
    back = ndd.cast(y, dtype=ndd.float32).torch().cpu()
    assert torch.equal(back, want.float())
    ints = ndd.cast(ndd.cast(ndd.as_tensor(np.array([3, 300, -7], np.int32), device=device),
                             dtype=ndd.bfloat16), dtype=ndd.uint8)  # fmt: skip
    assert ints.torch().cpu().tolist() == [3, 255, 0]
    shown = repr(y)
    assert "1.5" in shown and "-3." in shown and "dtype=bfloat16" in shown
    batch = ndd.cast(ndd.batch([vals[:2]], device=device), dtype=ndd.bfloat16)
    assert "[1.5 , 2.25]" in repr(batch)
