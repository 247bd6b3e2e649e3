"""Batch and type utilities: DALI differentials, closed forms and errors.

Measured against DALI 2.4 (CPU): every comparison here is exact (max diff 0).
Known differences, on purpose: ``permute_batch`` accepts a plain list of indices (the reference
fails on one in dynamic mode); ``full_like`` refuses a fill value that does not broadcast
NumPy-style (the reference reads it anyway); ``reinterpret`` accepts ``src_dims`` alone and a
call that changes nothing (the reference refuses both as no-ops).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests._helpers.contract import host
from tests._helpers.dali_oracle import dali_ndd

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, ShapeError

RNG = np.random.default_rng(3)
SEQS = [RNG.integers(-500, 500, (k, 3, 2)).astype(np.int16) for k in (4, 2, 3)]
IMGS = [RNG.integers(0, 256, s, dtype=np.uint8) for s in ((2, 3, 4), (4, 1, 4), (3, 3, 4))]


def _dali_batch(samples, layout=None):
    return dali_ndd().batch(list(samples), layout=layout)


def _same(ours, ref):
    ours = host(ours) if isinstance(ours, ndd.Batch) else ours
    ref = [np.asarray(t) for t in ref.tensors]
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert o.dtype == r.dtype and o.shape == r.shape and np.array_equal(o, r)


@pytest.mark.dali
def test_sequence_ops_against_dali():
    d = dali_ndd()
    b, db = ndd.batch(SEQS, layout="FHW"), _dali_batch(SEQS, "FHW")
    order = [np.array(o, np.int32) for o in ([3, 0], [1, 1, 0], [2])]
    ours = ndd.sequence_rearrange(b, new_order=ndd.batch(order))
    _same(ours, d.sequence_rearrange(db, new_order=d.batch(order)))
    assert ours.layout == "FHW"
    _same(ndd.sequence_rearrange(b, new_order=[1, 0]), d.sequence_rearrange(db, new_order=[1, 0]))
    first, second = ndd.element_extract(b, element_map=[1, 0])
    ref = d.element_extract(db, element_map=[1, 0])
    _same(first, ref[0])
    _same(second, ref[1])
    assert first.layout == ref[0].layout == "HW"


@pytest.mark.dali
def test_like_ops_against_dali():
    d = dali_ndd()
    b, db = ndd.batch(IMGS, layout="HWC"), _dali_batch(IMGS, "HWC")
    f = np.array([1.5, -2.5, 300.0, 0.49], np.float32)
    like = ndd.batch([np.int8(0)])
    _same(ndd.cast_like(ndd.batch([f]), like), d.cast_like(d.batch([f]), d.batch([np.int8(0)])))
    _same(ndd.zeros_like(b), d.zeros_like(db))
    _same(ndd.ones_like(b, dtype=ndd.float32), d.ones_like(db, dtype=d.float32))
    for fill in (np.float32(300.7), np.array([1, 2, 3, 4], np.int32), np.float32(-0.5)):
        _same(ndd.full_like(b, fill), d.full_like(db, d.as_tensor(fill)))
    fills = [np.float32(v) for v in (1, 2.5, 1e9)]
    _same(ndd.full_like(b, ndd.batch(fills)), d.full_like(db, d.batch(fills)))
    assert ndd.full_like(b, 1).layout == "HWC"


@pytest.mark.dali
def test_reinterpret_against_dali():
    d = dali_ndd()
    b, db = ndd.batch(IMGS, layout="HWC"), _dali_batch(IMGS, "HWC")
    for kw in (
        {"dtype": "int32"},
        {"dtype": "uint16", "shape": [-1, 2]},
        {"dtype": "int32", "layout": "ABC"},
        {"rel_shape": [0.5, -1]},
        {"shape": [-1]},
    ):
        ours = ndd.reinterpret(b, **{k: ndd.dtype(v) if k == "dtype" else v for k, v in kw.items()})
        ref = d.reinterpret(db, **{k: getattr(d, v) if k == "dtype" else v for k, v in kw.items()})
        _same(ours, ref)
        assert ours.layout == ref.layout, kw
    shapes = [np.array([s.size // 4, 4], np.int32) for s in IMGS]
    _same(ndd.reinterpret(b, ndd.batch(shapes)), d.reinterpret(db, d.batch(shapes)))


@pytest.mark.dali
def test_get_property_and_permute_batch_against_dali():
    d = dali_ndd()
    b, db = ndd.batch(IMGS, layout="HWC"), _dali_batch(IMGS, "HWC")
    _same(ndd.get_property(b, key="layout"), d.get_property(db, key="layout"))
    _same(ndd.get_property(b, key="source_info"), d.get_property(db, key="source_info"))
    idx = [np.int32(i) for i in (2, 2, 0)]
    _same(ndd.permute_batch(b, indices=ndd.batch(idx)), d.permute_batch(db, indices=d.batch(idx)))


def test_get_property_source_info_is_the_file_path(tmp_path):
    paths = []
    for k in range(2):
        p = tmp_path / f"img{k}.bin"
        p.write_bytes(bytes([k, 1, 2]))
        paths.append(str(p))
    reader = ndd.readers.File(files=paths)
    (data, _), *_ = reader.next_epoch(batch_size=2)
    got = [bytes(a).decode() for a in host(ndd.get_property(data, key="source_info"))]
    assert sorted(got) == sorted(paths)
    on_gpu = host(ndd.get_property(data.gpu(), key="source_info"))
    assert [bytes(a).decode() for a in on_gpu] == got
    moved = ndd.permute_batch(data, indices=[1, 0])
    assert [bytes(a).decode() for a in host(ndd.get_property(moved, key="source_info"))] == got[
        ::-1
    ]


def test_batch_permutation_guarantees():
    for n in (1, 2, 7):
        for reps in (False, True):
            for nfp in (False, True):
                kw = {"allow_repetitions": reps, "no_fixed_points": nfp, "batch_size": n}
                a = host(ndd.batch_permutation(rng=ndd.random.RNG(seed=9), **kw))
                b = host(ndd.batch_permutation(rng=ndd.random.RNG(seed=9), **kw))
                assert [x.item() for x in a] == [x.item() for x in b]  # same state, same output
                v = [int(x) for x in a]
                assert all(x.dtype == np.int32 and x.shape == () for x in a)
                assert all(0 <= x < n for x in v)
                if not reps:
                    assert sorted(v) == list(range(n))
                if nfp and n > 1:
                    assert all(x != i for i, x in enumerate(v))
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        ndd.batch_permutation()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda b: ndd.sequence_rearrange(b, new_order=[2]), InvalidArgumentError),
        (lambda b: ndd.sequence_rearrange(b, new_order=[]), InvalidArgumentError),
        (lambda b: ndd.element_extract(b, element_map=-1), InvalidArgumentError),
        (lambda b: ndd.element_extract(b, element_map=[]), InvalidArgumentError),
        (lambda b: ndd.permute_batch(b, indices=[0, 1]), InvalidArgumentError),
        (lambda b: ndd.reinterpret(b, dtype=ndd.float64), ShapeError),
        (lambda b: ndd.reinterpret(b, shape=[5, -1]), ShapeError),
        (lambda b: ndd.reinterpret(b, layout="AB"), InvalidArgumentError),
        (lambda b: ndd.full_like(b, np.zeros((2, 1))), ShapeError),
    ],
)
def test_bad_calls_name_the_operator(call, error):
    b = ndd.batch(SEQS, layout="FHW")
    with pytest.raises(error) as e:
        host(call(b))
    assert str(e.value).split(":")[0] in {
        "sequence_rearrange", "element_extract", "permute_batch", "reinterpret", "full_like",
    }  # fmt: skip


def test_sequence_ops_refuse_non_sequence_layouts():
    b = ndd.batch(IMGS, layout="HWC")
    with pytest.raises(ShapeError, match="'F'"):
        host(ndd.sequence_rearrange(b, new_order=[0]))
    with pytest.raises(ShapeError, match="'F'"):
        host(ndd.element_extract(b, element_map=0))


def _dumped(nd: Any, imgs: list[np.ndarray], layout: str, where: Path, mp: Any) -> dict:
    where.mkdir()
    mp.chdir(where)
    out = nd.dump_image(nd.batch(imgs, layout=layout), input_layout=layout, suffix="s")
    assert [np.asarray(t).tolist() for t in out.tensors] == [x.tolist() for x in imgs]
    return {p.name: p.read_bytes() for p in where.iterdir()}


@pytest.mark.dali
def test_dump_image_writes_the_reference_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(0)
    hwc = [rng.integers(0, 256, (3, 4, c), np.uint8) for c in (3, 1)]
    ours = _dumped(ndd, hwc, "HWC", tmp_path / "ours", monkeypatch)
    assert ours == _dumped(dali_ndd(), hwc, "HWC", tmp_path / "ref", monkeypatch)
    assert sorted(ours) == ["0-s-0.ppm", "1-s-0.ppm"]
    # beyond the reference (which refuses CHW): CHW input writes the same files
    chw = [np.ascontiguousarray(x.transpose(2, 0, 1)) for x in hwc]
    assert _dumped(ndd, chw, "CHW", tmp_path / "chw", monkeypatch) == ours


def test_dump_image_refuses_what_it_cannot_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ndd.HeadraceError, match=r"dump_image: .*uint8"):
        ndd.dump_image(ndd.batch([np.zeros((2, 2, 3), np.float32)], layout="HWC"))
    with pytest.raises(ndd.HeadraceError, match=r"dump_image: sample 0: .*channels"):
        ndd.dump_image(ndd.batch([np.zeros((2, 2, 2), np.uint8)], layout="HWC"))
    assert not list(tmp_path.iterdir())


def test_cat_and_stack_of_a_big_batch_run_on_the_pool_and_name_the_bad_sample() -> None:
    """Batches big enough for the worker threads: every sample joined in order (against numpy),
    and a sample whose shapes do not fit is named, whichever thread met it."""
    imgs = [RNG.integers(0, 256, (64 + i, 48, 3), dtype=np.uint8) for i in range(16)]
    masks = [RNG.integers(0, 2, (64 + i, 48, 1), dtype=np.uint8) for i in range(16)]
    with ndd.EvalContext(num_threads=2):
        joined = host(ndd.cat(ndd.batch(imgs), ndd.batch(masks), axis=2))
        stacked = host(ndd.stack(ndd.batch(imgs), ndd.batch(imgs), axis=0))
        for i, (a, m) in enumerate(zip(imgs, masks)):
            assert np.array_equal(joined[i], np.concatenate([a, m], axis=2))
            assert np.array_equal(stacked[i], np.stack([a, a]))
        bad = list(masks)
        bad[11] = masks[11][:-1]
        with pytest.raises(ShapeError, match=r"^cat: sample 11: shapes do not fit"):
            ndd.cat(ndd.batch(imgs), ndd.batch(bad), axis=2).evaluate()
