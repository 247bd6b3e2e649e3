"""rotate / warp_affine kernels: canvas rule, closed forms, OpenCV, torch parity and DALI."""

from __future__ import annotations

import numpy as np
import pytest

from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace.backends.cpu import warp as W
from headrace.ops._warp_params import rotate_params, rotated_canvas_size, warp_affine_params
from headrace.types import FLOAT, INTERP_CUBIC, INTERP_NN

torch = pytest.importorskip("torch")
from headrace.backends.torch import warp as TW  # noqa: E402

RNG = np.random.default_rng(99)
IMG = RNG.integers(0, 256, (21, 30, 3), dtype=np.uint8)


def run(op, x, layout="HWC", backend="cpu", **kw):
    params = rotate_params if op == "rotate" else warp_affine_params
    p = params(x.shape, layout, x.dtype, **kw)
    if backend == "cpu":
        out = getattr(W, op)(x, layout, **p.kwargs)
    else:
        out = getattr(TW, op)(torch.from_numpy(x.copy()), layout, **p.kwargs).numpy()
    assert out.shape == p.shape and out.dtype == p.dtype
    return out


def dali(op, x, layout="HWC", **kw):
    ndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    return np.asarray(getattr(ndd, op)(ndd.as_tensor(x, layout=layout), **kw))


@pytest.mark.parametrize(
    ("h", "w", "angle", "expect"),
    [
        (30, 20, 90.0, (20, 30)),
        (21, 30, 0.0, (21, 30)),
        (10, 10, 30.0, (14, 14)),
        (33, 18, 45.0, (38, 37)),
        (11, 10, 180.0, (11, 10)),
        (7, 8, -90.0, (8, 7)),
    ],
)
def test_canvas_size_rule(h, w, angle, expect):
    assert rotated_canvas_size(h, w, angle) == expect


def test_canvas_keeps_parity_of_dominant_side():
    for angle in np.linspace(-170, 170, 35):
        ho, wo = rotated_canvas_size(21, 30, float(angle))
        dominant_h = abs(np.cos(np.radians(angle))) >= abs(np.sin(np.radians(angle)))
        assert ho % 2 == (21 if dominant_h else 30) % 2
        assert wo % 2 == (30 if dominant_h else 21) % 2


@pytest.mark.parametrize("backend", ["cpu", "torch"])
def test_right_angle_rotations_are_exact(backend):
    assert np.array_equal(run("rotate", IMG, backend=backend, angle=90.0), np.rot90(IMG))
    assert np.array_equal(run("rotate", IMG, backend=backend, angle=-90.0), np.rot90(IMG, -1))
    assert np.array_equal(run("rotate", IMG, backend=backend, angle=180.0), IMG[::-1, ::-1])


def test_rotate_keep_size_size_and_fill():
    out = run("rotate", IMG, angle=45.0, keep_size=True, fill_value=7.0)
    assert out.shape == IMG.shape and np.all(out[0, 0] == 7)
    assert run("rotate", IMG, angle=10.0, size=[13.9, 17.2]).shape == (13, 17, 3)
    # without fill_value, the border is repeated: corners are not filled with zeros
    clamp = run("rotate", np.full((9, 9, 1), 200, np.uint8), angle=30.0)
    assert np.all(clamp == 200)


def test_warp_affine_translation_and_inverse_map():
    m = [[1.0, 0.0, 3.0], [0.0, 1.0, 2.0]]  # dst(x, y) = src(x + 3, y + 2)
    out = run("warp_affine", IMG, matrix=m, fill_value=0.0)
    assert np.array_equal(out[:-2, :-3], IMG[2:, 3:])
    assert np.all(out[-2:] == 0)
    back = run("warp_affine", IMG, matrix=[[1, 0, -3], [0, 1, -2]], inverse_map=False)
    assert np.array_equal(back, out * 0 + run("warp_affine", IMG, matrix=m))


def test_warp_affine_linear_matches_closed_form_float():
    x = np.tile(np.arange(30, dtype=np.float32), (21, 1))[..., None]  # value = column index
    out = run("warp_affine", x, matrix=[[0.5, 0.0, 2.25], [0.0, 1.0, 0.0]], size=[5, 20])
    expect = 0.5 * (np.arange(20) + 0.5) + 2.25 - 0.5  # source centre coordinate
    np.testing.assert_allclose(out[2, :, 0], expect, atol=0.04)


def test_sequences_and_dtype():
    seq = np.stack([IMG, IMG[::-1].copy()])
    out = run("rotate", seq, "FHWC", angle=20.0, dtype=FLOAT)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0], run("rotate", IMG, angle=20.0, dtype=FLOAT))
    many = RNG.integers(0, 256, (12, 15, 6), dtype=np.uint8)  # > 4 channels for OpenCV
    out = run("rotate", many, angle=33.0)
    np.testing.assert_array_equal(out[..., 3:], run("rotate", many[..., 3:].copy(), angle=33.0))


def test_validation():
    with pytest.raises(InvalidArgumentError, match="nearest and linear"):
        rotate_params(IMG.shape, "HWC", IMG.dtype, angle=1.0, interp_type=INTERP_CUBIC)
    with pytest.raises(InvalidArgumentError, match="6 finite"):
        warp_affine_params(IMG.shape, "HWC", IMG.dtype, matrix=[1, 0, 0])
    with pytest.raises(InvalidArgumentError, match="singular"):
        warp_affine_params(IMG.shape, "HWC", IMG.dtype, matrix=[0] * 6, inverse_map=False)
    with pytest.raises(ShapeError, match="HWC"):
        rotate_params((3, 21, 30), "CHW", IMG.dtype, angle=1.0)


@pytest.mark.parametrize("interp", [None, INTERP_NN])
def test_torch_matches_cpu(interp):
    kw = {} if interp is None else {"interp_type": interp}
    for angle in (17.0, -71.5, 133.0):
        a = run("rotate", IMG, angle=angle, fill_value=3.0, **kw)
        b = run("rotate", IMG, backend="torch", angle=angle, fill_value=3.0, **kw)
        assert np.abs(a.astype(int) - b).max() <= (255 if interp else 1)
        assert (a != b).mean() < 0.01
    f = IMG.astype(np.float32)
    m = [[0.9, 0.13, 2.7], [-0.11, 1.07, -1.3]]
    np.testing.assert_allclose(
        run("warp_affine", f, matrix=m),
        run("warp_affine", f, backend="torch", matrix=m),
        atol=0.02,
    )


@pytest.mark.dali
def test_dali_rotate_shapes_and_pixels():
    pytest.importorskip("nvidia.dali")
    rng = np.random.default_rng(5)
    for _ in range(12):
        h, w = (int(v) for v in rng.integers(5, 40, 2))
        x = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        angle = float(rng.uniform(-360, 360))
        for kw in ({}, {"fill_value": 9.0}, {"interp_type": INTERP_NN}):
            ref = dali("rotate", x, angle=angle, **kw)
            ours = run("rotate", x, angle=angle, **kw)
            assert ours.shape == ref.shape
            if kw.get("interp_type") == INTERP_NN:  # float rounding at exact ties may differ
                assert (ours != ref).any(-1).mean() < 0.02
            else:
                assert np.abs(ours.astype(int) - ref).max() <= 1
    for angle in (45.0, -45.0, 135.0, 225.0):  # float32 tie-breaking of the parity rule
        x = np.zeros((33, 18, 1), np.uint8)
        assert run("rotate", x, angle=angle).shape == dali("rotate", x, angle=angle).shape


@pytest.mark.dali
def test_dali_warp_affine():
    pytest.importorskip("nvidia.dali")
    m = np.array([[0.9, 0.13, 2.7], [-0.11, 1.07, -1.3]], np.float32)
    for kw in ({}, {"inverse_map": False}, {"size": [20, 40]}, {"fill_value": 7.0}):
        ref = dali("warp_affine", IMG, matrix=m, **kw)
        ours = run("warp_affine", IMG, matrix=m, **kw)
        assert ours.shape == ref.shape and np.abs(ours.astype(int) - ref).max() <= 1


@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("interp", ["linear", "nn"])
def test_warp_perspective_interleaved_path_equals_the_planar_one(channels, interp):
    from headrace.backends.cpu.experimental import warp_perspective

    x = np.random.default_rng(channels).integers(0, 256, (41, 57, channels), np.uint8)
    m = np.array([[1.0, 0.05, -3.0], [0.02, 0.95, 2.0], [1e-4, 0.0, 1.0]])
    kw = {"matrix": m, "out_hw": (39, 61), "border": "constant", "fill": (7.0, 8.0, 9.0, 10.0),
          "interp": interp}  # fmt: skip
    hwc = warp_perspective(x, "HWC", perm=(2, 0, 1), **kw)
    chw = warp_perspective(np.ascontiguousarray(x.transpose(2, 0, 1)), "CHW", perm=(0, 1, 2), **kw)
    assert hwc.shape == (39, 61, channels)
    assert np.array_equal(hwc, chw.transpose(1, 2, 0))
