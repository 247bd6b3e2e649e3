"""Blur, noise, grid-mask and displacement kernels: closed forms, OpenCV, torch parity, DALI."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace.backends.cpu import filters as F
from headrace.ops import _filter_params as P
from headrace.types import FLOAT, INTERP_CUBIC, INTERP_LINEAR

torch = pytest.importorskip("torch")
from headrace.backends.torch import filters as TF  # noqa: E402

RNG = np.random.default_rng(2024)
IMG = RNG.integers(0, 256, (23, 31, 3), dtype=np.uint8)
SAMPLERS = {"noise_gaussian", "noise_salt_and_pepper", "noise_shot", "jitter"}


def plan(op, x, layout="HWC", seed=0, **kw):
    if op in SAMPLERS:
        fn = getattr(P, f"{op}_sampler")
        return fn(np.random.default_rng(seed), x.shape, layout, x.dtype, **kw)
    return getattr(P, f"{op}_params")(x.shape, layout, x.dtype, **kw)


def run(op, x, layout="HWC", backend="cpu", seed=0, **kw):
    p = plan(op, x, layout, seed, **kw)
    if backend == "cpu":
        out = getattr(F, op)(x, layout, **p.kwargs)
    else:
        out = getattr(TF, op)(torch.from_numpy(x.copy()), layout, **p.kwargs).numpy()
    assert out.shape == p.shape and out.dtype == p.dtype
    return out


def dali(op, x, layout="HWC", **kw):
    ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    fn = ndd
    for part in op.split("."):
        fn = getattr(fn, part)
    return np.asarray(fn(ndd.as_tensor(x, layout=layout), **kw))


# --------------------------------------------------------------------------- gaussian blur


def test_window_rules():
    assert P.gaussian_window(1.0, 0).size == 7  # 2 * ceil(3 sigma) + 1
    assert P.gaussian_window(0.5, 0).size == 5
    w = P.gaussian_window(0.0, 7)  # sigma = (3 - 1) * 0.3 + 0.8 = 1.4
    ref = np.exp(-(np.arange(-3, 4) ** 2) / (2 * 1.4**2))
    np.testing.assert_allclose(w, ref / ref.sum(), rtol=1e-6)
    with pytest.raises(InvalidArgumentError, match="neither"):
        P.gaussian_window(0.0, 0)
    with pytest.raises(InvalidArgumentError, match="odd"):
        P.gaussian_window(1.0, 4)


def test_blur_matches_opencv_reflect101():
    f = IMG.astype(np.float32)
    out = run("gaussian_blur", f, sigma=[1.2, 0.6])
    ky, kx = P.gaussian_window(1.2, 0), P.gaussian_window(0.6, 0)
    ref = cv2.sepFilter2D(f, cv2.CV_32F, kx, ky, borderType=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(out, ref, atol=1e-3)
    assert run("gaussian_blur", IMG, sigma=1.0).dtype == np.uint8
    assert run("gaussian_blur", IMG, sigma=1.0, dtype=FLOAT).dtype == np.float32


def test_blur_volumes_sequences_and_tiny_images():
    vol = RNG.random((5, 9, 8, 2), dtype=np.float32)
    out = run("gaussian_blur", vol, "DHWC", sigma=1.0)
    w = P.gaussian_window(1.0, 0)
    ref = vol
    for ax in range(3):
        pad = [(0, 0)] * 4
        pad[ax] = (3, 3)
        p = np.pad(ref, pad, mode="reflect")
        ref = sum(np.take(p, range(k, k + vol.shape[ax]), axis=ax) * w[k] for k in range(7))
    np.testing.assert_allclose(out, ref, atol=1e-5)
    seq = np.stack([IMG, IMG[::-1].copy()])
    out = run("gaussian_blur", seq, "FHWC", sigma=1.0)
    assert np.array_equal(out[1], run("gaussian_blur", IMG[::-1].copy(), sigma=1.0))
    tiny = RNG.random((2, 3, 1), dtype=np.float32)  # window wider than the image
    np.testing.assert_allclose(
        run("gaussian_blur", tiny, sigma=2.0),
        run("gaussian_blur", tiny, "HWC", "torch", sigma=2.0),
        atol=1e-5,
    )
    assert np.allclose(run("gaussian_blur", np.full((1, 1, 1), 3.0, np.float32), sigma=2.0), 3.0)


def test_blur_validation():
    with pytest.raises(InvalidArgumentError, match="per spatial axis"):
        plan("gaussian_blur", IMG, sigma=[1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match="first or last"):
        plan("gaussian_blur", IMG.reshape(23, 3, 31), "HCW", sigma=1.0)


# ----------------------------------------------------------------------------------- noise


def test_noise_is_deterministic_per_seed_and_varies_across_seeds():
    a = run("noise_gaussian", IMG, seed=1, stddev=20.0)
    assert np.array_equal(a, run("noise_gaussian", IMG, seed=1, stddev=20.0))
    assert not np.array_equal(a, run("noise_gaussian", IMG, seed=2, stddev=20.0))
    rng = np.random.default_rng(5)
    p1 = P.noise_gaussian_sampler(rng, IMG.shape, "HWC", IMG.dtype)
    p2 = P.noise_gaussian_sampler(rng, IMG.shape, "HWC", IMG.dtype)
    assert p1.kwargs["seed"] != p2.kwargs["seed"]


def test_noise_gaussian_statistics():
    x = np.full((200, 200), 100.0, np.float32)
    out = run("noise_gaussian", x, None, mean=2.0, stddev=10.0) - x
    assert abs(out.mean() - 2.0) < 0.2 and abs(out.std() - 10.0) < 0.2
    sat = run("noise_gaussian", np.full((100,), 250, np.uint8), None, stddev=1000.0)
    assert np.isin(sat, [0, 255]).mean() > 0.8


def test_salt_and_pepper_values_and_rates():
    x = np.full((200, 200, 3), 100, np.uint8)
    out = run("noise_salt_and_pepper", x, prob=0.3, salt_vs_pepper=0.25)
    vals, counts = np.unique(out[..., 0], return_counts=True)
    assert vals.tolist() == [0, 100, 255]
    assert abs(counts[2] / out[..., 0].size - 0.075) < 0.01
    assert np.array_equal(out[..., 0], out[..., 2])  # same noise for all channels
    per = run("noise_salt_and_pepper", x, prob=0.3, per_channel=True)
    assert not np.array_equal(per[..., 0], per[..., 1])
    f = run("noise_salt_and_pepper", x.astype(np.float32), prob=0.5)
    assert set(np.unique(f)) == {-1.0, 1.0, 100.0}
    wrap = run("noise_salt_and_pepper", x, prob=0.5, salt_val=300.0, pepper_val=-7.6)
    assert set(np.unique(wrap)) == {44, 100, 249}  # C-style conversion, as in DALI


def test_shot_noise_statistics():
    x = np.full((300, 300), 100, np.uint8)
    out = run("noise_shot", x, None, factor=0.5).astype(np.float64)
    assert abs(out.mean() - 100) < 0.5 and abs(out.std() - np.sqrt(100 * 0.5)) < 0.3
    coarse = run("noise_shot", x, None, factor=20.0)
    assert np.all((coarse % 20 == 0) | (coarse == 255))
    assert np.array_equal(run("noise_shot", x, None, factor=0.0), x)


def test_jitter_moves_within_bounds():
    x = np.arange(20 * 30, dtype=np.float32).reshape(20, 30, 1)
    out = run("jitter", x, nDegree=4)
    dy = np.abs(out[..., 0] // 30 - x[..., 0] // 30)
    dx = np.abs(out[..., 0] % 30 - x[..., 0] % 30)
    assert dy.max() == 2 and dx.max() == 2 and (out != x).mean() > 0.5
    assert np.array_equal(run("jitter", IMG, nDegree=0), IMG)


# ---------------------------------------------------------------------- grid mask / warps


def test_grid_mask_closed_form():
    x = np.ones((12, 12, 1), np.uint8)
    out = run("grid_mask", x, tile=4, ratio=0.5)[..., 0]
    ys, xs = np.mgrid[0:12, 0:12]
    keep = ((xs % 4) >= 2) | ((ys % 4) >= 2)
    assert np.array_equal(out.astype(bool), keep)
    with pytest.raises(InvalidArgumentError, match="tile"):
        plan("grid_mask", x, tile=0)


def test_water_and_sphere_identity_and_fill():
    zero = {"ampl_x": 0.0, "ampl_y": 0.0}
    assert np.array_equal(run("water", IMG, **zero), IMG)
    out = run("water", IMG, ampl_x=40.0, ampl_y=0.0, freq_x=0.0, phase_x=np.pi / 2, fill_value=5)
    assert np.all(out[:, -10:] == 5)  # shifted by 40 px: the right side falls outside
    s = run("sphere", IMG, fill_value=7.0)
    assert np.all(s[0, 0] == 7) and np.array_equal(s[11, 15], IMG[11, 15])
    with pytest.raises(InvalidTypeError):
        plan("water", IMG.astype(np.int16))
    with pytest.raises(InvalidArgumentError, match="nearest"):
        plan("sphere", IMG, interp_type=INTERP_CUBIC)


# ----------------------------------------------------------------------- torch parity

EXACT = [
    ("noise_gaussian", {"mean": 1.0, "stddev": 15.0}),
    ("noise_salt_and_pepper", {"prob": 0.2}),
    ("noise_salt_and_pepper", {"prob": 0.2, "per_channel": True}),
    ("noise_shot", {"factor": 3.0}),
    ("jitter", {"nDegree": 3}),
    ("grid_mask", {"tile": 7, "ratio": 0.4, "angle": 0.3, "shift_x": 2.0}),
    ("water", {}),
    ("sphere", {"fill_value": 3.0}),
]


@pytest.mark.parametrize(("op", "kw"), EXACT, ids=[f"{o}-{i}" for i, (o, _) in enumerate(EXACT)])
def test_torch_exact(op, kw):
    assert np.array_equal(run(op, IMG, seed=3, **kw), run(op, IMG, "HWC", "torch", seed=3, **kw))


@pytest.mark.parametrize("op", ["gaussian_blur", "water", "sphere"])
def test_torch_close(op):
    kw = {"sigma": [1.5, 0.8]} if op == "gaussian_blur" else {"interp_type": INTERP_LINEAR}
    a, b = run(op, IMG, **kw), run(op, IMG, "HWC", "torch", **kw)
    assert np.abs(a.astype(int) - b).max() <= 1 and (a != b).mean() < 0.01
    f = IMG.astype(np.float32)
    np.testing.assert_allclose(run(op, f, **kw), run(op, f, "HWC", "torch", **kw), atol=0.02)


# ---------------------------------------------------------------------------- DALI oracle


@pytest.mark.dali
@pytest.mark.parametrize(
    ("shape", "layout"),
    [
        ((20, 30, 3), "HWC"),
        ((3, 20, 30), "CHW"),
        ((2, 20, 30, 3), "FHWC"),
        ((6, 10, 12, 2), "DHWC"),
    ],
)
def test_dali_gaussian_blur(shape, layout):
    pytest.importorskip("nvidia.dali")
    x = RNG.integers(0, 256, shape, dtype=np.uint8)
    for kw in ({"sigma": 1.0}, {"window_size": 5}, {"sigma": 1.3, "dtype": FLOAT}):
        ours, ref = run("gaussian_blur", x, layout, **kw), dali("gaussian_blur", x, layout, **kw)
        assert ours.dtype == ref.dtype
        assert np.abs(ours.astype(np.float64) - ref).max() <= (1e-4 if "dtype" in kw else 1)


@pytest.mark.dali
def test_dali_grid_mask_water_sphere():
    pytest.importorskip("nvidia.dali")
    kw = {"tile": 16, "ratio": 0.3, "angle": 0.7, "shift_x": 3.0, "shift_y": -5.0}
    assert np.array_equal(run("grid_mask", IMG, **kw), dali("grid_mask", IMG, **kw))
    wave = {"ampl_x": 3.0, "ampl_y": 5.0, "freq_x": 0.3, "freq_y": 0.2, "phase_x": 1.0}
    assert np.array_equal(run("water", IMG, **wave), dali("water", IMG, **wave))
    assert np.array_equal(run("sphere", IMG), dali("sphere", IMG))
    lin = {"interp_type": INTERP_LINEAR, "fill_value": 3.0}
    assert np.abs(run("sphere", IMG, **lin).astype(int) - dali("sphere", IMG, **lin)).max() <= 1


@pytest.mark.dali
def test_dali_noise_distributions():
    pytest.importorskip("nvidia.dali")
    x = np.full((150, 150, 3), 100, np.uint8)
    for op, kw in (
        ("noise_gaussian", {"stddev": 10.0, "mean": 2.0}),
        ("noise_shot", {}),
        ("noise_shot", {"factor": 0.5}),
    ):
        ours = run(op, x, **kw).astype(np.float64)
        ref = dali(op.replace("_", ".", 1), x, **kw).astype(np.float64)
        assert abs(ours.mean() - ref.mean()) < 1.0 and abs(ours.std() / ref.std() - 1) < 0.05
    ours = run("noise_salt_and_pepper", x, prob=0.3)
    ref = dali("noise.salt_and_pepper", x, prob=0.3)
    assert abs((ours != 100).mean() - (ref != 100).mean()) < 0.02


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_cached_displacements_equal_the_direct_remap(channels):
    from headrace.backends.shared.common import sphere_points, water_points

    x = np.random.default_rng(channels).integers(0, 256, (37, 53, channels), np.uint8)
    wave = (10.0, 6.0, 0.05, 0.08, 0.3, 1.1)
    for interp in ("nn", "linear"):
        for _ in range(2):  # the second call reads the cached maps
            got = F.water(x, "HWC", wave=wave, fill_value=9.0, interp=interp)
            assert np.array_equal(got, F.remap(x, *water_points(37, 53, wave), 9.0, interp))
            got = F.sphere(x, "HWC", fill_value=3.0, interp=interp)
            assert np.array_equal(got, F.remap(x, *sphere_points(37, 53), 3.0, interp))


def test_grid_mask_zeroes_float_pixels_to_positive_zero_and_keeps_the_rest_bit_for_bit():
    x = np.random.default_rng(0).normal(size=(20, 30, 3)).astype(np.float32)
    x[0, 0, 0], x[5, 5, 1] = np.nan, -0.0
    params = {"tile": 6, "ratio": 0.5, "angle": 0.4, "shift_x": 1.0, "shift_y": 2.0}
    got = F.grid_mask(x, "HWC", **params)
    keep = F.grid_keep_mask(20, 30, **params)[..., None]
    want = np.where(keep, x, np.float32(0))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
