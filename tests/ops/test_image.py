"""Image operators (clahe, equalize, debayer, filter, jpeg_compression_distortion) against the
reference's CPU operators: every one is exact, except float32 ``filter`` (summation order)."""

import cv2
import numpy as np
import pytest
from tests._helpers.dali_oracle import dali_ndd, max_diff

import headrace as ndd

_rng = np.random.default_rng(3)
IMGS = [cv2.GaussianBlur(_rng.integers(0, 256, s, dtype=np.uint8), (5, 5), 2)
        for s in ((37, 45, 3), (20, 31, 3))]  # fmt: skip
MOSAICS = [_rng.integers(0, 256, s, dtype=np.uint8) for s in ((36, 44), (10, 12))]
KERNELS = [_rng.random((3, 5), dtype=np.float32) - 0.3, _rng.random((4, 2), dtype=np.float32)]


def _ours(fn, *inputs, layouts=("HWC",), **kw):
    lays = [*layouts, *[None] * (len(inputs) - len(layouts))]
    out = fn(*[ndd.as_batch(x, layout=lay) for x, lay in zip(inputs, lays)], **kw)
    return [np.asarray(t) for t in out.tensors]


def _ref(name, *inputs, layouts=("HWC",), **kw):
    d = dali_ndd()
    lays = [*layouts, *[None] * (len(inputs) - len(layouts))]
    batches = [d.batch(x, layout=lay) if lay else d.batch(x) for x, lay in zip(inputs, lays)]
    return [np.asarray(t) for t in getattr(d, name)(*batches, **kw).tensors]


@pytest.mark.dali
@pytest.mark.parametrize(
    "name, kw",
    [
        ("equalize", {}),
        ("clahe", {"clip_limit": 2.0, "tiles_x": 4, "tiles_y": 3}),
        ("clahe", {"clip_limit": 3.0, "tiles_x": 2, "tiles_y": 5, "luma_only": False}),
        ("jpeg_compression_distortion", {"quality": 15}),
        ("jpeg_compression_distortion", {}),
    ],
)
def test_exact_against_reference(name, kw):
    assert max_diff(_ours(getattr(ndd, name), IMGS, **kw), _ref(name, IMGS, **kw)) == 0


@pytest.mark.dali
@pytest.mark.parametrize("pos", [[0, 0], [0, 1], [1, 0], [1, 1]])
@pytest.mark.parametrize("algorithm", [None, "edgeaware_ocv", "vng_ocv", "gray_ocv"])
def test_debayer_exact(pos, algorithm):
    kw = {"blue_position": pos} | ({"algorithm": algorithm} if algorithm else {})
    ours = _ours(ndd.debayer, MOSAICS, layouts=("HW",), **kw)
    assert max_diff(ours, _ref("debayer", MOSAICS, layouts=("HW",), **kw)) == 0


@pytest.mark.dali
@pytest.mark.parametrize("border", ["reflect_101", "reflect_1001", "clamp", "wrap", "constant"])
@pytest.mark.parametrize("mode", ["same", "valid"])
def test_filter_borders_exact(border, mode):
    kw = {"border": border, "mode": mode}
    assert (
        max_diff(_ours(ndd.filter, IMGS, KERNELS, **kw), _ref("filter", IMGS, KERNELS, **kw)) == 0
    )


@pytest.mark.dali
def test_filter_fill_anchor_and_float():
    fills = [np.array(7, np.uint8), np.array(200, np.uint8)]
    kw = {"border": "constant", "anchor": [0, 1]}
    ours = _ours(ndd.filter, IMGS, KERNELS, fills, **kw)
    assert max_diff(ours, _ref("filter", IMGS, KERNELS, fills, **kw)) == 0
    ours = _ours(ndd.filter, IMGS, KERNELS, dtype=ndd.float32)
    ref = _ref("filter", IMGS, KERNELS, dtype=dali_ndd().float32)
    assert max_diff(ours, ref) < 2e-4  # float32 sums of ~800 in another order


def test_filter_per_frame_filters_and_chw():
    seq = np.stack([IMGS[1][..., 0], IMGS[1][..., 1]])
    k = np.stack(KERNELS[:1] * 2)
    k[1] *= 2
    out = np.asarray(ndd.filter(ndd.tensor(seq, layout="FHW"), ndd.tensor(k), dtype=ndd.float32))
    for f in range(2):
        ref = cv2.filter2D(seq[f].astype(np.float32), -1, k[f], borderType=cv2.BORDER_REFLECT_101)
        assert np.abs(out[f] - ref).max() < 1e-3
    chw = np.ascontiguousarray(IMGS[1].transpose(2, 0, 1))
    a = np.asarray(ndd.filter(ndd.tensor(chw, layout="CHW"), ndd.tensor(KERNELS[0])))
    b = np.asarray(ndd.filter(ndd.tensor(IMGS[1], layout="HWC"), ndd.tensor(KERNELS[0])))
    assert np.array_equal(a, b.transpose(2, 0, 1))


def test_errors_name_the_op_and_argument():
    with pytest.raises(ndd.HeadraceError, match=r"debayer.*even"):
        ndd.debayer(
            ndd.tensor(np.zeros((5, 6), np.uint8), layout="HW"), blue_position=[0, 0]
        ).evaluate()
    with pytest.raises(ndd.HeadraceError, match=r"filter.*anchor"):
        ndd.filter(
            ndd.tensor(IMGS[1], layout="HWC"), ndd.tensor(KERNELS[0]), anchor=[5, 0]
        ).evaluate()
    with pytest.raises(ndd.HeadraceError, match=r"clahe.*channels"):
        x = np.zeros((8, 8, 2), np.uint8)
        ndd.clahe(ndd.tensor(x, layout="HWC"), clip_limit=1.0, tiles_x=2, tiles_y=2).evaluate()
