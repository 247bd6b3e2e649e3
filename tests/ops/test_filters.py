"""Blur, Laplacian, grid mask, displacement, jitter and noise operators through the public API."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from tests._helpers.contract import host
from tests._helpers.dali_oracle import dali_ndd, dali_run, max_diff

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace.ops import filters as F
from headrace.ops import noise as N

RNG = np.random.default_rng(11)
RAGGED = [RNG.integers(0, 256, s, dtype=np.uint8) for s in ((12, 15, 3), (20, 9, 3), (16, 16, 3))]
RNGS = ndd.random.RNG


def per_sample(*values: float, dtype: type = np.float32) -> ndd.Batch:
    return ndd.batch([np.asarray(v, dtype) for v in values])


# ----------------------------------------------------------------------------- contract
# The contract cases (check_op) of these operators are rows of tests/_helpers/op_table.py.


def test_layoutless_blur_treats_every_axis_as_spatial():
    # without a layout every axis is spatial, channels included (as the reference)
    x = np.zeros((5, 5, 3), np.float32)
    x[2, 2, 1] = 1.0
    y = np.asarray(F.gaussian_blur(ndd.tensor(x), sigma=1.0))
    assert y[2, 2, 0] > 0 and F.gaussian_blur(ndd.tensor(x), sigma=1.0).layout is None


# ------------------------------------------------------------------------- closed forms


def test_gaussian_blur_matches_opencv():
    x = RAGGED[0].astype(np.float32)
    out = np.asarray(F.gaussian_blur(ndd.tensor(x, layout="HWC"), sigma=[1.2, 0.7]))
    ref = cv2.GaussianBlur(x, (7, 9), sigmaX=0.7, sigmaY=1.2, borderType=cv2.BORDER_REFLECT_101)
    np.testing.assert_allclose(out, ref, atol=1e-3)


def test_grid_mask_closed_form():
    x = np.ones((1, 8, 1), np.uint8)
    out = np.asarray(F.grid_mask(ndd.tensor(x, layout="HWC"), tile=4, ratio=0.25))
    # keep where frac(x / 4) >= 0.25 (row 0: the y test never passes first)
    assert out.ravel().tolist() == [0, 1, 1, 1, 0, 1, 1, 1]


def test_displacements_identity_and_fill():
    b = ndd.batch(RAGGED, layout="HWC")
    for o, i in zip(host(F.water(b, ampl_x=0.0, ampl_y=0.0)), RAGGED):
        np.testing.assert_array_equal(o, i)
    far = host(F.water(b, ampl_x=0.0, ampl_y=0.0, phase_x=0.0, freq_x=0.0, fill_value=9.0))
    assert all(np.array_equal(o, i) for o, i in zip(far, RAGGED))
    shifted = np.asarray(
        F.water(ndd.tensor(RAGGED[0], layout="HWC"), ampl_x=100.0, ampl_y=0.0, phase_x=1.5,
                freq_x=0.0, fill_value=9.0)
    )  # fmt: skip
    assert np.all(shifted == 9)
    s = np.asarray(F.sphere(ndd.tensor(np.full((9, 9, 1), 4, np.uint8))))
    assert s[4, 4, 0] == 4 and s[0, 0, 0] == 0


def test_mask_passes_samples_through_and_keeps_draws_aligned():
    b = ndd.batch(RAGGED, layout="HWC")
    a = host(F.jitter(b, nDegree=4, rng=RNGS(5)))
    m = host(F.jitter(b, nDegree=4, mask=per_sample(0, 1, 1, dtype=np.int32), rng=RNGS(5)))
    np.testing.assert_array_equal(m[0], RAGGED[0])
    assert not np.array_equal(a[0], RAGGED[0])
    np.testing.assert_array_equal(m[1], a[1])
    np.testing.assert_array_equal(m[2], a[2])


# ------------------------------------------------------------------------- randomness


RANDOM_OPS = [
    (N.gaussian, {"stddev": 10.0}),
    (N.salt_and_pepper, {"prob": 0.3}),
    (N.shot, {}),
    (F.jitter, {"nDegree": 3}),
]


@pytest.mark.parametrize(("op", "args"), RANDOM_OPS)
def test_random_ops_reproducible_across_devices_and_modes(op, args):
    b = ndd.batch(RAGGED, layout="HWC")
    rng = RNGS(123)
    ref = host(op(b, rng=rng.clone(), **args))
    again = host(op(b, rng=rng.clone(), **args))
    gpu = host(op(b.gpu(), rng=rng.clone(), **args))
    with ndd.EvalMode.deferred:
        deferred = host(op(b, rng=rng.clone(), **args))
    for r, a, g, d in zip(ref, again, gpu, deferred):
        np.testing.assert_array_equal(r, a)
        np.testing.assert_array_equal(r, g)
        np.testing.assert_array_equal(r, d)
    nxt = host(op(b, rng=rng, **args)), host(op(b, rng=rng, **args))
    assert not np.array_equal(nxt[0][0], nxt[1][0]), "consecutive calls must differ"
    assert not np.array_equal(ref[0][:9, :9], ref[2][:9, :9]), "samples must differ"


def test_noise_statistics_and_per_sample_arguments():
    flat = ndd.batch([np.full((100, 100, 3), 100, np.uint8)] * 3, layout="HWC")
    g = host(N.gaussian(flat, mean=per_sample(0, 5, 0), stddev=per_sample(1, 4, 20), rng=RNGS(1)))
    for o, (mu, sd) in zip(g, [(100, 1), (105, 4), (100, 20)]):
        assert abs(o.mean() - mu) < 0.3 and abs(o.std() - sd) < 0.05 * sd + 0.1
    sp = host(N.salt_and_pepper(flat, prob=per_sample(0.1, 0.5, 0.0), rng=RNGS(2)))
    for o, p in zip(sp, [0.1, 0.5, 0.0]):
        hit = (o != 100).all(-1)
        assert abs(hit.mean() - p) < 0.02 and ((o == 0) | (o == 255) | (o == 100)).all()
        assert np.array_equal((o != 100).any(-1), hit), "a pixel is replaced in every channel"
    pc = host(N.salt_and_pepper(flat, prob=0.5, per_channel=True, rng=RNGS(3)))[0]
    assert ((pc != 100).any(-1) & ~(pc != 100).all(-1)).mean() > 0.3
    custom = host(N.salt_and_pepper(flat, prob=1.0, salt_val=200, pepper_val=7, rng=RNGS(4)))[0]
    assert set(np.unique(custom).tolist()) == {7, 200}
    sh = host(N.shot(flat, factor=per_sample(12, 2, 0), rng=RNGS(5)))
    for o, f in zip(sh, [12, 2, 0]):
        assert abs(o.mean() - 100) < 1 and abs(o.var() - 100 * f) < 0.05 * 100 * f + 1e-9


def test_jitter_offsets_bounded():
    x = np.arange(30 * 30, dtype=np.float32).reshape(30, 30, 1)
    out = np.asarray(F.jitter(ndd.tensor(x, layout="HWC"), nDegree=2, rng=RNGS(9)))
    dy, dx = np.divmod(out[..., 0].astype(int), 30)
    yy, xx = np.mgrid[0:30, 0:30]
    assert set(np.unique(dy - yy)) <= {-1, 0, 1} and set(np.unique(dx - xx)) <= {-1, 0, 1}
    assert len(np.unique(dx - xx)) > 1


# ------------------------------------------------------------------------------- DALI


@pytest.mark.dali
@pytest.mark.parametrize(
    ("name", "op", "args", "tol"),
    [
        ("gaussian_blur", F.gaussian_blur, {"sigma": 1.3}, 1),
        ("gaussian_blur", F.gaussian_blur, {"window_size": [3, 7]}, 1),
        ("grid_mask", F.grid_mask, {"tile": 5, "ratio": 0.4, "angle": 0.5, "shift_y": 2.0}, 0),
        ("water", F.water, {"ampl_x": 4.0, "ampl_y": 2.0, "phase_y": 1.0}, 0),
        ("water", F.water, {"interp_type": ndd.types.INTERP_LINEAR, "fill_value": 50.0}, 1),
        ("sphere", F.sphere, {}, 0),
    ],
)
def test_matches_dali(name, op, args, tol):
    ref = dali_run(name, RAGGED, layout="HWC", **args)
    out = host(op(ndd.batch(RAGGED, layout="HWC"), **args))
    assert max_diff(out, ref) <= tol


@pytest.mark.dali
def test_per_sample_arguments_match_dali():
    tiles, sigmas = [3, 8, 5], [0.6, 2.0, 1.1]
    ref = dali_run("grid_mask", RAGGED, layout="HWC", tile=tiles, per_sample=("tile",))
    out = host(
        F.grid_mask(ndd.batch(RAGGED, layout="HWC"), tile=per_sample(*tiles, dtype=np.int32))
    )
    assert max_diff(out, ref) == 0
    ref = dali_run("gaussian_blur", RAGGED, layout="HWC", sigma=sigmas, per_sample=("sigma",))
    out = host(F.gaussian_blur(ndd.batch(RAGGED, layout="HWC"), sigma=per_sample(*sigmas)))
    assert max_diff(out, ref) <= 1


LAPLACIAN_CASES = [
    {},
    {"window_size": 5},
    {"window_size": [3, 9]},
    {"window_size": 7, "smoothing_size": 1},
    {"window_size": 5, "smoothing_size": [3, 7]},
    {"scale": 0.37},
    {"scale": [0.5, 2.0]},
    {"normalized_kernel": True},
    {"window_size": 9, "normalized_kernel": True},
    {"window_size": [5, 3], "smoothing_size": 1, "normalized_kernel": True},
    {"window_size": 23},
]


@pytest.mark.dali
@pytest.mark.parametrize("float_out", [False, True], ids=["uint8", "float32"])
@pytest.mark.parametrize("args", LAPLACIAN_CASES, ids=str)
def test_laplacian_matches_dali(args, float_out):
    # the float32 results differ from DALI's by float32 summation order only
    small = [RNG.integers(0, 256, (3, 4, 3), dtype=np.uint8)]  # windows wider than the image
    ref_dt, dt = ({"dtype": dali_ndd().float32}, {"dtype": ndd.float32}) if float_out else ({}, {})
    ref = dali_run("laplacian", RAGGED + small, layout="HWC", **args, **ref_dt)
    out = host(F.laplacian(ndd.batch(RAGGED + small, layout="HWC"), **args, **dt))
    assert all(o.dtype == (np.float32 if float_out else np.uint8) for o in out)
    peak = max(float(np.abs(r).max()) for r in ref)
    assert max_diff(out, ref) <= (1e-6 * peak if float_out else 0)


@pytest.mark.dali
@pytest.mark.parametrize(
    ("layout", "samples", "args"),
    [
        ("CHW", [r.transpose(2, 0, 1).copy() for r in RAGGED], {"window_size": [3, 5]}),
        (None, [r[..., 0].copy() for r in RAGGED], {"smoothing_size": 3, "window_size": 5}),
        ("HW", [r[..., 0].astype(np.int16) * 3 - 300 for r in RAGGED], {"scale": 0.3}),
        ("DHWC", [RNG.random((5, 6, 7, 2), np.float32)], {"window_size": [3, 5, 7]}),
        ("FHWC", [RNG.random((2, 6, 7, 2), np.float32)], {"smoothing_size": [1, 5]}),
    ],
    ids=["CHW", "no-layout", "int16", "DHWC", "FHWC"],
)
def test_laplacian_layouts_and_types_match_dali(layout, samples, args):
    ref = dali_run("laplacian", samples, layout=layout, **args)
    out = host(F.laplacian(ndd.batch(samples, layout=layout), **args))
    peak = max(float(np.abs(r).max()) for r in ref)
    assert max_diff(out, ref) <= 1e-6 * peak


@pytest.mark.dali
def test_laplacian_per_sample_arguments_match_dali():
    sizes, scales = [3, 5, 7], [[0.5, 2.0], [1.0, 1.0], [0.25, 0.1]]
    ref = dali_run(
        "laplacian",
        RAGGED,
        layout="HWC",
        window_size=sizes,
        scale=scales,
        per_sample=("window_size", "scale"),
    )
    b = ndd.batch(RAGGED, layout="HWC")
    out = host(
        F.laplacian(b, window_size=per_sample(*sizes, dtype=np.int32), scale=per_sample(*scales))
    )
    assert max_diff(out, ref) == 0


@pytest.mark.dali
def test_noise_distributions_match_dali():
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    x = np.full((120, 120, 3), 80, np.uint8)
    cases = [
        ("noise.gaussian", N.gaussian, {"stddev": 6.0}),
        ("noise.shot", N.shot, {}),
        ("noise.salt_and_pepper", N.salt_and_pepper, {"prob": 0.2}),
    ]
    for name, op, args in cases:
        ref = dali_run(name, x, layout="HWC", rng=dndd.random.RNG(seed=1), **args).astype(float)
        out = np.asarray(op(ndd.tensor(x, layout="HWC"), rng=RNGS(1), **args)).astype(float)
        assert abs(out.mean() - ref.mean()) < 0.02 * ref.mean(), name
        assert abs(out.std() - ref.std()) < 0.05 * ref.std(), name


# ------------------------------------------------------------------------------ errors


def test_errors_name_op_argument_and_sample():
    b = ndd.batch(RAGGED, layout="HWC")
    with pytest.raises(InvalidArgumentError, match=r"gaussian_blur: sample 0: neither `sigma`"):
        F.gaussian_blur(b).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"gaussian_blur: sample 1: .*odd"):
        F.gaussian_blur(b, window_size=per_sample(3, 4, 5, dtype=np.int32)).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"grid_mask: sample 2: `tile` must be positive"):
        F.grid_mask(b, tile=per_sample(4, 4, 0, dtype=np.int32)).evaluate()
    with pytest.raises(ShapeError, match=r"water: .*HWC"):
        F.water(ndd.tensor(RAGGED[0].transpose(2, 0, 1).copy(), layout="CHW")).evaluate()
    with pytest.raises(InvalidTypeError, match=r"sphere: .*uint8 and float32"):
        F.sphere(ndd.tensor(np.zeros((4, 4, 3), np.int16), layout="HWC")).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"water: sample 0: only nearest and linear"):
        F.water(b, interp_type=ndd.types.INTERP_CUBIC).evaluate()
    with pytest.raises(ValueError, match=r"water: invalid value for argument 'interp_type'"):
        F.water(b, interp_type="bogus")
    with pytest.raises(InvalidArgumentError, match=r"noise.salt_and_pepper: sample 0: `prob`"):
        N.salt_and_pepper(b, prob=1.5).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"noise.gaussian: sample 1: `stddev`"):
        N.gaussian(b, stddev=per_sample(1, -1, 1)).evaluate()
    with pytest.raises(ValueError, match="rng"):
        N.shot(b, rng=42)
    with pytest.raises(
        InvalidArgumentError, match=r"laplacian: sample 1: `window_size` must be odd"
    ):
        F.laplacian(b, window_size=per_sample(3, 4, 5, dtype=np.int32)).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"`smoothing_size` must be odd and between 1"):
        F.laplacian(b, smoothing_size=33).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"laplacian: .*`scale` needs 1 or 2 values"):
        F.laplacian(b, scale=[1.0, 2.0, 3.0]).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"`scale` cannot be given together"):
        F.laplacian(b, scale=2.0, normalized_kernel=True).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"laplacian: .*`dtype` must be the input"):
        F.laplacian(b, dtype=ndd.int16).evaluate()
    with pytest.raises(InvalidTypeError, match=r"laplacian: .*float64 input"):
        F.laplacian(ndd.tensor(np.zeros((4, 4)), layout="HW")).evaluate()
    with pytest.raises(ShapeError, match=r"laplacian: sample 0: channels must come first or last"):
        F.laplacian(ndd.tensor(np.zeros((4, 3, 4), np.uint8), layout="HCW")).evaluate()


def test_gaussian_blur_channels_after_frames() -> None:
    """FCHW sequences (as the reference takes them): each frame blurred like a CHW image."""
    x = np.random.default_rng(0).integers(0, 256, (2, 3, 10, 12), dtype=np.uint8)
    got = ndd.gaussian_blur(ndd.tensor(x, layout="FCHW"), sigma=1.0)
    want = np.stack([np.asarray(ndd.gaussian_blur(ndd.tensor(f, layout="CHW"), sigma=1.0))
                     for f in x])  # fmt: skip
    assert got.layout == "FCHW" and np.array_equal(np.asarray(got), want)
    gpu = ndd.gaussian_blur(ndd.tensor(x, layout="FCHW").gpu(), sigma=1.0)
    assert np.abs(np.asarray(gpu.cpu()).astype(int) - want.astype(int)).max() <= 1
