"""readers.File and the reader base: epochs, labels, shuffling, sharding, prefetch, state."""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from headrace import readers
from headrace._core.batch import Batch
from headrace._core.dtype import int32, uint8
from headrace._core.tensor import Tensor
from headrace.readers import File, Reader
from headrace.readers.file import FileReadError

CLASSES = {"zebra": 4, "ant": 3, "cat": 4}  # 11 files; labels follow the sorted names


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for cls, count in CLASSES.items():
        (tmp_path / cls).mkdir()
        for i in range(count):
            (tmp_path / cls / f"{i}.jpg").write_bytes(f"{cls}/{i}".encode() * (i + 1))
        (tmp_path / cls / "notes.txt").write_bytes(b"ignored")
        (tmp_path / cls / "nested").mkdir()
        (tmp_path / cls / "nested" / "deep.jpg").write_bytes(b"ignored too")
    (tmp_path / "top.jpg").write_bytes(b"not in a class folder")
    return tmp_path


def name_of(data: Any) -> str:
    raw = bytes(np.asarray(data))
    stem = raw.split(b"/")[0].decode()
    idx = raw[len(stem) + 1 : len(stem) + 2].decode()
    return f"{stem}/{idx}"


def epoch_names(reader: File, batch_size: int | None = None, **kw: Any) -> list[list[str]]:
    """The epoch as a list of batches of sample names (sample mode: batches of one)."""
    out = []
    for data, _label in reader.next_epoch(batch_size=batch_size, **kw):
        samples = list(data) if isinstance(data, Batch) else [data]
        out.append([name_of(s) for s in samples])
    return out


def flat(batches: list[list[str]]) -> list[str]:
    return [n for b in batches for n in b]


ALL = sorted(f"{c}/{i}" for c, n in CLASSES.items() for i in range(n))
EXACT = {"last_batch": "partial"}  # exact epochs (the default is the reference's "fill")


def reader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("headrace-reader")]


# --- contents and labels --------------------------------------------------------------------
def test_outputs_bytes_labels_and_sources(root: Path) -> None:
    r = File(file_root=str(root))
    for data, label in r.next_epoch(batch_size=4):
        assert isinstance(data, Batch) and isinstance(label, Batch)
        assert data.dtype == uint8 and label.dtype == int32
        assert data._sources is not None
        for d, lab, src in zip(data, label, data._sources):
            arr = np.asarray(d)
            assert arr.ndim == 1 and arr.tobytes() == Path(src).read_bytes()
            assert np.asarray(lab).shape == (1,)
            cls = Path(src).parent.name
            assert int(np.asarray(lab)[0]) == sorted(CLASSES).index(cls)


def test_every_sample_once_per_epoch_in_both_modes(root: Path) -> None:
    r = File(file_root=str(root), **EXACT)
    assert sorted(flat(epoch_names(r, 3))) == ALL
    assert sorted(flat(epoch_names(r, 3))) == ALL
    s = File(file_root=str(root))
    samples = list(s.next_epoch())
    assert all(isinstance(d, Tensor) and isinstance(lab, Tensor) for d, lab in samples)
    assert sorted(name_of(d) for d, _ in samples) == ALL


def test_folder_order_is_sorted(root: Path) -> None:
    assert flat(epoch_names(File(file_root=str(root), **EXACT), 5)) == ALL
    assert flat(epoch_names(File(file_root=str(root)), 5)) == ALL + ALL[:4]  # topped up


def test_file_filters_are_case_insensitive(root: Path) -> None:
    (root / "ant" / "9.JPG").write_bytes(b"ant/9")
    (root / "ant" / "8.Png").write_bytes(b"ant/8")
    assert File(file_root=str(root)).get_metadata()["epoch_size"] == 13
    txt = File(file_root=str(root), file_filters=["*.TXT"])
    assert [bytes(np.asarray(d)) for d, _ in txt.next_epoch()] == [b"ignored"] * len(CLASSES)
    strict = File(file_root=str(root), file_filters=["*.jpg"], case_sensitive_filter=True)
    assert strict.get_metadata()["epoch_size"] == 11


def test_file_list_and_files(root: Path) -> None:
    lst = root / "list.txt"
    lst.write_text("ant/1.jpg 10\n\ncat/0.jpg 20\n")
    r = File(file_list=str(lst))
    got = [(name_of(d), int(np.asarray(lab)[0])) for d, lab in r.next_epoch()]
    assert got == [("ant/1", 10), ("cat/0", 20)]
    r = File(files=["cat/2.jpg", "ant/0.jpg"], file_root=str(root))
    assert [(name_of(d), int(np.asarray(lab)[0])) for d, lab in r.next_epoch()] == [
        ("cat/2", 0),
        ("ant/0", 1),
    ]
    r = File(files=[str(root / "ant/0.jpg")], labels=[42])
    assert [int(np.asarray(lab)[0]) for _, lab in r.next_epoch()] == [42]
    bad = root / "bad.txt"
    bad.write_text("ant/1.jpg ten\n")
    with pytest.raises(ValueError, match=r"bad.txt:1"):
        File(file_list=str(bad))


def test_construction_errors_name_the_path(root: Path, tmp_path_factory: Any) -> None:
    missing = root / "nope"
    with pytest.raises(FileNotFoundError, match="nope") as info:
        File(file_root=str(missing))
    assert isinstance(info.value, RuntimeError) and info.value.filename == str(missing)
    empty = tmp_path_factory.mktemp("empty")
    (empty / "cls").mkdir()
    with pytest.raises(FileReadError, match="no files matching") as info:
        File(file_root=str(empty))
    assert info.value.filename == str(empty)
    with pytest.raises(FileNotFoundError, match=r"list\.txt"):
        File(file_list=str(root / "list.txt"))
    with pytest.raises(ValueError, match="file_root, file_list or files"):
        File()
    with pytest.raises(ValueError, match="one label per file"):
        File(files=["a", "b"], labels=[1])
    with pytest.raises(ValueError, match="shuffle_after_epoch"):
        File(file_root=str(root), shuffle_after_epoch=True, random_shuffle=True)
    # the reference makes the reader and raises at its first use, in its own words
    small = File(files=["a", "b"], num_shards=3)
    for use in (lambda: list(small.next_epoch()), small.get_metadata, lambda: small()):
        with pytest.raises(RuntimeError, match=r'Assert on "num_shards_ <= Size\(\)" failed: '
                           "The number of input samples: 2, needs to be at least equal to the "
                           "requested number of shards: 3"):  # fmt: skip
            use()
    assert "File" in repr(small)


def test_argument_errors(root: Path) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        File(file_root=str(root), num_shards=0)
    with pytest.raises(ValueError, match=r"The shard_id=2 is invalid. Must be in range \[0..1\]"):
        File(file_root=str(root), num_shards=2, shard_id=2)
    with pytest.raises(ValueError, match="Invalid device"):
        File(file_root=str(root), device="gpu")
    with pytest.raises(ValueError, match="batch keyword arguments"):
        File(file_root=str(root), seed=Batch._wrap([], None, None, None))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="contradicts"):
        File(file_root=str(root), pad_last_batch=True, last_batch="drop")
    with pytest.raises(ValueError, match="on_error"):
        File(file_root=str(root), on_error="ignore")
    with pytest.raises(ValueError, match="non-None batch_size"):
        File(file_root=str(root)).next_epoch(capture=True)


def test_sticky_mode_and_batch_size_rules(root: Path) -> None:
    r = File(file_root=str(root))
    list(r.next_epoch(batch_size=4))
    with pytest.raises(RuntimeError, match="Cannot mix `samples`, `batches`"):
        r.next_epoch()
    with pytest.raises(ValueError, match="`batch_size` 5 is different than the `max_batch_size` 4"):
        r.next_epoch(batch_size=5)
    r = File(file_root=str(root), max_batch_size=4)
    with pytest.raises(ValueError, match="larger than the `max_batch_size` 4"):
        r.next_epoch(batch_size=8)
    assert [len(b) for b in epoch_names(r)] == [4, 4, 4]  # max_batch_size is the default
    s = File(file_root=str(root))
    list(s.next_epoch())
    with pytest.raises(RuntimeError, match="Cannot mix"):
        s.next_epoch(batch_size=2)


# --- shuffling ------------------------------------------------------------------------------
def test_shuffle_differs_per_epoch_and_is_reproducible(root: Path) -> None:
    a = File(file_root=str(root), random_shuffle=True, seed=7, **EXACT)
    b = File(file_root=str(root), random_shuffle=True, seed=7, **EXACT)
    c = File(file_root=str(root), random_shuffle=True, seed=8, **EXACT)
    ea = [flat(epoch_names(a, 4)) for _ in range(3)]
    eb = [flat(epoch_names(b, 4)) for _ in range(3)]
    ec = flat(epoch_names(c, 4))
    assert ea == eb
    assert all(sorted(e) == ALL for e in ea)
    assert ea[0] != ea[1] != ea[2] and ea[0] != ALL
    assert ec != ea[0]


def test_shuffle_after_epoch_is_global_and_consistent_across_shards(root: Path) -> None:
    epochs = []
    for e in range(2):
        shards = [File(file_root=str(root), num_shards=3, shard_id=s, shuffle_after_epoch=True,
                       **EXACT) for s in range(3)]  # fmt: skip
        for r in shards:  # advance each reader to epoch e
            for _ in range(e):
                list(r.next_epoch(batch_size=2))
        parts = [flat(epoch_names(r, 2)) for r in shards]
        assert sorted(flat(parts)) == ALL
        epochs.append(parts)
    assert epochs[0] != epochs[1]


# --- sharding and last batch ----------------------------------------------------------------
def test_shards_disjoint_covering_and_rotating(root: Path) -> None:
    k = 3
    readers = [File(file_root=str(root), num_shards=k, shard_id=s, **EXACT) for s in range(k)]
    e0 = [flat(epoch_names(r, 2)) for r in readers]
    assert sorted(flat(e0)) == ALL and [len(p) for p in e0] == [3, 4, 4]
    e1 = [flat(epoch_names(r, 2)) for r in readers]
    assert e1 == e0[1:] + e0[:1]  # each reader moved to the next shard
    stick = File(file_root=str(root), num_shards=k, shard_id=1, stick_to_shard=True, **EXACT)
    assert flat(epoch_names(stick, 2)) == flat(epoch_names(stick, 2)) == e0[1]


def test_pad_gives_equal_full_batches_on_every_rank(root: Path) -> None:
    k, bs = 3, 3
    for e in range(2):
        counts = set()
        for s in range(k):
            r = File(file_root=str(root), num_shards=k, shard_id=s, pad_last_batch=True)
            for _ in range(e):
                list(r.next_epoch(batch_size=bs))
            batches = epoch_names(r, bs)
            counts.add(len(batches))
            assert all(len(b) == bs for b in batches)
            plain = flat(epoch_names(File(file_root=str(root), num_shards=k, shard_id=(s + e) % k,
                                          stick_to_shard=True, **EXACT), bs))  # fmt: skip
            got = flat(batches)
            assert got[: len(plain)] == plain and set(got[len(plain) :]) == {plain[-1]}
        assert counts == {2}
    meta = File(file_root=str(root), num_shards=k, pad_last_batch=True).get_metadata()
    assert meta["epoch_size"] == 11 and meta["epoch_size_padded"] == 12
    assert meta["pad_last_batch"] == 1


def test_last_batch_modes(root: Path) -> None:
    def sizes(**kw: Any) -> list[int]:
        return [len(b) for b in epoch_names(File(file_root=str(root), **kw), 4)]

    assert sizes() == [4, 4, 4]  # the reference's default: topped up from the next epoch
    assert sizes(last_batch="partial") == [4, 4, 3]
    assert sizes(last_batch="drop") == [4, 4]
    assert sizes(last_batch="pad") == [4, 4, 4]
    r = File(file_root=str(root), last_batch="fill")
    first, second = epoch_names(r, 4), epoch_names(r, 4)
    assert [len(b) for b in first] == [4, 4, 4]
    assert flat(first) == ALL + ALL[:1]  # topped up with the next epoch's first sample
    assert flat(second) == ALL[1:] + ALL[:2]
    r = File(file_root=str(root), **EXACT)  # per-epoch override
    assert [len(b) for b in epoch_names(r, 4, last_batch="drop")] == [4, 4]
    assert [len(b) for b in epoch_names(r, 4)] == [4, 4, 3]


# --- prefetch thread, early exit, errors -----------------------------------------------------
def test_early_break_then_clean_next_epoch_and_no_leaked_threads(root: Path) -> None:
    ref = File(file_root=str(root), random_shuffle=True, seed=3, **EXACT)
    expected = [flat(epoch_names(ref, 2)) for _ in range(3)]
    r = File(file_root=str(root), random_shuffle=True, seed=3, prefetch_queue_depth=1, **EXACT)
    for _ in r.next_epoch(batch_size=2):
        assert len(reader_threads()) == 1
        break
    assert reader_threads() == []
    assert flat(epoch_names(r, 2)) == expected[1]
    it = r.next_epoch(batch_size=2)
    assert flat([[name_of(d) for d in next(it)[0]]]) == expected[2][:2]
    assert len(reader_threads()) == 1
    ref2 = File(file_root=str(root), random_shuffle=True, seed=3, **EXACT)
    for _ in range(4):
        last = flat(epoch_names(ref2, 2))
    assert flat(epoch_names(r, 2)) == last  # the suspended epoch was closed, this is epoch 3
    assert reader_threads() == []
    it2 = r.next_epoch(batch_size=2)
    next(it2)
    del r, it2
    gc.collect()
    assert reader_threads() == []


def test_read_error_names_the_file_and_reader_recovers(root: Path) -> None:
    r = File(file_root=str(root), enable_checkpointing=True, **EXACT)
    victim = root / "cat" / "2.jpg"
    content = victim.read_bytes()
    victim.unlink()
    got = []
    with pytest.raises(FileNotFoundError, match=r"cat.2\.jpg") as info:
        for data, _ in r.next_epoch(batch_size=2):
            got += [name_of(d) for d in data]
    assert info.value.filename == str(victim)
    assert got == ALL[:4]  # every batch before the failing one was delivered
    assert reader_threads() == []
    assert r.get_state()["epoch"] == 1 and r.get_state()["position"] == 0
    victim.write_bytes(content)
    assert flat(epoch_names(r, 2)) == ALL


def test_on_error_skip_refills_batches_and_counts(root: Path) -> None:
    r = File(file_root=str(root), on_error="skip", **EXACT)
    fill = File(file_root=str(root), on_error="skip")
    (root / "ant" / "1.jpg").unlink()
    (root / "cat" / "3.jpg").unlink()
    batches = epoch_names(r, 4)
    assert [len(b) for b in batches] == [4, 4, 1]
    readable = [n for n in ALL if n not in ("ant/1", "cat/3")]
    assert flat(batches) == readable
    assert r.get_metadata()["skipped"] == 2
    # "fill": full batches, as many as an epoch of 11 has; ant/1 is met again while topping up
    assert flat(epoch_names(fill, 4)) == readable + ["ant/0", "ant/2", "cat/0"]
    assert fill.get_metadata()["skipped"] == 3  # ant/1 was met again in the next data epoch


# --- state ----------------------------------------------------------------------------------
def test_state_rules(root: Path) -> None:
    r = File(file_root=str(root))
    with pytest.raises(RuntimeError, match="before its first iteration"):  # checked first
        r.get_state()
    list(r.next_epoch(batch_size=2))
    with pytest.raises(RuntimeError, match="checkpointing"):
        r.get_state()
    r = File(file_root=str(root), enable_checkpointing=True)
    with pytest.raises(RuntimeError, match="before its first iteration"):
        r.get_state()
    list(r.next_epoch(batch_size=2))
    with pytest.raises(RuntimeError, match="after iteration has begun"):
        r.set_state(r.get_state())
    fresh = File(file_root=str(root))
    with pytest.raises(TypeError, match="ReaderState"):
        fresh.set_state(12)
    with pytest.raises(ValueError, match="version"):
        fresh.set_state({"version": 99})
    with pytest.raises(ValueError, match="num_shards"):
        File(file_root=str(root), num_shards=2).set_state(r.get_state())
    state = r.get_state()
    assert state == str(state) and hash(state) == hash(str(state))
    # the reference's public reader surface, nothing more (its test_public_api checks it)
    for cls in (File, readers.TFRecord, readers.Webdataset, readers.Numpy, readers.COCO,
                readers.Caffe, readers.MXNet, readers.NemoAsr):
        public = {m for m in dir(cls) if not m.startswith("_")}
        assert public == {"next_epoch", "get_metadata", "get_state", "set_state"}, cls


@pytest.mark.parametrize(
    ("kw", "stop_after"),
    [
        ({"random_shuffle": True, "seed": 5, "num_shards": 2, "shard_id": 1}, 2),
        ({"random_shuffle": True, "seed": 5, "num_shards": 2, "shard_id": 1}, 3),  # at the end
        ({"random_shuffle": True, "num_shards": 3, "shard_id": 0, "pad_last_batch": True}, 1),
        ({"shuffle_after_epoch": True, "num_shards": 2, "shard_id": 0, "last_batch": "fill"}, 2),
        ({"random_shuffle": True, "seed": 1, "last_batch": "drop"}, 4),
    ],
)
def test_resume_is_exact_mid_epoch(root: Path, kw: dict[str, Any], stop_after: int) -> None:
    r = File(file_root=str(root), enable_checkpointing=True, **kw)
    seen = [epoch_names(r, 2), []]
    seed = r.get_state()["seed"]  # without a seed the state carries the drawn one
    full = File(file_root=str(root), **{**kw, "seed": seed})
    uninterrupted = [epoch_names(full, 2) for _ in range(4)]
    for data, _ in r.next_epoch(batch_size=2):
        seen[1].append([name_of(d) for d in data])
        if len(seen[1]) == stop_after:
            state = str(r.get_state())
            break
    restored = File(file_root=str(root), **{k: v for k, v in kw.items() if k != "seed"})
    restored.set_state(state)
    rest = epoch_names(restored, 2)
    assert seen[0] == uninterrupted[0]
    if stop_after < len(uninterrupted[1]):
        assert seen[1] + rest == uninterrupted[1]
        assert epoch_names(restored, 2) == uninterrupted[2]
    else:  # the whole epoch was received: the restored reader goes on with the next one
        assert seen[1] == uninterrupted[1] and rest == uninterrupted[2]
        assert epoch_names(restored, 2) == uninterrupted[3]


def test_state_after_full_epoch_in_sample_mode(root: Path) -> None:
    r = File(file_root=str(root), random_shuffle=True, enable_checkpointing=True)
    list(r.next_epoch())
    state = r.get_state()
    assert (state["epoch"], state["position"]) == (1, 0)
    twin = File(file_root=str(root), random_shuffle=True)
    twin.set_state(state)
    assert [name_of(d) for d, _ in twin.next_epoch()] == [name_of(d) for d, _ in r.next_epoch()]


# --- the reference ---------------------------------------------------------------------------
@pytest.mark.dali
def test_matches_dali_metadata_order_and_padding(root: Path) -> None:
    pytest.importorskip("nvidia.dali")
    import nvidia.dali.experimental.dynamic as dndd

    for kw in ({}, {"num_shards": 4, "shard_id": 1, "pad_last_batch": True},
               {"num_shards": 2, "shard_id": 1, "stick_to_shard": True}):  # fmt: skip
        ours = File(file_root=str(root), **kw).get_metadata()
        ours.pop("skipped")
        assert ours == dndd.readers.File(file_root=str(root), **kw).get_metadata()
    ref = dndd.readers.File(file_root=str(root))
    want = [(name_of(np.asarray(d)), int(np.asarray(lab)[0])) for d, lab in ref.next_epoch()]
    got = [
        (name_of(d), int(np.asarray(lab)[0])) for d, lab in File(file_root=str(root)).next_epoch()
    ]
    assert got == want
    # pad_last_batch with full batches: identical shard contents and rotation
    for s in range(2):
        ref = dndd.readers.File(file_root=str(root), num_shards=2, shard_id=s, pad_last_batch=True)
        mine = File(file_root=str(root), num_shards=2, shard_id=s, pad_last_batch=True)
        for _ in range(2):
            want_b = [[name_of(np.asarray(t)) for t in d] for d, _ in ref.next_epoch(batch_size=2)]
            assert epoch_names(mine, 2) == want_b


def test_environment_sharding_auto(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    r = File(file_root=str(root), shard_id="auto", num_shards="auto")
    meta = r.get_metadata()
    assert (meta["shard_id"], meta["number_of_shards"]) == (1, 2)
    assert flat(epoch_names(r, 3)) == ALL[5:]
    assert os.environ["RANK"] == "1"


class _CountingDataset:
    read_errors = (OSError,)

    def __init__(self, n: int) -> None:
        self.n, self.reads = n, 0

    def __len__(self) -> int:
        return self.n

    def source(self, index: int) -> str:
        return f"mem:{index}"

    def read(self, index: int) -> tuple[np.ndarray]:
        self.reads += 1
        return (np.array([index], np.int32),)


class _CountingReader(Reader):
    _outputs = ((int32, None),)

    def __init__(self, n: int, **kw: Any) -> None:
        super().__init__(**kw)
        self._dataset = _CountingDataset(n)
        self._finish_init()


def test_prefetch_is_bounded_and_runs_ahead() -> None:
    r = _CountingReader(200, prefetch_queue_depth=2)
    it = r.next_epoch(batch_size=4)
    first = next(it)
    deadline = time.monotonic() + 2
    while r._dataset.reads < 12 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    reads = r._dataset.reads
    assert 12 <= reads <= 4 * 5  # read ahead, but at most depth + held + in-progress batches
    assert np.asarray(first[0].tensors[0]).tolist() == [0]
    assert first[0]._sources == ["mem:0", "mem:1", "mem:2", "mem:3"]
    rest = [int(np.asarray(t)[0]) for (b,) in it for t in b]
    assert rest == list(range(4, 200)) and r._dataset.reads == 200
