"""The saturating conversion exists once per array library; numpy and torch agree bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from headrace._core.saturate import saturate

torch = pytest.importorskip("torch")
saturate_torch = pytest.importorskip("headrace.backends.torch.cast").saturate

_EDGES = [0.5, -0.5, 1.5, -2.5, 0.49999997, -0.49999997, 2.0**23 + 1, 2.0**31, -3e9, 1e30, np.inf]


def _values() -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.concatenate([rng.uniform(-70000, 70000, 500), np.arange(-300, 300) + 0.5, _EDGES])


@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64, np.int64, np.int16, np.uint8])
@pytest.mark.parametrize(
    "dst", [np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.bool_]
)
def test_numpy_and_torch_agree(src, dst) -> None:
    with np.errstate(all="ignore"):
        a = _values().astype(src)
    n = saturate(a, np.dtype(dst))
    t = saturate_torch(torch.from_numpy(a), np.dtype(dst)).numpy()
    assert n.dtype == t.dtype == np.dtype(dst)
    np.testing.assert_array_equal(n, t)


def test_rounds_half_away_exactly_and_saturates() -> None:
    v = np.array([0.49999997, 0.5, -0.5, 2.5, -2.5, 2.0**23 + 1], np.float32)
    assert saturate(v, np.dtype(np.int32)).tolist() == [0, 1, -1, 3, -3, 2**23 + 1]
    assert saturate(np.array([2.0**31, -3e9], np.float32), np.dtype(np.int32)).tolist() == [
        2**31 - 1,
        -(2**31),
    ]
    assert saturate(np.array([-1, 300]), np.dtype(np.uint8)).tolist() == [0, 255]
    assert saturate(np.array([0.5, 2.5]), np.dtype(np.uint8), rounding="half_even").tolist() == [
        0,
        2,
    ]


def test_overwrite_reuses_only_a_float_temporary() -> None:
    v = np.array([1.4, 2.6], np.float32)
    out = saturate(v, np.dtype(np.uint8))
    assert v.tolist() == pytest.approx([1.4, 2.6]) and out.tolist() == [1, 3]
    x = np.array([1, 2], np.uint8)
    assert saturate(x, np.dtype(np.uint8)) is x
