"""The fast CPU box kernels against their plain-numpy definitions."""

from __future__ import annotations

import numpy as np
import pytest

from headrace.backends.cpu.detection import anchor_set, iou_matrix, match_anchors


def _boxes(rng: np.random.Generator, n: int) -> np.ndarray:
    lt = rng.random((n, 2), dtype=np.float32) * 0.7
    wh = rng.random((n, 2), dtype=np.float32) * 0.3
    return np.concatenate([lt, lt + wh], 1)


@pytest.mark.parametrize("n", [1, 2, 7, 60])
def test_anchor_set_match_equals_the_iou_matrix_definition(n: int) -> None:
    rng = np.random.default_rng(n)
    anchors = _boxes(rng, 500)
    anchors[:50] = anchors[50:100]  # equal IoUs: ties go to the first box / anchor
    anchors[100] = [0.2, 0.2, 0.2, 0.5]  # a zero-area anchor
    boxes = _boxes(rng, n)
    if n > 1:
        boxes[-1] = boxes[0]  # a repeated box: the later one claims the shared best anchor
    for criteria in (0.0, 0.3, 0.5):
        expected = match_anchors(iou_matrix(boxes, anchors), criteria)
        got = anchor_set(anchors, 1.0).match(boxes, criteria)
        np.testing.assert_array_equal(got, expected)


def test_dense_and_box_by_box_matching_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    import headrace.backends.cpu.detection as D

    rng = np.random.default_rng(4)
    for trial in range(60):
        n, m = int(rng.integers(1, 25)), int(rng.integers(1, 200))
        a = rng.random((m, 2)).astype(np.float32) * 0.8
        a = np.concatenate([a, a + rng.random((m, 2)).astype(np.float32) * 0.3], 1)
        b = rng.random((n, 2)).astype(np.float32) * 0.7
        b = np.concatenate([b, b + rng.random((n, 2)).astype(np.float32) * 0.4], 1)
        if n > 2:
            b[1] = b[0]  # equal boxes: the first keeps its anchors
        anchors = D.AnchorSet(a, 1.0)
        for criteria in (0.0, 0.5):
            dense = anchors.match(b, criteria)
            monkeypatch.setattr(D, "_DENSE_IOU", 0)  # box by box
            assert np.array_equal(anchors.match(b, criteria), dense), trial
            monkeypatch.undo()
