"""readers.MXNet on RecordIO files written by the test writer (MXNet's framing)."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests._helpers.recordio_files import MAGIC_BYTES, frame, image_record, write_recordio

from headrace.readers import MXNet
from headrace.readers.mxnet import RecordIOFormatError

N = 11


def samples(n: int = N, first: int = 0) -> list[tuple[bytes, Any]]:
    out: list[tuple[bytes, Any]] = []
    for i in range(first, first + n):
        image = f"image{i}".encode() * (1 + i % 3)
        if i % 4 == 1:  # the magic number inside the payload: a multi-part record
            image = image[:4] + MAGIC_BYTES + image + MAGIC_BYTES
        label = float(i) if i % 2 == 0 else [float(i), i + 0.25, -1.0]
        out.append((image, label))
    return out


@pytest.fixture
def rec(tmp_path: Path) -> tuple[Path, Path]:
    write_recordio(tmp_path / "data.rec", tmp_path / "data.idx", samples())
    return tmp_path / "data.rec", tmp_path / "data.idx"


def labels(reader: MXNet, batch_size: int | None = None) -> list[int]:
    out = []
    for _, lab in reader.next_epoch(batch_size=batch_size):
        for t in list(lab) if batch_size else [lab]:
            out.append(int(np.asarray(t)[0]))
    return out


def test_reads_images_and_labels(rec: tuple[Path, Path]) -> None:
    assert any(
        (struct.unpack_from("<I", rec[0].read_bytes(), o)[0] >> 29) == 1
        for o in range(0, rec[0].stat().st_size - 4, 4)
    )  # the file does hold multi-part records
    r = MXNet(path=rec[0], index_path=[rec[1]])  # os.PathLike, index as a list of one
    got = [(np.asarray(i).tobytes(), np.asarray(lab)) for i, lab in r.next_epoch()]
    assert [g[0] for g in got] == [s[0] for s in samples()]
    for (_, lab), (_, want) in zip(got, samples()):
        assert lab.dtype == np.float32
        assert lab.tolist() == (want if isinstance(want, list) else [want])
    img, lab = next(iter(MXNet(path=str(rec[0]), index_path=str(rec[1])).next_epoch(4)))
    assert img.dtype.name == "u8" and lab.dtype.name == "f32"
    assert MXNet(path=rec[0], index_path=rec[1])._dataset.source(1).endswith("data.rec at index 40")


def test_several_files_are_one_stream(tmp_path: Path) -> None:
    data = [frame(image_record(f"img{i}".encode() * 50, float(i))) for i in range(6)]
    blob = b"".join(data)
    offsets = np.cumsum([0] + [len(d) for d in data[:-1]]).tolist()
    cut = offsets[2] + 37  # the third record continues into the second file
    (tmp_path / "a.rec").write_bytes(blob[:cut])
    (tmp_path / "b.rec").write_bytes(blob[cut:offsets[4]])  # fmt: skip
    (tmp_path / "c.rec").write_bytes(blob[offsets[4]:])  # fmt: skip
    (tmp_path / "all.idx").write_text("".join(f"{k} {o}\n" for k, o in enumerate(offsets)))
    paths = [tmp_path / n for n in ("a.rec", "b.rec", "c.rec")]
    r = MXNet(path=paths, index_path=tmp_path / "all.idx")
    assert labels(r) == list(range(6))
    assert [np.asarray(i).tobytes() for i, _ in r.next_epoch()][2] == b"img2" * 50
    s = MXNet(path=paths, index_path=tmp_path / "all.idx", shuffle_after_epoch=True,
              shuffle_after_epoch_seed=4)  # fmt: skip
    epochs = [labels(s) for _ in range(5)]
    for e in epochs:  # files a: 0,1,2; b: 3; c: 4,5 visited whole, in some order
        assert sorted(e) == list(range(6))
        runs = [e[i : i + 3] for i in range(4)] + [e[i : i + 2] for i in range(5)]
        assert [0, 1, 2] in runs and [4, 5] in runs
    assert len({tuple(e) for e in epochs}) > 1
    with pytest.raises(ValueError, match="stick_to_shard"):
        MXNet(path=paths, index_path=tmp_path / "all.idx", shuffle_after_epoch=True,
              stick_to_shard=True)  # fmt: skip


def test_index_details(tmp_path: Path, rec: tuple[Path, Path]) -> None:
    lines = rec[1].read_text().splitlines()
    shuffled = tmp_path / "shuffled.idx"  # any key order, blank lines, duplicated offsets
    shuffled.write_text("\n".join(lines[::-1] + ["", lines[3].replace("3", "99", 1)]) + "\n")
    assert labels(MXNet(path=rec[0], index_path=shuffled)) == list(range(N))
    for text, match in [("0 x\n", "line 1"), ("0\n", "line 1"), ("", "no records"),
                        ("0 -4\n", "line 1")]:  # fmt: skip
        shuffled.write_text(text)
        with pytest.raises(RecordIOFormatError, match=match):
            MXNet(path=rec[0], index_path=shuffled)
    with pytest.raises(ValueError, match="exactly one index file"):
        MXNet(path=rec[0], index_path=[rec[1], rec[1]])
    with pytest.raises(ValueError, match="required"):
        MXNet(path=rec[0])
    with pytest.raises(RecordIOFormatError, match="does not exist"):
        MXNet(path=tmp_path / "nope.rec", index_path=rec[1])
    with pytest.raises(RecordIOFormatError, match="cannot read the index"):
        MXNet(path=rec[0], index_path=tmp_path / "nope.idx")
    r = MXNet(path=rec[0], index_path=rec[1], dont_use_mmap=True, read_ahead=True, lazy_init=True,
              tensor_init_bytes=1, initial_fill=8, skip_cached_images=False)  # fmt: skip
    assert r.get_metadata()["epoch_size"] == N


def test_corrupt_records_name_file_and_offset(tmp_path: Path, rec: tuple[Path, Path]) -> None:
    offsets = [int(line.split()[1]) for line in rec[1].read_text().splitlines()]
    raw = bytearray(rec[0].read_bytes())
    raw[offsets[3] : offsets[3] + 4] = b"JUNK"  # wrong magic
    raw[offsets[6] + 4 : offsets[6] + 8] = struct.pack("<I", (2 << 29) | 30)  # a middle part
    raw[offsets[8] + 4 : offsets[8] + 8] = struct.pack("<I", 10**6)  # longer than the record
    bad = tmp_path / "bad.rec"
    bad.write_bytes(bytes(raw))
    strict = MXNet(last_batch="partial", path=bad, index_path=rec[1])
    with pytest.raises(RecordIOFormatError, match=f"offset {offsets[3]}.*wrong magic") as info:
        labels(strict, 2)
    assert info.value.filename == str(bad)
    skip = MXNet(last_batch="partial", path=bad, index_path=rec[1], on_error="skip")
    assert labels(skip, 4) == [i for i in range(N) if i not in (3, 6, 8)]
    assert skip.get_metadata()["skipped"] == 3
    for cut, match in ((offsets[5] + 5, "truncated record header"),
                       (offsets[5] + 30, "truncated record")):  # fmt: skip
        (tmp_path / "cut.idx").write_text(f"0 {offsets[5]}\n")
        (tmp_path / "cut.rec").write_bytes(rec[0].read_bytes()[:cut])
        with pytest.raises(RecordIOFormatError, match=match):
            labels(
                MXNet(
                    last_batch="partial", path=tmp_path / "cut.rec", index_path=tmp_path / "cut.idx"
                )
            )
    # a truncated .rec: the index points past its end
    (tmp_path / "short.rec").write_bytes(rec[0].read_bytes()[: offsets[7]])
    with pytest.raises(RecordIOFormatError, match="past the end of the data") as info:
        MXNet(last_batch="partial", path=tmp_path / "short.rec", index_path=rec[1])
    assert info.value.filename == str(tmp_path / "short.rec")
    with pytest.warns(RuntimeWarning, match="truncated RecordIO"):
        r = MXNet(
            last_batch="partial", path=tmp_path / "short.rec", index_path=rec[1], on_error="skip"
        )
    assert labels(r) == list(range(7)) and r.get_metadata()["skipped"] == N - 7
    # a record announcing more labels than it holds
    (tmp_path / "one.idx").write_text("0 0\n")
    (tmp_path / "lab.rec").write_bytes(frame(struct.pack("<IfQQ", 50, 0, 0, 0) + b"abcd"))
    with pytest.raises(RecordIOFormatError, match="announces 50 labels"):
        labels(
            MXNet(last_batch="partial", path=tmp_path / "lab.rec", index_path=tmp_path / "one.idx")
        )
    (tmp_path / "tiny.rec").write_bytes(frame(b"tiny"))
    with pytest.raises(RecordIOFormatError, match="too short for an IRHeader"):
        labels(
            MXNet(last_batch="partial", path=tmp_path / "tiny.rec", index_path=tmp_path / "one.idx")
        )


def test_sharding_shuffle_and_resume(rec: tuple[Path, Path]) -> None:
    kw: dict[str, Any] = {"path": rec[0], "index_path": rec[1]}
    parts = [
        labels(MXNet(last_batch="partial", **kw, num_shards=3, shard_id=s), 2) for s in range(3)
    ]
    assert [k for p in parts for k in p] == list(range(N))
    a = labels(MXNet(last_batch="partial", **kw, random_shuffle=True, seed=2))
    assert sorted(a) == list(range(N)) and a != list(range(N))
    full = MXNet(last_batch="partial", **kw, random_shuffle=True, seed=5)
    uninterrupted = [labels(full, 3) for _ in range(2)]
    r = MXNet(last_batch="partial", **kw, random_shuffle=True, seed=5, enable_checkpointing=True)
    seen: list[int] = []
    for _, lab in r.next_epoch(batch_size=3):
        seen += [int(np.asarray(t)[0]) for t in lab]
        if len(seen) == 6:
            state = r.get_state()
            break
    restored = MXNet(last_batch="partial", **kw, random_shuffle=True)
    restored.set_state(state)
    assert seen + labels(restored, 3) == uninterrupted[0]
    assert labels(restored, 3) == uninterrupted[1]


@pytest.mark.dali
def test_matches_dali(rec: tuple[Path, Path]) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    for kw in ({}, {"num_shards": 3, "shard_id": 2}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = dndd.readers.MXNet(path=str(rec[0]), index_path=str(rec[1]), max_batch_size=16,
                                     **kw)  # fmt: skip
            imgs, labs = next(iter(ref.next_epoch(batch_size=16)))
        ours = MXNet(path=rec[0], index_path=rec[1], **kw)
        got = [(np.asarray(i).tobytes(), np.asarray(lab).tolist()) for i, lab in ours.next_epoch()]
        want = [(np.asarray(i).tobytes(), np.asarray(lab).tolist())
                for i, lab in zip(imgs.tensors, labs.tensors)][: len(got)]  # fmt: skip
        assert got == want
        meta = ours.get_metadata()
        meta.pop("skipped")
        assert meta == ref.get_metadata()
