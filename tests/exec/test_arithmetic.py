import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import headrace as ndd

NP = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.float32, np.float64]
OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "lt": lambda a, b: a < b,
    "eq": lambda a, b: a == b,
    "max": ndd.math.max,
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NP), st.sampled_from(NP), st.sampled_from(sorted(OPS)))
def test_binary_ops_match_numpy_values(ta, tb, op):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 50, (3, 4)).astype(ta)
    b = rng.integers(1, 50, (4,)).astype(tb)
    r = OPS[op](ndd.tensor(a), ndd.tensor(b))
    ref = {
        "add": np.add,
        "sub": np.subtract,
        "mul": np.multiply,
        "lt": np.less,
        "eq": np.equal,
        "max": np.maximum,
    }[op](a.astype(np.float64), b.astype(np.float64))
    out = np.asarray(r)
    assert out.shape == ref.shape
    if op in ("lt", "eq"):
        assert out.dtype == np.bool_
    expected_type = ndd._core.dtype.promote(ndd.dtype(ta), ndd.dtype(tb))
    if op not in ("lt", "eq"):
        assert r.dtype == expected_type
        ref = ref.astype(expected_type.numpy)
    assert np.array_equal(out, ref)


def test_reflected_and_unary(device):
    x = ndd.tensor(np.array([1, 2, 3], np.int32), device=device)

    def v(t):
        return np.asarray(t.cpu()).tolist()

    assert v(10 - x) == [9, 8, 7]
    assert v(2**x) == [2, 4, 8]
    assert v(-x) == [-1, -2, -3] and (+x) is x
    assert v(~x) == [-2, -3, -4]
    assert v(abs(-x)) == [1, 2, 3]
    assert v(x / 2) == [0.5, 1.0, 1.5] and (x / 2).dtype is ndd.float32
    assert v(ndd.tensor([-7, 7], device=device) // 2) == [-3, 3]
    assert v(ndd.tensor([-7, 7], device=device) % 2) == [-1, 1]
    assert v(x << 1) == [2, 4, 6] and v(x & 1) == [1, 0, 1]


def test_batch_broadcasting_per_sample():
    b = ndd.batch([[1, 2, 3], [4, 5]])
    r = b + ndd.batch([[5], [42]])
    assert [np.asarray(t).tolist() for t in r] == [[6, 7, 8], [46, 47]]
    r2 = 1 + b
    assert isinstance(r2, ndd.Batch) and r2.batch_size == 2


def test_errors():
    with pytest.raises(ValueError, match=r"[CG]PU and [CG]PU"):
        ndd.tensor([1]) + ndd.tensor([1]).gpu()
    with pytest.raises(OverflowError):
        ndd.tensor([1]) + 2**40
    with pytest.raises(ValueError, match="Inconsistent batch size"):
        ndd.batch([[1], [2]]) + ndd.batch([[1]])
    with ndd.EvalMode.sync_cpu, pytest.raises(ValueError, match="Bitwise"):
        ndd.tensor([1.0]) & ndd.tensor([1.0])


def test_math_functions():
    x = ndd.tensor(np.array([1, 4, 9], np.int32))
    s = ndd.math.sqrt(x)
    assert s.dtype is ndd.float32 and np.allclose(np.asarray(s), [1, 2, 3])
    assert ndd.math.abs(ndd.tensor([-1])).dtype is ndd.int32
    assert np.asarray(ndd.math.clamp(x, 2, 5)).tolist() == [2, 4, 5]
    assert np.allclose(np.asarray(ndd.math.atan2(ndd.tensor([1.0]), ndd.tensor([1.0]))), np.pi / 4)
    assert np.asarray(ndd.math.fpow(ndd.tensor([2]), ndd.tensor([3]))).dtype == np.float32


def test_big_batches_leave_their_inputs_untouched():
    """Big batches run on the worker threads and may compute in place, but only into their own
    converted copies: the operands keep their values."""
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 256, (120, 160, 3), dtype=np.uint8) for _ in range(8)]
    ints = [rng.integers(-5, 5, (120, 160, 3), dtype=np.int32) for _ in range(8)]
    x, y = ndd.batch(imgs), ndd.batch(ints)
    before = [a.copy() for a in imgs + ints]
    half = x * 0.5
    mixed = x + y  # (x converted to int32 first: the in-place step writes that conversion)
    for got, a in zip(half.tensors, imgs):
        np.testing.assert_array_equal(np.asarray(got), a.astype(np.float32) * np.float32(0.5))
    for got, a, b in zip(mixed.tensors, imgs, ints):
        np.testing.assert_array_equal(np.asarray(got), a.astype(np.int32) + b)
    for a, b in zip([np.asarray(t) for t in x.tensors] + [np.asarray(t) for t in y.tensors],
                    before):  # fmt: skip
        np.testing.assert_array_equal(a, b)


MIXED = [(np.uint8, np.float32), (np.int8, np.int16), (np.uint8, np.uint8), (np.uint16, np.int32),
         (np.float64, np.float32)]  # fmt: skip


@pytest.mark.parametrize("ta,tb", MIXED)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "fdiv"])
def test_mixed_types_compute_in_the_promoted_type_with_its_wrapping(ta, tb, op):
    """Operands of other types than the computation's are converted on the fly: the values of
    converting them first, overflow wrapping in the computation's type included."""
    rng = np.random.default_rng(3)

    def full_range(t, shape):
        if np.dtype(t).kind == "f":
            return rng.uniform(-300, 300, shape).astype(t)
        info = np.iinfo(t)
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(t)

    xs = [full_range(ta, (40, 30)) for _ in range(3)]
    ys = [full_range(tb, (40, 30)) for _ in range(3)]
    fns = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "fdiv": np.true_divide}
    py = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "fdiv": lambda a, b: a / b}  # fmt: skip
    with np.errstate(all="ignore"):
        out = py[op](ndd.batch(xs), ndd.batch(ys))
        ct = out.dtype.numpy
        for x, y, t in zip(xs, ys, out.tensors, strict=True):
            want = fns[op](x.astype(ct), y.astype(ct))
            np.testing.assert_array_equal(np.asarray(t), want)


def test_bool_shifts_keep_their_values():
    """bool << bool and >> compute in bool as the reference types them; numpy has no bool
    shift of that type, so the operands are converted first (as before the on-the-fly path)."""
    x = np.array([True, False, True])
    with ndd.EvalMode.sync_cpu:
        b = ndd.batch([x, x])
        left, right = b << b, b >> b
    for t in left.tensors:
        np.testing.assert_array_equal(np.asarray(t), np.left_shift(x, x).astype(bool))
    for t in right.tensors:
        np.testing.assert_array_equal(np.asarray(t), np.right_shift(x, x).astype(bool))
