"""Edge cases of the core API found by comparing with the reference: bfloat16 data, reversed
views handed to torch, Python numbers of mixed types in a batch, exact integer division, and
operators on unusual inputs (cat by axis name, transpose defaults, empty samples, constants,
unsigned arithmetic on the (fake) GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import headrace as ndd

torch = pytest.importorskip("torch")


def test_bfloat16_values_survive_import_cast_and_arithmetic() -> None:
    src = torch.tensor([1.5, 2.0, -3.25], dtype=torch.bfloat16)
    t = ndd.tensor(src)
    assert t.dtype is ndd.bfloat16 and t.torch().tolist() == [1.5, 2.0, -3.25]
    assert ndd.batch([src]).dtype is ndd.bfloat16
    assert ndd.tensor(src, dtype=ndd.float32).torch().tolist() == [1.5, 2.0, -3.25]
    made = ndd.tensor(np.array([1.5, 2.0, 1.00390625], np.float32), dtype=ndd.bfloat16)
    assert made.torch().tolist() == [1.5, 2.0, 1.0]  # rounded to nearest, ties to even
    doubled = t * 2
    assert doubled.dtype is ndd.bfloat16 and doubled.torch().tolist() == [3.0, 4.0, -6.5]
    assert (t > 1).torch().tolist() == [True, True, False]


def test_reversed_views_go_to_torch_and_dlpack() -> None:
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    t = ndd.tensor(x)[::-1]
    want = torch.from_numpy(x[::-1].copy())
    assert torch.equal(t.torch(), want)
    assert torch.equal(torch.from_dlpack(t), want)
    assert torch.equal(ndd.as_tensor(x[:, ::-1]).torch(), torch.from_numpy(x[:, ::-1].copy()))
    b = ndd.batch([x, x]).slice[:, ::-1]
    assert torch.equal(b.select(0).torch(), torch.from_numpy(x[:, ::-1].copy()))


def test_python_numbers_take_the_first_samples_type() -> None:
    assert ndd.batch([1.0, 2, 3]).dtype is ndd.float32
    ints = ndd.batch([1, 2.5])
    assert ints.dtype is ndd.int32 and [int(s.item()) for s in ints] == [1, 2]
    assert ndd.batch([[0.5, 0.5], [1, 1]]).dtype is ndd.float32
    # arrays of another type take the first sample's too, rounded and saturated (the reference)
    mixed = ndd.batch([np.zeros(2, np.int32), np.float32([2.5, -1e10])])
    assert mixed.dtype is ndd.int32 and mixed.select(1).torch().tolist() == [3, -(2**31)]


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint64])
def test_integer_floor_division_is_exact(dt: type) -> None:
    info = np.iinfo(dt)
    a = np.array([info.max, info.max - 6, min(2**53 + 1, info.max - 1), 7, 0], dt)
    b = np.array([2, 3, 3, 7, 5], dt)
    if info.min < 0:
        a = np.concatenate([a, np.array([info.min + 7, -7], dt)])
        b = np.concatenate([b, np.array([5, 2], dt)])
    got = np.asarray((ndd.tensor(a) // ndd.tensor(b)).torch())
    want = np.array([int(x) // int(y) if (x >= 0) == (y >= 0) else -(-int(x) // int(y))
                     for x, y in zip(a, b)], dtype=object).astype(dt)  # fmt: skip
    np.testing.assert_array_equal(got, want)


def test_cat_by_axis_name() -> None:
    x = np.arange(6, dtype=np.uint8).reshape(2, 3, 1)
    a, b = ndd.batch([x], layout="HWC"), ndd.batch([x + 100], layout="HWC")
    assert ndd.cat(a, b, axis_name="W").select(0).shape == (2, 6, 1)
    joined = ndd.cat(a, b, axis_name="C")
    assert joined.select(0).shape == (2, 3, 2) and joined.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(joined.select(0))[..., 1], x[..., 0] + 100)
    with pytest.raises(ValueError, match="axis_name 'D'"):
        ndd.cat(a, b, axis_name="D").evaluate()


def test_transpose_reverses_by_default_and_keeps_the_layout_when_asked() -> None:
    b = ndd.batch([np.zeros((4, 5, 3), np.uint8)], layout="HWC")
    r = ndd.transpose(b)
    assert r.select(0).shape == (3, 5, 4) and r.layout == "CWH"
    kept = ndd.transpose(b, perm=[2, 0, 1], transpose_layout=False)
    assert kept.select(0).shape == (3, 4, 5) and kept.layout == "HWC"


def test_flip_of_empty_samples() -> None:
    b = ndd.batch([np.zeros((0, 5, 3), np.uint8), np.ones((4, 5, 3), np.uint8)], layout="HWC")
    out = ndd.flip(b, horizontal=1)
    assert [s.shape for s in out] == [(0, 5, 3), (4, 5, 3)]


def test_constants_default_to_int32() -> None:
    assert ndd.zeros(shape=[2]).dtype is ndd.int32 and ndd.ones(shape=[2]).dtype is ndd.int32
    assert ndd.zeros(shape=[2], dtype=ndd.float32).dtype is ndd.float32


def test_unsigned_arithmetic_on_the_gpu() -> None:
    a = np.array([4_000_000_000, 7], np.uint32)
    big = np.array([2**63 + 5, 9], np.uint64)
    for dev in ("cpu", "gpu"):
        t32, t64 = ndd.tensor(a, device=dev), ndd.tensor(big, device=dev)
        assert (t32 + t32).cpu().torch().tolist() == (a + a).tolist()
        two = ndd.tensor(np.array([2, 2], np.uint64), device=dev)
        assert (t64 // two).cpu().torch().tolist() == (big // 2).tolist()
        assert (t64 > two).cpu().torch().tolist() == [True, True]


def test_python_numbers_out_of_an_integer_types_range_raise() -> None:
    """As the reference: floats are truncated, then a value that does not fit raises
    OverflowError instead of wrapping around."""
    assert ndd.tensor([1.7, 200.2], dtype=ndd.uint8).torch().tolist() == [1, 200]
    for data in ([-1.7, 3], [300], [[1, 300]]):
        with pytest.raises(OverflowError, match="out of bounds for uint8"):
            ndd.tensor(data, dtype=ndd.uint8)
    with pytest.raises(OverflowError):
        ndd.batch([[1, 300]], dtype=ndd.uint8)
