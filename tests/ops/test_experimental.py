"""``ndd.experimental``: warp_perspective against the reference's CPU operator (uint8: max abs
diff 1 on < 0.5% of the pixels); dilate, erode, median_blur and remap (GPU-only in the
reference) against OpenCV with the reference's documented mask, anchor, iteration and border
semantics."""

import cv2
import numpy as np
import pytest
from tests._helpers.dali_oracle import dali_ndd, max_diff

import headrace as ndd

E = ndd.experimental
_rng = np.random.default_rng(5)
IMGS = [cv2.GaussianBlur(_rng.integers(0, 256, s, dtype=np.uint8), (5, 5), 2)
        for s in ((30, 40, 3), (17, 23, 3))]  # fmt: skip
H = np.array([[1.1, 0.1, -3], [0.05, 0.9, 2], [0.001, 0.002, 1]], np.float32)
CV_BORDERS = {
    "constant": cv2.BORDER_CONSTANT,
    "replicate": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT,
    "reflect_101": cv2.BORDER_REFLECT_101,
}


def _run(fn, *inputs, layouts=("HWC",), device="cpu", **kw):
    lays = [*layouts, *[None] * (len(inputs) - len(layouts))]
    bs = [ndd.as_batch(x, layout=lay, device=device) for x, lay in zip(inputs, lays)]
    return [np.asarray(t.cpu()) for t in fn(*bs, **kw).tensors]


@pytest.mark.parametrize("border", list(CV_BORDERS))
@pytest.mark.parametrize("mask, anchor, iters", [([3, 3], [-1, -1], 1), ([5, 3], [0, 2], 2)])
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_morphology_matches_opencv(border, mask, anchor, iters, device):
    ax = anchor[0] if anchor[0] >= 0 else mask[0] // 2
    ay = anchor[1] if anchor[1] >= 0 else mask[1] // 2
    el = np.ones((mask[1], mask[0]), np.uint8)
    kw = {"mask_size": mask, "anchor": anchor, "iterations": iters, "border_mode": border}
    for fn, cv in ((E.dilate, cv2.dilate), (E.erode, cv2.erode)):
        ref = [cv(x, el, anchor=(ax, ay), iterations=iters, borderType=CV_BORDERS[border])
               for x in IMGS]  # fmt: skip
        assert max_diff(_run(fn, IMGS, device=device, **kw), ref) == 0


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_median_blur_matches_opencv(device):
    for k in (3, 5, 7):
        ref = [cv2.medianBlur(x, k) for x in IMGS]
        assert max_diff(_run(E.median_blur, IMGS, device=device, window_size=k), ref) == 0
    x = np.array([[1, 9, 2, 3], [4, 4, 0, 8]], np.float32)  # (width, height) = (3, 1)
    out = _run(E.median_blur, [x], layouts=("HW",), device=device, window_size=[3, 1])[0]
    assert out.tolist() == [[1, 2, 3, 3], [4, 4, 4, 8]]


@pytest.mark.parametrize("origin", ["corner", "center"])
@pytest.mark.parametrize("interp", [ndd.types.INTERP_LINEAR, ndd.types.INTERP_NN])
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_remap_matches_opencv(origin, interp, device):
    mx = [(_rng.random((25, 33)) * 46 - 3).astype(np.float32) for _ in IMGS]
    my = [(_rng.random((25, 33)) * 36 - 3).astype(np.float32) for _ in IMGS]
    out = _run(E.remap, IMGS, mx, my, device=device, interp=interp, pixel_origin=origin)
    shift = 0.5 if origin == "corner" else 0.0
    flag = cv2.INTER_LINEAR if interp == ndd.types.INTERP_LINEAR else cv2.INTER_NEAREST
    ref = [cv2.remap(x, a - shift, b - shift, flag, borderMode=cv2.BORDER_CONSTANT)
           for x, a, b in zip(IMGS, mx, my)]  # fmt: skip
    tol = 1 if device == "gpu" and flag == cv2.INTER_LINEAR else 0  # OpenCV's 1/32 px positions
    assert max_diff(out, ref) <= tol


@pytest.mark.dali
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"pixel_origin": "center"},
        {"inverse_map": False},
        {"border_mode": "replicate"},
        {"border_mode": "reflect"},
        {"border_mode": "reflect_101"},
        {"border_mode": "wrap"},
        {"fill_value": [9.0, 8.0, 7.0]},
        {"size": [20, 25]},
        {"interp_type": ndd.types.INTERP_CUBIC},
    ],
)
def test_warp_perspective_exact_against_reference(kw):
    d = dali_ndd()
    ours = _run(E.warp_perspective, IMGS, [H, H], **kw)
    rkw = {k: (int(v) if k == "interp_type" else v) for k, v in kw.items()}
    ref = d.experimental.warp_perspective(d.batch(IMGS, layout="HWC"), d.batch([H, H]), **rkw)
    ref = [np.asarray(t) for t in ref.tensors]
    assert max_diff(ours, ref) <= 1  # off by one on a rare pixel (rounding of the positions)
    assert np.mean([(a != b).mean() for a, b in zip(ours, ref)]) < 0.005
    gpu = _run(E.warp_perspective, IMGS, [H, H], device="gpu", **kw)
    assert max_diff(ours, gpu) <= 1  # exact float sampling vs OpenCV's 1/32 px positions


def test_aliases_and_errors():
    assert E.resize is ndd.resize
    # the experimental decoder names are deprecated aliases (tests/test_deprecated_names.py)
    png = np.frombuffer(cv2.imencode(".png", IMGS[1])[1], np.uint8)
    want = np.asarray(ndd.decoders.image_slice(png, start=[1, 2], end=[5, 6]))
    with pytest.warns(DeprecationWarning, match="experimental.decoders.image_slice"):
        got = np.asarray(E.decoders.image_slice(png, start=[1, 2], end=[5, 6]))
    assert np.array_equal(got, want)
    x = ndd.tensor(IMGS[1], layout="HWC")
    with pytest.raises(ndd.HeadraceError, match=r"warp_perspective.*matrix"):
        E.warp_perspective(x).evaluate()
    with pytest.raises(ndd.HeadraceError, match=r"median_blur.*window_size"):
        E.median_blur(x, window_size=[2, 3]).evaluate()
