"""The generated COCO data set (``sample_data.coco_folder``) read back with ``readers.COCO``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import headrace as ndd
from headrace import sample_data


def test_coco_folder_reads_back_with_its_boxes(tmp_path: Path) -> None:
    folder = sample_data.coco_folder(tmp_path, num_images=5, seed=2)
    assert sample_data.coco_folder(tmp_path, num_images=5, seed=2) == folder  # reused
    doc = json.loads((folder / "annotations.json").read_text())
    reader = ndd.readers.COCO(
        file_root=folder / "images", annotations_file=folder / "annotations.json", ratio=True,
        image_ids=True,
    )  # fmt: skip
    ((jpegs, boxes, labels, ids),) = reader.next_epoch(batch_size=5)
    images = ndd.decoders.image(jpegs)
    by_id = {im["id"]: im for im in doc["images"]}
    for img, b, lab, i in zip(images.tensors, boxes.tensors, labels.tensors, ids.tensors):
        im = by_id[int(np.asarray(i)[0])]
        assert np.asarray(img).shape == (im["height"], im["width"], 3)
        anns = [a for a in doc["annotations"] if a["image_id"] == im["id"]]
        b, lab = np.asarray(b), np.asarray(lab)
        assert len(b) == len(anns) >= 1
        assert (b >= 0).all() and (b[:, :2] + b[:, 2:] <= 1).all()  # xywh inside the image
        assert set(lab.tolist()) <= {1, 2, 3, 4}  # category positions, remapped from 1/3/6/9
    assert sum(len(np.asarray(b)) for b in boxes.tensors) == len(doc["annotations"])
