"""readers.Webdataset and wds2idx on tar shards written with tarfile."""

from __future__ import annotations

import os
import tarfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests._helpers.wds_files import sample_members, write_shard

import headrace as ndd
from headrace.readers import Webdataset
from headrace.readers.wds2idx import create_index, main
from headrace.readers.webdataset import WebdatasetFormatError

N_PER_SHARD = (5, 4, 3)


@pytest.fixture
def shards(tmp_path: Path) -> list[Path]:
    out, first = [], 0
    for s, n in enumerate(N_PER_SHARD):
        members = sample_members(first, n)
        if s == 1:  # a png instead of a jpg, a sample without cls, a hidden file, a folder
            members[0] = (f"{first:06d}.png", b"png")
            members = [m for m in members if m[0] != f"{first + 1:06d}.cls"]
            members.append((".hidden.jpg", b"hidden"))
        out.append(write_shard(tmp_path / f"shard-{s}.tar", members))
        first += n
    return out


def keys(reader: Webdataset, batch_size: int | None = None) -> list[int]:
    """Sample numbers of one epoch, from the jpg/png bytes (``img<i>`` or ``png``)."""
    out = []
    for img, *_ in reader.next_epoch(batch_size=batch_size):
        for t in list(img) if batch_size else [img]:
            raw = np.asarray(t).tobytes()
            out.append(-1 if raw == b"png" else int(raw[3:].split(b"img")[0]))
    return out


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_reads_groups_and_fills_missing_with_empty(shards: list[Path], dont_use_mmap: bool) -> None:
    r = Webdataset(paths=[str(p) for p in shards], ext=["jpg;png", "cls"],
                   dont_use_mmap=dont_use_mmap)  # fmt: skip
    got = [(np.asarray(a).tobytes(), np.asarray(b).tobytes()) for a, b in r.next_epoch()]
    assert len(got) == sum(N_PER_SHARD) == r.get_metadata()["epoch_size"]
    assert got[0] == (b"img0", (0).to_bytes(4, "little"))
    assert got[5] == (b"png", (5).to_bytes(4, "little"))
    assert got[6] == (b"img6", b"")  # no cls member: an empty output
    assert all(b for _, b in got[:6] + got[7:])


def test_missing_component_behaviors_and_dtypes(shards: list[Path]) -> None:
    paths = [Path(p) for p in shards]  # os.PathLike
    skip = Webdataset(paths=paths, ext=["jpg", "cls"], missing_component_behavior="skip",
                      dtypes=[ndd.uint8, ndd.int32])  # fmt: skip
    labels = [int(np.asarray(c)[0]) for _, c in skip.next_epoch()]
    assert labels == [0, 1, 2, 3, 4, 7, 8, 9, 10, 11]  # 5 (png) and 6 (no cls) left out
    one, _ = next(iter(Webdataset(paths=paths, ext=["jpg", "cls"]).next_epoch(batch_size=2)))
    assert one.dtype == ndd.uint8
    with pytest.raises(ValueError, match=r"no member for output\(s\) \[1\]"):
        Webdataset(paths=paths, ext=["jpg;png", "cls"], missing_component_behavior="error")
    with pytest.raises(ValueError, match="missing_component_behavior"):
        Webdataset(paths=paths, ext="jpg", missing_component_behavior="ignore")
    with pytest.raises(ValueError, match="2 dtypes for 1 outputs"):
        Webdataset(paths=paths, ext="jpg", dtypes=[ndd.uint8, ndd.uint8])
    with pytest.raises(ValueError, match="unsupported output dtype"):
        Webdataset(paths=paths, ext="jpg", dtypes=ndd.bool)
    with pytest.raises(WebdatasetFormatError, match="not a multiple of the 8-byte dtype"):
        Webdataset(paths=paths, ext="cls", dtypes=ndd.int64)
    for mmap_off in (False, True):
        both = Webdataset(paths=paths, ext=["cls", "cls"], dtypes=[ndd.int32, ndd.uint8],
                          missing_component_behavior="skip", dont_use_mmap=mmap_off)  # fmt: skip
        a, b = (np.asarray(t) for t in next(iter(both.next_epoch())))
        assert a.tolist() == [0] and b.tolist() == [0, 0, 0, 0]
        b[0] = 7  # the outputs do not share memory
        assert a.tolist() == [0]


def test_case_sensitivity_and_dotted_extensions(tmp_path: Path) -> None:
    p = write_shard(tmp_path / "a.tar", [("x/a.JPG", b"A"), ("x/a.seg.png", b"S"),
                                         ("b.jpg", b"B"), ("c", b"C")])  # fmt: skip
    strict = Webdataset(paths=p, ext=["jpg", "seg.png", "c"])
    assert [[np.asarray(t).tobytes() for t in s] for s in strict.next_epoch()] == [
        [b"", b"S", b""], [b"B", b"", b""], [b"", b"", b"C"]]  # fmt: skip
    loose = Webdataset(paths=p, ext="JpG", case_sensitive_extensions=False)
    assert [np.asarray(t).tobytes() for (t,) in loose.next_epoch()] == [b"A", b"B", b""]


def test_several_members_for_one_output_warn_and_use_the_first(tmp_path: Path) -> None:
    p = write_shard(tmp_path / "a.tar", [("a.jpg", b"1"), ("a.png", b"2")])
    with pytest.warns(RuntimeWarning, match="several members match output 0"):
        r = Webdataset(paths=p, ext="jpg;png")
    assert [np.asarray(t).tobytes() for (t,) in r.next_epoch()] == [b"1"]


def test_index_files_match_the_scan_and_wds2idx(
    shards: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    idx = [p.with_suffix(".idx") for p in shards]
    assert [create_index(p, i) for p, i in zip(shards, idx)] == [5, 4, 3]
    assert main([str(shards[0])]) == 0 and "5 samples" in capsys.readouterr().out
    scanned = Webdataset(paths=shards, ext=["jpg;png", "cls"])
    indexed = Webdataset(paths=shards, index_paths=idx, ext=["jpg;png", "cls"])
    assert keys(scanned) == keys(indexed)
    # the v1.1 format (no names) reads the same
    v11 = tmp_path / "v11.idx"
    lines = idx[0].read_text().splitlines()
    body = [" ".join(f[k] for k in range(len(f)) if k % 4 != 3) for f in map(str.split, lines[1:])]
    v11.write_text("\n".join(["v1.1 5", *body]) + "\n")
    assert keys(Webdataset(paths=shards[0], index_paths=v11, ext="jpg")) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="one index file per shard"):
        Webdataset(paths=shards, index_paths=idx[:1], ext="jpg")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("v9 1\njpg 512 1 a.jpg\n", "version"),
        ("v1.2 0\n", "must be positive"),
        ("v1.2 2\njpg 512 1 a.jpg\n", "announces 2 samples"),
        ("v1.2 1\njpg 512 1\n", "groups of 4 fields"),
        ("v1.2 1\njpg 513 1 a.jpg\n", "multiples of 512"),
        ("v1.2 1\njpg x 1 a.jpg\n", "must be integers"),
        ("v1.2 1\njpg 512 999999 a.jpg\n", "runs past the end"),
        ("v1.2 1\njpg 512 1 ../a.jpg\n", "unsafe member name"),
    ],
)
def test_bad_index_files(tmp_path: Path, text: str, match: str) -> None:
    p = write_shard(tmp_path / "a.tar", [("a.jpg", b"x")])
    (tmp_path / "a.idx").write_text(text)
    with pytest.raises(WebdatasetFormatError, match=match) as info:
        Webdataset(paths=p, index_paths=tmp_path / "a.idx", ext="jpg")
    assert str(tmp_path) in str(info.value)


def test_unsafe_member_names_are_refused(tmp_path: Path) -> None:
    for bad in ("../evil.jpg", "/abs/evil.jpg", "a/../../evil.jpg"):
        p = write_shard(tmp_path / "a.tar", [("ok.jpg", b"1"), (bad, b"2")])
        with pytest.raises(WebdatasetFormatError, match="unsafe member name") as info:
            Webdataset(paths=p, ext="jpg")
        assert info.value.filename == str(p)
        with pytest.raises(ValueError, match="unsafe member name"):
            create_index(p, tmp_path / "a.idx")
        with pytest.warns(RuntimeWarning, match="unsafe"):
            r = Webdataset(paths=p, ext="jpg", on_error="skip")
        assert [np.asarray(t).tobytes() for (t,) in r.next_epoch()] == [b"1"]
        assert r.get_metadata()["skipped"] == 1


def _corrupt(path: Path, at: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[at : at + len(data)] = data
    path.write_bytes(bytes(raw))


def test_truncated_and_malformed_shards(tmp_path: Path) -> None:
    members = sample_members(0, 4)
    good = write_shard(tmp_path / "good.tar", members)
    size = good.stat().st_size
    cases = {
        "trunc_data": (good.read_bytes()[: 7 * 1024 + 514], "truncated archive"),
        "trunc_header": (good.read_bytes()[: 6 * 1024 + 200], "truncated tar header"),
        "garbage": (None, "malformed tar header"),
        "empty": (b"", "empty file"),
        "not_tar": (b"hello" * 200, "not a tar archive"),
    }
    for name, (content, match) in cases.items():
        p = tmp_path / f"{name}.tar"
        if content is None:
            p.write_bytes(good.read_bytes())
            _corrupt(p, 4 * 1024, b"\xff" * 100)  # the header of the 5th member
        else:
            p.write_bytes(content)
        with pytest.raises(WebdatasetFormatError, match=match) as info:
            Webdataset(paths=[good, p], ext=["jpg", "cls"])
        assert info.value.filename == str(p) and "byte offset" in str(info.value)
        kept = {"trunc_data": [0, 1, 2], "garbage": [0]}  # a broken header: the sample before
        if name in kept:  # it may be incomplete too, so it goes as well
            with pytest.warns(RuntimeWarning, match="skipped"):
                r = Webdataset(paths=[good, p], ext=["jpg", "cls"], on_error="skip")
            labels = [int.from_bytes(np.asarray(c).tobytes(), "little") for _, c in r.next_epoch()]
            assert labels == [0, 1, 2, 3, *kept[name]]
            assert r.get_metadata()["skipped"] == 1
    assert good.stat().st_size == size


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_shard_shrinking_after_construction_is_a_read_error(
    tmp_path: Path, dont_use_mmap: bool
) -> None:
    p = write_shard(tmp_path / "a.tar", sample_members(0, 4))
    strict = Webdataset(paths=p, ext=["jpg", "cls"], dont_use_mmap=dont_use_mmap)
    skip = Webdataset(
        paths=p,
        ext=["jpg", "cls"],
        on_error="skip",
        dont_use_mmap=dont_use_mmap,
        last_batch="partial",
    )
    p.write_bytes(p.read_bytes()[: 5 * 1024])
    with pytest.raises(WebdatasetFormatError, match=r"cannot read member '000002\.jpg'"):
        list(strict.next_epoch(batch_size=2))
    got = [int.from_bytes(np.asarray(c).tobytes(), "little") for b in skip.next_epoch(batch_size=4)
           for c in b[1]]  # fmt: skip
    assert got == [0, 1] and skip.get_metadata()["skipped"] == 2


def test_sharding_shuffling_and_shard_order_shuffle(shards: list[Path]) -> None:
    kw: dict[str, Any] = {"paths": shards, "ext": ["jpg;png", "cls"]}
    everything = keys(Webdataset(**kw))
    parts = [keys(Webdataset(**kw, num_shards=3, shard_id=s), 2) for s in range(3)]
    assert [k for p in parts for k in p] == everything
    a = keys(Webdataset(**kw, random_shuffle=True, seed=3))
    assert sorted(a) == sorted(everything) and a != everything
    assert a == keys(Webdataset(**kw, random_shuffle=True, seed=3))
    r = Webdataset(**kw, shuffle_after_epoch=True, shuffle_after_epoch_seed=11)
    epochs = [keys(r) for _ in range(4)]
    runs = {0: everything[:5], 1: everything[5:9], 2: everything[9:]}
    for e in epochs:
        assert sorted(e) == sorted(everything)
        assert {tuple(e[i : i + len(v)]) for v in runs.values() for i in range(len(e))} >= {
            tuple(v) for v in runs.values()}  # fmt: skip
    assert len({tuple(e) for e in epochs}) > 1
    with pytest.raises(ValueError, match="stick_to_shard"):
        Webdataset(**kw, shuffle_after_epoch=True, stick_to_shard=True)


def test_resume_is_exact(shards: list[Path]) -> None:
    kw: dict[str, Any] = {"paths": shards, "ext": "jpg;png", "random_shuffle": True, "seed": 9,
                          "shuffle_after_epoch": True}  # fmt: skip
    full = Webdataset(**kw)
    uninterrupted = [keys(full, 2) for _ in range(2)]
    r = Webdataset(**kw, enable_checkpointing=True)
    seen = []
    for (img,) in r.next_epoch(batch_size=2):
        seen += [int(np.asarray(t).tobytes()[3:].split(b"img")[0]) if np.asarray(t).tobytes()
                 != b"png" else -1 for t in img]  # fmt: skip
        if len(seen) == 6:
            state = str(r.get_state())
            break
    restored = Webdataset(**kw)
    restored.set_state(state)
    assert seen + keys(restored, 2) == uninterrupted[0]
    assert keys(restored, 2) == uninterrupted[1]


def test_argument_errors(shards: list[Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="`paths`"):
        Webdataset(ext="jpg")
    with pytest.raises(ValueError, match="`ext`"):
        Webdataset(paths=shards)
    with pytest.raises(TypeError, match="ext"):
        Webdataset(paths=shards, ext=[1])
    with pytest.raises(WebdatasetFormatError, match="does not exist"):
        Webdataset(paths=tmp_path / "nope.tar", ext="jpg")
    with pytest.raises(ValueError, match="no samples"):
        Webdataset(paths=shards, ext="xyz", missing_component_behavior="skip")
    r = Webdataset(paths=shards, ext="jpg", dont_use_mmap=True, read_ahead=True, lazy_init=True,
                   tensor_init_bytes=10, initial_fill=4, skip_cached_images=False)  # fmt: skip
    assert r.get_metadata()["epoch_size"] == 12


def test_matches_the_webdataset_library(shards: list[Path]) -> None:
    wds = pytest.importorskip("webdataset")
    ds = wds.WebDataset([str(p) for p in shards], shardshuffle=False, empty_check=False)
    want = [(s.get("jpg", s.get("png")), s.get("cls", b"")) for s in ds]
    r = Webdataset(paths=shards, ext=["jpg;png", "cls"])
    got = [(np.asarray(a).tobytes(), np.asarray(b).tobytes()) for a, b in r.next_epoch()]
    assert got == want


@pytest.mark.dali
def test_matches_dali(shards: list[Path], tmp_path: Path) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    dali_idx = pytest.importorskip("wds2idx")  # the reference's own index tool
    members = [("a.JPG", b"A"), ("a.seg.png", b"S"), ("b.cls", b"\1\0\0\0"), ("noext", b"N")]
    extra = write_shard(tmp_path / "extra.tar", members)
    paths = [str(p) for p in [*shards, extra]]
    ours_idx = [str(tmp_path / f"ours{i}.idx") for i in range(len(paths))]
    ref_idx = [str(tmp_path / f"ref{i}.idx") for i in range(len(paths))]
    for p, o, f in zip(paths, ours_idx, ref_idx):
        create_index(p, o)
        with dali_idx.IndexCreator(p, f, verbose=False) as ic:
            ic.create_index()
    for kw in (
        {"ext": ["jpg;png", "cls", "seg.png", "noext"]},
        {"ext": ["jpg", "cls"], "case_sensitive_extensions": False},
        {"ext": ["jpg;png", "cls"], "missing_component_behavior": "skip",
         "dtypes": [ndd.uint8, ndd.int32], "num_shards": 2, "shard_id": 1},
    ):  # fmt: skip
        ref_kw = dict(kw)
        if "dtypes" in kw:
            from nvidia.dali import types

            ref_kw["dtypes"] = [types.UINT8, types.INT32]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = Webdataset(paths=paths, index_paths=ref_idx, **kw)
        n = ours.get_metadata()["epoch_size"]
        ref = dndd.readers.Webdataset(
            paths=paths, index_paths=ours_idx, max_batch_size=64, **ref_kw
        )
        (ref_out,) = [tuple(b.tensors for b in out) for out in ref.next_epoch(batch_size=64)][:1]
        want = [[np.asarray(t).tobytes() for t in o] for o in ref_out]
        (ours_out,) = list(ours.next_epoch(batch_size=64))
        got = [[np.asarray(t).tobytes() for t in o] for o in ours_out]
        assert 0 < n and got == want  # both top the last batch up from the next epoch
        dtypes = [np.asarray(t).dtype for t in ours_out[-1]][:1]
        assert [np.asarray(t).dtype for t in ref_out[-1]][:1] == dtypes


def test_tar_formats(tmp_path: Path) -> None:
    long = "d" * 120 + "/sample.jpg"  # needs a GNU long name or a PAX header
    for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        p = write_shard(tmp_path / f"{fmt}.tar", [(long, b"L"), ("x.jpg", b"X")], fmt)
        r = Webdataset(paths=p, ext="jpg")
        assert [np.asarray(t).tobytes() for (t,) in r.next_epoch()] == [b"L", b"X"]
        assert r._dataset.source(0).endswith(long)


@pytest.mark.parametrize("dont_use_mmap", [False, True])
def test_more_shards_than_file_descriptors(tmp_path: Path, dont_use_mmap: bool) -> None:
    """600 shards, read shuffled, with room for ~350 more open descriptors: the reader keeps a
    bounded number of files and maps open (it used to keep every shard open and failed with
    "Too many open files" past the limit, commonly 1024)."""
    resource = pytest.importorskip("resource")
    paths = [write_shard(tmp_path / f"s{s:04d}.tar", sample_members(2 * s, 2)) for s in range(600)]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 64
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(in_use + 350, hard), hard))
    try:
        r = Webdataset(paths=[str(p) for p in paths], ext=["jpg", "cls"], random_shuffle=True,
                       seed=3, dont_use_mmap=dont_use_mmap)  # fmt: skip
        labels = []
        for _, cls in r.next_epoch(batch_size=128, last_batch="partial"):
            labels += [int(np.asarray(t).view("<i4")[0]) for t in cls.tensors]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert sorted(labels) == list(range(1200))
