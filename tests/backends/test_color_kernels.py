"""Colour kernels: closed forms, OpenCV, CPU/torch parity and DALI 2.4 differential tests."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace.backends.cpu import color as C
from headrace.ops import _color_params as P
from headrace.types import BGR, FLOAT, GRAY, INT16, RGB, UINT8, YCbCr

torch = pytest.importorskip("torch")
from headrace.backends.torch import color as T  # noqa: E402

RNG = np.random.default_rng(1234)
IMG = RNG.integers(0, 256, (24, 20, 3), dtype=np.uint8)
IMG[:4, :4] = 77  # grey patch (special case in YCbCr)


def plan(op: str, x: np.ndarray, layout: str | None = "HWC", **kw):
    return getattr(P, f"{op}_params")(x.shape, layout, x.dtype, **kw)


def cpu(op: str, x: np.ndarray, layout: str | None = "HWC", **kw) -> np.ndarray:
    p = plan(op, x, layout, **kw)
    out = getattr(C, op)(x, layout, **p.kwargs)
    assert out.shape == p.shape and out.dtype == p.dtype
    return out


def tch(op: str, x: np.ndarray, layout: str | None = "HWC", **kw) -> np.ndarray:
    p = plan(op, x, layout, **kw)
    return getattr(T, op)(torch.from_numpy(x.copy()), layout, **p.kwargs).numpy()


def dali(op: str, x: np.ndarray, layout: str | None = "HWC", **kw) -> np.ndarray:
    ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    t = ndd.as_tensor(x, layout=layout) if layout else ndd.as_tensor(x)
    return np.asarray(getattr(ndd, op)(t, **kw))


# ------------------------------------------------------------------ brightness_contrast


def test_brightness_contrast_closed_form_uint8():
    x = np.arange(256, dtype=np.uint8).reshape(16, 16, 1)
    out = cpu("brightness_contrast", x, brightness=0.7, contrast=1.3, brightness_shift=0.05)
    ref = 0.05 * 255 + 0.7 * (128 + 1.3 * (x.astype(np.float64) - 128))
    expect = np.clip(np.floor(ref + 0.5), 0, 255)
    assert np.abs(out.astype(np.float64) - expect).max() <= 1
    assert out.dtype == np.uint8


def test_brightness_contrast_defaults_center_per_type():
    assert plan("brightness_contrast", IMG, contrast=0.0).kwargs["offset"] == 128.0
    f = IMG.astype(np.float32) / 255
    assert plan("brightness_contrast", f, contrast=0.0).kwargs["offset"] == 0.5
    i16 = IMG.astype(np.int16)
    assert plan("brightness_contrast", i16, contrast=0.0).kwargs["offset"] == 16384.0


def test_brightness_contrast_shift_uses_output_range():
    out = cpu("brightness_contrast", IMG, brightness_shift=0.1, dtype=FLOAT)
    np.testing.assert_allclose(out, IMG + 0.1, rtol=1e-6)
    assert out.dtype == np.float32


def test_rounding_half_away_from_zero_signed():
    x = np.array([[[-5, -7, 5]]], np.int16)
    out = cpu("brightness_contrast", x, contrast=0.5, contrast_center=0.0)
    assert out.tolist() == [[[-3, -4, 3]]]


# --------------------------------------------------------------------------- colour twist


def test_color_twist_identity_and_grey():
    assert np.array_equal(cpu("color_twist", IMG), IMG)
    grey = cpu("color_twist", IMG, contrast=0.0)
    assert np.all(grey == 128)
    desat = cpu("saturation", IMG, saturation=0.0).astype(int)
    assert np.abs(desat[..., 0] - desat[..., 1]).max() <= 1


def test_hue_360_is_identity_and_hue_180_twice_is_near_identity():
    assert np.abs(cpu("hue", IMG, hue=360.0).astype(int) - IMG).max() <= 1
    f = IMG.astype(np.float32)
    twice = cpu("hue", cpu("hue", f, hue=180.0), hue=180.0)
    np.testing.assert_allclose(twice, f, atol=1e-3)


def test_hsv_default_output_is_uint8_even_for_float():
    f = IMG.astype(np.float32)
    assert plan("hsv", f).dtype == np.uint8
    out = cpu("hsv", IMG, value=0.5, dtype=FLOAT)
    np.testing.assert_allclose(out, IMG * 0.5, atol=1e-3)


def test_color_twist_rejects_bad_args():
    with pytest.raises(InvalidArgumentError, match="brightness"):
        plan("color_twist", IMG, brightness=-1.0)
    with pytest.raises(ShapeError, match="3 channels"):
        plan("hsv", IMG[..., :2])
    with pytest.raises(ShapeError, match="channel-last"):
        plan("hue", IMG.transpose(2, 0, 1), "CHW")


# ------------------------------------------------------------------- colour-space conversion

SPACES = {"RGB": RGB, "BGR": BGR, "GRAY": GRAY, "YCbCr": YCbCr}


def _space_input(src: str) -> np.ndarray:
    return IMG[..., :1].copy() if src == "GRAY" else IMG


def test_color_space_gray_matches_opencv():
    out = cpu("color_space_conversion", IMG, image_type=RGB, output_type=GRAY)
    assert np.array_equal(out[..., 0], cv2.cvtColor(IMG, cv2.COLOR_RGB2GRAY))
    out = cpu("color_space_conversion", IMG, image_type=BGR, output_type=GRAY)
    assert np.array_equal(out[..., 0], cv2.cvtColor(IMG, cv2.COLOR_BGR2GRAY))


def test_ycbcr_round_trip_and_ranges():
    y = cpu("color_space_conversion", IMG, image_type=RGB, output_type=YCbCr)
    assert 16 <= y[..., 0].min() and y[..., 0].max() <= 235
    assert np.all(y[:4, :4, 1:] == 128)
    back = cpu("color_space_conversion", y, image_type=YCbCr, output_type=RGB)
    assert np.abs(back.astype(int) - IMG).max() <= 2


def test_color_space_conversion_validation():
    with pytest.raises(InvalidTypeError, match="uint8"):
        plan("color_space_conversion", IMG.astype(np.float32), image_type=RGB, output_type=GRAY)
    with pytest.raises(InvalidArgumentError, match="ANY_DATA"):
        plan("color_space_conversion", IMG, image_type="any_data", output_type=GRAY)


# ------------------------------------------------------------------------------ normalize


def test_normalize_computed_stats_match_numpy():
    x = IMG.astype(np.float64)
    out = cpu("normalize", IMG, axis_names="HW", ddof=1, epsilon=2.0, scale=3.0, shift=1.0)
    m = x.mean((0, 1), keepdims=True)
    var = x.var((0, 1), ddof=1, keepdims=True)
    np.testing.assert_allclose(out, 3 * (x - m) / np.sqrt(var + 2) + 1, rtol=1e-5, atol=1e-5)


def test_normalize_given_params_and_inferred_axes():
    mean = np.array([[[10, 20, 30]]], np.float32)
    std = np.array([[[1, 2, 4]]], np.float32)
    p = plan("normalize", IMG, mean=mean, stddev=std)
    assert p.kwargs["axes"] == (0, 1)
    out = C.normalize(IMG, "HWC", **p.kwargs)
    np.testing.assert_allclose(out, (IMG - mean) / std, rtol=1e-6)
    out = cpu("normalize", IMG, mean=10.0, stddev=4.0, epsilon=9.0)
    np.testing.assert_allclose(out, (IMG - 10.0) / 5.0, rtol=1e-6)


def test_normalize_constant_input_and_integer_output():
    c = np.full((4, 4, 3), 7, np.uint8)
    assert np.all(cpu("normalize", c) == 0)
    out = cpu("normalize", IMG, dtype=UINT8, scale=64, shift=128)
    x = IMG.astype(np.float64)
    ref = np.clip(np.floor(64 * (x - x.mean()) / x.std() + 128.5), 0, 255)
    assert np.abs(out.astype(int) - ref).max() <= 1 and out.dtype == np.uint8


def test_normalize_batch_shares_statistics():
    xs = [IMG[:10].copy(), IMG[10:].copy()]
    p = plan("normalize", xs[0], axes=(0, 1), batch=True)
    outs = C.normalize_batch(xs, "HWC", **p.kwargs)
    whole = cpu("normalize", IMG, axes=(0, 1))
    np.testing.assert_allclose(np.concatenate(outs), whole, rtol=1e-5, atol=1e-5)
    touts = T.normalize_batch([torch.from_numpy(v) for v in xs], "HWC", **p.kwargs)
    np.testing.assert_allclose(np.concatenate([t.numpy() for t in touts]), whole, atol=1e-5)


def test_normalize_validation():
    with pytest.raises(InvalidArgumentError, match="both"):
        plan("normalize", IMG, axes=0, axis_names="H")
    with pytest.raises(ShapeError, match="extent 1"):
        plan("normalize", IMG, mean=np.zeros((1, 5, 3), np.float32), axes=(0, 1))
    with pytest.raises(InvalidArgumentError, match="batch"):
        plan("normalize", IMG, mean=np.zeros((1, 1, 3), np.float32), batch=True)


# --------------------------------------------------------------------------- lookup_table


def test_lookup_table_documented_example():
    x = np.array([1, 4, 1, 0, 100, 2, 3, 4, -1], np.int32)
    kw = {"keys": [0, 2, 3, 4, 5, 3], "values": [0.2, 0.4, 0.5, 0.6, 0.7, 0.1]}
    out = cpu("lookup_table", x, None, default_value=0.99, **kw)
    np.testing.assert_allclose(out, [0.99, 0.6, 0.99, 0.2, 0.99, 0.4, 0.1, 0.6, 0.99], rtol=1e-6)
    assert out.dtype == np.float32


@pytest.mark.parametrize("dt", [np.uint8, np.int8, np.int16, np.int64])
def test_lookup_table_integer_output_saturates(dt):
    x = np.array([1, 2, 3], dt)
    out = cpu(
        "lookup_table", x, None, keys=[1, 2], values=[10.5, 300.0], default_value=-3, dtype=UINT8
    )
    assert out.tolist() == [11, 255, 0]


def test_lookup_table_validation():
    with pytest.raises(InvalidTypeError):
        plan("lookup_table", IMG.astype(np.float32), keys=[1], values=[1.0])
    with pytest.raises(InvalidArgumentError, match="length"):
        plan("lookup_table", IMG, keys=[1, 2], values=[1.0])
    with pytest.raises(InvalidArgumentError, match="65535"):
        plan("lookup_table", IMG, keys=[70000], values=[1.0])


# ------------------------------------------------------------------------ torch parity

PARITY = [
    ("brightness_contrast", {"brightness": 1.3, "contrast": 0.8, "brightness_shift": -0.05}, 0),
    ("color_twist", {"brightness": 1.1, "contrast": 0.9, "hue": 33.0, "saturation": 1.4}, 1),
    ("hsv", {"hue": -70.0, "saturation": 0.6, "value": 1.2}, 1),
    ("hue", {"hue": 123.0}, 1),
    ("saturation", {"saturation": 1.7}, 1),
    ("normalize", {"axis_names": "HW", "dtype": INT16, "scale": 100.0}, 1),
]


@pytest.mark.parametrize(("op", "kw", "tol"), PARITY, ids=[p[0] for p in PARITY])
def test_torch_matches_cpu(op, kw, tol):
    a, b = cpu(op, IMG, **kw), tch(op, IMG, **kw)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.abs(a.astype(np.float64) - b).max() <= tol
    f = IMG.astype(np.float32) / 255
    np.testing.assert_allclose(cpu(op, f, **kw), tch(op, f, **kw), atol=max(tol, 1e-5))


@pytest.mark.parametrize("src", list(SPACES))
@pytest.mark.parametrize("dst", list(SPACES))
def test_torch_color_space_matches_cpu(src, dst):
    x = _space_input(src)
    kw = {"image_type": SPACES[src], "output_type": SPACES[dst]}
    a, b = cpu("color_space_conversion", x, **kw), tch("color_space_conversion", x, **kw)
    assert a.shape == b.shape and np.abs(a.astype(int) - b).max() <= 1


def test_torch_lookup_matches_cpu():
    x = RNG.integers(-5, 300, (50,)).astype(np.int16)
    kw = {"keys": [0, 3, 7, 250], "values": [1.0, -2.0, 3.5, 9.0], "default_value": 0.5}
    assert np.array_equal(cpu("lookup_table", x, None, **kw), tch("lookup_table", x, None, **kw))


# --------------------------------------------------------------------------- DALI oracle


@pytest.mark.dali
def test_dali_brightness_contrast_bit_exact():
    pytest.importorskip("nvidia.dali")
    rng = np.random.default_rng(7)
    for _ in range(5):
        b, c = rng.uniform(0, 2, 2)
        kw = {"brightness": b, "contrast": c, "brightness_shift": rng.uniform(-0.2, 0.2)}
        assert np.array_equal(
            cpu("brightness_contrast", IMG, **kw), dali("brightness_contrast", IMG, **kw)
        )
        f = IMG.astype(np.float32) / 255
        np.testing.assert_allclose(
            cpu("brightness_contrast", f, **kw), dali("brightness_contrast", f, **kw), atol=1e-6
        )


@pytest.mark.dali
@pytest.mark.parametrize("op", ["color_twist", "hsv", "hue", "saturation"])
def test_dali_matrix_ops(op):
    pytest.importorskip("nvidia.dali")
    rng = np.random.default_rng(8)
    names = {
        "color_twist": ("brightness", "contrast", "hue", "saturation"),
        "hsv": ("hue", "saturation", "value"),
        "hue": ("hue",),
        "saturation": ("saturation",),
    }[op]
    for _ in range(4):
        kw = {n: (rng.uniform(-180, 180) if n == "hue" else rng.uniform(0, 2)) for n in names}
        ours, ref = cpu(op, IMG, **kw), dali(op, IMG, **kw)
        assert ours.dtype == ref.dtype
        assert np.abs(ours.astype(int) - ref).max() <= 1
        assert (ours != ref).mean() < 1e-3


@pytest.mark.dali
@pytest.mark.parametrize(("src", "dst"), [(a, b) for a in SPACES for b in SPACES if a != b])
def test_dali_color_space_conversion(src, dst):
    pytest.importorskip("nvidia.dali")
    x = _space_input(src)
    kw = {"image_type": SPACES[src], "output_type": SPACES[dst]}
    ours, ref = cpu("color_space_conversion", x, **kw), dali("color_space_conversion", x, **kw)
    assert ours.shape == ref.shape and np.abs(ours.astype(int) - ref).max() <= 1


@pytest.mark.dali
def test_dali_normalize_and_lookup():
    pytest.importorskip("nvidia.dali")
    for kw in (
        {},
        {"axis_names": "HW", "ddof": 1, "epsilon": 3.0, "scale": 2.0, "shift": 1.0},
        {"mean": np.full((1, 1, 3), 10, np.float32)},
        {"dtype": UINT8, "scale": 64, "shift": 128},
    ):
        ours, ref = cpu("normalize", IMG, **kw), dali("normalize", IMG, **kw)
        assert ours.dtype == ref.dtype
        np.testing.assert_allclose(ours.astype(np.float64), ref, rtol=1e-5, atol=1e-5)
    x = np.array([1, 4, 0, 100, 2, 3, 255], np.uint8)
    kw = {
        "keys": [0, 2, 3, 4],
        "values": [0.2, 0.4, 0.5, 300.7],
        "default_value": -4.5,
        "dtype": INT16,
    }
    assert np.array_equal(cpu("lookup_table", x, None, **kw), dali("lookup_table", x, None, **kw))


@pytest.mark.parametrize(
    "dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64, np.int64, np.float16]
)
def test_lut_u8_equals_indexing_for_every_table_type(dtype):
    from headrace.backends.cpu.color import lut_u8

    x = np.random.default_rng(1).integers(0, 256, (17, 23, 3), np.uint8)
    table = (np.arange(256) * 3.5 - 100).astype(dtype)
    got = lut_u8(x, table)
    assert got.dtype == table.dtype and np.array_equal(got, table[x])


@pytest.mark.parametrize("perm", [(1, 0), (1, 0, 2), (2, 0, 1), (0, 2, 1)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.int64, bool])
@pytest.mark.parametrize("channels", [1, 3, 4, 6])
def test_transpose_fast_path_equals_numpy(perm, dtype, channels):
    from headrace.backends.cpu.misc import NumpyXP

    shape = (9, 13) if len(perm) == 2 else (9, 13, channels)
    a = (np.random.default_rng(2).random(shape) * 100).astype(dtype)
    got = NumpyXP.transpose(a, perm)
    want = np.ascontiguousarray(np.transpose(a, perm))
    assert got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    assert got.flags.c_contiguous


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, np.int64])
@pytest.mark.parametrize("channels", [(3, 3), (1, 2, 4), (1, 1), (3, 3, 3, 3, 3)])
def test_channel_concatenation_equals_numpy(dtype, channels):
    from headrace.backends.cpu.misc import NumpyXP

    rng = np.random.default_rng(3)
    for lead in ((60, 80), (5000,), (3, 40, 50), (2, 3)):
        xs = [(rng.random((*lead, c)) * 100).astype(dtype) for c in channels]
        want = np.concatenate(xs, -1)
        for axis in (-1, len(lead)):
            got = NumpyXP.concat(xs, axis)
            assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize(
    ("mean", "std", "scale", "shift", "dtype"),
    [
        (100.0, 50.0, 1.0, 0.0, np.float32),
        ([[[120.0, 110.0, 100.0]]], [[[60.0, 55.0, 50.0]]], 1.0, 0.0, np.float32),
        ([120.0, 110.0, 100.0], [60.0, 0.0, 50.0], 2.5, 128.0, np.uint8),  # a zero deviation
        (100.0, [[[60.0, 55.0, 50.0]]], 64.0, 128.0, np.int16),
    ],
)
def test_normalize_with_given_statistics_on_uint8_equals_the_float32_steps(
    mean, std, scale, shift, dtype
):
    from headrace._core.saturate import saturate
    from headrace.backends.cpu.color import normalize

    x = np.random.default_rng(5).integers(0, 256, (70, 90, 3), np.uint8)
    m, s = np.asarray(mean, np.float32), np.asarray(std, np.float64)
    inv = np.where(s > 0, scale / np.where(s > 0, s, 1), 0).astype(np.float32)
    want = saturate((x.astype(np.float32) - m) * inv + np.float32(shift), np.dtype(dtype))
    got = normalize(x, "HWC", axes=(0, 1), mean=mean, stddev=std, scale=scale, shift=shift,
                    epsilon=0.0, ddof=0, dtype=np.dtype(dtype))  # fmt: skip
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_uint8_to_float16_cast_equals_numpy_bit_for_bit():
    from headrace._core import dtype as dt
    from headrace.backends.cpu.misc import cast_saturate_np

    x = np.random.default_rng(7).integers(0, 256, (70, 90, 3), np.uint8)
    got = cast_saturate_np(x, dt.float16)
    assert got.dtype == np.float16 and got.shape == x.shape and got.flags.writeable
    assert np.array_equal(got.view(np.uint16), x.astype(np.float16).view(np.uint16))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, bool])
def test_reduce_axes_and_broadcast_op_equal_numpy(dtype):
    from headrace.backends.cpu.reductions import broadcast_op, reduce_axes

    rng = np.random.default_rng(8)
    x = (rng.random((60, 80, 3)) * 200 - (0 if dtype in (np.uint8, bool) else 50)).astype(dtype)
    for ufunc in (np.add, np.maximum, np.minimum):
        for acc in (None, np.float64, np.int64) if ufunc is np.add else (None,):
            for axes in ((2,), (0, 1), (0, 1, 2), (1, 2), (0, 2)):
                want = x
                for a in axes:  # NumPy's reduction, one axis at a time
                    want = ufunc.reduce(want, axis=a, keepdims=True, dtype=acc)
                got = reduce_axes(ufunc, x, axes, acc)
                assert got.dtype == want.dtype and np.array_equal(got, want), (ufunc, acc, axes)
    if dtype is bool:
        return
    for stat_shape in ((60, 80, 1), (1, 1, 3), (1, 80, 3)):
        st = rng.random(stat_shape).astype(np.float32) * 10
        for op in (np.subtract, np.multiply):
            got = broadcast_op(op, x, st, dtype=np.float32)
            assert np.array_equal(got, op(x, st, dtype=np.float32))


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((64, 401), [1]), ((64, 401), [0, 1]), ((5, 7, 9), [2]), ((5, 7, 9), [1, 2])],
)
def test_normalize_of_a_uniform_batch_equals_each_sample_alone(shape, axes):
    """Same-shape float32 samples with computed statistics over trailing axes go through the
    whole-batch kernel (``normalize_stacked``); the values are those of each sample alone."""
    import headrace as ndd

    rng = np.random.default_rng(len(shape) + len(axes))
    xs = [(rng.standard_normal(shape) * 3 + 1).astype(np.float32) for _ in range(6)]
    with ndd.EvalMode.sync_cpu:
        got = [np.asarray(t) for t in ndd.normalize(ndd.as_batch(xs), axes=axes).tensors]
        alone = [np.asarray(ndd.normalize(ndd.tensor(x), axes=axes)) for x in xs]
    for g, a in zip(got, alone, strict=True):
        np.testing.assert_array_equal(g, a)
    kw = dict(axes=tuple(axes), mean=None, stddev=None, scale=1.0, shift=0.0, epsilon=0.0,
              ddof=0, dtype=np.dtype(np.float32))  # fmt: skip
    plan = type("Plan", (), {"kwargs": kw})()
    assert C.normalize_stacked(xs, None, [plan] * len(xs)) is not None
    ragged = [xs[0], xs[1][..., :-1]]
    assert C.normalize_stacked(ragged, None, [plan] * 2) is None  # (per-sample path)
    leading = dict(kw, axes=(0,))
    assert C.normalize_stacked(xs, None, [type("Plan", (), {"kwargs": leading})()] * 6) is None
