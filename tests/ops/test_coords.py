"""coord_flip, coord_transform and transforms.* against the reference (DALI, CPU)."""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.dali_oracle import dali_ndd, max_diff

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError

_rng = np.random.default_rng(3)
PTS = [_rng.random((6, 2), dtype=np.float32), _rng.random((3, 2), dtype=np.float32)]
PTS3 = [_rng.random((4, 3), dtype=np.float32) * 5, _rng.random((2, 3), dtype=np.float32)]
AFF = [(_rng.random((2, 3), dtype=np.float32) - 0.5) * 4 for _ in range(2)]
AFF3 = [(_rng.random((3, 4), dtype=np.float32) - 0.5) * 4 for _ in range(2)]


def _np(b):
    return [t.torch().cpu().numpy() for t in b.tensors]


def _ref(fn, inputs, **kw):
    d = dali_ndd()
    f = d
    for part in fn.split("."):
        f = getattr(f, part)
    ins = [d.batch(list(x)) for x in inputs]
    if not ins:
        kw["batch_size"] = 2
    return [np.asarray(t) for t in f(*ins, **kw).tensors]


def _ours(fn, inputs, **kw):
    f = ndd
    for part in fn.split("."):
        f = getattr(f, part)
    ins = [ndd.batch(list(x)) for x in inputs]
    if not ins:
        kw["batch_size"] = 2
    return _np(f(*ins, **kw))


CASES = [
    ("coord_flip", (PTS,), {}, 0),
    ("coord_flip", (PTS,), {"layout": "yx", "flip_x": 0, "flip_y": 1, "center_y": 0.3}, 0),
    ("coord_flip", (PTS3,), {"flip_z": 1, "flip_y": 1, "center_x": 2.0}, 0),
    ("coord_transform", (PTS,), {"M": [[1, 2], [3, 4], [5, 6]], "T": [1, 2, 3]}, 1e-5),
    ("coord_transform", (PTS3,), {"MT": [[0.5, 1, 2, 3], [4, 5, 6, 7]]}, 1e-5),
    ("coord_transform", (PTS,), {"M": 2.0, "T": 1}, 0),
    ("transforms.translation", (), {"offset": [1, 2]}, 0),
    ("transforms.translation", (AFF,), {"offset": [1, -2], "reverse_order": True}, 1e-6),
    ("transforms.scale", (AFF,), {"scale": [2, 3], "center": [1, 2]}, 1e-6),
    ("transforms.scale", (AFF,), {"scale": 2.5}, 1e-6),
    ("transforms.scale", (), {"scale": 2.0, "ndim": 3}, 0),
    ("transforms.rotation", (), {"angle": 30, "center": [1, 2]}, 1e-6),
    ("transforms.rotation", (AFF3,), {"angle": 40, "axis": [1, 2, 3], "center": [1, 0, 2]}, 1e-5),
    ("transforms.rotation", (AFF,), {"angle": -75, "reverse_order": True}, 1e-5),
    ("transforms.shear", (), {"angles": [10, -20], "center": [3, 4]}, 1e-6),
    ("transforms.shear", (AFF3,), {"shear": [[1, 2], [3, 4], [5, 6]]}, 1e-5),
    ("transforms.crop", (), {"from_start": [10, 20], "from_end": [30, 60], "to_end": [0, 5]}, 1e-6),
    ("transforms.crop", (AFF,), {"from_start": [3, 2], "from_end": [1, 6], "absolute": True}, 1e-6),
    ("transforms.crop", (), {}, 0),
    ("transforms.combine", (AFF, AFF[::-1]), {}, 1e-5),
    ("transforms.combine", (AFF, AFF[::-1], AFF), {"reverse_order": True}, 1e-5),
]


@pytest.mark.dali
@pytest.mark.parametrize(("fn", "inputs", "kw", "atol"), CASES, ids=lambda v: str(v)[:30])
def test_matches_reference(fn, inputs, kw, atol):
    ours, ref = _ours(fn, inputs, **kw), _ref(fn, inputs, **kw)
    assert max_diff(ours, ref) <= atol


def test_transform_chain_feeds_coord_transform():
    m = ndd.transforms.rotation(ndd.transforms.translation(offset=[1, 0]), angle=90)
    out = ndd.coord_transform(ndd.tensor(np.float32([[1, 0]])), MT=m).torch().cpu().numpy()
    np.testing.assert_allclose(out, [[0, 2]], atol=1e-6)


def test_integer_output_rounds_and_saturates():
    x = ndd.tensor(np.int16([[1, 2], [-3, 4]]))
    out = ndd.coord_transform(x, M=[0.25, 0, 0, 20000], dtype=ndd.int16).torch().tolist()
    assert out == [[0, 32767], [-1, 32767]]  # 0.25 → 0, -0.75 → -1


F2 = ndd.tensor(np.float32([[1, 2]]))
EYE3 = ndd.tensor(np.eye(3, dtype=np.float32))
BAD_CALLS = [
    (lambda: ndd.coord_flip(ndd.tensor(np.int32([[1, 2]]))), InvalidTypeError, "float32"),
    (lambda: ndd.coord_flip(ndd.tensor(np.float32([[1, 2, 3, 4]]))), ShapeError, "(N, D)"),
    (lambda: ndd.coord_flip(F2, layout="xq"), InvalidArgumentError, "layout"),
    (lambda: ndd.coord_transform(ndd.tensor(np.float32([1, 2]))), ShapeError, "2 dims"),
    (lambda: ndd.coord_transform(F2, M=[1, 2, 3]), InvalidArgumentError, "'M'"),
    (lambda: ndd.coord_transform(F2, dtype=ndd.uint8), InvalidArgumentError, "dtype"),
    (lambda: ndd.transforms.translation(EYE3, offset=[1, 2]), InvalidArgumentError, "(ndim + 1)"),
    (lambda: ndd.transforms.shear(shear=[1, 2], angles=[1, 2]), InvalidArgumentError, "one of"),
    (lambda: ndd.transforms.shear(shear=[1, 2, 3]), InvalidArgumentError, "'shear'"),
    (lambda: ndd.transforms.rotation(angle=[1, 2]), InvalidArgumentError, "'angle'"),
]


@pytest.mark.parametrize(("call", "err", "words"), BAD_CALLS)
def test_clear_errors(call, err, words):
    with pytest.raises(err) as e:
        call().evaluate()
    assert words in str(e.value)
    assert "transform" in str(e.value) or "coord_flip" in str(e.value)
