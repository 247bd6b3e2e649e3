"""readers.TFRecord reads a batch of records at once (one protobuf call, features extracted per
batch): the arrays and the errors must be those of reading the records one by one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("google.protobuf")
pytest.importorskip("google_crc32c")

from tests._helpers.tfrecord_data import write_tfrecord

import headrace.tfrecord as tfrec
from headrace.readers import TFRecord
from headrace.readers.tfrecord import TFRecordError

FEATURES = {
    "img": tfrec.FixedLenFeature((), tfrec.string, "none"),
    "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "scalar": tfrec.FixedLenFeature([], tfrec.int64, 0),
    "box": tfrec.FixedLenFeature([2, 2], tfrec.float32, 0.5),
    "ids": tfrec.VarLenFeature(tfrec.int64, 0),
    "pts": tfrec.VarLenFeature([2], tfrec.float32, 0.0),
    "wide": tfrec.VarLenFeature([1], tfrec.int64, 0),
    "long": tfrec.VarLenFeature(tfrec.float32, 0.0),
}


def mixed(r: int) -> dict[str, Any]:
    """Records that differ: missing features (defaults, empty), counts that vary or not."""
    rec: dict[str, Any] = {"label": r, "scalar": 10 * r, "wide": [r, r + 1]}
    if r % 4 != 3:
        rec["img"] = bytes([r]) * (r + 1)
        rec["box"] = [r + 0.25, 1.0, 2.0, 3.0]
    if r % 3:
        rec["ids"] = list(range(r % 3 + 1))
    rec["pts"] = [float(r)] * (2 if r < 5 else 2 * (r % 3 + 1))
    rec["long"] = [float(v) for v in range(40 if r % 5 == 0 else 3)]
    return rec


def same_counts(r: int) -> dict[str, Any]:
    return {"img": b"x" * r, "label": r, "scalar": r, "box": [float(r)] * 4, "ids": [r, r],
            "pts": [1.0, float(r)], "wide": [r], "long": [0.5]}  # fmt: skip


def outputs(reader: TFRecord, batch_size: int | None) -> list[dict[str, np.ndarray]]:
    out = []
    for step in reader.next_epoch(batch_size=batch_size, last_batch="partial"):
        if batch_size is None:
            out.append({k: np.asarray(v) for k, v in step.items()})
            continue
        for i in range(step["label"].batch_size):
            out.append({k: np.asarray(v.tensors[i]) for k, v in step.items()})
    return out


@pytest.mark.parametrize("make", [mixed, same_counts])
@pytest.mark.parametrize("batch_size", [1, 4, 13])
def test_batches_give_the_arrays_of_one_by_one_reads(
    tmp_path: Path, make: Any, batch_size: int
) -> None:
    p = tmp_path / "m.tfrecord"
    write_tfrecord(p, [make(r) for r in range(13)])
    one = outputs(TFRecord(path=p, features=FEATURES), None)
    many = outputs(TFRecord(path=p, features=FEATURES), batch_size)
    assert len(one) == len(many) == 13
    for r, (a, b) in enumerate(zip(one, many)):
        for name in FEATURES:
            assert a[name].dtype == b[name].dtype and a[name].shape == b[name].shape, (r, name)
            np.testing.assert_array_equal(a[name], b[name])
    if make is mixed:
        assert many[3]["img"].tobytes() == b"none" and many[3]["box"].tolist() == [[0.5] * 2] * 2
        assert many[0]["ids"].shape == (0,) and many[8]["pts"].shape == (3, 2)
        assert many[0]["long"].shape == (40,) and many[2]["scalar"].shape == ()
        assert many[4]["wide"].tolist() == [[4], [5]]


def test_a_sample_of_a_batch_is_its_own_array(tmp_path: Path) -> None:
    p = tmp_path / "s.tfrecord"
    write_tfrecord(p, [same_counts(r) for r in range(4)])
    (step,) = TFRecord(path=p, features=FEATURES).next_epoch(batch_size=4)
    labels = [np.asarray(t) for t in step["label"].tensors]
    labels[0][0] = 99  # writing one sample leaves the others alone
    assert [int(a[0]) for a in labels] == [99, 1, 2, 3]
    assert [np.asarray(t).tolist() for t in step["pts"].tensors][3] == [[1.0, 3.0]]


@pytest.mark.parametrize("first_bad", ["feature", "crc", "not_example"])
def test_the_first_bad_record_of_a_batch_is_the_error(tmp_path: Path, first_bad: str) -> None:
    p = tmp_path / "b.tfrecord"
    recs: list[Any] = [same_counts(r) for r in range(6)]
    if first_bad == "not_example":
        recs[1] = b"\xff\xff\xff"
    else:
        recs[1] = {**same_counts(1), "label": [1, 2]}  # 2 values for a [1] feature
    recs[4] = {**same_counts(4), "box": [1.0]}  # a later bad record in the same batch
    offsets = write_tfrecord(p, recs)
    if first_bad == "crc":
        data = bytearray(p.read_bytes())
        data[offsets[1] + 14] ^= 0xFF
        p.write_bytes(bytes(data))
    expected = {
        "feature": "feature 'label' holds 2 values",
        "crc": r"corrupt record data \(data CRC mismatch\)",
        "not_example": r"not a tf\.train\.Example",
    }[first_bad]
    with pytest.raises(TFRecordError, match=rf"record 1 at byte offset {offsets[1]}: {expected}"):
        list(TFRecord(path=p, features=FEATURES).next_epoch(batch_size=6))
    r = TFRecord(path=p, features=FEATURES, on_error="skip")
    with pytest.warns(UserWarning) as caught:
        (step,) = r.next_epoch(batch_size=6, last_batch="partial")
    assert [int(np.asarray(t)[0]) for t in step["label"].tensors] == [0, 2, 3, 5]
    assert [np.asarray(t).tobytes() for t in step["img"].tensors][1] == b"xx"  # aligned
    assert len(caught) == 2 and "record 1" in str(caught[0].message)
    assert r.get_metadata()["skipped"] == 2


def test_direct_batches_cross_epochs_and_resume_exactly(tmp_path: Path) -> None:
    p = tmp_path / "f.tfrecord"
    write_tfrecord(p, [same_counts(r) for r in range(7)])

    def labels(reader: TFRecord, steps: int) -> list[int]:
        got = []
        for _ in range(steps):
            step = reader(batch_size=3)
            got += [int(np.asarray(t)[0]) for t in step["label"].tensors]
        return got

    full = TFRecord(path=p, features=FEATURES, random_shuffle=True, seed=3,
                    enable_checkpointing=True)  # fmt: skip
    first = labels(full, 2)
    state = full.get_state()
    rest = labels(full, 3)
    again = TFRecord(path=p, features=FEATURES, random_shuffle=True, seed=3)
    again.set_state(state)
    assert labels(again, 3) == rest
    seen = first + rest
    assert sorted(seen[:7]) == list(range(7)) and sorted(seen[7:14]) == list(range(7))


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_several_bad_crcs_of_one_batch_across_files(tmp_path: Path, dont_use_mmap: bool) -> None:
    """The data CRCs of a batch are compared together: every bad record (and only those) is
    named, in order, whatever file it is in."""
    paths, bad = [tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"], {(0, 2), (1, 0), (1, 3)}
    for f, p in enumerate(paths):
        offsets = write_tfrecord(p, [same_counts(10 * f + r) for r in range(5)])
        data = bytearray(p.read_bytes())
        for g, r in bad:
            if g == f:
                data[offsets[r] + 20] ^= 0x01  # one bit of the record's data
        p.write_bytes(bytes(data))
    args = {"path": paths, "features": FEATURES, "dont_use_mmap": dont_use_mmap}
    with pytest.raises(TFRecordError, match=r"a\.tfrecord: record 2 at byte offset \d+: corrupt"):
        list(TFRecord(**args).next_epoch(batch_size=10))
    r = TFRecord(**args, on_error="skip")
    with pytest.warns(UserWarning) as caught:
        (step,) = r.next_epoch(batch_size=10, last_batch="partial")
    assert [int(np.asarray(t)[0]) for t in step["label"].tensors] == [0, 1, 3, 4, 11, 12, 14]
    assert [np.asarray(t).tobytes() for t in step["img"].tensors][4] == b"x" * 11
    named = [str(w.message).split(": record ")[1].split(" at ")[0] for w in caught]
    assert named == ["2", "0", "3"] and "b.tfrecord" in str(caught[2].message)
    assert r.get_metadata()["skipped"] == 3
