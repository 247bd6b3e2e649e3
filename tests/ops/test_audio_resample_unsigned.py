"""``audio_resample`` with unsigned input or output types: half an unsigned type's range is 0
(float -> uint8: -1 -> 0, 0 -> 128, 1 -> 255; uint16 0 -> float -1), and where an unsigned type
takes part the input is converted to the output's scale before it is resampled (an unsigned
output is resampled uncentred: the zero padding beyond the ends pulls it towards 0).

Oracle-free tests use the closed form at ``scale=1`` (no filtering) and the linearity of the
resampler; the differential ones compare every type pair with the reference (1 level for 8- and
16-bit outputs, 2**-21 of the range for 32-bit ones, 1e-5 for float: the reference filters even
at ``scale=1``, and its float32 noise decides the rounding of exact halves).
"""

from __future__ import annotations

import numpy as np
import pytest

import headrace as ndd

TYPES = ["uint8", "uint16", "uint32", "int8", "int16", "int32", "float32"]
#: (input, output type) pairs where an unsigned type takes part (None: the input's type).
UNSIGNED_PAIRS = [
    (s, d)
    for s in TYPES
    for d in [*TYPES, None]
    if s.startswith("uint") or (d or "").startswith("uint")
]


def _resample(x: np.ndarray, dtype: str | None, scale: float, device: str = "cpu") -> np.ndarray:
    kw = {"scale": scale} if dtype is None else {"scale": scale, "dtype": getattr(ndd, dtype)}
    return np.asarray(ndd.audio_resample(ndd.as_tensor(x, device=device), **kw).cpu())


@pytest.mark.parametrize(
    ("src", "dst", "values", "want"),
    [
        ("float32", "uint8", [-1, -0.5, 0, 0.25, 0.5, 1, 2], [0, 64, 128, 159, 191, 255, 255]),
        ("float32", "uint16", [-1, -0.5, 0, 1], [0, 16384, 32768, 65535]),
        ("float32", "uint32", [-1, 0, 1], [0, 2**31, 2**32 - 1]),
        ("int16", "uint8", [-32767, -16384, 0, 32767], [0, 64, 128, 255]),
        ("uint8", "int16", [0, 127, 128, 255], [-32767, -128, 128, 32767]),
        ("uint8", "uint16", [0, 1, 128, 255], [0, 257, 32896, 65535]),
        ("uint16", "uint8", [0, 32767, 32768, 65535], [0, 127, 128, 255]),
        ("uint32", "int16", [0, 2**31, 2**32 - 1], [-32767, 0, 32767]),
        ("uint8", "uint8", [0, 7, 255], [0, 7, 255]),
    ],
)
def test_closed_form_at_scale_one(
    src: str, dst: str, values: list[float], want: list[int], device: str
) -> None:
    """(v + 1) * max / 2 for an unsigned target, 2 * u / max - 1 for an unsigned source,
    rounded half away from zero (the same type keeps its values)."""
    got = _resample(np.array(values, src), dst, 1.0, device)
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(got, np.array(want, dst))


@pytest.mark.parametrize("src", ["uint8", "uint16", "uint32"])
def test_unsigned_to_float_is_centred(src: str, device: str) -> None:
    hi = np.iinfo(src).max
    u = np.array([0, hi // 2, hi // 2 + 1, hi], src)
    got = _resample(u, "float32", 1.0, device)
    np.testing.assert_allclose(got, 2 * u.astype(np.float64) / hi - 1, atol=1e-7)
    assert got[0] == -1.0 and got[-1] == 1.0


def test_unsigned_output_is_resampled_uncentred(device: str) -> None:
    """Upsampled float -> uint8 equals ``round(127.5 * (R(x) + R(1)))``, R the float resampler
    (linear; zero beyond the ends): near the end of a silent signal the output falls from 128
    towards 0 instead of staying at mid-range."""
    x = np.r_[np.full(20, 0.5), np.full(20, -0.5), np.zeros(20)].astype(np.float32)
    y = _resample(x, "float32", 2.0, device).astype(np.float64)
    one = _resample(np.ones_like(x), "float32", 2.0, device).astype(np.float64)
    got = _resample(x, "uint8", 2.0, device).astype(np.int64)
    want = np.floor(127.5 * (y + one) + 0.5)
    assert np.abs(got - want).max() <= 1
    assert got[-1] <= 70  # half of 128 at the last (interpolated) sample, not 128
    assert (got[84:116:2] == 128).all()  # the silence's own samples: mid-range


def test_unsigned_input_to_float_is_centred_before_resampling(device: str) -> None:
    """uint16 -> float32 upsampled equals the float resampler on ``2 u / 65535 - 1``."""
    u = np.random.default_rng(3).integers(0, 65536, 64).astype(np.uint16)
    got = _resample(u, "float32", 2.0, device)
    want = _resample((2 * u.astype(np.float64) / 65535 - 1).astype(np.float32), None, 2.0, device)
    np.testing.assert_allclose(got, want, atol=2e-6)


def _signal(dtype: str, n: int, rng: np.random.Generator, ch: int | None) -> np.ndarray:
    shape = (n,) if ch is None else (n, ch)
    if dtype == "float32":
        return rng.uniform(-1.2, 1.2, shape).astype(np.float32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64).astype(dtype)


def _tolerance(dtype: str) -> float:
    if dtype == "float32":
        return 1e-5
    info = np.iinfo(dtype)
    return 1.0 if info.bits <= 16 else float(info.max - info.min) * 2.0**-21


@pytest.mark.dali
@pytest.mark.parametrize(("src", "dst"), UNSIGNED_PAIRS)
def test_matches_reference(src: str, dst: str | None) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    rng = np.random.default_rng(TYPES.index(src))
    for scale in (1.0, 2.0, 0.5, 1.37):
        for ch in (None, 2):
            x = _signal(src, 120, rng, ch)
            kw: dict[str, object] = {"scale": scale}
            ref = np.asarray(
                dndd.audio_resample(
                    dndd.batch([x]), **kw, **({"dtype": getattr(dndd, dst)} if dst else {})
                ).tensors[0]
            )
            for device in ("cpu", "gpu"):
                got = _resample(x, dst, scale, device)
                assert got.shape == ref.shape and got.dtype == ref.dtype, (scale, ch, device)
                err = np.abs(got.astype(np.float64) - ref.astype(np.float64)).max()
                assert err <= _tolerance(dst or src), (scale, ch, device, err)
