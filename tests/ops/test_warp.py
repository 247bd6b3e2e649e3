"""``rotate`` and ``warp_affine`` through the public API: contract, closed forms, DALI, errors."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from tests._helpers.contract import host
from tests._helpers.dali_oracle import dali_run, max_diff

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace.ops import warp as W

RNG = np.random.default_rng(5)
RAGGED = [RNG.integers(0, 256, s, dtype=np.uint8) for s in ((14, 19, 3), (21, 10, 3), (16, 16, 3))]
NN = ndd.types.INTERP_NN
SHIFT = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]], np.float32)
ZOOM = np.array([[0.8, 0.1, 1.5], [-0.2, 1.1, 0.5]], np.float32)


def per_sample(*values: object) -> ndd.Batch:
    return ndd.batch([np.asarray(v, np.float32) for v in values])


# ----------------------------------------------------------------------------- contract
# The contract cases (check_op) of these operators are rows of tests/_helpers/op_table.py.


def test_matrix_as_second_input():
    b = ndd.batch(RAGGED, layout="HWC")
    mats = ndd.batch([SHIFT, ZOOM, SHIFT])
    by_input = host(W.warp_affine(b, mats))
    by_arg = host(W.warp_affine(b, matrix=mats))
    gpu = host(W.warp_affine(b.gpu(), mats.gpu()))
    for a, k, g in zip(by_input, by_arg, gpu):
        np.testing.assert_array_equal(a, k)
        assert np.abs(g.astype(int) - a).max() <= 1
    one = W.warp_affine(ndd.tensor(RAGGED[0], layout="HWC"), ndd.tensor(SHIFT))
    np.testing.assert_array_equal(np.asarray(one), by_input[0])


@pytest.mark.parametrize("mode", list(ndd.EvalMode))
def test_gpu_matrix_argument_places_the_call_on_the_gpu(mode):
    # `matrix=` on a GPU acts like the GPU `mtx` input: the call runs on the GPU, with the
    # same result as the matrix given as a host argument or as the input.
    img = ndd.tensor(RAGGED[0], layout="HWC")
    with mode:
        routed = W.warp_affine(img, matrix=ndd.tensor(ZOOM, device="gpu"))
        assert routed.device.device_type == "gpu"
        as_argument = W.warp_affine(img.gpu(), matrix=ndd.tensor(ZOOM))
        as_input = W.warp_affine(img.gpu(), ndd.tensor(ZOOM, device="gpu"))
        host_matrix = W.warp_affine(img, matrix=ndd.tensor(ZOOM))
        assert host_matrix.device.device_type == "cpu"
        mats = ndd.batch([SHIFT, ZOOM, SHIFT], device="gpu")
        batch = W.warp_affine(ndd.batch(RAGGED, layout="HWC"), matrix=mats)
        assert isinstance(batch, ndd.Batch) and batch.device.device_type == "gpu"
    np.testing.assert_array_equal(np.asarray(routed.cpu()), np.asarray(as_argument.cpu()))
    np.testing.assert_array_equal(np.asarray(routed.cpu()), np.asarray(as_input.cpu()))
    expected = host(W.warp_affine(ndd.batch(RAGGED, layout="HWC").gpu(), mats))
    for got, want in zip(host(batch), expected):
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------- closed forms


def test_rotate_right_angles_and_default_layout():
    x = RAGGED[0]
    r90 = W.rotate(ndd.tensor(x), angle=90.0, interp_type=NN)  # no layout: HWC
    assert r90.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(r90), np.rot90(x))  # counter-clockwise
    r180 = np.asarray(W.rotate(ndd.tensor(x, layout="HWC"), angle=180.0))
    np.testing.assert_array_equal(r180, x[::-1, ::-1])
    h, w, _ = W.rotate(ndd.tensor(x), angle=45.0).shape
    box = int(np.ceil((14 + 19) / np.sqrt(2)))  # bounding box, then parity adjustment
    assert abs(h - box) <= 1 and abs(w - box) <= 1


def test_warp_affine_matches_opencv():
    x = RAGGED[1]
    out = np.asarray(W.warp_affine(ndd.tensor(x, layout="HWC"), matrix=ZOOM, interp_type=NN))
    a, t = ZOOM[:, :2].astype(np.float64), ZOOM[:, 2].astype(np.float64)
    centre = np.concatenate([a, (t + a @ [0.5, 0.5] - 0.5)[:, None]], axis=1)
    flags = cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP
    ref = cv2.warpAffine(x, centre, x.shape[1::-1], flags=flags, borderMode=cv2.BORDER_REPLICATE)
    assert (out != ref).mean() < 0.01  # nearest-neighbour ties may round differently
    inv = np.linalg.inv(np.vstack([ZOOM, [0, 0, 1]]))[:2]
    fwd = np.asarray(W.warp_affine(ndd.tensor(x, layout="HWC"), matrix=inv, inverse_map=False))
    lin = np.asarray(W.warp_affine(ndd.tensor(x, layout="HWC"), matrix=ZOOM))
    assert np.abs(fwd.astype(int) - lin).max() <= 1


def test_shift_with_border_and_fill():
    x = np.arange(12, dtype=np.float32).reshape(3, 4, 1)
    m = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    clamp = np.asarray(W.warp_affine(ndd.tensor(x, layout="HWC"), matrix=m))[..., 0]
    np.testing.assert_array_equal(clamp, np.concatenate([x[:, 1:, 0], x[:, 3:, 0]], axis=1))
    fill = np.asarray(W.warp_affine(ndd.tensor(x, layout="HWC"), matrix=m, fill_value=-1.0))
    assert fill[:, 3, 0].tolist() == [-1.0, -1.0, -1.0]


# ------------------------------------------------------------------------------- DALI


@pytest.mark.dali
@pytest.mark.parametrize(
    ("args", "tol"),
    [
        ({"angle": 33.0}, 1),
        ({"angle": 90.0, "interp_type": NN}, 0),
        ({"angle": -128.0, "keep_size": True, "fill_value": 255.0}, 1),
        ({"angle": 15.0, "size": [20.0, 30.0], "interp_type": NN}, 0),
    ],
)
def test_rotate_matches_dali(args, tol):
    ref = dali_run("rotate", RAGGED, layout="HWC", **args)
    out = host(W.rotate(ndd.batch(RAGGED, layout="HWC"), **args))
    assert max_diff(out, ref) <= tol


@pytest.mark.dali
def test_per_sample_and_warp_affine_match_dali():
    angles = [12.0, 95.0, -40.0]
    ref = dali_run("rotate", RAGGED, layout="HWC", angle=angles, per_sample=("angle",))
    out = host(W.rotate(ndd.batch(RAGGED, layout="HWC"), angle=per_sample(*angles)))
    assert [o.shape for o in out] == [r.shape for r in ref]
    assert max_diff(out, ref) <= 1
    for kw in ({"matrix": ZOOM}, {"matrix": ZOOM, "inverse_map": False, "fill_value": 9.0}):
        ref = dali_run("warp_affine", RAGGED, layout="HWC", **kw)
        out = host(W.warp_affine(ndd.batch(RAGGED, layout="HWC"), **kw))
        assert max_diff(out, ref) <= 1
    mats = [SHIFT, ZOOM, SHIFT]
    ref = dali_run("warp_affine", RAGGED, layout="HWC", interp_type=0, matrix=mats,
                   per_sample=("matrix",))  # fmt: skip
    out = host(
        W.warp_affine(ndd.batch(RAGGED, layout="HWC"), interp_type=NN, matrix=per_sample(*mats))
    )
    assert max_diff(out, ref) == 0


# ------------------------------------------------------------------------------ errors


def test_errors_name_op_argument_and_sample():
    b = ndd.batch(RAGGED, layout="HWC")
    with pytest.raises(TypeError, match="angle"):
        W.rotate(b)
    with pytest.raises(ShapeError, match=r"rotate: sample 0: .*HWC, FHWC"):
        W.rotate(ndd.tensor(np.zeros((3, 4, 5), np.uint8), layout="CHW"), angle=1.0).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"rotate: .*only nearest and linear"):
        W.rotate(b, angle=1.0, interp_type=ndd.types.INTERP_CUBIC).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"rotate: .*`axis`"):
        W.rotate(b, angle=1.0, axis=[0, 0, 1]).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"rotate: sample 1: `size`"):
        W.rotate(b, angle=1.0, size=per_sample([4, 4], [4, -4], [4, 4])).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"warp_affine: no transform"):
        W.warp_affine(b).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"warp_affine: the matrix is given twice"):
        W.warp_affine(b, ndd.tensor(SHIFT), matrix=SHIFT).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"warp_affine: sample 2: `matrix` must hold 6"):
        W.warp_affine(b, matrix=per_sample(SHIFT.ravel(), SHIFT.ravel(), [1, 0, 0, 1])).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"warp_affine: .*singular"):
        W.warp_affine(b, matrix=np.zeros((2, 3)), inverse_map=False).evaluate()
    with pytest.raises(InvalidArgumentError, match=r"rotate: `dtype` and .*`output_dtype`"):
        W.rotate(b, angle=1.0, dtype=ndd.uint8, output_dtype=ndd.float32).evaluate()
