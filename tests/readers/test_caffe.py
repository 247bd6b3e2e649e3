"""readers.Caffe and readers.Caffe2 on LMDB databases written here with lmdb + protobuf."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

lmdb = pytest.importorskip("lmdb")
pytest.importorskip("google.protobuf")

import cv2  # noqa: E402

from headrace._core.batch import Batch  # noqa: E402
from headrace._core.dtype import float32, int32, uint8  # noqa: E402
from headrace._core.errors import BackendUnavailableError, InvalidArgumentError  # noqa: E402
from headrace.readers import Caffe, Caffe2  # noqa: E402
from headrace.readers import _caffe_protos as P  # noqa: E402
from headrace.readers.file import FileReadError, MissingFileError  # noqa: E402

M = P.messages()
TP = M.TensorProto
N = 11


def write_db(path: Path, values: list[bytes], keys: list[bytes] | None = None) -> Path:
    keys = keys or [f"{i:08d}".encode() for i in range(len(values))]
    with lmdb.open(str(path), map_size=1 << 24) as env, env.begin(write=True) as txn:
        for k, v in zip(keys, values, strict=True):
            txn.put(k, v)
    return path


def png(i: int) -> bytes:
    ok, buf = cv2.imencode(".png", np.full((3 + i % 3, 4, 3), i, np.uint8))
    assert ok
    return buf.tobytes()


def datum(i: int, raw: bool = False) -> bytes:
    if raw:
        pixels = (np.arange(2 * 3 * 3) + i).astype(np.uint8).tobytes()
        m = M.Datum(channels=3, height=2, width=3, data=pixels, label=i, encoded=False)
    else:
        m = M.Datum(data=png(i), label=i, encoded=True)
    return m.SerializeToString()


def protos(*tensors: Any) -> bytes:
    return M.TensorProtos(protos=list(tensors)).SerializeToString()


def ints(*v: int) -> Any:
    return TP(data_type=P.INT32, int32_data=list(v))


def floats(*v: float) -> Any:
    return TP(data_type=P.FLOAT, float_data=list(v))


def encoded(i: int) -> Any:
    return TP(data_type=P.STRING, string_data=[png(i)])


def raw_image(i: int) -> Any:
    return TP(
        data_type=P.BYTE,
        dims=[2, 3, 3],
        byte_data=((np.arange(18) + i) % 256).astype(np.uint8).tobytes(),
    )


@pytest.fixture
def caffe_db(tmp_path: Path) -> Path:
    return write_db(tmp_path / "caffe", [datum(i, raw=i % 2 == 1) for i in range(N)])


@pytest.fixture
def caffe2_db(tmp_path: Path) -> Path:
    recs = [
        protos(encoded(i), ints(i), floats(i / 2, 1.0), ints(i, i, i + 4, i + 5)) for i in range(N)
    ]
    return write_db(tmp_path / "caffe2", recs)


def labels(reader: Any, batch_size: int | None = None, out: int = -1, **kw: Any) -> list[int]:
    got = []
    for outs in reader.next_epoch(batch_size=batch_size, **kw):
        x = outs[out]
        got += [int(np.asarray(t)[0]) for t in (x if isinstance(x, Batch) else [x])]
    return got


# --- Caffe ---------------------------------------------------------------------------------
def test_caffe_encoded_and_raw_images_with_labels(caffe_db: Path) -> None:
    r = Caffe(path=caffe_db)  # os.PathLike
    got = list(r.next_epoch())
    assert len(got) == N and r.get_metadata()["epoch_size"] == N
    for i, (img, lab) in enumerate(got):
        assert lab.shape == (1,) and int(lab.item()) == i and img.dtype == uint8
        arr = np.asarray(img)
        if i % 2:
            assert arr.shape == (2, 3, 3)
            np.testing.assert_array_equal(arr.ravel(), (np.arange(18) + i).astype(np.uint8))
        else:
            assert arr.tobytes() == png(i)
        assert img._source is not None and str(caffe_db) in img._source
    imgs = [np.asarray(t) for (t,) in Caffe(path=str(caffe_db), label_available=False).next_epoch()]
    assert len(imgs) == N and imgs[0].tobytes() == png(0)
    assert labels(Caffe(path=[caffe_db], image_available=False)) == list(range(N))


def test_caffe_datum_without_encoded_flag_is_encoded_and_missing_fields(
    tmp_path: Path,
) -> None:
    recs = [M.Datum(data=b"abc", label=1).SerializeToString(), M.Datum(label=2).SerializeToString()]
    db = write_db(tmp_path / "db", recs)
    with pytest.raises(FileReadError, match=r"readers\.Caffe: record 1 .*no image data"):
        list(Caffe(path=db).next_epoch())
    with pytest.warns(RuntimeWarning, match="no image data"):
        got = [bytes(np.asarray(i)) for i, _ in Caffe(path=db, on_error="skip").next_epoch()]
    assert got == [b"abc"]
    db2 = write_db(tmp_path / "db2", [M.Datum(data=b"abc").SerializeToString()])
    ((img, lab),) = list(Caffe(path=db2).next_epoch())  # no label: an empty one (the reference)
    assert bytes(np.asarray(img)) == b"abc" and lab.shape == (0,) and lab.dtype == int32
    bad_raw = M.Datum(data=b"abc", label=1, encoded=False, height=2, width=2, channels=1)
    db3 = write_db(tmp_path / "db3", [bad_raw.SerializeToString()])
    with pytest.raises(FileReadError, match=r"needs 4 bytes.*holds 3"):
        list(Caffe(path=db3).next_epoch())
    with pytest.raises(InvalidArgumentError, match="nothing to read"):
        Caffe(path=db, image_available=False, label_available=False)


def test_several_databases_are_read_in_order(tmp_path: Path) -> None:
    a = write_db(tmp_path / "a", [datum(i) for i in range(3)], [b"z", b"y", b"x"])
    b = write_db(tmp_path / "b", [datum(i) for i in range(3, 5)])
    r = Caffe(path=[a, str(b)], image_available=False)
    assert labels(r) == [2, 1, 0, 3, 4]  # each database in key order, then the next


# --- Caffe2 --------------------------------------------------------------------------------
def test_caffe2_outputs_additional_inputs_and_bbox(caffe2_db: Path) -> None:
    r = Caffe2(path=caffe2_db, additional_inputs=1, bbox=True)
    (img, lab, extra, box), *_ = list(r.next_epoch(batch_size=4))
    assert [b.dtype for b in (img, lab, extra, box)] == [uint8, int32, float32, int32]
    assert np.asarray(img.tensors[1]).tobytes() == png(1)
    assert [int(np.asarray(t)[0]) for t in lab] == [0, 1, 2, 3]
    np.testing.assert_array_equal(np.asarray(extra.tensors[3]), [1.5, 1.0])
    np.testing.assert_array_equal(np.asarray(box.tensors[2]), [2, 2, 6, 7])
    # fewer outputs than the record holds: the rest is ignored
    outs = next(iter(Caffe2(path=caffe2_db).next_epoch()))
    assert len(outs) == 2
    outs = next(iter(Caffe2(path=caffe2_db, label_type=4, additional_inputs=1).next_epoch()))
    assert len(outs) == 2 and np.asarray(outs[1]).dtype == np.int32  # the label tensor, as data


@pytest.mark.parametrize(
    ("label_type", "tensors", "want", "dtype"),
    [
        (0, [ints(3)], [3], np.int32),
        (0, [floats(2.5)], [2.5], np.float32),
        (1, [ints(0, 3)], [1, 0, 0, 1, 0], np.int32),
        (1, [floats(4)], [0, 0, 0, 0, 1], np.float32),
        (2, [floats(0.5, 0.25)], [0.5, 0.25], np.float32),
        (2, [ints(7, 8, 9)], [7, 8, 9], np.int32),
        (3, [ints(1, 4), floats(0.5, 2.0)], [0, 0.5, 0, 0, 2.0], np.float32),
        (3, [floats(2), floats(0.75)], [0, 0, 0.75, 0, 0], np.float32),
    ],
)
def test_caffe2_label_types(
    tmp_path: Path, label_type: int, tensors: list[Any], want: list[float], dtype: Any
) -> None:
    db = write_db(tmp_path / "db", [protos(raw_image(0), *tensors, floats(9.0))])
    r = Caffe2(path=db, label_type=label_type, num_labels=5, additional_inputs=1)
    ((img, lab, extra),) = list(r.next_epoch())
    assert img.shape == (2, 3, 3) and np.asarray(img)[0, 0].tolist() == [0, 1, 2]
    got = np.asarray(lab)
    assert got.dtype == dtype and got.tolist() == want
    assert np.asarray(extra).tolist() == [9.0]  # additional inputs follow every label's tensors


def test_caffe2_no_label_raw_2d_image_and_int64_extra(tmp_path: Path) -> None:
    img = TP(data_type=P.BYTE, dims=[2, 2], byte_data=b"\x01\x02\x03\x04")
    extra = TP(data_type=P.INT64, int64_data=[2**40])
    db = write_db(tmp_path / "db", [protos(img, extra)])
    ((im, ex),) = list(Caffe2(path=db, label_type=4, additional_inputs=1).next_epoch())
    assert im.shape == (2, 2, 1) and np.asarray(ex).tolist() == [2**40]


def test_caffe2_argument_errors(caffe2_db: Path) -> None:
    for kw, msg in [
        ({"label_type": 5}, "label_type must be one of"),
        ({"num_labels": 0}, "num_labels must be"),
        ({"additional_inputs": -1}, "additional_inputs must be"),
        ({"image_available": False, "label_type": 4}, "nothing to read"),
    ]:
        with pytest.raises(InvalidArgumentError, match=msg):
            Caffe2(path=caffe2_db, **kw)
    with pytest.raises(InvalidArgumentError, match="path"):
        Caffe2()
    with pytest.raises(TypeError, match="path must be"):
        Caffe2(path=[])


@pytest.mark.parametrize(
    ("record", "kw", "msg"),
    [
        (protos(encoded(0)), {}, "holds 1 tensors, the reader's arguments need 2"),
        (protos(encoded(0), ints(1, 2)), {}, "SINGLE_LABEL label holds 2 values"),
        (protos(encoded(0), TP(data_type=P.INT64, int64_data=[1])), {}, "the label has data_type"),
        (protos(floats(1.0), ints(1)), {}, "image tensor has data_type 1"),
        (protos(TP(data_type=P.BYTE, dims=[4, 4, 3], byte_data=b"x"), ints(1)), {}, "needs 48"),
        (protos(encoded(0), ints(7)), {"label_type": 1, "num_labels": 3}, r"indices \[7\]"),
        (protos(encoded(0), ints(1), floats(1, 2)), {"label_type": 3, "num_labels": 3}, "2 wei"),
        (protos(encoded(0), ints(1), ints(1, 2, 3)), {"bbox": True}, "3 values, expected 4"),
        (b"\x0a\xff\xff\xff\x0f", {}, "cannot parse the record"),
    ],
)
def test_caffe2_bad_records_are_named(tmp_path: Path, record: bytes, kw: dict[str, Any],
                                      msg: str) -> None:  # fmt: skip
    good = protos(encoded(0), ints(1), ints(1, 2, 3, 4) if kw.get("bbox") else floats(1.0))
    db = write_db(tmp_path / "db", [good, record, good])
    r = Caffe2(path=db, **kw)
    with pytest.raises(FileReadError, match=msg) as e:
        list(r.next_epoch())
    assert "readers.Caffe2: record 1 (key b'00000001')" in str(e.value)
    assert e.value.filename == str(db)
    # skipping drops the whole sample and keeps the outputs aligned
    r = Caffe2(path=db, on_error="skip", last_batch="partial", **kw)
    with pytest.warns(RuntimeWarning, match="record 1"):
        batches = list(r.next_epoch(batch_size=2))
    assert [b[0].batch_size for b in batches] == [2]
    assert all(o.batch_size == 2 for o in batches[0])
    assert r.get_metadata()["skipped"] == 1


def test_caffe2_records_must_agree_on_types(tmp_path: Path) -> None:
    db = write_db(tmp_path / "db", [protos(encoded(0), ints(1)), protos(encoded(1), floats(2))])
    with pytest.raises(FileReadError, match="first record's"):
        list(Caffe2(path=db).next_epoch())


# --- shared reader features ----------------------------------------------------------------
def test_sharding_shuffling_and_resume(caffe_db: Path) -> None:
    shards = [
        labels(Caffe(path=caffe_db, last_batch="partial", num_shards=3, shard_id=s), 2)
        for s in range(3)
    ]
    assert sorted(x for s in shards for x in s) == list(range(N)) and shards[0] == [0, 1, 2]
    a = labels(Caffe(path=caffe_db, last_batch="partial", random_shuffle=True, seed=5), 4)
    assert sorted(a) == list(range(N)) and a != list(range(N))
    assert a == labels(Caffe(path=caffe_db, last_batch="partial", random_shuffle=True, seed=5), 4)
    r = Caffe(
        path=caffe_db, last_batch="partial", random_shuffle=True, seed=3, enable_checkpointing=True
    )
    full = [labels(r, 3) for _ in range(2)]
    r = Caffe(
        path=caffe_db, last_batch="partial", random_shuffle=True, seed=3, enable_checkpointing=True
    )
    it = r.next_epoch(batch_size=3)
    first = [int(np.asarray(t)[0]) for t in next(it)[1]]
    state = str(r.get_state())
    it.close()
    twin = Caffe(path=caffe_db, last_batch="partial", random_shuffle=True, seed=3)
    twin.set_state(state)
    rest = labels(twin, 3)
    assert first + rest == full[0] and labels(twin, 3) == full[1]


# --- damaged databases and missing extras ---------------------------------------------------
def test_missing_corrupt_truncated_and_empty_databases(tmp_path: Path) -> None:
    with pytest.raises(MissingFileError, match=r"readers\.Caffe: the database not found"):
        Caffe(path=tmp_path / "nope")
    (tmp_path / "folder").mkdir()
    with pytest.raises(MissingFileError, match=r"no data\.mdb"):
        Caffe2(path=tmp_path / "folder")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "data.mdb").write_bytes(os.urandom(64) * 300)
    with pytest.raises(FileReadError, match="cannot open the database"):
        Caffe(path=tmp_path / "junk")
    big = write_db(tmp_path / "big", [datum(i) for i in range(200)])
    cut = tmp_path / "cut"
    shutil.copytree(big, cut)
    data = cut / "data.mdb"
    size = data.stat().st_size
    with open(data, "r+b") as f:
        f.truncate(size // 2)
    with pytest.raises(FileReadError, match="truncated") as e:
        Caffe(path=cut)
    assert e.value.filename == str(data)
    empty = write_db(tmp_path / "empty", [])
    with pytest.raises(FileReadError, match="holds no records"):
        Caffe(path=empty)


def test_missing_extras_name_the_install(caffe_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "lmdb", None)
    with pytest.raises(BackendUnavailableError, match=r"pip install headrace\[lmdb\]"):
        Caffe(path=caffe_db)
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    P.messages.cache_clear()
    try:
        with pytest.raises(BackendUnavailableError, match=r"pip install headrace\[lmdb\]"):
            Caffe2(path=caffe_db)
    finally:
        monkeypatch.undo()
        P.messages.cache_clear()


# --- the reference ---------------------------------------------------------------------------
def _dali_outputs(reader: Any, batch_size: int = 1) -> list[list[np.ndarray]]:
    """Every output of one epoch as a list of numpy samples."""
    cols: list[list[np.ndarray]] = []
    for outs in reader.next_epoch(batch_size=batch_size):
        if not cols:
            cols = [[] for _ in outs]
        for c, o in zip(cols, outs):
            c += [np.asarray(t) for t in o.tensors]
    return cols


def _assert_same(ours: list[list[np.ndarray]], ref: list[list[np.ndarray]]) -> None:
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)


@pytest.mark.dali
def test_matches_dali(tmp_path: Path, caffe2_db: Path) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    enc = write_db(tmp_path / "enc", [datum(i) for i in range(N)])
    raw = write_db(tmp_path / "raw", [datum(i, raw=True) for i in range(N)])
    for db in (enc, raw):
        for kw in ({}, {"label_available": False}, {"image_available": False},
                   {"num_shards": 2, "shard_id": 1}):  # fmt: skip
            _assert_same(
                _dali_outputs(Caffe(path=str(db), **kw)),
                _dali_outputs(dndd.readers.Caffe(path=str(db), **kw)),
            )

    def db(name: str, make: Any) -> Path:
        return write_db(tmp_path / name, [protos(*make(i)) for i in range(N)])

    # the reference reads a tensor after the requested ones as a bounding box: no extra tensors
    cases: list[tuple[Path, dict[str, Any]]] = [
        (caffe2_db, {"additional_inputs": 1, "bbox": True}),
        (caffe2_db, {"additional_inputs": 1, "bbox": True, "num_shards": 3, "shard_id": 2}),
        (db("two", lambda i: (encoded(i), floats(i + 0.5), floats(i), ints(i))),
         {"additional_inputs": 2}),
        (db("nolabel", lambda i: (encoded(i),)), {"label_type": 4}),
        (db("noimage", lambda i: (ints(i),)), {"image_available": False}),
        (db("dense", lambda i: (raw_image(i), floats(i, 2 * i))),
         {"label_type": 2, "num_labels": 2}),
    ]  # fmt: skip
    for db, kw in cases:
        _assert_same(
            _dali_outputs(Caffe2(path=str(db), **kw)),
            _dali_outputs(dndd.readers.Caffe2(path=str(db), **kw)),
        )
    for kw in ({}, {"num_shards": 4, "shard_id": 3, "pad_last_batch": True}):
        ours = Caffe2(path=str(caffe2_db), **kw).get_metadata()
        ours.pop("skipped")
        assert ours == dndd.readers.Caffe2(path=str(caffe2_db), **kw).get_metadata()
