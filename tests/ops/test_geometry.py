"""Geometry operators through the public API: contract, closed forms, layouts, DALI, errors."""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.contract import host
from tests._helpers.dali_oracle import dali_run, max_diff

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace.ops import geometry as G

NN, CUBIC = ndd.types.INTERP_NN, ndd.types.INTERP_CUBIC


def image(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    """Smooth pattern plus noise, uint8 HWC (realistic for resampling comparisons)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = 127 + 60 * (np.sin(xx / 7.0) * np.cos(yy / 5.0))[..., None]
    return np.clip(base + rng.normal(0, 30, (h, w, c)), 0, 255).astype(np.uint8)


RAGGED = [image(37, 53), image(64, 41, seed=1), image(50, 50, seed=2)]
FLOATS = [np.random.default_rng(3).random(s, dtype=np.float32) for s in ((7, 9, 2), (12, 5, 2))]


def per_sample(*values: object) -> ndd.Batch:
    """One argument value per sample (float32 or int32, as the reference types them)."""
    arrs = [np.asarray(v) for v in values]
    return ndd.batch([a.astype(np.float32 if a.dtype.kind == "f" else np.int32) for a in arrs])


# ----------------------------------------------------------------------------- contract
# The contract cases (check_op) of these operators are rows of tests/_helpers/op_table.py.


# ----------------------------------------------------------------------------- closed forms


def test_resize_nearest_upscale_repeats_and_linear_keeps_constants():
    x = image(4, 5)
    out = np.asarray(G.resize(ndd.tensor(x, layout="HWC"), size=[8, 10], interp_type=NN))
    np.testing.assert_array_equal(out, x.repeat(2, 0).repeat(2, 1))
    const = np.full((9, 13, 2), 0.25, np.float32)
    for kw in ({"size": [4, 6]}, {"size": [20, 30]}, {"resize_longer": 7, "antialias": False}):
        res = np.asarray(G.resize(ndd.tensor(const, layout="HWC"), **kw))
        np.testing.assert_allclose(res, 0.25, rtol=1e-6)
    f = G.resize(ndd.tensor(x, layout="HWC"), size=[2, 2], dtype=ndd.float32)
    assert f.dtype == ndd.float32


def test_crop_windows_are_numpy_slices():
    x = RAGGED[0]
    t = ndd.tensor(x, layout="HWC")
    tl = np.asarray(G.crop(t, crop=(10, 12), crop_pos_x=0.0, crop_pos_y=0.0))
    br = np.asarray(G.crop(t, crop=(10, 12), crop_pos_x=1.0, crop_pos_y=1.0))
    np.testing.assert_array_equal(tl, x[:10, :12])
    np.testing.assert_array_equal(br, x[-10:, -12:])
    chw = np.ascontiguousarray(x.transpose(2, 0, 1))
    out = np.asarray(G.crop(ndd.tensor(chw, layout="CHW"), crop_h=10, crop_w=12, crop_pos_x=0.0))
    np.testing.assert_array_equal(out, chw[:, 14:24, :12])  # round(13.5) = 14


def test_crop_mirror_normalize_formula_and_mirror():
    x = RAGGED[1]
    mean, std = np.array([120, 110, 100], np.float32), np.array([50, 60, 70], np.float32)
    b = ndd.batch([x, x], layout="HWC")
    out = host(G.crop_mirror_normalize(b, mean=mean, std=std, mirror=per_sample(0, 1)))
    ref = ((x.astype(np.float32) - mean) / std).transpose(2, 0, 1)
    np.testing.assert_allclose(out[0], ref, atol=1e-5)
    np.testing.assert_allclose(out[1], ref[:, :, ::-1], atol=1e-5)
    u8 = G.crop_mirror_normalize(b, dtype=ndd.uint8, scale=0.5, pad_output=True)
    assert u8.dtype == ndd.uint8 and u8.tensors[0].shape == (4, 64, 41)
    np.testing.assert_array_equal(host(u8)[0][3], 0)


def test_flip_axes():
    x = RAGGED[0]
    b = ndd.batch([x] * 4, layout="HWC")
    out = host(G.flip(b, horizontal=per_sample(0, 1, 0, 1), vertical=per_sample(0, 0, 1, 1)))
    for o, ref in zip(out, (x, x[:, ::-1], x[::-1], x[::-1, ::-1])):
        np.testing.assert_array_equal(o, ref)
    vol = np.arange(2 * 3 * 4 * 1, dtype=np.float32).reshape(2, 3, 4, 1)
    v = np.asarray(G.flip(ndd.tensor(vol, layout="DHWC"), horizontal=0, depthwise=1))
    np.testing.assert_array_equal(v, vol[::-1])
    seq = np.asarray(G.flip(ndd.tensor(vol)))  # 4-D without layout: FHWC, W is axis 2
    np.testing.assert_array_equal(seq, vol[:, :, ::-1])


def test_slice_forms_select_the_same_box():
    x = RAGGED[0]  # 37 x 53
    t = ndd.tensor(x, layout="HWC")
    ref = x[4:24, 6:31]
    forms = [
        G.slice(t, start=[6, 4], shape=[25, 20]),
        G.slice(t, start=[4, 6], end=[24, 31], axis_names="HW"),
        G.slice(t, start=[4, 6], shape=[20, 25], axes=[0, 1]),
        G.slice(t, np.array([6, 4], np.int32), np.array([25, 20], np.int32),
                normalized_anchor=False, normalized_shape=False),
        G.slice(t, rel_start=[6 / 53, 4 / 37], rel_shape=[25 / 53, 20 / 37]),
    ]  # fmt: skip
    for f in forms:
        np.testing.assert_array_equal(np.asarray(f), ref)
    out = np.asarray(
        G.slice(t, start=[-2, 0], shape=[4, 2], axis_names="HW", out_of_bounds_policy="pad")
    )
    np.testing.assert_array_equal(out[:2], 0)
    np.testing.assert_array_equal(out[2:], x[:2, :2])
    assert G.slice(ndd.tensor(x), rel_start=[0.1, 0.1]).layout is None


def test_pad_batch_max_align_and_fill():
    a, b = np.ones((2, 3), np.float32), np.ones((4, 1), np.float32)
    out = host(G.pad(ndd.batch([a, b]), fill_value=-1.0))
    assert [o.shape for o in out] == [(4, 3), (4, 3)]
    np.testing.assert_array_equal(out[1], [[1, -1, -1]] * 4)
    aligned = host(G.pad(ndd.batch([a, b]), axes=[1], align=4))
    assert [o.shape for o in aligned] == [(2, 4), (4, 4)]
    assert G.pad(ndd.tensor(a), shape=[1, 5]).shape == (2, 5)  # never trims


def test_paste_canvas_and_position():
    x = np.full((2, 3, 3), 200, np.uint8)
    out = np.asarray(G.paste(ndd.tensor(x), ratio=2.0, fill_value=[1, 2, 3], paste_x=0, paste_y=1))
    assert out.shape == (4, 6, 3)
    np.testing.assert_array_equal(out[2:, :3], 200)
    np.testing.assert_array_equal(out[:2, :, 0], 1)
    np.testing.assert_array_equal(out[2:, 3:], np.broadcast_to([1, 2, 3], (2, 3, 3)))
    big = G.paste(ndd.tensor(x), ratio=1.0, fill_value=0, min_canvas_size=5.0)
    assert big.shape == (5, 5, 3)


def test_erase_fills_regions():
    x = RAGGED[0]
    out = np.asarray(
        G.erase(ndd.tensor(x, layout="HWC"), anchor=[3, 4, 20, 20], shape=[10, 10, 5, 30],
                axis_names="HW", fill_value=[1, 2, 3])
    )  # fmt: skip
    ref = x.copy()
    ref[3:13, 4:14] = [1, 2, 3]
    ref[20:25, 20:50] = [1, 2, 3]
    np.testing.assert_array_equal(out, ref)
    assert np.array_equal(np.asarray(G.erase(ndd.tensor(x, layout="HWC"))), x)
    unlabeled = G.erase(ndd.tensor(x), anchor=[3, 4], shape=[10, 10])  # 3-D: HWC, regions in HW
    assert unlabeled.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(unlabeled)[3:13, 4:14], 0)


def test_resize_crop_mirror_equals_resize_crop_flip():
    b = ndd.batch(RAGGED, layout="HWC")
    fused = host(G.resize_crop_mirror(b, resize_shorter=40, crop=[30, 20], mirror=1))
    chain = host(G.flip(G.crop(G.resize(b, resize_shorter=40), crop=[30, 20])))
    assert max_diff(fused, chain) <= 1


def test_tensor_resize_shapes_and_values():
    x = ndd.tensor(np.zeros((4, 6, 2), np.float32))
    for kw, shape in [
        ({"sizes": [2, 3], "axes": [0, 1]}, (2, 3, 2)),
        ({"sizes": [3], "axes": [-2]}, (4, 3, 2)),
        ({"sizes": [8, 0], "axes": [0, 1]}, (8, 8, 2)),  # missing extent: mean scale of all
        ({"sizes": [8, 0], "axes": [0, 1], "mode": "stretch"}, (8, 6, 2)),
        ({"scales": [0.55], "axes": [1]}, (4, 3, 2)),
        ({"scales": [0.55], "axes": [1], "size_rounding": "truncate"}, (4, 3, 2)),
        ({"scales": [0.55], "axes": [1], "size_rounding": "ceil"}, (4, 4, 2)),
        ({"sizes": [8, 8], "axes": [0, 1], "max_size": 6}, (6, 6, 2)),
    ]:
        assert G.tensor_resize(x, **kw).shape == shape, kw
    named = G.tensor_resize(
        ndd.tensor(np.zeros((4, 6, 2), np.float32), layout="HWC"), sizes=[3], axis_names="W"
    )
    assert named.shape == (4, 3, 2) and named.layout == "HWC"
    a = np.arange(5, dtype=np.float32)
    up = np.asarray(G.tensor_resize(ndd.tensor(a), scales=[2.0], interp_type=NN))
    np.testing.assert_array_equal(up, a.repeat(2))
    flipped = np.asarray(G.tensor_resize(ndd.tensor(a), sizes=[-5]))
    np.testing.assert_array_equal(flipped, a[::-1])
    ident = np.random.default_rng(0).random((3, 4, 5, 6), dtype=np.float32)
    np.testing.assert_array_equal(
        np.asarray(G.tensor_resize(ndd.tensor(ident), sizes=[4], axes=[1])), ident
    )


def test_tensor_resize_alignment_keeps_the_chosen_point():
    a = np.arange(10, dtype=np.float32)
    t = ndd.tensor(a)
    # scale 0.25 gives 2.5 -> 3 outputs at a 4-pixel pitch: the ROI grows from 10 to 12
    # pixels around the aligned point (start: [0, 12], centre: [-1, 11], end: [-2, 10]).
    out = {
        al: np.asarray(G.tensor_resize(t, scales=[0.25], alignment=al, interp_type=NN)).tolist()
        for al in (0.0, 0.5, 1.0)
    }
    assert out == {0.0: [2, 6, 9], 0.5: [1, 5, 9], 1.0: [0, 4, 8]}


def test_random_resized_crop_is_reproducible_and_per_sample():
    x = image(48, 64)
    b = ndd.batch([x] * 6, layout="HWC")
    r1 = host(G.random_resized_crop(b, size=[24, 24], rng=ndd.random.RNG(seed=5)))
    r2 = host(G.random_resized_crop(b, size=[24, 24], rng=ndd.random.RNG(seed=5)))
    r3 = host(G.random_resized_crop(b, size=[24, 24], rng=ndd.random.RNG(seed=6)))
    assert max_diff(r1, r2) == 0
    assert max_diff(r1, r3) > 0
    assert len({o.tobytes() for o in r1}) == 6  # every sample draws its own window
    assert all(o.shape == (24, 24, 3) for o in r1)
    whole = G.random_resized_crop(
        ndd.tensor(x, layout="HWC"), size=[12, 16], random_area=[1.0, 1.0],
        random_aspect_ratio=[4 / 3, 4 / 3],
    )  # fmt: skip
    ref = G.resize(ndd.tensor(x, layout="HWC"), size=[12, 16])
    assert max_diff(np.asarray(whole), np.asarray(ref)) == 0


def test_default_layouts():
    x3, x4 = RAGGED[0], np.zeros((2, 6, 8, 3), np.uint8)
    assert G.resize(ndd.tensor(x3), size=[3, 4]).layout == "HWC"
    assert G.resize(ndd.tensor(x4), size=[3, 4]).shape == (2, 3, 4, 3)
    assert G.flip(ndd.tensor(x4)).layout == "FHWC"
    assert G.crop(ndd.tensor(x3), crop=[3, 4]).layout == "HWC"
    assert G.crop_mirror_normalize(ndd.tensor(x3)).layout == "CHW"
    assert G.tensor_resize(ndd.tensor(x3), sizes=[3], axes=[0]).layout is None
    with pytest.raises(ShapeError, match=r"resize.*layout"):
        G.resize(ndd.tensor(np.zeros((6, 8), np.uint8)), size=[3, 4]).evaluate()


# ----------------------------------------------------------------------------- errors


def _dhw_batch() -> ndd.Batch:
    return ndd.batch(RAGGED, layout="DHW")


_B = ndd.batch(RAGGED, layout="HWC")  # sample 0 is 37 x 53
_V = ndd.tensor(np.zeros((5, 6, 7, 8), np.float32))
_ERRORS = [
    (ShapeError, r"crop: sample 0: .*out_of_bounds_policy", G.crop, _B, {"crop": [40, 40]}),
    (
        InvalidArgumentError,
        r"crop_mirror_normalize: sample 1: .*`mean`",
        G.crop_mirror_normalize,
        _B,
        {"mean": per_sample([1.0], [1.0, 2.0], [3.0])},
    ),
    (
        InvalidArgumentError,
        r"crop_mirror_normalize: .*`std`",
        G.crop_mirror_normalize,
        _B,
        {"std": 0},
    ),
    (
        InvalidArgumentError,
        r"paste: sample 2: .*`ratio`",
        G.paste,
        _B,
        {"ratio": per_sample(1.0, 2.0, 0.5), "fill_value": 0},
    ),
    (
        InvalidArgumentError,
        r"paste: .*n_channels",
        G.paste,
        _B,
        {"ratio": 2, "fill_value": 0, "n_channels": 4},
    ),
    (InvalidArgumentError, r"resize: .*`size`", G.resize, _B, {"size": [3, 3], "resize_x": 4}),
    (InvalidArgumentError, r"resize: .*save_attrs", G.resize, _B, {"size": 3, "save_attrs": True}),
    (InvalidArgumentError, r"resize: .*`dtype`", G.resize, _B, {"size": 3, "dtype": ndd.int16}),
    (
        InvalidArgumentError,
        r"resize_crop_mirror: .*crop_d",
        G.resize_crop_mirror,
        _B,
        {"size": 9, "crop_d": 2},
    ),
    (
        InvalidArgumentError,
        r"slice: .*`start`.*`rel_start`",
        G.slice,
        _B,
        {"start": [1, 1], "rel_start": [0.1, 0.1]},
    ),
    (
        ShapeError,
        r"random_resized_crop: sample 0: .*spatial axes H and W",
        G.random_resized_crop,
        _dhw_batch(),
        {"size": [4, 4]},
    ),
    (
        InvalidArgumentError,
        r"tensor_resize: .*`sizes` and `scales`",
        G.tensor_resize,
        _V,
        {"sizes": [2, 2, 2, 2], "scales": [1.0]},
    ),
    (InvalidArgumentError, r"tensor_resize: .*`sizes` and `scales`", G.tensor_resize, _V, {}),
    (
        InvalidArgumentError,
        r"tensor_resize: sample 0: at most 3 consecutive",
        G.tensor_resize,
        _V,
        {"sizes": [2, 6, 7, 2]},
    ),
    (
        InvalidArgumentError,
        r"tensor_resize: .*not_smaller",
        G.tensor_resize,
        _V,
        {"scales": [2.0], "mode": "not_smaller"},
    ),
    (
        InvalidArgumentError,
        r"tensor_resize: .*size_rounding",
        G.tensor_resize,
        _V,
        {"scales": [2.0], "size_rounding": "up"},
    ),
]


@pytest.mark.parametrize(("exc", "pattern", "op", "x", "args"), _ERRORS)
def test_errors_name_op_argument_and_sample(exc, pattern, op, x, args):
    with ndd.EvalMode.sync_cpu, pytest.raises(exc, match=pattern):
        op(x, **args)


def test_required_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        G.random_resized_crop(_B)  # size is required
    with pytest.raises(TypeError):
        G.paste(_B, ratio=2.0)  # so is fill_value


_RESAMPLING = {
    "resize": (G.resize, {"size": [5, 5]}),
    "random_resized_crop": (G.random_resized_crop, {"size": [5, 5]}),
    "resize_crop_mirror": (G.resize_crop_mirror, {"size": [6, 6], "crop": [5, 5]}),
    "tensor_resize": (G.tensor_resize, {"sizes": [5, 5], "axes": [0, 1]}),
}
_RESAMPLED_TYPES = ("uint8", "int16", "uint16", "float32")
_REFUSED_TYPES = ("bool", "int8", "int32", "uint32", "int64", "float16", "float64")


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("name", sorted(_RESAMPLING))
def test_resampling_accepts_only_the_reference_input_types(name, device):
    op, args = _RESAMPLING[name]
    for t in _RESAMPLED_TYPES:
        x = ndd.tensor(np.zeros((10, 10, 3), t), device=device)
        assert op(x, **args).shape[:2] == (5, 5), t
    for t in _REFUSED_TYPES:
        x = ndd.tensor(np.zeros((10, 10, 3), t), device=device)
        with ndd.EvalMode.sync_cpu, pytest.raises(RuntimeError, match=f"{name}: .*got {t}"):
            op(x, **args)
        with ndd.EvalMode.deferred:  # the same error where the result is used
            r = op(x, **args)
            with pytest.raises(InvalidArgumentError, match=f"got {t}"):
                r.evaluate()


def test_errors_surface_where_the_result_is_used_in_every_mode():
    b = ndd.batch(RAGGED, layout="HWC")
    for mode in (ndd.EvalMode.deferred, ndd.EvalMode.eager):
        with mode:
            r = G.crop(b, crop=[40, 40])
            with pytest.raises(ShapeError, match="crop: sample 0"):
                r.evaluate()


# ------------------------------------------------------------------------------- DALI


def _dali_dtype(name: str) -> object:
    types = pytest.importorskip("nvidia.dali.types")
    return {"float32": types.FLOAT, "float16": types.FLOAT16, "uint8": types.UINT8}[name]


def _case(
    op: str,
    args: dict,
    *,
    samples: list[np.ndarray] = RAGGED,
    layout: str | None = "HWC",
    per: tuple[str, ...] = (),
    dtype: str | None = None,
    tol: float = 0,
) -> object:
    """One DALI comparison: ``op`` on ``samples``; ``per`` names per-sample arguments."""
    return pytest.param(op, samples, layout, args, per, dtype, tol, id=op)


_DALI_CASES = [
    _case("resize", {"size": [20, 30]}, tol=1),
    _case("resize", {"resize_shorter": 24, "max_size": 30}, tol=1),
    _case("resize", {"size": [80, 90], "interp_type": CUBIC}, tol=1),
    _case("resize", {"size": [[20, 30], [40, 10], [33, 33]]}, per=("size",), tol=1),
    _case("resize", {"size": [20, 30], "interp_type": NN}),
    _case("resize", {"size": [20, 30], "roi_start": [5, 40], "roi_end": [30, 3]}, tol=1),
    _case("resize", {"size": [20, 0], "mode": "stretch"}, dtype="float32", tol=1e-4),
    _case("crop", {"crop": [20, 25], "crop_pos_x": [0.0, 0.5, 1.0]}, per=("crop_pos_x",)),
    _case("crop", {"crop": [60, 60], "out_of_bounds_policy": "pad", "fill_values": [1, 2, 3]}),
    _case("crop", {"crop": [60, 60], "out_of_bounds_policy": "trim_to_shape"}, dtype="float32"),
    _case(
        "crop_mirror_normalize",
        {"crop": [20, 25], "mean": [120, 110, 100], "std": [50, 60, 70], "mirror": [0, 1, 1]},
        per=("mirror",),
        tol=1e-6,
    ),
    _case("crop_mirror_normalize", {"mean": [120.0], "output_layout": "HWC"}, dtype="float16"),
    _case(
        "crop_mirror_normalize",
        {"crop": [20, 20], "pad_output": True, "scale": 0.5, "shift": 3},
        dtype="uint8",
    ),
    _case(
        "crop_mirror_normalize",
        {"crop": [60, 60], "out_of_bounds_policy": "pad", "fill_values": [7.0], "mean": [100.0]},
    ),
    _case(
        "flip",
        {"horizontal": [1, 0, 1], "vertical": [0, 1, 1]},
        per=("horizontal", "vertical"),
    ),
    _case("slice", {"rel_start": [0.1, 0.2], "rel_shape": [0.5, 0.4]}),
    _case("slice", {"start": [3, 4], "end": [20, 30]}),
    _case(
        "slice",
        {
            "start": [-3, 4],
            "shape": [20, 60],
            "axis_names": "HW",
            "out_of_bounds_policy": "pad",
            "fill_values": [9],
        },
    ),
    _case("pad", {"fill_value": 5}),
    _case("pad", {"axis_names": "HW", "align": [8, 16]}),
    _case(
        "erase",
        {
            "anchor": [3, 4, 20, 20],
            "shape": [10, 10, 5, 30],
            "axis_names": "HW",
            "fill_value": [1, 2, 3],
        },
    ),
    _case("resize_crop_mirror", {"resize_shorter": 40, "crop": [30, 30], "mirror": 1}, tol=1),
    _case(
        "resize_crop_mirror",
        {"size": [45, 45], "crop": [30, 20], "crop_pos_x": 0.2, "mirror": [0, 1, 0]},
        per=("mirror",),
        tol=1,
    ),
    _case("tensor_resize", {"sizes": [5, 6], "axes": [0, 1]}, samples=FLOATS, layout=None),
    _case(
        "tensor_resize",
        {
            "scales": [0.55, 1.7],
            "axes": [0, 1],
            "size_rounding": "truncate",
            "alignment": [0.0, 1.0],
        },
        samples=FLOATS,
        layout=None,
        tol=1e-6,
    ),
    _case(
        "tensor_resize",
        {"scales": [0.35], "axes": [1], "size_rounding": "ceil", "alignment": 0.25},
        samples=FLOATS,
        layout=None,
        tol=1e-6,
    ),
    _case(
        "tensor_resize",
        {"sizes": [4, 4], "axes": [0, 1], "roi_start": [5, 0], "roi_end": [1, 4]},
        samples=FLOATS,
        layout=None,
        tol=1e-6,
    ),
    _case(
        "tensor_resize",
        {"sizes": [[3, 4], [8, 2]], "axes": [0, 1]},
        samples=FLOATS,
        layout=None,
        per=("sizes",),
        tol=1e-6,
    ),
    _case(
        "tensor_resize",
        {"scales": [2.0, 0.5], "axes": [0, 1], "interp_type": CUBIC},
        samples=FLOATS,
        layout=None,
        tol=1e-6,
    ),
    _case("tensor_resize", {"sizes": [20, 30], "axis_names": "HW"}, tol=1),
    _case(
        "random_resized_crop",
        {"size": [16, 16], "random_area": [1.0, 1.0], "random_aspect_ratio": [1.5, 1.5]},
        samples=[image(20, 30), image(40, 60, seed=1)],
        tol=1,
    ),
]


@pytest.mark.dali
@pytest.mark.parametrize(
    ("op", "samples", "layout", "args", "per", "dtype", "tol"),
    _DALI_CASES,
)
def test_matches_dali(op, samples, layout, args, per, dtype, tol):
    dali_args = dict(args, **({"dtype": _dali_dtype(dtype)} if dtype else {}))
    ref = dali_run(op, samples, layout=layout, per_sample=per, **dali_args)
    ours = {k: (per_sample(*v) if k in per else v) for k, v in args.items()}
    if dtype:
        ours["dtype"] = getattr(ndd, dtype)
    out = host(getattr(G, op)(ndd.batch(samples, layout=layout), **ours))
    assert max_diff(out, ref) <= tol


@pytest.mark.dali
def test_erase_normalized_centered_matches_dali():
    args = {"anchor": [0.5, 0.5], "shape": [0.2, 0.3], "axis_names": "HW", "normalized": True,
            "centered_anchor": True}  # fmt: skip
    ref = dali_run("erase", RAGGED[2:], layout="HWC", **args)
    assert max_diff(host(G.erase(ndd.batch(RAGGED[2:], layout="HWC"), **args)), ref) == 0


@pytest.mark.dali
def test_resize_float_fractional_scale_matches_dali():
    ref = dali_run("resize", FLOATS[:1], layout="HWC", size=[20, 18.63])
    out = host(G.resize(ndd.batch(FLOATS[:1], layout="HWC"), size=[20, 18.63]))
    assert max_diff(out, ref) <= 1e-4


@pytest.mark.dali
@pytest.mark.parametrize("name", sorted(_RESAMPLING))
def test_resampling_input_types_match_dali(name):
    from tests._helpers.dali_oracle import dali_ndd

    dndd = dali_ndd()
    _, args = _RESAMPLING[name]
    for t in _RESAMPLED_TYPES + _REFUSED_TYPES:
        try:
            with dndd.EvalMode.sync_cpu:
                getattr(dndd, name)(dndd.tensor(np.zeros((10, 10, 3), t)), **args).evaluate()
            accepted = True
        except RuntimeError:
            accepted = False
        assert accepted == (t in _RESAMPLED_TYPES), t
