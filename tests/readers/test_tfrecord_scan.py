"""readers.TFRecord's numpy walk of a batch of records (``readers/tfrecord_scan.py``) and its
read-ahead: whatever the walk takes must equal what protobuf gives, anything else must be left
to protobuf, and reading batches ahead must not change the samples, errors or positions."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("google.protobuf")
pytest.importorskip("google_crc32c")

from hypothesis import given, settings
from hypothesis import strategies as st
from tests._helpers.tfrecord_data import _field, _varint, encode_example, write_tfrecord

import headrace.tfrecord as tfrec
from headrace.readers import TFRecord
from headrace.readers import tfrecord as tfrecord_module
from headrace.readers._example_proto import example_class
from headrace.readers.tfrecord import TFRecordError
from headrace.readers.tfrecord_features import batch_extractor
from headrace.readers.tfrecord_scan import ExampleBatch

SPECS = {
    "fixed int [1]": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "fixed int ()": tfrec.FixedLenFeature((), tfrec.int64, 0),
    "fixed int [2, 2]": tfrec.FixedLenFeature([2, 2], tfrec.int64, 0),
    "fixed float [2]": tfrec.FixedLenFeature([2], tfrec.float32, 0.5),
    "var int": tfrec.VarLenFeature(tfrec.int64, 0),
    "var int [2]": tfrec.VarLenFeature([2], tfrec.int64, 0),
    "var float [2]": tfrec.VarLenFeature([2], tfrec.float32, 0.0),
    "string": tfrec.FixedLenFeature((), tfrec.string, ""),
}

INTS = st.integers(-(2**63), 2**63 - 1) | st.integers(0, 300)
FLOATS = st.floats(width=32, allow_nan=False)
VALUES = (
    st.lists(INTS, max_size=5)
    | st.lists(FLOATS, min_size=1, max_size=5)
    | st.lists(st.binary(max_size=300), min_size=1, max_size=2)
)
KEYS = st.sampled_from(["a", "key", "long/feature/name", "ü", ""])


def protobuf_columns(records: list[bytes], name: str, f: Any) -> list[Any] | None:
    """What the protobuf path gives for the feature (``None``: a record has a problem)."""
    Example = example_class()
    fmaps = [Example.FromString(r).features.feature for r in records]
    column = batch_extractor(name, f)(fmaps)
    return None if str in map(type, column) else column


def assert_same(fast: list[np.ndarray], slow: list[np.ndarray]) -> None:
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4), min_size=1, max_size=6))
def test_the_walk_gives_what_protobuf_gives_or_declines(records: list[dict[str, Any]]) -> None:
    encoded = [encode_example(r) for r in records]
    scan = ExampleBatch.of(encoded)
    for key in ["a", "key", "long/feature/name", "missing"]:
        for f in SPECS.values():
            slow = protobuf_columns(encoded, key, f)
            fast = None if scan is None else scan.extract(key, f)
            if fast is not None:
                assert slow is not None, (key, f)
                assert_same(fast, slow)


def test_plain_batches_are_taken_by_the_walk() -> None:
    """The usual records (every feature present, packed numbers) never need protobuf."""
    records = [
        encode_example({"img": b"\x01" * (100 * r), "label": 1000 * r - 5, "box": [0.5, r * 1.0]})
        for r in range(20)
    ]
    scan = ExampleBatch.of(records)
    assert scan is not None
    for name, f in [
        ("img", SPECS["string"]),
        ("label", SPECS["fixed int [1]"]),
        ("box", SPECS["fixed float [2]"]),
        ("box", SPECS["var float [2]"]),
    ]:
        fast = scan.extract(name, f)
        assert fast is not None
        assert_same(fast, protobuf_columns(records, name, f))  # type: ignore[arg-type]
    img = scan.extract("img", SPECS["string"])
    assert img is not None and not img[3].flags.writeable and img[3].tobytes() == b"\x01" * 300


def entry(key: bytes, feature: bytes) -> bytes:
    return _field(1, _field(1, key) + _field(2, feature))


LABEL = entry(b"label", _field(3, _field(1, _varint(7))))
ODD_RECORDS = {
    # numbers as one field per value (legal protobuf, not what writers emit)
    "unpacked ints": _field(1, entry(b"label", _field(3, b"\x08\x07"))),
    # the map entry's value before its key
    "value first": _field(
        1, _field(1, _field(2, _field(3, _field(1, b"\x07"))) + _field(1, b"label"))
    ),
    # a field Example does not have, after its features
    "unknown field": _field(1, LABEL) + b"\x10\x01",
    # the same key twice: protobuf keeps the last
    "key twice": _field(1, LABEL + entry(b"label", _field(3, _field(1, _varint(9))))),
    # two packed runs of one list: protobuf concatenates them
    "two runs": _field(1, entry(b"label", _field(3, _field(1, b"\x07") + _field(1, b"\x08")))),
    # a key that is not UTF-8: protobuf refuses the record
    "bad key": _field(1, LABEL + entry(b"\xff", b"")),
    # a varint longer than 64 bits
    "long varint": _field(1, entry(b"label", _field(3, _field(1, b"\xff" * 10 + b"\x01")))),
    # features of several kinds in one Feature: the last one wins
    "two kinds": _field(
        1, entry(b"label", _field(2, _field(1, b"\0\0\0\0")) + _field(3, _field(1, b"\x07")))
    ),
    # an entry length near 2**63 (entry start + length wraps around int64)
    "huge length": _field(
        1, LABEL + b"\x0a" + _varint(2**63 - 1) + b"\x0a\x01x\x12" + _varint(2**63 - 14)
        + b"\x1a" + _varint(2**63 - 24)
    ),
    # a key running past its entry, negative value / list lengths pointing back to its end
    "negative lengths": _field(
        1, LABEL + b"\x0a\x04\x0a\x0dab"
        + entry(b"z", _field(1, _field(1, b"\x12" + _varint(-22) + b"\x1a" + _varint(-33))))
    ),
    # a feature nobody asks for whose BytesList holds a cut item
    "corrupt unrequested": _field(1, LABEL + entry(b"junk", _field(1, b"\x0a\x05ab"))),
    # ... and one whose Int64List ends inside a varint
    "cut varint unrequested": _field(1, LABEL + entry(b"junk", _field(3, _field(1, b"\x81")))),
    # negative int64 (10-byte varints) and several byte strings in an unrequested feature
    "negative and many": _field(
        1, entry(b"label", _field(3, _field(1, _varint(-5) + _varint(2**40))))
        + entry(b"names", _field(1, _field(1, b"a") + _field(1, b"") + _field(1, b"bc")))
    ),
}  # fmt: skip


@pytest.mark.parametrize("odd", list(ODD_RECORDS))
def test_records_outside_the_plain_layout_read_as_with_protobuf(tmp_path: Path, odd: str) -> None:
    """Each odd record, among plain ones, reads as protobuf reads it (a value or an error),
    in a batch read ahead as in a batch alone."""
    plain = encode_example({"label": 3})
    records = [plain] * 5 + [ODD_RECORDS[odd]] + [plain] * 300
    p = tmp_path / "odd.tfrecord"
    write_tfrecord(p, records)
    features = {"label": SPECS["var int"]}
    try:
        expected: Any = protobuf_columns(records, "label", features["label"])
    except Exception:  # protobuf's DecodeError
        expected = None
    if expected is None:
        for batch_size in (1, 4, 150):
            with pytest.raises(TFRecordError, match="record 5 at byte offset"):
                list(TFRecord(path=p, features=features).next_epoch(batch_size=batch_size))
        skipping = TFRecord(path=p, features=features, on_error="skip")
        with pytest.warns(UserWarning, match="record 5"):
            assert len(labels_of(skipping, 150, last_batch="partial")) == len(records) - 1
        return
    for batch_size in (2, 12, 150):
        reader = TFRecord(path=p, features=features)
        got = [
            np.asarray(t)
            for step in reader.next_epoch(batch_size, last_batch="partial")
            for t in step["label"].tensors
        ]
        assert_same(got, expected)


def test_the_walk_never_raises_on_garbage() -> None:
    """Random bytes and random cuts and flips of real records: the walk declines or gives
    protobuf's values, and never raises."""
    rng = np.random.default_rng(0)
    base = [encode_example({"label": int(v), "box": [0.5, 1.5], "img": b"x" * int(v)})
            for v in rng.integers(0, 300, 8)]  # fmt: skip
    spec = SPECS["fixed int [1]"]
    for _ in range(300):
        records = []
        for r in base:
            b = bytearray(r)
            for _ in range(int(rng.integers(0, 3))):
                b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
            if rng.random() < 0.2:
                b = b[: int(rng.integers(1, len(b) + 1))]
            records.append(bytes(b) or b"\x00")
        scan = ExampleBatch.of(records)
        fast = None if scan is None else scan.extract("label", spec)
        if fast is not None:
            assert_same(fast, protobuf_columns(records, "label", spec))  # type: ignore[arg-type]


def test_batches_spanning_more_files_than_stay_open(tmp_path: Path) -> None:
    """A batch of shuffled records from 70 files (more than the 64 kept open): every record
    reads, the earlier files are not closed under it."""
    paths = [tmp_path / f"{k:02d}.tfrecord" for k in range(70)]
    for k, p in enumerate(paths):
        write_tfrecord(p, [{"label": 10 * k + r, "img": b"q" * r} for r in range(3)])
    features = {"label": SPECS["fixed int [1]"], "img": SPECS["string"]}
    for mmap in (True, False):
        r = TFRecord(path=paths, features=features, random_shuffle=True, seed=4,
                     dont_use_mmap=not mmap)  # fmt: skip
        got = labels_of(r, 210, last_batch="partial")
        assert sorted(got) == sorted(10 * k + j for k in range(70) for j in range(3))


def labels_of(reader: TFRecord, batch_size: int, **kw: Any) -> list[int]:
    return [
        int(np.asarray(t)[0])
        for step in reader.next_epoch(batch_size=batch_size, **kw)
        for t in step["label"].tensors
    ]


def corrupt_data(p: Path, offset: int) -> None:
    data = bytearray(p.read_bytes())
    data[offset + 14] ^= 0x01
    p.write_bytes(bytes(data))


def test_a_bad_record_batches_ahead_fails_at_its_own_batch(tmp_path: Path) -> None:
    p = tmp_path / "bad.tfrecord"
    offsets = write_tfrecord(p, [{"label": r, "img": b"x" * r} for r in range(40)])
    corrupt_data(p, offsets[29])
    features = {"label": SPECS["fixed int [1]"], "img": SPECS["string"]}
    got: list[int] = []
    with pytest.raises(TFRecordError, match=f"record 29 at byte offset {offsets[29]}: corrupt"):
        for step in TFRecord(path=p, features=features).next_epoch(batch_size=4):
            got += [int(np.asarray(t)[0]) for t in step["label"].tensors]
    assert got == list(range(28))  # every batch before the bad record's arrived
    r = TFRecord(path=p, features=features, on_error="skip")
    with pytest.warns(UserWarning, match="record 29"):
        assert labels_of(r, 4, last_batch="partial") == [x for x in range(40) if x != 29]
    assert r.get_metadata()["skipped"] == 1


def test_read_ahead_keeps_order_positions_and_fill(tmp_path: Path, monkeypatch: Any) -> None:
    """Shuffled, sharded, across files and epochs, resumed from a state, with the read-ahead
    cut short by its byte bound: the same labels as reading one batch at a time."""
    paths = [tmp_path / f"{k}.tfrecord" for k in range(3)]
    for k, p in enumerate(paths):
        write_tfrecord(p, [{"label": 100 * k + r, "img": b"y" * r} for r in range(30 + k)])
    features = {"label": SPECS["fixed int [1]"], "img": SPECS["string"]}

    def run(**kw: Any) -> tuple[list[int], list[int]]:
        args = {"path": paths, "features": features, "random_shuffle": True, "seed": 5}
        r = TFRecord(**args, num_shards=2, shard_id=1, enable_checkpointing=True, **kw)
        first = labels_of(r, 7) + labels_of(r, 7)
        again = TFRecord(**args, num_shards=2, shard_id=1)
        again.set_state(r.get_state())
        return first, labels_of(again, 7) + labels_of(again, 7, last_batch="partial")

    ahead = run()
    monkeypatch.setattr(tfrecord_module, "_READ_BYTES", 200)
    bounded = run()
    alone = run_alone(paths, features)
    assert ahead == bounded == alone
    assert len(ahead[0]) == 98 and len(set(ahead[0][:46])) == 46  # (a shard: 46-47 records)


def run_alone(paths: list[Path], features: dict[str, Any]) -> tuple[list[int], list[int]]:
    """The same as ``run`` above, each batch read by ``read_batch`` alone (no read-ahead)."""
    args = {"path": paths, "features": features, "random_shuffle": True, "seed": 5}
    r = TFRecord(**args, num_shards=2, shard_id=1, enable_checkpointing=True)
    r._dataset.read_groups = None  # type: ignore[attr-defined]  # (the producer checks for it)
    first = labels_of(r, 7) + labels_of(r, 7)
    again = TFRecord(**args, num_shards=2, shard_id=1)
    again._dataset.read_groups = None  # type: ignore[attr-defined]
    again.set_state(r.get_state())
    return first, labels_of(again, 7) + labels_of(again, 7, last_batch="partial")


def test_positional_reads_and_big_batches_give_the_same_arrays(tmp_path: Path) -> None:
    p = tmp_path / "p.tfrecord"
    rng = np.random.default_rng(0)
    recs = [{"label": int(v), "box": [float(v), 0.5]} for v in rng.integers(-(2**40), 2**40, 300)]
    write_tfrecord(p, recs)
    features = {"label": SPECS["fixed int [1]"], "box": SPECS["var float [2]"]}
    want = [r["label"] for r in recs]
    assert labels_of(TFRecord(path=p, features=features), 300) == want  # one walk of 300
    assert labels_of(TFRecord(path=p, features=features, dont_use_mmap=True), 8)[:300] == want
    (step,) = TFRecord(path=p, features=features).next_epoch(batch_size=300)
    assert np.asarray(step["box"].tensors[7]).tolist() == [[float(np.float32(want[7])), 0.5]]


def test_float_bytes_decode_as_little_endian() -> None:
    rec = _field(1, entry(b"f", _field(2, _field(1, struct.pack("<2f", 1.5, -2.0)))))
    scan = ExampleBatch.of([rec, rec])
    assert scan is not None
    (a, _) = scan.extract("f", SPECS["var float [2]"])  # type: ignore[misc]
    assert a.tolist() == [[1.5, -2.0]]
