"""Geometry kernels: parameter math, CPU kernels, torch kernels, and DALI 2.4 as an oracle."""

from __future__ import annotations

import random

import numpy as np
import pytest

from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace._core.saturate import saturate
from headrace._dispatch.planned import plan_args
from headrace._dispatch.schema import REGISTRY
from headrace.backends.cpu import geometry as G
from headrace.backends.cpu import resize as R
from headrace.backends.shared.common import axis_weights
from headrace.ops import _geometry_params as P
from headrace.ops._resize_params import AxisFilter
from headrace.types import INTERP_CUBIC, INTERP_GAUSSIAN, INTERP_LANCZOS3, INTERP_NN


def plan_for(op: str, in_shape, layout, /, **kw):
    """``op``'s plan for one sample, as the operator computes it: schema defaults, then ``kw``."""
    s = REGISTRY[op]
    return s.planned.plan(tuple(in_shape), layout, None, **plan_args(op, {**s.defaults, **kw}))


def _image(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    """Smooth pattern + noise, uint8 HWC."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = 127 + 60 * (np.sin(xx / 7.0) * np.cos(yy / 5.0))[..., None]
    return np.clip(base + rng.normal(0, 30, (h, w, c)), 0, 255).astype(np.uint8)


def _run_resize(x: np.ndarray, layout: str = "HWC", **kw) -> np.ndarray:
    return R.resize(x, layout, **plan_for("resize", x.shape, layout, **kw).kwargs)


def _generic(x: np.ndarray, layout: str = "HWC", **kw) -> np.ndarray:
    k = plan_for("resize", x.shape, layout, **kw).kwargs
    res = R._generic(x, layout, k["out_size"], k["roi_lo"], k["roi_hi"], k["filters"])
    return saturate(res, x.dtype)


# ----------------------------------------------------------------------------- resize sizes


@pytest.mark.parametrize(
    ("shape", "kw", "expected"),
    [
        ((480, 640, 3), {"resize_shorter": 256}, (256, 341, 3)),
        ((640, 480, 3), {"resize_longer": 320}, (320, 240, 3)),
        ((720, 1280, 3), {"size": [480, 640], "mode": "not_larger"}, (360, 640, 3)),
        ((480, 640, 3), {"size": [1080, 1920], "mode": "not_smaller"}, (1440, 1920, 3)),
        ((600, 1200, 3), {"size": 800, "mode": "not_smaller", "max_size": 1400}, (700, 1400, 3)),
        ((100, 200, 3), {"size": [50, 0]}, (50, 100, 3)),
        ((100, 200, 3), {"size": [50, 0], "mode": "stretch"}, (50, 200, 3)),
        ((100, 200, 3), {"resize_x": 50}, (25, 50, 3)),
        ((100, 200, 3), {"resize_x": -50, "resize_y": 10}, (10, 50, 3)),
        ((10, 10, 1), {"size": [2.5, 4.5]}, (3, 5, 1)),
        ((3, 100, 200), {"size": [50, 40]}, (3, 50, 40)),
        ((5, 100, 200, 3), {"size": [50, 40]}, (5, 50, 40, 3)),
        ((20, 40, 60, 1), {"resize_z": 10}, (10, 20, 30, 1)),
    ],
)
def test_resize_output_shape_closed_forms(shape, kw, expected):
    layout = {3: "HWC", 4: "FHWC"}[len(shape)]
    if shape[0] == 3:
        layout = "CHW"
    if "resize_z" in kw:
        layout = "DHWC"
    assert plan_for("resize", shape, layout, **kw).shape == expected


def test_resize_rejects_conflicting_size_arguments():
    with pytest.raises(InvalidArgumentError, match="exactly one"):
        plan_for("resize", (10, 10, 3), "HWC", size=[5, 5], resize_shorter=3)
    with pytest.raises(InvalidArgumentError, match="mutually exclusive"):
        plan_for("resize", (10, 10, 3), "HWC", resize_shorter=3, mode="stretch")
    with pytest.raises(InvalidArgumentError, match="together"):
        plan_for("resize", (10, 10, 3), "HWC", size=[5, 5], roi_start=[0, 0])


def test_subpixel_scale_keeps_fractional_scale_in_roi():
    plan = plan_for("resize", (10, 10, 1), "HWC", size=[5.5, 5.5])
    k = plan.kwargs
    # 5.5 -> 6 output pixels, ROI widened around the centre so the scale stays 10/5.5
    assert plan.shape == (6, 6, 1)
    np.testing.assert_allclose((k["roi_hi"][0] - k["roi_lo"][0]) / 6, 10 / 5.5, rtol=1e-6)
    off = plan_for("resize", (10, 10, 1), "HWC", size=[5.5, 5.5], subpixel_scale=False).kwargs
    assert off["roi_lo"] == (0.0, 0.0) and off["roi_hi"] == (10.0, 10.0)


# ----------------------------------------------------------------------------- resize values


def test_linear_weights_are_interpolation_and_antialias_widens_support():
    idx, c = axis_weights(4, 8, 0.0, 4.0, AxisFilter("triangular", 2.0))
    ramp = np.arange(4, dtype=np.float32)
    vals = [(c[j] * ramp[np.clip(idx[j] + np.arange(c.shape[1]), 0, 3)]).sum() for j in range(8)]
    np.testing.assert_allclose(vals, np.clip((np.arange(8) + 0.5) / 2 - 0.5, 0, 3), atol=1e-6)
    plan = plan_for("resize", (400, 400, 1), "HWC", size=[100, 100])
    assert plan.kwargs["filters"][0] == AxisFilter("triangular", 8.0)
    plain = plan_for("resize", (400, 400, 1), "HWC", size=[100, 100], antialias=False)
    assert plain.kwargs["filters"][0] == AxisFilter("triangular", 2.0)


def test_antialiased_downscale_of_constant_and_checkerboard():
    flat = np.full((64, 64, 3), 77, np.uint8)
    assert np.all(_run_resize(flat, size=[13, 17]) == 77)
    stripes = np.tile(((np.arange(64) // 2) % 2 * 255).astype(np.uint8), (8, 1))[..., None]
    smooth = _run_resize(stripes, size=[8, 32])
    aliased = _run_resize(stripes, size=[8, 32], antialias=False)
    # plain linear samples between two equal pixels: stripes survive at full contrast
    assert sorted(np.unique(aliased).tolist()) == [0, 255]
    # the antialiased triangle (weights 1/8, 3/8, 3/8, 1/8) blends in the neighbours
    assert sorted(np.unique(smooth[:, 1:-1]).tolist()) == [64, 191]


def test_nearest_neighbour_picks_dali_source_pixels():
    x = np.arange(12, dtype=np.uint8).reshape(1, 12, 1)
    out = _run_resize(x, size=[1, 4], interp_type=INTERP_NN)
    assert out.ravel().tolist() == [1, 4, 7, 10]  # floor((j + 0.5) * 3)


def test_negative_size_and_flipped_roi_mirror():
    img = _image(30, 40)
    ref = _run_resize(img, size=[15, 20])
    np.testing.assert_array_equal(_run_resize(img, size=[15, -20]), ref[:, ::-1])
    flipped = _run_resize(img, size=[15, 20], roi_start=[0, 40], roi_end=[30, 0])
    assert np.abs(flipped.astype(int) - ref[:, ::-1]).max() <= 1


@pytest.mark.parametrize(
    "kw",
    [
        {"size": [100, 133]},
        {"resize_shorter": 64},
        {"size": [400, 500]},
        {"size": [100, 133], "antialias": False},
        {"size": [90, 70], "roi_start": [10.5, 20.25], "roi_end": [150.7, 200.3]},
        {"size": [100, 133], "interp_type": INTERP_CUBIC},
        {"size": [100, 133], "interp_type": INTERP_LANCZOS3},
    ],
)
def test_fast_paths_agree_with_dali_coefficients(kw):
    img = _image(217, 283)
    fast, exact = _run_resize(img, **kw), _generic(img, **kw)
    diff = np.abs(fast.astype(int) - exact)
    assert diff.max() <= 2 and diff.mean() < 0.3


def test_resize_float_and_layouts_agree():
    img = _image(60, 80)
    hwc = _run_resize(img.astype(np.float32), size=[30, 50])
    chw = _run_resize(
        np.ascontiguousarray(img.transpose(2, 0, 1)).astype(np.float32), "CHW", size=[30, 50]
    )
    np.testing.assert_allclose(chw.transpose(1, 2, 0), hwc, atol=1e-3)
    seq = _run_resize(np.stack([img, img[::-1]]), "FHWC", size=[30, 50])
    np.testing.assert_array_equal(seq[0], _run_resize(img, size=[30, 50]))
    out = _run_resize(img, size=[30, 50], dtype=np.float32)
    assert out.dtype == np.float32 and np.abs(out - hwc).max() < 1e-3


def test_resize_3d_volume_matches_per_axis_reference():
    vol = np.random.default_rng(3).random((8, 10, 12, 1), dtype=np.float32)
    out = _run_resize(vol, "DHWC", size=[4, 5, 6], antialias=False)
    # antialias off, 2x shrink: linear sampling at the midpoint of each 2x2x2 block
    ref = vol.reshape(4, 2, 5, 2, 6, 2, 1).mean(axis=(1, 3, 5))
    np.testing.assert_allclose(out, ref, atol=1e-5)


def test_resize_does_not_modify_input():
    img = _image(50, 60)
    before = img.copy()
    _run_resize(img, size=[20, 20])
    _run_resize(img, size=[20, 20], interp_type=INTERP_GAUSSIAN)
    np.testing.assert_array_equal(img, before)


# ----------------------------------------------------------------------------- crop


def test_crop_window_rounding_and_policies():
    assert P.crop_window("crop", (20, 30), (11, 7), (0.77, 0.3)) == ([7, 7], [11, 7])
    assert P.crop_window("crop", (20, 30), (11, 7), (0.77, 0.3), "truncate") == ([6, 6], [11, 7])
    assert P.crop_window("crop", (20, 30), (10.5, 7.5), (0.5, 0.5)) == ([5, 12], [10, 7])
    with pytest.raises(ShapeError, match="out of bounds"):
        plan_for("crop", (4, 4, 3), "HWC", crop=(6, 6))
    trimmed = plan_for("crop", (4, 4, 3), "HWC", crop=(6, 6), out_of_bounds_policy="trim_to_shape")
    assert trimmed.shape == (4, 4, 3)


def test_crop_pads_with_per_channel_fill():
    img = np.full((4, 4, 3), 7, np.uint8)
    plan = plan_for(
        "crop", img.shape, "HWC", crop=(7, 6), out_of_bounds_policy="pad", fill_values=[1, 2, 3]
    )
    out = G.crop(img, "HWC", **plan.kwargs)
    assert out.shape == (7, 6, 3)
    assert out[:, :, 0].tolist()[0] == [1] * 6 and out[2, 1:5, 0].tolist() == [7] * 4
    assert out[0, 0].tolist() == [1, 2, 3] and (out[2:6, 1:5] == 7).all()


def test_crop_chw_and_sequence():
    x = np.arange(2 * 3 * 10 * 12, dtype=np.float32).reshape(2, 3, 10, 12)
    plan = plan_for("crop", x.shape, "FCHW", crop=(4, 6), crop_pos_x=0, crop_pos_y=1)
    np.testing.assert_array_equal(G.crop(x, "FCHW", **plan.kwargs), x[:, :, 6:10, 0:6])


# ----------------------------------------------------------------------------- CMN


def _cmn(x, **kw):
    return G.crop_mirror_normalize(
        x, "HWC", **plan_for("crop_mirror_normalize", x.shape, "HWC", **kw).kwargs
    )


def test_cmn_matches_numpy_chain():
    img = _image(256, 341)
    mean, std = [123.7, 116.3, 103.5], [58.4, 57.1, 57.4]
    for mirror in (0, 1):
        out = _cmn(img, crop=(224, 224), mean=mean, std=std, mirror=mirror)
        c = img[16:240, 59:283]
        c = c[:, ::-1] if mirror else c
        ref = ((c.astype(np.float32) - mean) / np.float32(std)).transpose(2, 0, 1)
        assert out.shape == (3, 224, 224) and out.dtype == np.float32
        np.testing.assert_allclose(out, ref, atol=1e-4)


@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int16, np.uint8])
def test_cmn_table_path_equals_the_closed_form(channels, dtype):
    """Images large enough for OpenCV's table lookup (every channel at once, then split into
    the output planes for CHW): bit-identical to saturate(x * mul + add), mirrored, padded and
    in either output layout."""
    rng = np.random.default_rng(channels)
    img = rng.integers(0, 256, (80, 90, channels), dtype=np.uint8)
    mean, std = rng.uniform(0, 255, channels), rng.uniform(20, 80, channels)
    scale, shift = (1.0, 0.0) if np.dtype(dtype).kind == "f" else (20.0, 128.0)
    mul = (np.float32(scale) / np.float32(std)).astype(np.float32)
    add = (np.float32(shift) - np.float32(mean) * mul).astype(np.float32)
    for mirror in (0, 1):
        src = img[:, ::-1] if mirror else img
        ref = saturate(src.astype(np.float32) * mul + add, np.dtype(dtype))
        for pad in (False, True):
            for layout in ("CHW", "HWC"):
                kw = dict(mirror=mirror, dtype=dtype, pad_output=pad, output_layout=layout)
                out = _cmn(img, mean=list(mean), std=list(std), scale=scale, shift=shift, **kw)
                if layout == "HWC":
                    out = out.transpose(2, 0, 1)
                np.testing.assert_array_equal(out[:channels], ref.transpose(2, 0, 1))
                # pad_output: up to a power of two channels, 0 there (policy "error")
                want = 1 << (channels - 1).bit_length() if pad else channels
                assert out.shape[0] == want and (out[channels:] == 0).all()


def test_cmn_dtypes_layout_and_pad_output():
    img = np.full((4, 4, 3), 7, np.uint8)
    out = _cmn(img, mean=[1, 2, 3], std=2, pad_output=True)
    assert out.shape == (4, 4, 4) and out[:, 0, 0].tolist() == [3.0, 2.5, 2.0, 0.0]
    u8 = _cmn(
        np.arange(12, dtype=np.uint8).reshape(1, 12, 1), std=2, dtype=np.uint8, output_layout="HWC"
    )
    assert u8.ravel().tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6]  # half away from zero
    f16 = _cmn(img, mean=1, dtype=np.float16, output_layout="HWC")
    assert f16.dtype == np.float16 and f16.shape == (4, 4, 3) and (f16 == 6).all()


def test_cmn_out_of_bounds_fill_is_not_normalized():
    img = np.full((4, 4, 3), 9, np.uint8)
    out = _cmn(
        img, crop=(6, 6), mean=1, std=2, out_of_bounds_policy="pad", fill_values=[5, 6, 7], mirror=1
    )
    assert out.shape == (3, 6, 6)
    assert out[:, 0, 0].tolist() == [5.0, 6.0, 7.0] and (out[:, 1:5, 1:5] == 4).all()


def test_cmn_float_input_uses_generic_path():
    img = _image(20, 30).astype(np.float32)
    out = _cmn(img, crop=(10, 10), mean=[1, 2, 3], std=[2, 3, 4], mirror=1)
    ref = ((img[5:15, 10:20][:, ::-1] - [1, 2, 3]) / np.float32([2, 3, 4])).transpose(2, 0, 1)
    np.testing.assert_allclose(out, ref, rtol=1e-6)


# ----------------------------------------------------------------------------- RRC


def test_random_crop_window_properties_and_determinism():
    for seed in range(50):
        rng = np.random.default_rng(seed)
        (y, x), (h, w) = P.random_crop_window(rng, (300, 400))
        assert 0 <= y <= 300 - h and 0 <= x <= 400 - w and h > 0 and w > 0
        area = h * w / (300 * 400)
        assert 0.07 <= area <= 1.01 and 0.7 <= w / h <= 1.45
        rng2 = np.random.default_rng(seed)
        assert P.random_crop_window(rng2, (300, 400)) == ((y, x), (h, w))


def test_random_crop_window_draws_fixed_amount_and_falls_back():
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    P.random_crop_window(a, (10, 1000), num_attempts=7)
    b.random((7, 4))
    assert a.random() == b.random()
    # an aspect ratio that can never fit a 10x1000 image forces the centred fallback
    (y, x), (h, w) = P.random_crop_window(
        np.random.default_rng(0), (10, 1000), random_area=(0.9, 1.0), random_aspect_ratio=(1, 2)
    )
    assert (h, w) == (10, 20) and (y, x) == (0, 490)


def test_random_resized_crop_kernel_equals_crop_then_resize():
    img = _image(120, 160)
    plan = P.random_resized_crop_params(
        img.shape, "HWC", window=((10, 20), (60, 80)), size=(30, 40), antialias=True
    )
    out = R.resize(img, "HWC", **plan.kwargs)
    ref = _run_resize(img, size=[30, 40], roi_start=[10, 20], roi_end=[70, 100])
    assert out.shape == (30, 40, 3) and np.abs(out.astype(int) - ref).max() <= 1


# ----------------------------------------------------------------------------- flip ... erase


def test_flip_axes_and_cv2_path():
    img = _image(5, 7)
    assert np.array_equal(
        G.flip(img, "HWC", **plan_for("flip", img.shape, "HWC").kwargs), img[:, ::-1]
    )
    both = plan_for("flip", img.shape, "HWC", horizontal=1, vertical=1)
    np.testing.assert_array_equal(G.flip(img, "HWC", **both.kwargs), img[::-1, ::-1])
    vol = np.arange(24).reshape(2, 3, 4, 1)
    dep = plan_for("flip", vol.shape, "DHWC", horizontal=0, depthwise=1)
    np.testing.assert_array_equal(G.flip(vol, "DHWC", **dep.kwargs), vol[::-1])


def test_slice_forms_give_the_same_box():
    x = np.arange(20 * 30).reshape(20, 30, 1)
    rel = plan_for("slice", x.shape, "HWC", rel_start=(0.13, 0.27), rel_shape=(0.5, 0.33))
    assert rel.kwargs["anchor"] == (5, 4, 0) and rel.shape == (7, 15, 1)
    absolute = plan_for("slice", x.shape, "HWC", start=(3, 4), shape=(5, 6))
    np.testing.assert_array_equal(G.slice(x, "HWC", **absolute.kwargs), x[4:10, 3:8])
    pos = plan_for("slice", x.shape, "HWC", anchor_input=(3, 4), shape_input=(5, 6),
                   normalized_anchor=False, normalized_shape=False)  # fmt: skip
    assert pos.kwargs == absolute.kwargs
    by_axes = plan_for("slice", x.shape, "HWC", start=(4,), end=(10,), axes=(0,))
    np.testing.assert_array_equal(G.slice(x, "HWC", **by_axes.kwargs), x[4:10])
    with pytest.raises(ShapeError, match="out of bounds"):
        plan_for("slice", x.shape, "HWC", start=(25, 0), shape=(10, 5))
    oob = {"out_of_bounds_policy": "pad", "fill_values": -1}
    padded = plan_for("slice", x.shape, "HWC", start=(25, 0), shape=(10, 5), **oob)
    out = G.slice(x, "HWC", **padded.kwargs)
    assert out.shape == (5, 10, 1) and (out[:, 5:] == -1).all() and (out[:, :5] == x[:5, 25:]).all()


def test_pad_batch_max_align_and_fill():
    plan = plan_for(
        "pad", (3, 5, 2), "HWC", axis_names="HW", align=4, batch_max_shape=(6, 5, 2), fill_value=-1
    )
    assert plan.shape == (8, 8, 2)
    out = G.pad(np.ones((3, 5, 2)), "HWC", **plan.kwargs)
    assert (out[:3, :5] == 1).all() and (out[3:] == -1).all() and (out[:, 5:] == -1).all()
    assert plan_for("pad", (3, 5, 2), "HWC", axis_names="W", shape=(3,)).shape == (3, 5, 2)


def test_paste_canvas_and_position():
    img = np.full((10, 20, 3), 9, np.uint8)
    plan = plan_for(
        "paste", img.shape, "HWC", ratio=2.0, paste_x=0.0, paste_y=1.0, fill_value=(1, 2, 3)
    )
    out = G.paste(img, "HWC", **plan.kwargs)
    assert (
        out.shape == (20, 40, 3) and (out[10:, :20] == 9).all() and out[0, 0].tolist() == [1, 2, 3]
    )
    assert plan_for(
        "paste", img.shape, "HWC", ratio=1.0, fill_value=0, min_canvas_size=50
    ).shape == (50, 50, 3)
    with pytest.raises(InvalidArgumentError, match="ratio"):
        plan_for("paste", img.shape, "HWC", ratio=0.5, fill_value=0)


def test_erase_regions_normalized_and_centered():
    x = np.ones((6, 5, 1), np.float32)
    regions = {"anchor": (1, 1, 3, 3), "shape": (1, 1, 2, 2), "axis_names": "HW"}
    plan = plan_for("erase", x.shape, "HWC", fill_value=-1, **regions)
    out = G.erase(x, "HWC", **plan.kwargs)
    assert (
        (out[..., 0] != 1).astype(int).sum() == 5
        and out[1, 1, 0] == -1
        and (out[3:5, 3:5] == -1).all()
    )
    cen = plan_for("erase", x.shape, "HWC", anchor=(0.5, 0.5), shape=(0.2, 0.4), axis_names="HW",
                   normalized=True, centered_anchor=True)  # fmt: skip
    assert cen.kwargs["boxes"] == (((2, 1, 0), (3, 3, 1)),)
    assert (x == 1).all()


# ----------------------------------------------------------------------------- torch


def test_torch_kernels_agree_with_cpu():
    torch = pytest.importorskip("torch")
    from headrace.backends.torch import geometry as TG
    from headrace.backends.torch import resize as TR

    img = _image(61, 83)
    t = torch.from_numpy(img)
    for kw in (
        {"size": [30, 40]},
        {"size": [130, 90]},
        {"resize_shorter": 20, "interp_type": INTERP_CUBIC},
    ):
        plan = plan_for("resize", img.shape, "HWC", **kw)
        got = TR.resize(t, "HWC", **plan.kwargs).numpy()
        assert np.abs(got.astype(int) - _generic(img, **kw)).max() <= 1
    nn = plan_for("resize", img.shape, "HWC", size=[40, 50], interp_type=INTERP_NN)
    np.testing.assert_array_equal(
        TR.resize(t, "HWC", **nn.kwargs).numpy(), R.resize(img, "HWC", **nn.kwargs)
    )
    plans = {
        "crop": plan_for("crop", img.shape, "HWC", crop=(70, 50), out_of_bounds_policy="pad",
                         fill_values=[1, 2, 3]),
        "flip": plan_for("flip", img.shape, "HWC", vertical=1),
        "slice": plan_for("slice", img.shape, "HWC", rel_start=(0.1, 0.2), rel_shape=(0.5, 0.5)),
        "pad": plan_for("pad", img.shape, "HWC", axis_names="HW", align=16),
        "paste": plan_for("paste", img.shape, "HWC", ratio=1.5, fill_value=(4, 5, 6)),
        "erase": plan_for("erase", img.shape, "HWC", anchor=(3, 4), shape=(10, 20),
                          axis_names="HW",
                          fill_value=(7, 8, 9)),
        "crop_mirror_normalize": plan_for(
            "crop_mirror_normalize", img.shape, "HWC", crop=(70, 50), mirror=1, mean=[1, 2, 3],
            std=[4, 5, 6],
            out_of_bounds_policy="pad", fill_values=[1, 2, 3], pad_output=True,
        ),
    }  # fmt: skip
    for name, plan in plans.items():
        ref = getattr(G, name)(img, "HWC", **plan.kwargs)
        got = getattr(TG, name)(t, "HWC", **plan.kwargs).numpy()
        assert got.shape == plan.shape == ref.shape, name
        np.testing.assert_allclose(got, ref, atol=1e-5, err_msg=name)


# ----------------------------------------------------------------------------- DALI oracle


def _dali():
    pytest.importorskip("nvidia.dali")
    import nvidia.dali.experimental.dynamic as ndd

    return ndd


@pytest.mark.dali
def test_resize_shapes_match_dali():
    ndd = _dali()
    rng = random.Random(0)
    modes = ["default", "stretch", "not_smaller", "not_larger"]
    for _ in range(120):
        h, w = rng.randint(1, 300), rng.randint(1, 300)
        kind = rng.choice(["size", "xy", "shorter", "longer"])
        kw: dict = {}
        if kind == "size":
            choices = [0, rng.randint(1, 200), rng.uniform(1, 200), -rng.randint(1, 50)]
            kw["size"] = [rng.choice(choices) for _ in range(2)]
            if rng.random() < 0.6:
                kw["mode"] = rng.choice(modes)
        elif kind == "xy":
            kw["resize_x"] = rng.uniform(1, 200)
            if rng.random() < 0.5:
                kw["resize_y"] = rng.randint(1, 200)
        else:
            kw["resize_" + kind] = rng.choice([rng.randint(1, 200), rng.uniform(1, 200)])
        if rng.random() < 0.3:
            kw["max_size"] = rng.randint(1, 300)
        if rng.random() < 0.3:
            kw.update(roi_start=[rng.random(), rng.random()], roi_end=[rng.random(), rng.random()],
                      roi_relative=True)  # fmt: skip
        if rng.random() < 0.2:
            kw["subpixel_scale"] = False
        a = np.zeros((h, w, 1), np.uint8)
        ref = np.asarray(ndd.resize(ndd.as_tensor(a, layout="HWC"), **kw)).shape
        assert plan_for("resize", a.shape, "HWC", **kw).shape == ref, kw


@pytest.mark.dali
@pytest.mark.parametrize(
    "kw",
    [
        {"size": [100, 133]},
        {"resize_shorter": 64, "antialias": False},
        {"size": [300, 500], "interp_type": INTERP_CUBIC},
        {"size": [100, 133], "interp_type": INTERP_LANCZOS3},
        {"size": [100, 133], "interp_type": INTERP_GAUSSIAN},
        {"size": [301, 507], "interp_type": INTERP_NN},
        {"size": [80, 90], "roi_start": [0.1, 0.9], "roi_end": [0.8, 0.2], "roi_relative": True},
        {"resize_x": -90, "resize_y": 70},
    ],
)
def test_resize_values_match_dali(kw):
    ndd = _dali()
    img = _image(217, 283)
    dali_kw = {k: (int(v) if k == "interp_type" else v) for k, v in kw.items()}
    ref = np.asarray(ndd.resize(ndd.as_tensor(img, layout="HWC"), **dali_kw)).astype(int)
    got = _run_resize(img, **kw)
    assert got.shape == ref.shape
    assert np.abs(got - ref).max() <= 1 and np.abs(got - ref).mean() < 0.25
    assert np.abs(_generic(img, **kw) - ref).max() <= 1


@pytest.mark.dali
def test_crop_cmn_slice_erase_match_dali():
    ndd = _dali()
    img = _image(37, 45)

    def t(a):
        return ndd.as_tensor(a, layout="HWC")

    for kw in ({"crop": (20, 30), "crop_pos_x": 0.3, "crop_pos_y": 0.77},
               {"crop": (50, 60), "out_of_bounds_policy": "pad", "fill_values": [1, 2, 3]},
               {"crop": (11.5, 7.2), "rounding": "truncate", "crop_pos_x": 0.9}):  # fmt: skip
        ref = np.asarray(ndd.crop(t(img), **kw))
        np.testing.assert_array_equal(
            G.crop(img, "HWC", **plan_for("crop", img.shape, "HWC", **kw).kwargs), ref
        )
    for kw in ({"crop": (20, 30), "mirror": 1, "mean": [10, 20, 30], "std": [2, 3, 4]},
               {"crop": (50, 60), "out_of_bounds_policy": "pad", "fill_values": [1, 2, 3],
                "mirror": 1,
                "crop_pos_x": 0.3, "mean": [100] * 3, "std": [50] * 3, "scale": 2, "shift": 1},
               {"crop": (20, 30), "pad_output": True, "output_layout": "HWC",
                "mean": 3}):  # fmt: skip
        ref = np.asarray(ndd.crop_mirror_normalize(t(img), **kw))
        np.testing.assert_allclose(_cmn(img, **kw), ref, atol=1e-5)
    for kw in (
        {"rel_start": (0.11, 0.13), "rel_end": (0.52, 0.77)},
        {"start": (3, 4), "shape": (5, 6)},
    ):
        ref = np.asarray(ndd.slice(t(img), **kw))
        np.testing.assert_array_equal(
            G.slice(img, "HWC", **plan_for("slice", img.shape, "HWC", **kw).kwargs), ref
        )
    ekw = {"anchor": (0.5, 0.5), "shape": (0.2, 0.4), "axis_names": "HW", "normalized": True,
           "centered_anchor": True, "fill_value": (1, 2, 3)}  # fmt: skip
    ref = np.asarray(ndd.erase(t(img), **ekw))
    np.testing.assert_array_equal(
        G.erase(img, "HWC", **plan_for("erase", img.shape, "HWC", **ekw).kwargs), ref
    )
    ref = np.asarray(ndd.flip(t(img), horizontal=1, vertical=1))
    np.testing.assert_array_equal(G.flip(img, "HWC", axes=(1, 0)), ref)


@pytest.mark.dali
def test_resize_crop_mirror_matches_dali():
    ndd = _dali()
    img = _image(217, 283)
    base = {"resize_shorter": 100, "crop": (64, 80)}
    for kw in (base, {**base, "mirror": 1, "crop_pos_x": 0.2}):
        ref = np.asarray(ndd.resize_crop_mirror(ndd.as_tensor(img, layout="HWC"), **kw)).astype(int)
        plan = plan_for("resize_crop_mirror", img.shape, "HWC", **kw)
        got = R.resize(img, "HWC", **plan.kwargs)
        assert got.shape == ref.shape and np.abs(got - ref).max() <= 1
