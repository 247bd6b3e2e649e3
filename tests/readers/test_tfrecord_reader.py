"""readers.TFRecord, headrace.tfrecord features and the tfrecord2idx tool, on files written by
the test helpers (hand-encoded ``tf.train.Example`` records with real CRCs)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("google.protobuf")
pytest.importorskip("google_crc32c")

from tests._helpers.tfrecord_data import (
    encode_example,
    frame,
    masked_crc,
    write_index,
    write_tfrecord,
)

import headrace.tfrecord as tfrec
from headrace._core.batch import Batch
from headrace._core.errors import BackendUnavailableError, InvalidArgumentError, InvalidTypeError
from headrace.readers import TFRecord
from headrace.readers import _example_proto as proto
from headrace.readers import tfrecord_index as tfi
from headrace.readers.file import MissingFileError
from headrace.readers.tfrecord import TFRecordError

N_FILES, PER_FILE = 3, 4  # 12 records; record r has label r


def record(r: int) -> dict[str, Any]:
    return {
        "image": bytes([r]) * (r + 1),
        "label": r,
        "box": [float(r), r + 0.5, -1.0, 2.0],
        "ids": list(range(r % 3)),
    }


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    out = []
    for f in range(N_FILES):
        p = tmp_path / f"train-{f}.tfrecord"
        write_tfrecord(p, [record(f * PER_FILE + k) for k in range(PER_FILE)])
        out.append(p)
    return out


FEATURES = {
    "image": tfrec.FixedLenFeature((), tfrec.string, ""),
    "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "box": tfrec.FixedLenFeature([2, 2], tfrec.float32, 0.0),
    "ids": tfrec.VarLenFeature(tfrec.int64, 0),
}


def labels(reader: TFRecord, batch_size: int | None = None, **kw: Any) -> list[int]:
    out = []
    for step in reader.next_epoch(batch_size=batch_size, **kw):
        lab = step["label"]
        samples = lab.tensors if isinstance(lab, Batch) else [lab]
        out += [int(np.asarray(s).reshape(-1)[0]) for s in samples]
    return out


# --- reading ---------------------------------------------------------------------------------
def test_reads_every_feature_in_order(files: list[Path]) -> None:
    r = TFRecord(path=files, features=FEATURES)
    steps = list(r.next_epoch())
    assert len(steps) == 12 and list(steps[0]) == ["image", "label", "box", "ids"]
    for i, s in enumerate(steps):
        assert np.asarray(s["image"]).tobytes() == bytes([i]) * (i + 1)
        assert np.asarray(s["image"]).dtype == np.uint8
        np.testing.assert_array_equal(np.asarray(s["label"]), np.array([i], np.int64))
        np.testing.assert_array_equal(
            np.asarray(s["box"]), np.array([[i, i + 0.5], [-1, 2]], np.float32)
        )
        assert np.asarray(s["ids"]).tolist() == list(range(i % 3))
        assert np.asarray(s["ids"]).dtype == np.int64
    source = steps[5]["label"]._source
    assert source.startswith(f"{files[1]} (record 1 at byte offset ")


def test_batches_are_dicts_of_batches(files: list[Path]) -> None:
    r = TFRecord(path=files, features=FEATURES, max_batch_size=5, last_batch="partial")
    steps = list(r.next_epoch())
    assert [s["label"].batch_size for s in steps] == [5, 5, 2]
    assert all(isinstance(v, Batch) for v in steps[0].values())
    assert steps[0]["image"].shape == [(i + 1,) for i in range(5)]
    assert steps[0]["box"].shape == [(2, 2)] * 5


def test_paths_as_pathlike_and_str_and_single(files: list[Path]) -> None:
    assert labels(TFRecord(path=files[1], features=FEATURES)) == [4, 5, 6, 7]
    assert labels(TFRecord(path=[str(p) for p in files], features=FEATURES)) == list(range(12))


def test_features_shapes_defaults_and_partial_shapes(tmp_path: Path) -> None:
    p = tmp_path / "f.tfrecord"
    long = [float(v) for v in range(40)]
    write_tfrecord(p, [{"a": 7, "v": [1, 2, 3, 4, 5, 6], "long": long, "empty": []}, {"a": 8}])
    feats = {
        "a": tfrec.FixedLenFeature([], tfrec.int64, 0),
        "v": tfrec.VarLenFeature([3], tfrec.int64, 0),
        "long": tfrec.VarLenFeature([2, 4], tfrec.float32, 0.0),
        "miss": tfrec.FixedLenFeature([2], tfrec.float32, [1.5, 2.5]),
        "miss_s": tfrec.FixedLenFeature([1], tfrec.string, "xyz"),
        "empty": tfrec.VarLenFeature(tfrec.float32, 0.0),
    }
    first, second = TFRecord(path=p, features=feats).next_epoch()
    assert np.asarray(first["a"]).shape == () and int(np.asarray(first["a"])) == 7
    assert np.asarray(first["v"]).tolist() == [[1, 2, 3], [4, 5, 6]]
    np.testing.assert_array_equal(np.asarray(first["long"]), np.arange(40, dtype=np.float32)
                                  .reshape(5, 2, 4))  # fmt: skip
    assert np.asarray(first["miss"]).tolist() == [1.5, 2.5]
    assert np.asarray(first["miss_s"]).tobytes() == b"xyz"
    assert np.asarray(first["empty"]).shape == (0,)
    assert np.asarray(second["v"]).shape == (0, 3)  # a missing VarLenFeature: empty
    assert np.asarray(second["long"]).dtype == np.float32


@pytest.mark.parametrize(
    ("feature", "message"),
    [
        (tfrec.FixedLenFeature([3], tfrec.int64, 0), "holds 2 values; expected 3"),
        (tfrec.FixedLenFeature([2], tfrec.float32, 0.0), "holds int64_list values"),
        (tfrec.VarLenFeature([4], tfrec.int64, 0), "expected a multiple of 4"),
        (tfrec.FixedLenFeature((), tfrec.string, ""), "holds int64_list values"),
    ],
)
def test_feature_mismatch_names_file_and_offset(
    tmp_path: Path, feature: tfrec.Feature, message: str
) -> None:
    p = tmp_path / "m.tfrecord"
    offsets = write_tfrecord(p, [{"x": [1, 2]}, {"x": [3, 4]}])
    r = TFRecord(path=p, features={"x": feature})
    with pytest.raises(TFRecordError, match=message) as e:
        list(r.next_epoch())
    assert str(p) in str(e.value) and "record 0 at byte offset 0" in str(e.value)
    assert e.value.offset == offsets[0]


def test_missing_feature_without_default_and_multi_strings(tmp_path: Path) -> None:
    p = tmp_path / "m.tfrecord"
    write_tfrecord(p, [{"s": [b"a", b"b"]}])
    with pytest.raises(TFRecordError, match="'y' is missing and has no default"):
        list(TFRecord(path=p, features={"y": tfrec.FixedLenFeature([1], tfrec.int64)})
             .next_epoch())  # fmt: skip
    with pytest.raises(TFRecordError, match="holds 2 byte strings, not 1"):
        list(TFRecord(path=p, features={"s": tfrec.FixedLenFeature([], tfrec.string, "")})
             .next_epoch())  # fmt: skip


def test_feature_constructors() -> None:
    assert repr(tfrec.VarLenFeature([2], tfrec.float32, 0.0)) == "VarLenFeature([2], float32, 0.0)"
    assert tfrec.VarLenFeature(type=tfrec.int64).default_value is None
    assert tfrec.FixedLenFeature([2], tfrec.int64, [1, 2]).default_value.tolist() == [1, 2]
    assert (tfrec.int64, tfrec.string, tfrec.float32) == (0, 1, 2)  # the reference's values
    with pytest.raises(InvalidArgumentError, match="tensors of strings"):
        tfrec.FixedLenFeature([2], tfrec.string, "")
    with pytest.raises(InvalidArgumentError, match="variable-length string"):
        tfrec.VarLenFeature(tfrec.string, "")
    with pytest.raises(InvalidArgumentError, match="feature type"):
        tfrec.FixedLenFeature([1], 7, 0)
    with pytest.raises(InvalidArgumentError, match="does not fit"):
        tfrec.FixedLenFeature([2], tfrec.int64, [1, 2, 3])
    with pytest.raises(InvalidArgumentError, match="does not fit"):
        tfrec.FixedLenFeature([1], tfrec.int64, 0.5)
    with pytest.raises(InvalidArgumentError, match="non-negative"):
        tfrec.FixedLenFeature([-1], tfrec.int64, 0)
    with pytest.raises(InvalidTypeError, match="str or bytes"):
        tfrec.FixedLenFeature([], tfrec.string, 3)


def test_argument_errors(files: list[Path], tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="path"):
        TFRecord(features=FEATURES)
    with pytest.raises(InvalidArgumentError, match="features"):
        TFRecord(path=files)
    with pytest.raises(InvalidTypeError, match="features"):
        TFRecord(path=files, features={"label": "int64"})
    with pytest.raises(InvalidArgumentError, match="one index file per TFRecord file"):
        TFRecord(path=files, index_path=[tmp_path / "a.idx"], features=FEATURES)
    with pytest.raises(MissingFileError, match="not found"):
        TFRecord(path=tmp_path / "nope.tfrecord", features=FEATURES)
    with pytest.raises(InvalidArgumentError, match="stick_to_shard"):
        TFRecord(path=files, features=FEATURES, shuffle_after_epoch=True, stick_to_shard=True)
    with pytest.raises(InvalidTypeError, match="shuffle_after_epoch_seed"):
        TFRecord(path=files, features=FEATURES, shuffle_after_epoch_seed="1")
    with pytest.raises(InvalidArgumentError, match="device"):
        TFRecord(path=files, features=FEATURES, device="gpu")


def test_noop_parameters_are_accepted(files: list[Path]) -> None:
    r = TFRecord(path=files, features=FEATURES, use_o_direct=True, dont_use_mmap=True,
                 lazy_init=True, read_ahead=True, skip_cached_images=True, initial_fill=16,
                 tensor_init_bytes=1 << 20, prefetch_queue_depth=3)  # fmt: skip
    assert labels(r) == list(range(12))


# --- index files -----------------------------------------------------------------------------
def test_index_files_given_built_and_cached(files: list[Path], tmp_path: Path) -> None:
    idx = [tmp_path / f"{p.name}.idx" for p in files]
    for i, p in zip(idx, files):
        write_index(i, p)
    assert labels(TFRecord(path=files, index_path=idx, features=FEATURES)) == list(range(12))
    assert not any(Path(str(p) + ".headrace-idx").exists() for p in files)
    # no index: scanned once, cached next to the data
    assert labels(TFRecord(path=files, features=FEATURES)) == list(range(12))
    cached = Path(str(files[0]) + ".headrace-idx")
    assert cached.exists() and cached.read_text().startswith("# headrace tfrecord index v1")
    # a named index that does not exist is built the same way
    r = TFRecord(path=files, index_path=[tmp_path / "x.idx"] * 3, features=FEATURES)
    assert labels(r) == list(range(12))


def test_changed_file_is_never_read_with_a_stale_cached_index(files: list[Path]) -> None:
    assert labels(TFRecord(path=files[0], features=FEATURES)) == [0, 1, 2, 3]
    write_tfrecord(files[0], [record(9), record(10), record(11)])  # new content and size
    assert labels(TFRecord(path=files[0], features=FEATURES)) == [9, 10, 11]


def test_stale_user_index_is_an_error(files: list[Path], tmp_path: Path) -> None:
    idx = tmp_path / "stale.idx"
    write_index(idx, files[0])
    write_tfrecord(files[0], [record(k) for k in (5, 66, 77, 99)])  # other record sizes
    with pytest.raises(TFRecordError, match=r"stale or wrong index file|CRC mismatch"):
        list(TFRecord(path=files[0], index_path=idx, features=FEATURES).next_epoch())


def test_unwritable_data_folder_caches_in_the_cache_dir(
    files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEADRACE_CACHE", str(tmp_path / "cache"))
    real = tfi.write_index

    def refuse_next_to_data(path: str, *a: Any, **k: Any) -> None:
        if path.endswith(".headrace-idx"):
            raise PermissionError(13, "read-only", path)
        real(path, *a, **k)

    monkeypatch.setattr(tfi, "write_index", refuse_next_to_data)
    assert labels(TFRecord(path=files[0], features=FEATURES)) == [0, 1, 2, 3]
    assert len(list((tmp_path / "cache" / "tfrecord-index").glob("*.idx"))) == 1
    monkeypatch.setattr(tfi, "scan", lambda *a: pytest.fail("the cached index was not used"))
    assert labels(TFRecord(path=files[0], features=FEATURES)) == [0, 1, 2, 3]


def test_bad_index_lines_and_absurd_sizes(files: list[Path], tmp_path: Path) -> None:
    idx = tmp_path / "bad.idx"
    idx.write_text("0 22\nzero 5\n")
    with pytest.raises(InvalidArgumentError, match=r"bad.idx:2: expected 'offset size'"):
        TFRecord(path=files[0], index_path=idx, features=FEATURES)
    idx.write_text(f"0 {10**15}\n")  # never allocated: checked against the file size first
    with pytest.raises(TFRecordError, match="truncated record: the index says"):
        list(TFRecord(path=files[0], index_path=idx, features=FEATURES).next_epoch())


def test_tfrecord2idx_tool(files: list[Path], tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "tool.idx"
    assert tfi.main([str(files[0]), str(out)]) == 0
    ref = tmp_path / "ref.idx"
    write_index(ref, files[0])
    assert out.read_text() == ref.read_text()
    broken = tmp_path / "broken.tfrecord"
    broken.write_bytes(files[0].read_bytes()[:-3])
    assert tfi.main([str(broken), str(tmp_path / "b.idx")]) == 1
    assert "byte offset" in capsys.readouterr().err and not (tmp_path / "b.idx").exists()
    assert tfi.main([]) == 2


# --- corrupt and truncated files -------------------------------------------------------------
def corrupt(p: Path, at: int) -> None:
    data = bytearray(p.read_bytes())
    data[at] ^= 0xFF
    p.write_bytes(bytes(data))


def test_data_crc_mismatch_names_file_and_offset(tmp_path: Path) -> None:
    p = tmp_path / "c.tfrecord"
    offsets = write_tfrecord(p, [record(r) for r in range(4)])
    corrupt(p, offsets[2] + 14)  # inside record 2's data
    with pytest.raises(TFRecordError, match=rf"record 2 at byte offset {offsets[2]}: corrupt "
                       r"record data \(data CRC mismatch\)"):  # fmt: skip
        list(TFRecord(path=p, features=FEATURES).next_epoch())


def test_length_crc_mismatch_and_truncation_at_construction(tmp_path: Path) -> None:
    p = tmp_path / "c.tfrecord"
    offsets = write_tfrecord(p, [record(r) for r in range(4)])
    good = p.read_bytes()
    corrupt(p, offsets[1] + 2)
    with pytest.raises(TFRecordError, match=rf"record 1 at byte offset {offsets[1]}: corrupt "
                       r"record header"):  # fmt: skip
        TFRecord(path=p, features=FEATURES)
    p.write_bytes(good[:-5])
    with pytest.raises(TFRecordError, match=rf"{p.name}: record 3 at byte offset {offsets[3]}: "
                       "truncated record"):  # fmt: skip
        TFRecord(path=p, features=FEATURES)
    assert not Path(str(p) + ".headrace-idx").exists()  # a broken file is never cached
    with pytest.warns(UserWarning, match="rest of the file is skipped"):
        r = TFRecord(path=p, features=FEATURES, on_error="skip")
    assert labels(r) == [0, 1, 2]


def test_truncated_file_with_an_index_fails_at_the_record(tmp_path: Path) -> None:
    p, idx = tmp_path / "t.tfrecord", tmp_path / "t.idx"
    offsets = write_tfrecord(p, [record(r) for r in range(4)])
    write_index(idx, p)
    p.write_bytes(p.read_bytes()[:-5])
    r = TFRecord(path=p, index_path=idx, features=FEATURES, max_batch_size=2)
    with pytest.raises(TFRecordError, match=rf"record 3 at byte offset {offsets[3]}: truncated"):
        list(r.next_epoch())


def test_on_error_skip_drops_whole_samples_counts_and_warns(tmp_path: Path) -> None:
    p = tmp_path / "s.tfrecord"
    not_an_example = b"\xff\xff\xff"  # valid framing, not a protobuf message
    recs = [record(0), record(1), not_an_example, record(3), record(4)]
    offsets = write_tfrecord(p, recs)
    corrupt(p, offsets[4] + 13)
    r = TFRecord(path=p, features=FEATURES, on_error="skip", max_batch_size=2, last_batch="partial")
    with pytest.warns(UserWarning) as caught:
        steps = list(r.next_epoch())
    messages = " ".join(str(w.message) for w in caught)
    assert "not a tf.train.Example" in messages and "data CRC mismatch" in messages
    got = [(int(np.asarray(t)[0]), np.asarray(i).tobytes()) for s in steps
           for t, i in zip(s["label"].tensors, s["image"].tensors)]  # fmt: skip
    assert got == [(0, b"\x00"), (1, b"\x01\x01"), (3, b"\x03" * 4)]  # labels stay aligned
    assert r.get_metadata()["skipped"] == 2
    strict = TFRecord(path=p, features=FEATURES)
    with pytest.raises(TFRecordError, match=r"record 2 at byte offset .*not a tf\.train\.Example"):
        list(strict.next_epoch())


def test_empty_file_and_empty_dataset(tmp_path: Path, files: list[Path]) -> None:
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    assert labels(TFRecord(path=[empty, files[0]], features=FEATURES)) == [0, 1, 2, 3]
    reader = TFRecord(path=empty, features=FEATURES)  # (as the reference: raised at first use)
    with pytest.raises(RuntimeError, match="number of input samples: 0"):
        list(reader.next_epoch())


# --- shuffling, sharding, state --------------------------------------------------------------
def test_sharding_and_random_shuffle(files: list[Path]) -> None:
    shards = [labels(TFRecord(path=files, features=FEATURES, num_shards=3, shard_id=s,
                              stick_to_shard=True)) for s in range(3)]  # fmt: skip
    assert shards == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    a = TFRecord(path=files, features=FEATURES, random_shuffle=True, seed=7)
    b = TFRecord(path=files, features=FEATURES, random_shuffle=True, seed=7)
    ea, eb = labels(a, 4), labels(b, 4)
    assert ea == eb and sorted(ea) == list(range(12)) and ea != list(range(12))
    assert labels(a, 4) != ea  # a new permutation every epoch


def test_shuffle_after_epoch_permutes_whole_files(files: list[Path]) -> None:
    def epochs(**kw: Any) -> list[list[int]]:
        r = TFRecord(path=files, features=FEATURES, shuffle_after_epoch=True, **kw)
        return [labels(r) for _ in range(4)]

    runs = epochs()
    assert runs == epochs()  # the default seed is fixed: the same order every run
    for e in runs:
        assert sorted(e) == list(range(12))
        blocks = [e[i : i + 4] for i in range(0, 12, 4)]
        assert all(b == list(range(b[0], b[0] + 4)) and b[0] % 4 == 0 for b in blocks)
    assert len({tuple(e) for e in runs}) > 1
    assert epochs(shuffle_after_epoch_seed=123) != runs
    # shards split the same file order on every rank
    halves = [epochs(num_shards=2, shard_id=s) for s in range(2)]
    assert [h0 + h1 for h0, h1 in zip(*halves)] == runs
    mixed = epochs(random_shuffle=True, seed=3)[0]
    assert sorted(mixed) == list(range(12))


def test_checkpoint_resume_is_exact(files: list[Path]) -> None:
    kw = dict(path=files, features=FEATURES, random_shuffle=True, seed=11, num_shards=2,
              shard_id=1, enable_checkpointing=True)  # fmt: skip
    r = TFRecord(**kw)
    it = r.next_epoch(batch_size=2)
    first = next(it)
    state = r.get_state()
    rest = [int(np.asarray(t)[0]) for s in it for t in s["label"].tensors]
    following = labels(r, 2)
    twin = TFRecord(**kw)
    twin.set_state(str(state))
    assert labels(twin, 2) == rest and labels(twin, 2) == following
    assert first["label"].batch_size == 2


def test_pad_last_batch_metadata(files: list[Path]) -> None:
    r = TFRecord(path=files, features=FEATURES, num_shards=5, shard_id=0, pad_last_batch=True,
                 stick_to_shard=True)  # fmt: skip
    assert r.get_metadata()["epoch_size_padded"] == 15
    assert labels(r, 3) == [0, 1, 1]


# --- the optional packages -------------------------------------------------------------------
@pytest.mark.parametrize("module", ["google.protobuf", "google_crc32c"])
def test_missing_extra_names_the_pip_command(
    files: list[Path], monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    for name in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    proto.example_class.cache_clear()
    try:
        with pytest.raises(BackendUnavailableError, match=r"pip install headrace\[tfrecord\]"):
            TFRecord(path=files, features=FEATURES)
    finally:
        proto.example_class.cache_clear()


def test_headrace_info_lists_the_packages() -> None:
    from headrace.cli import info_lines

    text = "\n".join(info_lines())
    assert "readers.TFRecord" in text and "google-crc32c (readers.TFRecord)" in text


def test_runtime_schema_round_trips_a_hand_encoded_example() -> None:
    ex = proto.example_class().FromString(encode_example({"a": [1, -2], "b": b"xy"}))
    assert list(ex.features.feature["a"].int64_list.value) == [1, -2]
    assert tfi.masked_crc(b"abc") == masked_crc(b"abc")
    assert frame(b"")[:8] == bytes(8)


# --- the reference ---------------------------------------------------------------------------
def dali_epoch(reader: Any, batch_size: int | None = None) -> list[dict[str, np.ndarray]]:
    out = []
    for step in reader.next_epoch(batch_size=batch_size):
        if batch_size is None:
            out.append({k: np.asarray(v) for k, v in step.items()})
        else:
            n = len(next(iter(step.values())).tensors)
            out += [{k: np.asarray(v.tensors[i]) for k, v in step.items()} for i in range(n)]
    return out


@pytest.mark.dali
def test_matches_dali(files: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("nvidia.dali")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import nvidia.dali.experimental.dynamic as dndd
        import nvidia.dali.tfrecord as dtf
    idx = [tmp_path / f"{p.name}.idx" for p in files]
    for i, p in zip(idx, files):
        assert tfi.main([str(p), str(i)]) == 0  # our tool's index files serve the reference
    theirs = {
        "image": dtf.FixedLenFeature((), dtf.string, ""),
        "label": dtf.FixedLenFeature([1], dtf.int64, -1),
        "box": dtf.FixedLenFeature([2, 2], dtf.float32, 0.0),
        "ids": dtf.VarLenFeature(dtf.int64, 0),
    }
    for kw in ({}, {"num_shards": 2, "shard_id": 1}, {"num_shards": 5, "shard_id": 3,
               "pad_last_batch": True}):  # fmt: skip
        for bs in (None, 3):

            def ref(kw: dict[str, Any] = kw) -> Any:
                return dndd.readers.TFRecord(path=[str(p) for p in files], features=theirs,
                                             index_path=[str(i) for i in idx], **kw)  # fmt: skip

            mine = TFRecord(path=files, features=FEATURES, **kw)
            got_meta = mine.get_metadata()
            got_meta.pop("skipped")
            assert got_meta == ref().get_metadata()  # (a fresh one: sample mode fails after it)
            dali = ref()
            for _ in range(2):  # two epochs: the shard rotation too
                want, got = dali_epoch(dali, bs), dali_epoch(mine, bs)
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    assert list(g) == list(w)
                    for k in g:
                        assert g[k].dtype == w[k].dtype and g[k].shape == w[k].shape, k
                        np.testing.assert_array_equal(g[k], w[k])
    # partial shapes of variable-length features
    p = tmp_path / "pairs.tfrecord"
    write_tfrecord(p, [{"pairs": [float(v) for v in range(2 * k + 2)]} for k in range(4)])
    assert tfi.main([str(p), str(p) + ".idx"]) == 0
    ref = dndd.readers.TFRecord(
        path=str(p),
        index_path=str(p) + ".idx",
        features={"pairs": dtf.VarLenFeature([2], dtf.float32, 0.0)},
    )
    mine = TFRecord(path=p, features={"pairs": tfrec.VarLenFeature([2], tfrec.float32, 0.0)})
    for g, w in zip(dali_epoch(mine), dali_epoch(ref), strict=True):
        assert g["pairs"].shape == w["pairs"].shape
        np.testing.assert_array_equal(g["pairs"], w["pairs"])
    assert os.path.exists(str(p) + ".idx")


def test_features_made_with_the_reference_module_read_as_ours(files: list[Path]) -> None:
    """``import nvidia.dali.tfrecord as tfrec`` keeps working: its features (opaque objects) made
    after ``import headrace`` read exactly as the same headrace.tfrecord features."""
    dali_tfrec = pytest.importorskip("nvidia.dali.tfrecord")
    theirs = {
        "image": dali_tfrec.FixedLenFeature((), dali_tfrec.string, ""),
        "label": dali_tfrec.FixedLenFeature([1], dali_tfrec.int64, -1),
        "box": dali_tfrec.FixedLenFeature([2, 2], dali_tfrec.float32, 0.0),
        "ids": dali_tfrec.VarLenFeature(dali_tfrec.int64, 0),
    }
    assert type(theirs["label"]).__module__.startswith("nvidia.dali")  # the reference's own
    got = next(iter(TFRecord(path=files, features=theirs).next_epoch(batch_size=4)))
    want = next(iter(TFRecord(path=files, features=FEATURES).next_epoch(batch_size=4)))
    assert got.keys() == want.keys()
    for k in want:
        for a, b in zip(got[k], want[k], strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_reference_features_made_before_headrace_get_an_error_that_says_what_to_do(
    files: list[Path],
) -> None:
    pytest.importorskip("nvidia.dali.tfrecord")
    code = (
        "import sys, nvidia.dali.tfrecord as t\n"
        "f = t.FixedLenFeature([1], t.int64, -1)\n"
        "import headrace as ndd\n"
        "try:\n"
        "    ndd.readers.TFRecord(path=sys.argv[1], features={'label': f})\n"
        "except TypeError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(files[0])], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "made before `import headrace`" in out.stdout
    assert "import headrace.tfrecord as tfrec" in out.stdout
