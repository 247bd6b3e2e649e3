"""readers.COCO against DALI's CPU COCO reader on generated data, plus hostile annotation files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from headrace.readers import COCO
from headrace.readers._coco_masks import rle_decode, rle_encode_string
from headrace.readers.file import FileReadError, MissingFileError


def _dataset(d):
    img = d / "img"
    img.mkdir()
    sizes = {1: (40, 30), 5: (20, 50), 3: (12, 10), 7: (16, 16), 9: (8, 6)}
    names = {1: "b.jpg", 5: "a.jpg", 3: "c.jpg", 7: "d.jpg", 9: "e.jpg"}
    images = []
    for iid in (5, 1, 3, 7, 9):
        w, h = sizes[iid]
        images.append({"id": iid, "file_name": names[iid], "width": w, "height": h})
        (img / names[iid]).write_bytes(bytes([iid]) * (10 + iid))
    anns = []

    def add(iid, cat, bbox, seg, crowd=0):
        anns.append({"id": len(anns) + 1, "image_id": iid, "category_id": cat, "bbox": bbox,
                     "iscrowd": crowd, "segmentation": seg})  # fmt: skip

    add(1, 17, [1, 2, 10, 5], [[1, 2, 11, 2, 11, 7, 1, 7], [3, 3, 5, 3, 4, 6]])
    add(9, 3, [0, 0, 3, 3], [[0.3, 0.2, 3.7, 0.6, 2.2, 4.9]])
    add(1, 3, [5, 5, 0.05, 3], [[5, 5, 5.5, 5, 5.5, 8]])
    add(5, 90, [0, 0, 20, 50], [[0, 0, 19, 0, 19, 49, 0, 49]])
    add(5, 3, [2, 2, 4, 4], {"size": [50, 20], "counts": [45, 5, 15, 5, 930]}, crowd=1)
    add(3, 17, [1, 1, 6, 6], [[1, 1, 7, 1, 7, 7, 1, 7]])
    add(3, 90, [4, 4, 6, 5], [[4, 4, 10, 4.4, 9.6, 9, 4.2, 8.7]])
    add(9, 17, [2, 2, 3, 3], {"size": [6, 8], "counts": rle_encode_string([14, 3, 3, 3, 3, 3, 19])},
        crowd=1)  # fmt: skip
    add(3, 42, [0, 5, 3, 3], [[0, 5, 3, 5, 3, 8], [8.5, 0.5, 11.5, 0.5, 11.5, 2.5]])
    # values whose ratios differ between float32 and float64 division (the reference: float32)
    add(1, 42, [1.37, 0.21, 10.13, 0.23], [[1.37, 0.21, 11.5, 2.28, 0.09, 0.13, 6.43, 9.61]])
    cats = [{"id": c} for c in (90, 3, 17, 42)]
    (d / "ann.json").write_text(json.dumps({"images": images, "annotations": anns,
                                            "categories": cats}))  # fmt: skip
    return str(img), str(d / "ann.json")


CONFIGS = [
    {"image_ids": True},
    {"ltrb": True, "ratio": True, "polygon_masks": True},
    {"pixelwise_masks": True, "image_ids": True},
    {"skip_empty": True, "include_iscrowd": False, "size_threshold": 1.0,
     "avoid_class_remapping": True, "polygon_masks": True},
]  # fmt: skip


def _ours(root, ann, kw, n):
    (out,) = list(
        COCO(file_root=root, annotations_file=ann, **kw).next_epoch(n, last_batch="partial")
    )
    return [[np.asarray(s.torch()) for s in b] for b in out]


@pytest.mark.dali
@pytest.mark.parametrize("kw", CONFIGS)
def test_matches_dali(tmp_path, kw):
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    root, ann = _dataset(tmp_path)
    n = 4 if kw.get("skip_empty") else 5
    ref = dndd.readers.COCO(file_root=root, annotations_file=ann, **kw)
    out = next(iter(ref.next_epoch(batch_size=n)))
    theirs = [[np.asarray(t) for t in b.tensors] for b in out]
    ours = _ours(root, ann, kw, n)
    assert len(ours) == len(theirs)
    for j, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for s, (x, y) in enumerate(zip(a, b, strict=True)):
            assert x.dtype == y.dtype and x.shape == y.shape, (j, s, x.shape, y.shape)
            np.testing.assert_array_equal(x, y, err_msg=f"output {j} sample {s}")


def test_rle_roundtrip():
    rng = np.random.default_rng(0)
    m = (rng.random((7, 5)) < 0.4).astype(np.uint8)
    flat = m.T.ravel()
    counts, cur, run = [], 0, 0
    for v in flat:
        if v == cur:
            run += 1
        else:
            counts.append(run)
            cur, run = v, 1
    counts.append(run)
    np.testing.assert_array_equal(rle_decode(counts, 7, 5), m)
    np.testing.assert_array_equal(rle_decode(rle_encode_string(counts), 7, 5), m)


def _write(tmp_path, doc):
    (tmp_path / "x.jpg").write_bytes(b"x")
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return str(p)


GOOD_IMG = {"id": 1, "file_name": "x.jpg", "width": 10, "height": 10}
GOOD_ANN = {"image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2]}


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ("{not json", "cannot be read as JSON"),
        ({"images": [GOOD_IMG], "categories": [{"id": 1}]}, "'annotations'"),
        ({"images": [{**GOOD_IMG, "width": "10"}], "annotations": [], "categories": []},
         r"images\[0\].*'width'"),
        ({"images": [{**GOOD_IMG, "height": 10**30}], "annotations": [], "categories": []},
         r"images\[0\].*'height'"),
        ({"images": [GOOD_IMG], "annotations": [{**GOOD_ANN, "category_id": 5}],
          "categories": [{"id": 1}]}, r"annotations\[0\].*category_id"),
        ({"images": [GOOD_IMG], "annotations": [{**GOOD_ANN, "bbox": [1, "a", 1, 2]}],
          "categories": [{"id": 1}]}, r"annotations\[0\].*'bbox'"),
        ({"images": [GOOD_IMG], "annotations": [{**GOOD_ANN, "segmentation": [[1, 2]]}],
          "categories": [{"id": 1}]}, r"annotations\[0\].segmentation\[0\]"),
    ],
)  # fmt: skip
def test_hostile_annotations(tmp_path, doc, match):
    p = _write(tmp_path, doc)
    with pytest.raises(FileReadError, match=match) as e:
        COCO(file_root=tmp_path, annotations_file=p)
    assert e.value.filename == p


def test_what_real_annotation_files_hold_is_read_as_the_reference(tmp_path):
    """Boxes reaching past the image are kept as given, empty boxes and annotations of images
    not listed are dropped, and a polygon's odd last coordinate is ignored (the reference)."""
    anns = [
        {**GOOD_ANN, "bbox": [8, 7, 5, 6]},  # past the right and bottom edges
        {**GOOD_ANN, "bbox": [-3, -2, 5, 5]},  # left of and above the image
        {**GOOD_ANN, "bbox": [5, 5, -2, 3]},  # negative width: dropped
        {**GOOD_ANN, "image_id": 4},  # no such image: ignored
        {**GOOD_ANN, "segmentation": [[1, 1, 4, 1, 4, 4, 9]]},  # odd: the 9 is dropped
    ]
    doc = {"images": [GOOD_IMG], "annotations": anns, "categories": [{"id": 1}]}
    p = _write(tmp_path, doc)
    r = COCO(file_root=tmp_path, annotations_file=p, polygon_masks=True)
    ((_, boxes, labels, polys, verts),) = list(r.next_epoch())
    assert np.asarray(polys).tolist() == [[2, 0, 3]]  # (mask 2: the third box kept)
    assert np.asarray(boxes).tolist() == [[8, 7, 5, 6], [-3, -2, 5, 5], [1, 1, 2, 2]]
    assert np.asarray(labels).ravel().tolist() == [1, 1, 1]
    assert np.asarray(verts).tolist() == [[1, 1], [4, 1], [4, 4]]


def test_missing_image_and_options(tmp_path):
    doc = {"images": [GOOD_IMG, {**GOOD_IMG, "id": 2, "file_name": "gone.jpg"}],
           "annotations": [GOOD_ANN], "categories": [{"id": 1}]}  # fmt: skip
    p = _write(tmp_path, doc)
    with pytest.raises(MissingFileError, match="image id 2"):
        COCO(file_root=tmp_path, annotations_file=p)
    with pytest.raises(Exception, match="mutually exclusive"):
        COCO(file_root=tmp_path, annotations_file=p, polygon_masks=True, pixelwise_masks=True)
    r = COCO(
        file_root=tmp_path,
        annotations_file=p,
        images=["x.jpg", "x.jpg"],
        image_ids=True,
        save_preprocessed_annotations=True,
        save_preprocessed_annotations_dir=tmp_path / "m",
    )
    assert len([s for s in r.next_epoch()]) == 2
    r2 = COCO(file_root=tmp_path, preprocessed_annotations=tmp_path / "m", skip_empty=True)
    ((_, boxes, labels),) = list(r2.next_epoch())
    assert boxes.torch().tolist() == [[1.0, 1.0, 2.0, 2.0]] and labels.torch().tolist() == [1]
