"""Box and segmentation operators: deterministic ones against the reference, random ones by
their documented guarantees (boxes inside the window, thresholds met, ROIs contained)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from tests._helpers.dali_oracle import dali_ndd, max_diff

import headrace as ndd
from headrace._core.errors import InvalidArgumentError

RNG = np.random.default_rng(101)


def _boxes(k: int, ltrb: bool = True) -> np.ndarray:
    lt = RNG.random((k, 2), dtype=np.float32) * 0.6
    wh = 0.05 + RNG.random((k, 2), dtype=np.float32) * 0.35
    return np.concatenate([lt, lt + wh if ltrb else wh], 1).astype(np.float32)


def _host(b: ndd.Batch) -> list[np.ndarray]:
    return [np.asarray(t) for t in b.cpu()]


def _dali_batch(samples: list[np.ndarray]) -> object:
    return dali_ndd().batch(samples)


def _dali_host(b: object) -> list[np.ndarray]:
    return [np.asarray(t) for t in b.tensors]  # type: ignore[attr-defined]


BOXES = [_boxes(k) for k in (4, 1, 7, 0)]
XYWH = [_boxes(k, ltrb=False) for k in (3, 5, 2)]


@pytest.mark.dali
@pytest.mark.parametrize("ltrb", [False, True])
def test_bb_flip_matches_reference(ltrb: bool, device: str) -> None:
    dndd = dali_ndd()
    boxes = BOXES[:3] if ltrb else XYWH
    h, v = [1, 0, 1], [0, 1, 1]
    ours = ndd.bb_flip(
        ndd.batch(boxes),
        ltrb=ltrb,
        horizontal=ndd.batch(np.int32(h)),
        vertical=ndd.batch(np.int32(v)),
        device=device,
    )
    ref = dndd.bb_flip(
        _dali_batch(boxes),
        ltrb=ltrb,
        horizontal=dndd.batch(np.int32(h)),
        vertical=dndd.batch(np.int32(v)),
    )
    assert max_diff(_host(ours), _dali_host(ref)) == 0


@pytest.mark.dali
@pytest.mark.parametrize("ltrb", [False, True])
def test_bbox_paste_matches_reference(ltrb: bool) -> None:
    dndd = dali_ndd()
    boxes = BOXES[:3] if ltrb else XYWH
    ratio, px = [2.0, 1.0, 3.5], [0.0, 0.3, 1.0]
    ours = ndd.bbox_paste(
        ndd.batch(boxes),
        ltrb=ltrb,
        ratio=ndd.batch(np.float32(ratio)),
        paste_x=ndd.batch(np.float32(px)),
        paste_y=0.8,
    )
    ref = dndd.bbox_paste(
        _dali_batch(boxes),
        ltrb=ltrb,
        ratio=dndd.batch(np.float32(ratio)),
        paste_x=dndd.batch(np.float32(px)),
        paste_y=0.8,
    )
    assert max_diff(_host(ours), _dali_host(ref)) <= 1e-7


ROTATE_CASES = [
    {"angle": 30.0, "input_shape": [100, 200]},
    {"angle": -75.0, "input_shape": [101, 57], "mode": "fixed"},
    {"angle": 130.0, "input_shape": [64, 90, 3], "mode": "halfway", "keep_size": True},
    {"angle": 250.0, "input_shape": [90, 40], "shape_layout": "WH", "size": [70.6, 150.2]},
    {"angle": 45.5, "input_shape": [80, 80], "keep_size": True, "remove_threshold": 0.6},
    {"angle": 10.0, "input_shape": [50, 70], "bbox_normalized": False, "remove_threshold": 0.0},
]


@pytest.mark.dali
@pytest.mark.parametrize("kw", ROTATE_CASES, ids=lambda kw: "-".join(map(str, kw.values())))
@pytest.mark.parametrize("xywh", [False, True], ids=["xyXY", "xyWH"])
def test_bbox_rotate_matches_reference(kw: dict, xywh: bool) -> None:
    dndd = dali_ndd()
    boxes = [b.copy() for b in BOXES]
    boxes[0][0] = [0.0, 0.0, 0.3, 0.2]  # a corner box, partly outside most rotated canvases
    if not kw.get("bbox_normalized", True):
        boxes = [b * np.float32(40) for b in boxes]
    if xywh:
        for b in boxes:
            b[:, 2:] -= b[:, :2]
        kw = {**kw, "bbox_layout": "xyWH"}
    labels = [np.arange(len(b), dtype=np.int32).reshape(-1, 1) for b in boxes]
    ours_b, ours_l = ndd.bbox_rotate(ndd.batch(boxes), ndd.batch(labels), **kw)
    ref_b, ref_l = dndd.bbox_rotate(_dali_batch(boxes), _dali_batch(labels), **kw)
    assert [np.asarray(t).tolist() for t in ours_l.cpu()] == [t.tolist() for t in _dali_host(ref_l)]
    tol = 4e-5 if kw.get("bbox_normalized", True) is False else 4e-7
    assert max_diff(_host(ours_b), _dali_host(ref_b)) <= tol
    alone = ndd.bbox_rotate(ndd.batch(boxes), **kw)
    assert max_diff(_host(alone), _host(ours_b)) == 0


def test_bbox_rotate_errors_name_the_argument() -> None:
    b = ndd.tensor(np.array([[0.1, 0.1, 0.5, 0.5]], np.float32))
    with pytest.raises(InvalidArgumentError, match="mutually exclusive"):
        ndd.bbox_rotate(b, angle=10.0, input_shape=[10, 10], keep_size=True, size=[5, 5]).evaluate()
    with pytest.raises(InvalidArgumentError, match="bbox_layout"):
        ndd.bbox_rotate(b, angle=10.0, input_shape=[10, 10], bbox_layout="xyXYZ").evaluate()
    with pytest.raises(InvalidArgumentError, match="remove_threshold"):
        ndd.bbox_rotate(b, angle=10.0, input_shape=[10, 10], remove_threshold=1.5).evaluate()


ANCHORS = np.array(
    [
        [x, y, x + w, y + w]
        for w in (0.2, 0.45)
        for x in np.arange(0, 1 - w + 1e-6, 0.15)
        for y in np.arange(0, 1 - w + 1e-6, 0.2)
    ],
    np.float32,
)


@pytest.mark.dali
@pytest.mark.parametrize(
    "kw",
    [
        {"criteria": 0.4},
        {"criteria": 0.2, "offset": True},
        {
            "offset": True,
            "scale": 300.0,
            "means": [0.1, -0.1, 0.2, 0.0],
            "stds": [0.1, 0.1, 0.2, 0.2],
        },
    ],
    ids=["plain", "offset", "offset-scale-norm"],
)
def test_box_encoder_matches_reference(kw: dict, device: str) -> None:
    dndd = dali_ndd()
    labels = [np.arange(1, len(b) + 1, dtype=np.int32) for b in BOXES]
    ours_b, ours_l = ndd.box_encoder(
        ndd.batch(BOXES), ndd.batch(labels), anchors=ANCHORS, device=device, **kw
    )
    ref_b, ref_l = dndd.box_encoder(
        _dali_batch(BOXES), _dali_batch(labels), anchors=ANCHORS.ravel().tolist(), **kw
    )
    assert [np.array_equal(a, b) for a, b in zip(_host(ours_l), _dali_host(ref_l))] == [True] * 4
    tol = 2e-5 if kw.get("offset") else 0
    assert max_diff(_host(ours_b), _dali_host(ref_b)) <= tol


@pytest.mark.dali
@pytest.mark.parametrize("reindex", [False, True])
def test_select_masks_matches_reference(reindex: bool) -> None:
    dndd = dali_ndd()
    polys = [np.array([[0, 0, 3], [1, 3, 5], [2, 5, 9], [4, 9, 10]], np.int32)] * 2
    verts = [np.arange(20, dtype=np.float32).reshape(10, 2), np.ones((10, 3), np.float32)]
    ids = [np.array([4, 0, 2], np.int32), np.array([1], np.int32)]
    ours = ndd.segmentation.select_masks(
        ndd.batch(ids), ndd.batch(polys), ndd.batch(verts), reindex_masks=reindex
    )
    ref = dndd.segmentation.select_masks(
        _dali_batch(ids), _dali_batch(polys), _dali_batch(verts), reindex_masks=reindex
    )
    for a, b in zip(ours, ref):
        assert max_diff(_host(a), _dali_host(b)) == 0


def test_select_masks_keeps_every_polygon_of_a_mask() -> None:
    polys = np.array([[0, 0, 2], [1, 2, 3], [0, 3, 5]], np.int32)
    verts = np.arange(10, dtype=np.float32).reshape(5, 2)
    p, v = ndd.segmentation.select_masks(ndd.tensor(np.int32([0])), polys, verts)
    assert np.asarray(p).tolist() == [[0, 0, 2], [0, 2, 4]]
    assert np.asarray(v).tolist() == [[0, 1], [2, 3], [6, 7], [8, 9]]
    with pytest.raises(InvalidArgumentError, match="mask_id 3 is not present"):
        ndd.segmentation.select_masks(ndd.tensor(np.int32([3])), polys, verts).evaluate()


# --- random_bbox_crop -----------------------------------------------------------------------------
def _iou(window: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    lo = np.maximum(boxes[:, :2], window[:2])
    hi = np.minimum(boxes[:, 2:], window[2:])
    inter = np.prod(np.clip(hi - lo, 0, None), 1)
    area = np.prod(boxes[:, 2:] - boxes[:, :2], 1)
    return inter / (area + np.prod(window[2:] - window[:2]) - inter)


@pytest.mark.parametrize("threshold", [0.1, 0.3])
def test_random_bbox_crop_meets_threshold_and_keeps_boxes_inside(threshold: float) -> None:
    boxes = BOXES[:3]
    labels = [np.arange(len(b), dtype=np.int32) + 10 for b in boxes]
    rng = ndd.random.RNG(seed=5)
    for _ in range(4):
        anchor, shape, out, lab, idx = ndd.random_bbox_crop(
            ndd.batch(boxes),
            ndd.batch(labels),
            thresholds=[threshold],
            allow_no_crop=False,
            scaling=[0.3, 1.0],
            aspect_ratio=[0.5, 2.0],
            num_attempts=50,
            output_bbox_indices=True,
            all_boxes_above_threshold=False,
            rng=rng,
        )
        for i, b in enumerate(boxes):
            a, s = np.asarray(anchor.tensors[i]), np.asarray(shape.tensors[i])
            win = np.concatenate([a, a + s])
            assert (a >= 0).all() and (a + s <= 1 + 1e-6).all()
            assert _iou(win, b).max() >= threshold - 1e-6 or (s == 1).all()
            o, k = np.asarray(out.tensors[i]), np.asarray(idx.tensors[i])
            assert ((o >= 0) & (o <= 1)).all() and len(o) == len(k) > 0
            assert np.asarray(lab.tensors[i]).tolist() == (k + 10).tolist()
            centres = (b[k, :2] + b[k, 2:]) / 2
            assert ((centres >= a - 1e-6) & (centres <= a + s + 1e-6)).all()
            # the output boxes are the kept boxes clipped to the window, relative to it
            ref = (np.clip(b[k].reshape(-1, 2, 2), a, a + s) - a) / s
            assert np.abs(o - ref.reshape(-1, 4)).max() < 1e-5


def test_random_bbox_crop_all_boxes_overlap_and_prune() -> None:
    b = np.array([[0.2, 0.2, 0.5, 0.5], [0.4, 0.4, 0.8, 0.7]], np.float32)
    lab = np.int32([1, 2])
    rng = ndd.random.RNG(seed=9)
    for _ in range(10):
        a, s, _, _, k = ndd.random_bbox_crop(
            b,
            lab,
            thresholds=[0.5],
            threshold_type="overlap",
            allow_no_crop=False,
            scaling=[0.3, 1.0],
            aspect_ratio=[0.5, 2.0],
            num_attempts=100,
            bbox_prune_threshold=0.5,
            output_bbox_indices=True,
            rng=rng,
        )
        a, s = np.asarray(a), np.asarray(s)
        lo, hi = np.maximum(b[:, :2], a), np.minimum(b[:, 2:], a + s)
        covered = np.prod(np.clip(hi - lo, 0, None), 1) / np.prod(b[:, 2:] - b[:, :2], 1)
        assert (covered >= 0.5 - 1e-6).all()  # every box passes the threshold
        assert np.asarray(k).tolist() == [0, 1]


def test_random_bbox_crop_square_windows_by_default_and_xywh_layout() -> None:
    b = np.array([[0.1, 0.2, 0.3, 0.3]], np.float32)  # x, y, w, h
    _, s, out, _ = ndd.random_bbox_crop(
        b,
        np.int32([4]),
        bbox_layout="xyWH",
        scaling=[0.6, 0.9],
        allow_no_crop=False,
        rng=ndd.random.RNG(seed=3),
    )
    s = np.asarray(s)
    assert s[0] == pytest.approx(s[1]) and 0.6 <= s[0] <= 0.9
    o = np.asarray(out)[0]
    assert o[2] > 0 and o[3] > 0 and o[0] + o[2] <= 1 + 1e-6


@pytest.mark.parametrize("eval_mode", [ndd.EvalMode.eager, ndd.EvalMode.deferred])
def test_random_bbox_crop_without_labels_has_no_labels_output(eval_mode) -> None:
    boxes = BOXES[:3]
    kw = {"thresholds": [0.1], "scaling": [0.3, 1.0], "aspect_ratio": [0.5, 2.0]}
    kw["num_attempts"] = 50
    with eval_mode:
        three = ndd.random_bbox_crop(ndd.batch(boxes), rng=ndd.random.RNG(seed=4), **kw)
        four = ndd.random_bbox_crop(
            ndd.batch(boxes), rng=ndd.random.RNG(seed=4), output_bbox_indices=True, **kw
        )
        labelled = ndd.random_bbox_crop(
            ndd.batch(boxes),
            ndd.batch([np.arange(len(b), dtype=np.int32) for b in boxes]),
            rng=ndd.random.RNG(seed=4),
            output_bbox_indices=True,
            **kw,
        )
    assert len(three) == 3 and len(four) == 4
    assert [t.dtype for t in four] == [ndd.float32, ndd.float32, ndd.float32, ndd.int32]
    # the same draws as with labels: the windows, boxes and indices are those of the labelled call
    for ours, ref in zip([*four[:3], four[3]], [*labelled[:3], labelled[4]]):
        assert all(np.array_equal(a, b) for a, b in zip(_host(ours), _host(ref)))
    for ours, ref in zip(three, four[:3]):
        assert all(np.array_equal(a, b) for a, b in zip(_host(ours), _host(ref)))
    single = ndd.random_bbox_crop(BOXES[0], rng=ndd.random.RNG(seed=4), **kw)
    assert len(single) == 3 and np.asarray(single[2]).shape[1] == 4


@pytest.mark.dali
def test_random_bbox_crop_outputs_like_reference() -> None:
    dndd = dali_ndd()
    b, lab = BOXES[0], np.arange(4, dtype=np.int32)
    kw = {
        "crop_shape": [30, 40],
        "input_shape": [120, 100],
        "thresholds": [0.0],
        "output_bbox_indices": True,
    }
    ours = ndd.random_bbox_crop(b, lab, rng=ndd.random.RNG(seed=1), **kw)
    ref = dndd.random_bbox_crop(dndd.as_tensor(b), dndd.as_tensor(lab), **kw)
    assert [(np.asarray(t).dtype, np.asarray(t).ndim) for t in ours] == [
        (np.asarray(t).dtype, np.asarray(t).ndim) for t in ref
    ]
    a, s = np.asarray(ours[0]), np.asarray(ours[1])
    assert s.tolist() == [30, 40] and (a == np.round(a)).all()
    assert 0 <= a[0] <= 90 and 0 <= a[1] <= 80


def test_random_bbox_crop_gives_up_after_total_num_attempts() -> None:
    b = np.array([[0.0, 0.0, 0.1, 0.1]], np.float32)
    a, s, out, _ = ndd.random_bbox_crop(
        b,
        np.int32([1]),
        thresholds=[0.99],
        allow_no_crop=False,
        scaling=[0.9, 1.0],
        total_num_attempts=5,
        quiet=True,
        rng=ndd.random.RNG(seed=0),
    )
    assert np.asarray(a).tolist() == [0, 0] and np.asarray(s).tolist() == [1, 1]
    assert np.asarray(out).tolist() == b.tolist()


def test_random_bbox_crop_sample_windows_do_not_depend_on_other_samples() -> None:
    boxes = [np.float32([[0.1, 0.1, 0.4, 0.5]]), np.float32([[0.5, 0.5, 0.9, 0.8]] * 2),
             np.float32([[0.2, 0.3, 0.6, 0.9]])]  # fmt: skip
    other = [boxes[0], np.float32([[0.0, 0.0, 0.05, 0.05]] * 3), boxes[2]]

    def windows(bs: list[np.ndarray]) -> list[list[float]]:
        a, s, *_ = ndd.random_bbox_crop(
            ndd.batch(bs), ndd.batch([np.zeros(len(b), np.int32) for b in bs]),
            thresholds=[0.3, 0.5], scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0],
            rng=ndd.random.RNG(seed=4),
        )  # fmt: skip
        return [np.asarray(a.tensors[i]).tolist() + np.asarray(s.tensors[i]).tolist()
                for i in range(len(bs))]  # fmt: skip

    first, second = windows(boxes), windows(other)
    assert first[0] == second[0] and first[2] == second[2]
    assert windows(boxes[:1]) == first[:1]  # a batch of one: the same first window


def test_random_bbox_crop_mixed_batch_hard_and_empty_samples() -> None:
    """Samples searched together: empty ones take any window, easy ones meet the threshold at
    once, hard ones keep searching (blocks of attempts) or give up with the whole image."""
    rng = np.random.default_rng(3)
    boxes = []
    for i in range(40):
        lt = rng.uniform(0, 0.6, (i % 5, 2))
        boxes.append(np.concatenate([lt, lt + rng.uniform(0.1, 0.4, (i % 5, 2))], 1))
    boxes = [np.minimum(b, 1).astype(np.float32) for b in boxes]
    labels = [np.arange(len(b), dtype=np.int32) for b in boxes]
    anchor, shape, out, lab, idx = ndd.random_bbox_crop(
        ndd.batch(boxes), ndd.batch(labels), thresholds=[0.4], allow_no_crop=False,
        scaling=[0.1, 1.0], aspect_ratio=[0.5, 2.0], total_num_attempts=3000, quiet=True,
        output_bbox_indices=True, rng=ndd.random.RNG(seed=11),
    )  # fmt: skip
    searched = 0
    for i, b in enumerate(boxes):
        a, s = np.asarray(anchor.tensors[i]), np.asarray(shape.tensors[i])
        k = np.asarray(idx.tensors[i])
        assert (a >= 0).all() and (a + s <= 1 + 1e-9).all()
        assert np.asarray(lab.tensors[i]).tolist() == k.tolist()
        if len(b) == 0:
            assert len(k) == 0 and (s < 1).any()  # a drawn window, not the fallback
        elif (s == 1).all() and (a == 0).all():
            assert k.tolist() == list(range(len(b)))  # gave up: every box, unchanged
            assert np.asarray(out.tensors[i]).tolist() == b.tolist()
        else:
            searched += 1
            assert _iou(np.concatenate([a, a + s]), b).min() >= 0.4 - 1e-6  # every box
            assert len(k) > 0
    assert searched >= 5


# --- roi_random_crop / random_crop_generator ------------------------------------------------------
def test_roi_random_crop_contains_the_roi_and_covers_every_anchor() -> None:
    x = np.zeros((10, 12), np.uint8)
    rng = ndd.random.RNG(seed=2)
    seen = set()
    for _ in range(60):
        a = np.asarray(
            ndd.roi_random_crop(x, crop_shape=[4, 5], roi_start=[2, 3], roi_end=[5, 6], rng=rng)
        ).tolist()
        assert 1 <= a[0] <= 2 and 1 <= a[1] <= 3
        seen.add(tuple(a))
    assert len(seen) == 6
    # a ROI larger than the window: the window lies inside the ROI
    for _ in range(10):
        a = np.asarray(
            ndd.roi_random_crop(
                crop_shape=[2], in_shape=[20], roi_start=[5], roi_shape=[6], rng=rng
            )
        )
        assert a.dtype == np.int64 and 5 <= int(a[0]) <= 9


def test_random_crop_generator_windows_fit_the_ranges() -> None:
    shapes = [np.array([100, 200]), np.array([300, 120])]
    rng = ndd.random.RNG(seed=4)
    for _ in range(10):
        anchor, shape = ndd.random_crop_generator(
            ndd.batch(shapes), random_area=[0.2, 0.5], random_aspect_ratio=[0.5, 2.0], rng=rng
        )
        for i, hw in enumerate(shapes):
            (y, x), (h, w) = np.asarray(anchor.tensors[i]), np.asarray(shape.tensors[i])
            assert np.asarray(anchor.tensors[i]).dtype == np.int32
            assert 0 <= y <= hw[0] - h and 0 <= x <= hw[1] - w
            assert 0.18 <= h * w / hw.prod() <= 0.52 and 0.45 <= w / h <= 2.2


# --- segmentation ---------------------------------------------------------------------------------
def test_random_mask_pixel_draws_foreground() -> None:
    m = np.zeros((8, 9), np.int32)
    m[2:4, 3:6] = 2
    m[6, 1] = 1
    rng = ndd.random.RNG(seed=1)
    fg = {
        tuple(np.asarray(ndd.segmentation.random_mask_pixel(m, foreground=1, rng=rng)).tolist())
        for _ in range(60)
    }
    assert fg == {(6, 1)} | {(y, x) for y in (2, 3) for x in (3, 4, 5)}
    v = ndd.segmentation.random_mask_pixel(m, foreground=1, value=1, rng=rng)
    assert np.asarray(v).tolist() == [6, 1] and np.asarray(v).dtype == np.int64
    t = ndd.segmentation.random_mask_pixel(m, foreground=1, threshold=1.5, rng=rng)
    assert m[tuple(np.asarray(t))] == 2
    anywhere = np.asarray(ndd.segmentation.random_mask_pixel(np.zeros((3, 4)), foreground=1))
    assert (anywhere >= 0).all() and (anywhere < [3, 4]).all()


def _blob_boxes(m: np.ndarray, cls: int) -> set[tuple[int, ...]]:
    _, _, stats, _ = cv2.connectedComponentsWithStats((m == cls).astype(np.uint8), connectivity=4)
    return {(int(y), int(x), int(y + h), int(x + w)) for x, y, w, h, _ in stats[1:]}


def test_random_object_bbox_boxes_are_blobs() -> None:
    m = np.random.default_rng(0).integers(0, 3, (12, 14)).astype(np.int32)
    rng = ndd.random.RNG(seed=3)
    for _ in range(20):
        box, c = ndd.segmentation.random_object_bbox(m, format="box", output_class=True, rng=rng)
        c = int(np.asarray(c))
        assert c in (1, 2) and tuple(np.asarray(box).tolist()) in _blob_boxes(m, c)
    big = max(_blob_boxes(m, 1), key=lambda b: (b[2] - b[0]) * (b[3] - b[1]))
    k1 = ndd.segmentation.random_object_bbox(m, format="start_end", classes=[1], k_largest=1)
    lab = cv2.connectedComponentsWithStats((m == 1).astype(np.uint8), connectivity=4)
    largest = lab[2][1:, 4].argmax()
    x, y, w, h = lab[2][1 + largest, :4]
    assert [np.asarray(t).tolist() for t in k1] == [[y, x], [y + h, x + w]]
    assert big  # the map has class-1 blobs


@pytest.mark.dali
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"format": "box", "output_class": True},
        {"format": "start_end", "threshold": [2, 3]},
        {"foreground_prob": 0.0, "output_class": True},
    ],
    ids=["anchor-shape", "box-class", "threshold", "background"],
)
def test_random_object_bbox_matches_reference_when_one_object_qualifies(kw: dict) -> None:
    dndd = dali_ndd()
    m = np.zeros((8, 8), np.int32)
    m[0:2, 0:2] = 1
    m[5:8, 4:8] = 1
    m[4, 0] = 2
    if "threshold" not in kw and kw.get("foreground_prob") != 0.0:
        m[m == 2] = 0
        m[0:2, 0:2] = 0
    ours = ndd.segmentation.random_object_bbox(m, rng=ndd.random.RNG(seed=1), **kw)
    ref = dndd.segmentation.random_object_bbox(dndd.as_tensor(m), **kw)
    ours = ours if isinstance(ours, tuple) else (ours,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert [np.asarray(t).tolist() for t in ours] == [np.asarray(t).tolist() for t in ref]
    assert [np.asarray(t).dtype for t in ours] == [np.asarray(t).dtype for t in ref]


@pytest.mark.parametrize("cv_threads", [1, 4])
def test_blob_statistics_from_opencv_equal_the_labelling_in_raster_order(cv_threads: int) -> None:
    """1-D and 2-D masks take OpenCV's per-component boxes and areas: the same blobs, sizes and
    order (raster order of each blob's first pixel, which ``k_largest`` ties and the random pick
    depend on) as the labelling of any rank, also with OpenCV's own threads."""
    from headrace.backends.cpu import segmentation as sg

    rng = np.random.default_rng(5)
    before = cv2.getNumThreads()
    cv2.setNumThreads(cv_threads)
    try:
        for t in range(60):
            shape = [(300, 400), (1, 50), (37,), (5, 3), (257, 513)][t % 5]
            m = rng.random(shape) < rng.uniform(0.05, 0.95)
            want = sg._blob_boxes(*sg.label_blobs(m))
            got = sg._blob_boxes_2d(m)
            for w, g in zip(want, got):
                assert w.shape == g.shape and np.array_equal(w, g)
    finally:
        cv2.setNumThreads(before)


def test_random_object_bbox_volume_and_empty_mask() -> None:
    v = np.zeros((4, 5, 6), np.uint8)
    v[1:3, 2, 1:4] = 1
    v[2, 2:4, 3] = 1  # joined through faces across slices
    a, s = ndd.segmentation.random_object_bbox(v)
    assert np.asarray(a).tolist() == [1, 2, 1] and np.asarray(s).tolist() == [2, 2, 3]
    a, s = ndd.segmentation.random_object_bbox(np.zeros((5, 7), np.uint8))
    assert np.asarray(a).tolist() == [0, 0] and np.asarray(s).tolist() == [5, 7]


# --- multi_paste ----------------------------------------------------------------------------------
_PRNG = np.random.default_rng(7)
PASTE = [
    _PRNG.integers(0, 255, (h, w, 3), dtype=np.uint8) for h, w in ((20, 30), (25, 18), (16, 16))
]
PASTE_IDS = [np.int32([0, 2, 1]), np.int32([1]), np.int32([2, 2])]


def _paste_kw(rel: bool) -> dict:
    if rel:
        pick = [
            {
                "in_anchors_rel": np.float32([[0.1, 0.33], [0.5, 0.26], [0.0, 0.7]]),
                "shapes_rel": np.float32([[0.5, 0.4], [0.3, 0.3], [0.2, 0.3]]),
                "out_anchors_rel": np.float32([[0.1, 0.5], [0.66, 0.16], [0.3, 0.4]]),
            }
        ] * 3
        return {k: [p[k][: len(i)] for p, i in zip(pick, PASTE_IDS)] for k in pick[0]}
    return {
        "in_anchors": [
            np.int32([[1, 2], [0, 0], [5, 3]]),
            np.int32([[4, 1]]),
            np.int32([[0, 0], [3, 3]]),
        ],
        "shapes": [
            np.int32([[10, 12], [8, 8], [6, 5]]),
            np.int32([[12, 10]]),
            np.int32([[16, 16], [5, 7]]),
        ],
        "out_anchors": [
            np.int32([[0, 0], [5, 6], [10, 20]]),
            np.int32([[3, 4]]),
            np.int32([[0, 0], [9, 2]]),
        ],
    }


@pytest.mark.dali
@pytest.mark.parametrize("rel", [False, True], ids=["absolute", "relative"])
def test_multi_paste_in_ids_matches_reference(rel: bool, device: str) -> None:
    dndd = dali_ndd()
    kw = _paste_kw(rel)
    ours = ndd.multi_paste(
        ndd.batch(PASTE, layout="HWC"),
        in_ids=ndd.batch(PASTE_IDS),
        output_size=(30, 30),
        dtype=ndd.float32 if rel else None,
        device=device,
        **{k: ndd.batch(v) for k, v in kw.items()},
    )
    ref = dndd.multi_paste(
        dndd.batch(PASTE, layout="HWC"),
        in_ids=dndd.batch(PASTE_IDS),
        output_size=(30, 30),
        dtype=dndd.float32 if rel else None,
        **{k: dndd.batch(v) for k, v in kw.items()},
    )
    assert max_diff(_host(ours), _dali_host(ref)) == 0
    assert ours.dtype == (ndd.float32 if rel else ndd.uint8)


@pytest.mark.dali
def test_multi_paste_of_several_inputs_matches_reference(device: str) -> None:
    dndd = dali_ndd()
    f = [_PRNG.random((12, 14, 1), dtype=np.float32) * 400 - 50 for _ in range(3)]
    g = [x * 2 for x in f]
    kw = {"out_anchors": np.int32([[0, 0], [3, 4]]), "shapes": np.int32([[5, 5], [6, 6]])}
    ours = ndd.multi_paste(ndd.batch(f), ndd.batch(g), dtype=ndd.uint8, device=device, **kw)
    ref = dndd.multi_paste(_dali_batch(f), _dali_batch(g), dtype=dndd.uint8, **kw)
    assert max_diff(_host(ours), _dali_host(ref)) == 0


def test_multi_paste_errors_name_the_region() -> None:
    x = ndd.batch([np.zeros((4, 4, 1), np.uint8)] * 2)
    with pytest.raises(InvalidArgumentError, match=r"region 0 .* does not fit the output canvas"):
        ndd.multi_paste(x, out_anchors=np.int32([[2, 2]])).evaluate()
    with pytest.raises(InvalidArgumentError, match="give output_size"):
        ndd.multi_paste(
            ndd.batch([np.zeros((4, 4, 1), np.uint8), np.zeros((3, 4, 1), np.uint8)])
        ).evaluate()
    with pytest.raises(InvalidArgumentError, match="in_ids \\[5\\] out of range"):
        ndd.multi_paste(x, in_ids=[5], output_size=[4, 4]).evaluate()


@pytest.mark.parametrize("offset", [False, True])
def test_box_encoder_whole_batch_equals_sample_by_sample(offset: bool, monkeypatch) -> None:
    """The batch path (padded [S, N, M] IoU) gives exactly the per-sample path's outputs:
    samples with 0, 1 and many boxes, repeated boxes (ties) and boxes claiming one anchor."""
    from headrace.backends.cpu import detection as det

    rng = np.random.default_rng(5)
    boxes = []
    for n in (0, 1, 7, 3, 12, 0, 5):
        lt = rng.uniform(0, 0.7, (n, 2))
        b = np.concatenate([lt, lt + rng.uniform(0.05, 0.3, (n, 2))], 1).astype(np.float32)
        if n >= 3:
            b[2] = b[1]  # a tie: the first of the equal boxes wins
        boxes.append(b)
    labels = [rng.integers(1, 50, len(b)).astype(np.int32) for b in boxes]
    kw = dict(anchors=ANCHORS, criteria=0.3, offset=offset, scale=2.0,
              means=[0.1, 0, 0, 0.2], stds=[0.1, 0.1, 0.2, 0.2])  # fmt: skip

    def run() -> tuple[list[np.ndarray], list[np.ndarray]]:
        eb, el = ndd.box_encoder(ndd.batch(boxes), ndd.batch(labels), **kw)
        return _host(eb), _host(el)

    whole = run()
    monkeypatch.setattr(det, "_BATCH_PAIRS", 0)  # force the per-sample path
    each = run()
    for a, b in zip(whole[0] + whole[1], each[0] + each[1]):
        np.testing.assert_array_equal(a, b)
    assert whole[1][0].sum() == 0 and (whole[1][2] > 0).sum() >= 5  # (7 boxes, one a repeat)
