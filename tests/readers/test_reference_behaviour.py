"""Readers as the reference's programs use them: the default last batch, direct calls, the
default file filters, ``os.PathLike`` paths; each compared with the reference where it runs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import headrace as ndd
from headrace.readers import File
from headrace.readers.file import DEFAULT_FILE_FILTERS

N = 10  # samples of the small file list


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    out = []
    for i in range(N):
        p = tmp_path / f"{i:02d}.bin"
        p.write_bytes(bytes([i]) * (i + 1))
        out.append(p)
    return out


def labels_of(batch: Any) -> list[int]:
    return [int(np.asarray(t)[0]) for t in batch.tensors]


def epochs(reader: Any, n: int, batch_size: int | None = 4, **kw: Any) -> list[list[list[int]]]:
    out = []
    for _ in range(n):
        out.append([labels_of(lab) for _, lab in reader.next_epoch(batch_size=batch_size, **kw)])
    return out


# --- the last batch -------------------------------------------------------------------------
def test_default_batches_are_full_and_pair_with_random_ops(files: list[Path]) -> None:
    """The reference's programs pair reader batches with batch_size=BATCH random calls."""
    batch = 4
    r = File(files=files, labels=list(range(N)), random_shuffle=True, seed=3)
    for _ in range(3):
        steps = 0
        for data, label in r.next_epoch(batch_size=batch):
            noise = ndd.random.uniform(batch_size=batch, range=[0, 1])
            total = label + ndd.cast(noise, dtype=ndd.int32)  # raises on a batch-size mismatch
            assert total.batch_size == data.batch_size == batch
            steps += 1
        assert steps == math.ceil(N / batch)


def test_fill_is_one_continuous_stream(files: list[Path]) -> None:
    r = File(files=files, labels=list(range(N)))
    got = epochs(r, 3)
    stream = [x for e in got for b in e for x in b]
    assert stream == [i % N for i in range(36)]  # 3 calls of ceil(10 / 4) = 3 full batches
    exact = File(files=files, labels=list(range(N)), last_batch="partial")
    assert epochs(exact, 2) == [[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]] * 2
    assert epochs(File(files=files, labels=list(range(N)), pad_last_batch=True), 1) == [
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 9, 9]]
    ]


@pytest.mark.parametrize("stop_after", [1, 2, 3])
def test_fill_resume_is_exact(files: list[Path], stop_after: int) -> None:
    kw = {"files": files, "labels": list(range(N)), "num_shards": 2, "shard_id": 1,
          "random_shuffle": True, "seed": 11}  # fmt: skip
    whole = epochs(File(**kw), 4, batch_size=2)
    r = File(**kw, enable_checkpointing=True)
    first = epochs(r, 1, batch_size=2)
    seen = []
    for _, lab in r.next_epoch(batch_size=2):
        seen.append(labels_of(lab))
        if len(seen) == stop_after:
            state = str(r.get_state())
            break
    restored = File(**{**kw, "seed": None})
    restored.set_state(state)
    rest = epochs(restored, 2, batch_size=2)
    assert first[0] == whole[0]
    if stop_after < len(whole[1]):
        assert seen + rest[0] == whole[1] and rest[1] == whole[2]
    else:  # the call's last batch was received: the next call follows
        assert seen == whole[1] and rest == whole[2:4]


def test_fill_taking_every_batch_without_exhausting_the_call(files: list[Path]) -> None:
    """``islice`` / ``zip(range(steps), ...)`` takes a call's announced batches and closes the
    generator: that is not leaving early, the stream goes on in the data epoch (the reference
    does the same; an early ``break`` skips to the next data epoch)."""
    import itertools

    whole = epochs(File(files=files, labels=list(range(N))), 3, batch_size=4)
    r = File(files=files, labels=list(range(N)))
    taken = []
    for _ in range(3):
        gen = r.next_epoch(batch_size=4)
        taken.append([labels_of(lab) for _, lab in itertools.islice(gen, len(whole[0]))])
        gen.close()
    assert taken == whole
    early = File(files=files, labels=list(range(N)))
    first = next(iter(early.next_epoch(batch_size=4)))  # left after one batch of three
    assert labels_of(first[1]) == whole[0][0]
    assert epochs(early, 1, batch_size=4)[0][0] == [0, 1, 2, 3]  # the next data epoch


@pytest.mark.dali
def test_fill_islice_matches_the_reference(files: list[Path]) -> None:
    import itertools

    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    names = [str(f) for f in files]
    ref = dndd.readers.File(files=names, labels=list(range(N)))
    mine = File(files=names, labels=list(range(N)))
    for _ in range(3):
        want = [labels_of(lab) for _, lab in itertools.islice(ref.next_epoch(batch_size=4), 3)]
        got = [labels_of(lab) for _, lab in itertools.islice(mine.next_epoch(batch_size=4), 3)]
        assert got == want


@pytest.mark.dali
def test_fill_matches_the_reference(files: list[Path]) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    names = [str(f) for f in files[:5]]
    for kw in ({}, {"num_shards": 2, "shard_id": 0}, {"num_shards": 2, "shard_id": 1},
               {"num_shards": 2, "shard_id": 1, "stick_to_shard": True}):  # fmt: skip
        ref = dndd.readers.File(files=names, labels=list(range(5)), **kw)
        mine = File(files=names, labels=list(range(5)), **kw)
        want = [[labels_of(lab) for _, lab in ref.next_epoch(batch_size=2)] for _ in range(4)]
        assert epochs(mine, 4, batch_size=2) == want, kw


# --- direct calls ---------------------------------------------------------------------------
def test_calling_a_reader_reads_the_stream(files: list[Path]) -> None:
    r = File(files=files, labels=list(range(N)), enable_checkpointing=True)
    encoded, label = r()
    assert isinstance(encoded, ndd.Tensor) and int(label.item()) == 0
    assert bytes(np.asarray(encoded)) == b"\x00"
    assert [int(r()[1].item()) for _ in range(N)] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]
    state = r.get_state()
    twin = File(files=files, labels=list(range(N)))
    twin.set_state(state)
    assert int(twin()[1].item()) == int(r()[1].item()) == 1
    with pytest.raises(RuntimeError, match="Cannot mix `samples`, `batches` and `_run`"):
        r.next_epoch()


def test_calling_a_reader_with_batch_size(files: list[Path]) -> None:
    r = File(files=files, labels=list(range(N)), max_batch_size=4)
    data, label = r(batch_size=4)
    assert isinstance(data, ndd.Batch) and labels_of(label) == [0, 1, 2, 3]
    assert [labels_of(r(batch_size=4)[1]) for _ in range(2)] == [[4, 5, 6, 7], [8, 9, 0, 1]]
    with pytest.raises(ValueError, match="different than the `max_batch_size` 4"):
        r(batch_size=3)
    with pytest.raises(ValueError, match="larger than the `max_batch_size`"):
        File(files=files, max_batch_size=2)(batch_size=3)
    used = File(files=files)
    list(used.next_epoch(batch_size=2))
    with pytest.raises(RuntimeError, match="Cannot mix"):
        used()


def test_calling_a_reader_skips_unreadable_samples(files: list[Path]) -> None:
    r = File(files=files, labels=list(range(N)), on_error="skip")
    files[1].unlink()
    assert labels_of(r(batch_size=3)[1]) == [0, 2, 3]
    assert r.get_metadata()["skipped"] == 1
    for f in files:
        f.unlink(missing_ok=True)
    with pytest.raises(RuntimeError, match="no readable sample"):
        r()


@pytest.mark.dali
def test_calls_match_the_reference(files: list[Path]) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    names = [str(f) for f in files]
    ref = dndd.readers.File(files=names, labels=list(range(N)), max_batch_size=4)
    mine = File(files=names, labels=list(range(N)), max_batch_size=4)
    for _ in range(4):
        want, got = ref(batch_size=4), mine(batch_size=4)
        assert labels_of(got[1]) == labels_of(want[1])
        assert [bytes(np.asarray(t)) for t in got[0].tensors] == [
            bytes(np.asarray(t)) for t in want[0].tensors
        ]
    ref1 = dndd.readers.File(files=names, labels=list(range(N)))
    mine1 = File(files=names, labels=list(range(N)))
    assert [int(np.asarray(ref1()[1])[0]) for _ in range(3)] == [
        int(mine1()[1].item()) for _ in range(3)
    ]


# --- folders and paths ----------------------------------------------------------------------
@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for cls, names in {"birds": ["a.wav", "b.flac", "c.ogg", "d.jpg", "e.txt"],
                       "cats": ["f.WAV", "g.png", "h.mp3"]}.items():  # fmt: skip
        (root / cls).mkdir(parents=True)
        for n in names:
            (root / cls / n).write_bytes(f"{cls}/{n}".encode())
    return root


def contents(reader: Any) -> list[tuple[str, int]]:
    """``(file contents, label)`` of one epoch in sample mode (headrace or the reference)."""
    return [
        (bytes(np.asarray(d)).decode(), int(np.asarray(lab)[0])) for d, lab in reader.next_epoch()
    ]


def test_default_filters_read_audio_folders_like_image_folders(folder: Path) -> None:
    assert {"*.wav", "*.flac", "*.ogg", "*.jpg"} <= set(DEFAULT_FILE_FILTERS)
    assert contents(File(file_root=folder)) == [
        ("birds/a.wav", 0), ("birds/b.flac", 0), ("birds/c.ogg", 0), ("birds/d.jpg", 0),
        ("cats/f.WAV", 1), ("cats/g.png", 1),
    ]  # fmt: skip
    assert contents(File(file_root=folder, dir_filters=["c*"])) == [
        ("cats/f.WAV", 0), ("cats/g.png", 0)
    ]  # fmt: skip
    with pytest.raises(FileNotFoundError, match="sub-folders matching"):
        File(file_root=folder, dir_filters=["C*"], case_sensitive_filter=True)


@pytest.mark.dali
def test_filters_match_the_reference(folder: Path) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    for kw in ({}, {"dir_filters": ["c*"]}, {"file_filters": ["*.wav"]},
               {"file_filters": ["*.wav"], "case_sensitive_filter": True}):  # fmt: skip
        want = contents(dndd.readers.File(file_root=str(folder), **kw))
        assert contents(File(file_root=folder, **kw)) == want, kw
    # the documented default list, read from the reference's schema
    from nvidia.dali import backend

    default = backend.GetSchema("readers__File").GetArgumentDefaultValueString("file_filters")
    assert default == repr(list(DEFAULT_FILE_FILTERS))


def test_shuffle_after_epoch_seed(folder: Path) -> None:
    def order(**kw: Any) -> list[list[str]]:
        r = File(file_root=folder, shuffle_after_epoch=True, **kw)
        return [[x for x, _ in contents(r)] for _ in range(3)]

    assert order(shuffle_after_epoch_seed=5) == order(shuffle_after_epoch_seed=5)
    assert order(shuffle_after_epoch_seed=5) != order(shuffle_after_epoch_seed=6)
    assert order() == order()  # a fixed default seed: every run and rank alike
    with pytest.raises(TypeError, match="shuffle_after_epoch_seed"):
        File(file_root=folder, shuffle_after_epoch=True, shuffle_after_epoch_seed="5")


def test_paths_may_be_pathlib(folder: Path, tmp_path: Path) -> None:
    lst = tmp_path / "list.txt"
    lst.write_text("birds/a.wav 3\ncats/g.png 4\n")
    assert contents(File(file_list=lst, file_root=folder)) == [
        ("birds/a.wav", 3), ("cats/g.png", 4)
    ]  # fmt: skip
    assert contents(File(files=[Path("birds/d.jpg")], file_root=folder, labels=[7])) == [
        ("birds/d.jpg", 7)
    ]  # fmt: skip
    assert contents(File(files=[folder / "cats" / "h.mp3"])) == [("cats/h.mp3", 0)]
    with pytest.raises(TypeError, match="file_root must be a path"):
        File(file_root=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="files must be a list"):
        File(files=folder / "cats" / "h.mp3")  # type: ignore[arg-type]


# --- shuffled readers are shuffled once before sharding (the reference's fixed pre-shuffle) ---
def test_preshuffle_is_the_references_permutation() -> None:
    from headrace.readers._preshuffle import preshuffle_order

    # (the reference's order for 11 files, read one shard per file; both shuffle branches)
    assert preshuffle_order(11) == [10, 0, 2, 4, 7, 1, 6, 5, 3, 9, 8]
    for n in (2, 10, 1001, 70001):  # (above 65535: one position per draw)
        order = preshuffle_order(n)
        assert sorted(order) == list(range(n)) and (n == 2 or order != sorted(order))


def _shard_sets(lib: Any, files: list[Path], shards: int) -> list[set[int]]:
    out = []
    for s in range(shards):
        r = lib.readers.File(files=[str(f) for f in files], labels=list(range(len(files))),
                             random_shuffle=True, num_shards=shards, shard_id=s,
                             stick_to_shard=True)  # fmt: skip
        out.append({lab for ep in epochs(r, 2, batch_size=1) for b in ep for lab in b})
    return out


def test_shuffled_shards_mix_the_data_set(tmp_path: Path) -> None:
    files = []
    for i in range(64):  # (a sorted list of 8 classes: contiguous shards would split classes)
        files.append(tmp_path / f"{i:03d}.bin")
        files[-1].write_bytes(b"x")
    sets = _shard_sets(ndd, files, 4)
    assert set().union(*sets) == set(range(64)) and sum(len(s) for s in sets) == 64
    assert all(len({lab // 8 for lab in s}) > 2 for s in sets)  # every shard mixes classes
    unshuffled = File(files=[str(f) for f in files], labels=list(range(64)), num_shards=4)
    assert {lab for ep in epochs(unshuffled, 1, 1) for b in ep for lab in b} == set(range(16))


@pytest.mark.dali
def test_shuffled_shards_match_the_reference(files: list[Path]) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    assert _shard_sets(ndd, files, 3) == _shard_sets(dndd, files, 3)


def test_shuffle_after_epoch_reports_stick_to_shard(folder: Path) -> None:
    r = File(file_root=str(folder), shuffle_after_epoch=True)
    assert r.get_metadata()["stick_to_shard"] == 1  # (forced, as the reference reports it)


def test_missing_required_arguments_are_type_errors() -> None:
    makers = (
        lambda: ndd.readers.Webdataset(paths=["x.tar"]),
        lambda: ndd.readers.Caffe(),
        lambda: ndd.readers.NemoAsr(),
        lambda: ndd.readers.MXNet(path="a.rec"),
    )
    for make in makers:
        with pytest.raises(TypeError, match=r"(is|are) required"):
            make()
