"""``headrace preview --pipeline detection``: SSD-augmented COCO samples with their boxes drawn."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

import headrace as ndd
from headrace import pipelines, sample_data
from headrace.cli import main

pytest.importorskip("torch")

COLOR = (255, 40, 200)  # pipelines.draw_boxes' default, RGB


@pytest.fixture(scope="module")
def coco(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_data.coco_folder(tmp_path_factory.mktemp("cache"), num_images=6)


def _expected(coco: Path, num: int, seed: int) -> list[np.ndarray]:
    """The boxes the preview draws: the same reader and pipeline, the same seeds."""
    reader = ndd.readers.COCO(
        file_root=coco / "images", annotations_file=coco / "annotations.json", ltrb=True,
        ratio=True, skip_empty=True, random_shuffle=True, seed=seed,
    )  # fmt: skip
    enc, boxes, labels = next(iter(reader.next_epoch(batch_size=num, last_batch="partial")))
    _, boxes, _ = pipelines.detection_pipeline(
        enc, boxes, labels, encode=False, rng=ndd.random.RNG(seed)
    )
    return [np.asarray(b.cpu()) for b in boxes.tensors]


def test_preview_draws_the_augmented_boxes(
    coco: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "det.png"
    assert main(["preview", str(coco), "--pipeline", "detection", "--out", str(out),
                 "--num", "4", "--seed", "3"]) == 0  # fmt: skip
    assert "4 detection-pipeline samples with their boxes" in capsys.readouterr().out
    grid = cv2.cvtColor(cv2.imread(str(out)), cv2.COLOR_BGR2RGB)
    assert grid.shape == (2 * (300 + 24) + 2, 2 * 302 + 2, 3)  # 2x2 tiles of 300x300
    drawn = np.all(grid == COLOR, axis=2)
    boxes = _expected(coco, 4, 3)
    assert sum(len(b) for b in boxes) > 0
    for k, tile_boxes in enumerate(boxes):
        y0, x0 = 2 + (k // 2) * (300 + 24), 2 + (k % 2) * 302
        tile = drawn[y0 : y0 + 300, x0 : x0 + 300]
        for left, top, right, bottom in tile_boxes:  # every corner of every box is drawn
            for x, y in ((left, top), (right, top), (left, bottom), (right, bottom)):
                assert tile[round(y * 299), round(x * 299)], (k, left, top, right, bottom)
        if not len(tile_boxes):
            assert not tile.any()


def test_preview_with_an_annotations_file(coco: Path, tmp_path: Path) -> None:
    out = tmp_path / "det.jpg"
    args = ["preview", str(coco / "images"), "--annotations", str(coco / "annotations.json"),
            "--pipeline", "detection", "--out", str(out), "--num", "2"]  # fmt: skip
    assert main(args) == 0
    assert cv2.imread(str(out)).shape[:2] == (300 + 24 + 2, 2 * 302 + 2)


def test_preview_detection_errors(
    coco: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "x.png")
    assert main(["preview", str(tmp_path), "--pipeline", "detection", "--out", out]) == 2
    assert "no annotations.json there; give the COCO JSON file with --annotations" in (
        capsys.readouterr().err
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"images": []}')
    assert main(["preview", str(coco / "images"), "--annotations", str(bad), "--pipeline",
                 "detection", "--out", out]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "readers.COCO" in err and "'annotations'" in err and "Traceback" not in err
