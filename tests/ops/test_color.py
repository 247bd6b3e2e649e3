"""Colour operators through the public API: contract, closed forms, DALI, errors."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from tests._helpers.contract import host
from tests._helpers.dali_oracle import dali_run, max_diff

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from headrace.ops import color as C

RNG = np.random.default_rng(7)


def images(*shapes: tuple[int, ...], dtype: type = np.uint8) -> list[np.ndarray]:
    if np.dtype(dtype).kind == "f":
        return [RNG.random(s, dtype=np.float32) for s in shapes]
    return [RNG.integers(0, 256, s, dtype=np.uint8) for s in shapes]


RAGGED = images((5, 7, 3), (9, 4, 3), (6, 6, 3))


def per_sample(*values: float) -> ndd.Batch:
    return ndd.batch([np.float32(v) for v in values])


# ----------------------------------------------------------------------------- contract
# The contract cases (check_op) of these operators are rows of tests/_helpers/op_table.py.


# ------------------------------------------------------------------------- closed forms


def test_brightness_contrast_formula_per_sample():
    b = ndd.batch(RAGGED, layout="HWC")
    bright, contrast = [0.5, 1.0, 1.7], 1.3
    out = host(C.brightness_contrast(b, brightness=per_sample(*bright), contrast=contrast))
    for x, o, br in zip(RAGGED, out, bright):
        ref = br * (128 + contrast * (x.astype(np.float64) - 128))
        assert np.abs(np.clip(np.round(ref), 0, 255) - o).max() <= 1


def test_brightness_shift_scales_with_output_type():
    x = ndd.tensor(np.zeros((1, 1, 3), np.uint8), layout="HWC")
    assert int(np.asarray(C.brightness_contrast(x, brightness_shift=0.5))[0, 0, 0]) == 128
    f = C.brightness_contrast(x, brightness_shift=0.5, dtype=ndd.float32)
    assert f.dtype == ndd.float32 and float(np.asarray(f)[0, 0, 0]) == 0.5


def test_twist_family_closed_forms():
    x = ndd.batch(RAGGED, layout="HWC")
    grey = host(C.saturation(x, saturation=0.0))
    for g in grey:
        assert int(np.ptp(g.astype(int), axis=-1).max()) <= 1
    for o in host(C.color_twist(x, contrast=0.0)):
        assert np.all(o == 128)
    for o, i in zip(host(C.hue(x, hue=360.0)), RAGGED):
        assert np.abs(o.astype(int) - i).max() <= 1
    assert (
        C.hsv(ndd.tensor(images((2, 2, 3), dtype=np.float32)[0], layout="HWC")).dtype == ndd.uint8
    )


def test_color_space_conversion_matches_opencv_and_swaps():
    x = ndd.batch(RAGGED, layout="HWC")
    gray = host(C.color_space_conversion(x, image_type=ndd.types.RGB, output_type=ndd.types.GRAY))
    for g, i in zip(gray, RAGGED):
        np.testing.assert_array_equal(g[..., 0], cv2.cvtColor(i, cv2.COLOR_RGB2GRAY))
    bgr = host(C.color_space_conversion(x, image_type="rgb", output_type="bgr"))
    for o, i in zip(bgr, RAGGED):
        np.testing.assert_array_equal(o, i[..., ::-1])


def test_normalize_matches_numpy():
    x = ndd.batch(RAGGED, layout="HWC")
    out = host(C.normalize(x, axes=[0, 1], epsilon=1.0, scale=2.0, shift=3.0))
    for o, i in zip(out, RAGGED):
        f = i.astype(np.float64)
        ref = 2 * (f - f.mean((0, 1))) / np.sqrt(f.var((0, 1)) + 1.0) + 3
        np.testing.assert_allclose(o, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("axes", [[0, 1], [0, 1, 2]])
@pytest.mark.parametrize("kw", [{}, {"ddof": 1, "epsilon": 0.5, "scale": 2.0, "shift": 3.0}])
def test_normalize_of_uint8_with_computed_statistics_equals_the_float_path(axes, kw):
    """uint8 images: the statistics come from one integer-sum pass and a table of the 256
    levels; the values are the float32 path's (given the same pixels as float32) within its
    last bit."""
    imgs = [*RAGGED, *images((70, 90, 3), (64, 64, 3), (48, 100, 1))]  # (the big ones: a table)
    got = host(C.normalize(ndd.batch(imgs, layout="HWC"), axes=axes, **kw))
    want = host(C.normalize(ndd.batch([i.astype(np.float32) for i in imgs], layout="HWC"),
                            axes=axes, **kw))  # fmt: skip
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32 and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=4e-7, atol=4e-7 * np.abs(w).max())


def test_normalize_batch_statistics():
    xs = [np.array([0.0, 1.0], np.float32), np.array([3.0, 4.0, 5.0], np.float32)]
    out = host(C.normalize(ndd.batch(xs), batch=True, ddof=1))
    allv = np.concatenate(xs).astype(np.float64)
    ref = (allv - allv.mean()) / allv.std(ddof=1)
    np.testing.assert_allclose(np.concatenate(out), ref, rtol=1e-6)
    gpu = host(C.normalize(ndd.batch(xs).gpu(), batch=True, ddof=1))
    np.testing.assert_allclose(np.concatenate(gpu), ref, rtol=1e-6)
    # per-channel statistics over all pixels of the batch: kept extents (C) agree
    b = ndd.batch(RAGGED, layout="HWC")
    out = host(C.normalize(b, batch=True, axis_names="HW"))
    stacked = np.concatenate([o.reshape(-1, 3) for o in out])
    np.testing.assert_allclose(stacked.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(stacked.std(0), 1, atol=1e-5)


def test_lookup_table_matches_indexing():
    x = RAGGED[0]
    table = np.full(256, -1.0, np.float32)
    table[[3, 7, 200]] = [1.5, 2.5, 3.5]
    out = C.lookup_table(ndd.tensor(x), keys=[3, 7, 200], values=[1.5, 2.5, 3.5], default_value=-1)
    assert out.dtype == ndd.float32
    np.testing.assert_array_equal(np.asarray(out), table[x])
    alias = C.lookup_table(ndd.tensor(x), keys=[3], values=[300], output_dtype=ndd.uint8)
    assert alias.dtype == ndd.uint8 and int(np.asarray(alias).max()) == 255


def test_missing_layout_defaults_to_hwc():
    out = C.hsv(ndd.tensor(RAGGED[0]), hue=10.0)
    assert out.layout == "HWC"
    assert C.normalize(ndd.tensor(RAGGED[0])).layout is None


# ------------------------------------------------------------------------------- DALI


@pytest.mark.dali
@pytest.mark.parametrize(
    ("name", "op", "args", "tol"),
    [
        ("brightness_contrast", C.brightness_contrast, {"brightness": 1.4, "contrast": 0.7}, 0),
        ("brightness_contrast", C.brightness_contrast, {"contrast_center": 40.0}, 0),
        ("brightness", C.brightness, {"brightness": 1.4, "brightness_shift": 0.1}, 0),
        ("brightness", C.brightness, {"brightness": 0.6, "brightness_shift": -0.2}, 0),
        ("contrast", C.contrast, {"contrast": 0.7}, 0),
        ("contrast", C.contrast, {"contrast": 1.6, "contrast_center": 40.0}, 0),
        ("color_twist", C.color_twist, {"hue": 33.0, "saturation": 0.6, "brightness": 1.1}, 1),
        ("hsv", C.hsv, {"hue": -20.0, "saturation": 1.4, "value": 0.9}, 1),
        ("hue", C.hue, {"hue": 123.0}, 1),
        ("saturation", C.saturation, {"saturation": 0.3}, 1),
        ("normalize", C.normalize, {"axis_names": "HW", "ddof": 1, "epsilon": 2.0}, 1e-4),
        ("lookup_table", C.lookup_table, {"keys": [1, 2, 250], "values": [7, 8, 9]}, 0),
    ],
)
def test_matches_dali(name, op, args, tol):
    ref = dali_run(name, RAGGED, layout="HWC", **args)
    out = host(op(ndd.batch(RAGGED, layout="HWC"), **args))
    assert max_diff(out, ref) <= tol


@pytest.mark.dali
def test_per_sample_arguments_match_dali():
    hues = [15.0, -80.0, 170.0]
    ref = dali_run("hue", RAGGED, layout="HWC", hue=hues, per_sample=("hue",))
    out = host(C.hue(ndd.batch(RAGGED, layout="HWC"), hue=per_sample(*hues)))
    assert max_diff(out, ref) <= 1
    shifts = [0.1, -0.2, 0.0]
    ref = dali_run(
        "brightness_contrast", RAGGED, layout="HWC", brightness_shift=shifts,
        per_sample=("brightness_shift",),
    )  # fmt: skip
    out = host(
        C.brightness_contrast(ndd.batch(RAGGED, layout="HWC"), brightness_shift=per_sample(*shifts))
    )
    assert max_diff(out, ref) == 0


@pytest.mark.dali
def test_color_space_conversion_and_batch_normalize_match_dali():
    types = pytest.importorskip("nvidia.dali.types")
    for src, dst in [("RGB", "YCbCr"), ("RGB", "GRAY"), ("BGR", "RGB")]:
        ref = dali_run(
            "color_space_conversion", RAGGED, layout="HWC",
            image_type=getattr(types, src), output_type=getattr(types, dst),
        )  # fmt: skip
        out = host(
            C.color_space_conversion(
                ndd.batch(RAGGED, layout="HWC"), image_type=src, output_type=dst
            )
        )
        assert max_diff(out, ref) == 0, (src, dst)
    ref = dali_run("normalize", RAGGED, layout="HWC", batch=True, axis_names="HW")
    out = host(C.normalize(ndd.batch(RAGGED, layout="HWC"), batch=True, axis_names="HW"))
    assert max_diff(out, ref) <= 1e-4


# Pixels whose Cb lands on x.5 with the reference's float32 BT.601 rows (108.500015): they round
# up to 109 there; coefficients rounded differently (37.797/255, ...) give 108.499... -> 108.
HALF_CB = np.array([[[213, 117, 105], [214, 118, 106], [215, 119, 107], [216, 120, 108]]], np.uint8)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_rgb_to_ycbcr_rounds_half_values_as_the_reference(device):
    x = ndd.as_tensor(HALF_CB, device=device, layout="HWC")
    out = np.asarray(C.color_space_conversion(x, image_type="RGB", output_type="YCbCr").cpu())
    assert out[0, :, 1].tolist() == [109, 109, 109, 109]


@pytest.mark.dali
def test_rgb_to_ycbcr_half_values_match_dali():
    types = pytest.importorskip("nvidia.dali.types")
    ref = dali_run(
        "color_space_conversion", [HALF_CB], layout="HWC",
        image_type=types.RGB, output_type=types.YCbCr,
    )  # fmt: skip
    half = ndd.batch([HALF_CB], layout="HWC")
    out = host(C.color_space_conversion(half, image_type="RGB", output_type="YCbCr"))
    assert max_diff(out, ref) == 0


# ------------------------------------------------------------------------------ errors


def test_errors_name_op_argument_and_sample():
    bad = ndd.batch([RAGGED[0], np.zeros((4, 4, 4), np.uint8)], layout="HWC")
    with pytest.raises(ShapeError, match=r"color_twist: sample 1: .*3 channels"):
        C.color_twist(bad).evaluate()
    with pytest.raises(ShapeError, match=r"hsv: .*channel-last.*'CHW'"):
        C.hsv(ndd.tensor(np.zeros((3, 4, 4), np.uint8), layout="CHW")).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"saturation: sample 2: `saturation`"):
        C.saturation(ndd.batch(RAGGED, layout="HWC"), saturation=per_sample(1, 1, -1)).evaluate()
    with pytest.raises(InvalidTypeError, match=r"color_space_conversion: .*uint8"):
        C.color_space_conversion(
            ndd.tensor(np.zeros((2, 2, 3), np.float32)), image_type="rgb", output_type="gray"
        ).evaluate()
    with pytest.raises(TypeError, match="output_type"):
        C.color_space_conversion(ndd.tensor(RAGGED[0]), image_type="rgb")
    with pytest.raises(ValueError, match=r"color_space_conversion: invalid value for argument"):
        C.color_space_conversion(ndd.tensor(RAGGED[0]), image_type="rgb", output_type="xyz")


def test_normalize_errors():
    b = ndd.batch(RAGGED, layout="HWC")
    with pytest.raises(InvalidArgumentError, match=r"normalize: .*`axes` and `axis_names`"):
        C.normalize(b, axes=[0], axis_names="H").evaluate()
    with pytest.raises(ShapeError, match=r"normalize: with batch=True .*samples 0 and 1"):
        C.normalize(b, batch=True, axis_names="H").evaluate()
    with pytest.raises(InvalidArgumentError, match=r"normalize: `mean` cannot vary per sample"):
        C.normalize(b, batch=True, mean=per_sample(1, 2, 3)).evaluate()
    with pytest.raises(InvalidTypeError, match=r"lookup_table: sample 0: .*integer"):
        C.lookup_table(ndd.tensor(np.zeros(3, np.float32)), keys=[1], values=[1]).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"lookup_table: `dtype` and .*`output_dtype`"):
        C.lookup_table(ndd.tensor(RAGGED[0]), dtype=ndd.uint8, output_dtype=ndd.uint8).evaluate()


def test_normalize_of_a_nearly_constant_uint8_image_keeps_its_precision():
    x = np.full((300, 400, 1), 200, np.uint8)
    x[0, 0, 0] = 201
    got = host(C.normalize(ndd.batch([x], layout="HWC"), axes=[0, 1]))[0]
    want = host(C.normalize(ndd.batch([x.astype(np.float32)], layout="HWC"), axes=[0, 1]))[0]
    np.testing.assert_array_equal(got, want)


def test_rgb_to_ycbcr_of_an_image_equals_the_general_path():
    """uint8 HxWx3 images take a plane-wise path: the same float32 steps, so the same bytes as
    the general path (here: the image as a one-frame sequence), grey pixels included."""
    rng = np.random.default_rng(8)
    x = rng.integers(0, 256, (37, 61, 3), dtype=np.uint8)
    x[:10] = x[:10, :, :1]  # grey rows: chroma exactly 128
    got = host(C.color_space_conversion(ndd.batch([x], layout="HWC"), image_type="rgb",
                                        output_type="ycbcr"))[0]  # fmt: skip
    seq = host(C.color_space_conversion(ndd.batch([x[None]], layout="FHWC"), image_type="rgb",
                                        output_type="ycbcr"))[0][0]  # fmt: skip
    np.testing.assert_array_equal(got, seq)
    assert (got[:10, :, 1:] == 128).all()
