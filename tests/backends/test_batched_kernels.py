"""The whole-batch torch kernels equal the per-sample torch kernels they replace."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from headrace._dispatch.planned import plan_args  # noqa: E402
from headrace._dispatch.schema import REGISTRY  # noqa: E402
from headrace.backends.torch import geometry as G  # noqa: E402
from headrace.backends.torch import resize as R  # noqa: E402
from headrace.backends.torch.batching import dense_base  # noqa: E402


def _images(seed: int, n: int, lo: int, hi: int, channels: int | None = 3) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        shape = (int(rng.integers(lo, hi)), int(rng.integers(lo, hi)))
        shape += () if channels is None else (channels,)
        out.append(torch.from_numpy(rng.integers(0, 256, shape, dtype=np.uint8)))
    return out


def _plans(op: str, imgs: list, layout: str, **kw) -> list:
    schema = REGISTRY[op]
    args = plan_args(op, {**schema.defaults, **kw})
    return [schema.planned.plan(tuple(x.shape), layout, np.dtype(np.uint8), **args) for x in imgs]


@pytest.mark.parametrize(
    "kw",
    [
        dict(resize_shorter=24.0),
        dict(size=[20.0, 30.0]),
        dict(size=[20.0, 30.0], interp_type=2),  # cubic
        dict(size=[70.0, 90.0]),  # upscaling
        dict(size=[16.0, 16.0], roi_start=[0.9, 0.1], roi_end=[0.1, 0.8], roi_relative=True),
        dict(size=[16.0, 16.0], dtype=np.dtype(np.float32)),
    ],
)
@pytest.mark.parametrize("layout", ["HWC", "HW"])
def test_resize_batched_matches_per_sample(kw: dict, layout: str) -> None:
    imgs = _images(1, 9, 20, 60, 3 if layout == "HWC" else None)
    imgs += [imgs[0].clone(), imgs[0].clone()]  # equal shapes share a group
    plans = _plans("resize", imgs, layout, **kw)
    res = R.resize_batched(imgs, layout, plans)
    assert res is not None
    outs, dense = res
    for x, p, o in zip(imgs, plans, outs):
        ref = R.resize(x, layout, **p.kwargs)
        assert o.shape == ref.shape and o.dtype == ref.dtype
        assert float((o.double() - ref.double()).abs().max()) <= (
            1 if ref.dtype == torch.uint8 else 1e-3
        )
    uniform = len({tuple(p.shape) for p in plans}) == 1
    assert (dense is not None) == uniform
    if uniform:
        assert torch.equal(dense, torch.stack(outs))


def test_resize_batched_splits_mismatched_sizes_into_groups() -> None:
    imgs = [torch.full((400, 300, 3), 7, dtype=torch.uint8)] + _images(2, 5, 10, 14)
    plans = _plans("resize", imgs, "HWC", size=[8.0, 8.0])
    assert len(R.resize_batched.__globals__["_groups"]([tuple(x.shape) for x in imgs])) >= 2
    _, dense = R.resize_batched(imgs, "HWC", plans)
    assert dense is not None and dense.shape == (6, 8, 8, 3)
    assert int(dense[0].min()) == int(dense[0].max()) == 7


def test_resize_batched_declines_nearest_neighbour() -> None:
    imgs = _images(3, 3, 10, 20)
    assert R.resize_batched(imgs, "HWC", _plans("resize", imgs, "HWC", size=[5.0, 5.0],
                                                interp_type=0)) is None  # fmt: skip


MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.uint8)])
@pytest.mark.parametrize("layout_out", ["CHW", "HWC"])
def test_cmn_batched_matches_per_sample(dtype: np.dtype, layout_out: str) -> None:
    imgs = _images(4, 6, 30, 40)
    schema = REGISTRY["crop_mirror_normalize"]
    plans = []
    for i, x in enumerate(imgs):  # mirror differs per sample
        args = plan_args("crop_mirror_normalize", {**schema.defaults, "crop": [24.0, 20.0],
                         "mirror": i % 2, "mean": MEAN, "std": STD, "dtype": dtype,
                         "output_layout": layout_out, "crop_pos_x": 0.3})  # fmt: skip
        plans.append(schema.planned.plan(tuple(x.shape), "HWC", np.dtype(np.uint8), **args))
    outs, dense = G.crop_mirror_normalize_batched(imgs, "HWC", plans)
    for x, p, o in zip(imgs, plans, outs):
        ref = G.crop_mirror_normalize(x, "HWC", **p.kwargs)
        assert torch.equal(o, ref)
    assert dense.shape == (6, *plans[0].shape)


def test_cmn_batched_uses_a_dense_input_without_copying_windows() -> None:
    dense_in = torch.from_numpy(np.random.default_rng(5).integers(0, 256, (4, 8, 8, 3), np.uint8))
    samples = list(dense_in.unbind(0))
    d = dense_base(samples)
    assert torch.equal(d, dense_in) and d.data_ptr() == dense_in.data_ptr()
    assert dense_base(samples[::-1]) is None
    assert dense_base([s.clone() for s in samples]) is None


def test_cmn_batched_declines_windows_outside_the_image() -> None:
    imgs = _images(6, 3, 10, 12)
    schema = REGISTRY["crop_mirror_normalize"]
    args = plan_args("crop_mirror_normalize", {**schema.defaults, "crop": [16.0, 16.0],
                     "out_of_bounds_policy": "pad"})  # fmt: skip
    plans = [schema.planned.plan(tuple(x.shape), "HWC", np.dtype(np.uint8), **args) for x in imgs]
    assert G.crop_mirror_normalize_batched(imgs, "HWC", plans) is None


@pytest.mark.parametrize(
    ("op", "per_sample"),
    [
        (
            "brightness_contrast",
            dict(brightness=[0.5, 1.0, 1.5, 2.0], contrast=[1.0, 0.5, 1.2, 0.9]),
        ),
        ("hsv", dict(hue=[10.0, -20.0, 0.0, 90.0], saturation=[1.0, 0.5, 1.5, 0.0])),
        ("saturation", dict(saturation=[1.0, 0.5, 1.5, 0.0])),
    ],
)
@pytest.mark.parametrize("dtype", [np.dtype(np.uint8), np.dtype(np.float32)])
def test_color_batched_matches_per_sample(op: str, per_sample: dict, dtype: np.dtype) -> None:
    from headrace.backends.torch import color as C

    rng = np.random.default_rng(7)
    dense_in = torch.from_numpy(rng.integers(0, 256, (4, 9, 7, 3), dtype=np.uint8))
    samples = list(dense_in.unbind(0))
    schema = REGISTRY[op]
    plans = []
    for i, x in enumerate(samples):
        vals = {**schema.defaults, **{k: v[i] for k, v in per_sample.items()}, "dtype": dtype}
        plans.append(schema.planned.plan(tuple(x.shape), "HWC", np.dtype(np.uint8),
                                         **plan_args(op, vals)))  # fmt: skip
    batched = getattr(C, f"{schema.kernel}_batched")
    outs, dense = batched(samples, "HWC", plans)
    kernel = getattr(C, schema.kernel)
    for x, p, o in zip(samples, plans, outs):
        ref = kernel(x, "HWC", **p.kwargs)
        assert o.dtype == ref.dtype
        assert float((o.double() - ref.double()).abs().max()) <= (1 if dtype == np.uint8 else 1e-4)
    assert dense.shape[0] == 4
    ragged = [torch.zeros(3, 3, 3, dtype=torch.uint8), torch.zeros(2, 3, 3, dtype=torch.uint8)]
    assert batched(ragged, "HWC", plans[:2]) is None


@pytest.mark.parametrize("op", ["crop", "flip"])
def test_light_geometry_batched_matches_per_sample(op: str) -> None:
    rng = np.random.default_rng(8)
    samples = list(torch.from_numpy(rng.integers(0, 256, (5, 12, 10, 3), np.uint8)).unbind(0))
    schema = REGISTRY[op]
    per = {"crop": dict(crop=[6.0, 4.0]), "flip": {}}[op]
    plans = []
    for i, x in enumerate(samples):
        extra = (dict(crop_pos_x=i / 4, crop_pos_y=1 - i / 4) if op == "crop"
                 else dict(horizontal=i % 2, vertical=int(i == 3)))  # fmt: skip
        vals = plan_args(op, {**schema.defaults, **per, **extra})
        plans.append(schema.planned.plan(tuple(x.shape), "HWC", np.dtype(np.uint8), **vals))
    outs, dense = getattr(G, f"{op}_batched")(samples, "HWC", plans)
    for x, p, o in zip(samples, plans, outs):
        assert torch.equal(o, getattr(G, op)(x, "HWC", **p.kwargs))
    assert dense.shape[0] == 5


@pytest.mark.parametrize("kind", ["triangular", "cubic", "lanczos3", "gaussian"])
def test_device_matrices_equal_the_host_coefficients(kind: str) -> None:
    """The matrices built on the device hold the CPU kernels' coefficients (float32 rounding)."""
    from headrace.backends.shared.common import axis_matrix
    from headrace.backends.torch import batched_resize as BR
    from headrace.ops._resize_params import AxisFilter

    cases = [(500, 224, 0.0, 500.0, 4.4), (37, 90, 3.5, 30.25, 2.0), (64, 64, 64.0, 0.0, 2.0),
             (9, 1, 0.0, 9.0, 18.0)]  # fmt: skip
    params, refs = [], []
    for n_in, n_out, lo, hi, support in cases:
        flt = AxisFilter(kind, support)
        params.append(BR._axis_params(n_in, n_out, lo, hi, flt))
        refs.append(axis_matrix(n_in, n_out, lo, hi, flt))
    mats = BR._matrices(kind, params, 224, 500, torch.device("cpu"))
    for m, ref in zip(mats, refs):
        got = m[: ref.shape[0], : ref.shape[1]].numpy()
        np.testing.assert_allclose(got, ref, atol=2e-6)
        assert not m[ref.shape[0] :].any() and not m[:, ref.shape[1] :].any()
