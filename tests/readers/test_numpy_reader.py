"""readers.Numpy and decoders.numpy: .npy files written with np.save, whole and ROI reads."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import headrace as ndd
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace.codecs import npy
from headrace.readers import Numpy
from headrace.readers.file import FileReadError

GRID = np.arange(24, dtype=np.float32).reshape(4, 6)


def arrays(reader: Numpy, **kw: Any) -> list[np.ndarray]:
    """The epoch's arrays, in order (batches flattened)."""
    out = []
    for (a,) in reader.next_epoch(**kw):
        out += [np.asarray(t) for t in a.torch()] if isinstance(a, ndd.Batch) else [np.asarray(a)]
    return out


def save(path: Path, a: np.ndarray) -> Path:
    np.save(path, a)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deeper").mkdir()
    for i in range(6):
        save(tmp_path / f"{i}.npy", np.full((2, 3), i, np.int32))
    save(tmp_path / "sub" / "6.npy", np.full((2, 3), 6, np.int32))
    save(tmp_path / "sub" / "deeper" / "x.npy", np.zeros(3))  # two levels down: not listed
    (tmp_path / "notes.txt").write_text("ignored")
    return tmp_path


def values(reader: Numpy, **kw: Any) -> list[int]:
    return [int(a.ravel()[0]) for a in arrays(reader, **kw)]


# --- whole arrays ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a",
    [
        GRID,
        np.asfortranarray(np.arange(60, dtype=np.int16).reshape(3, 4, 5)),
        np.arange(6, dtype=">i4").reshape(2, 3),
        np.array([True, False, True]),
        np.arange(5, dtype=np.uint64) * (2**40),
        np.arange(5, dtype=np.float16),
        np.float64(3.5),
        np.zeros((0, 4), np.uint8),
    ],
    ids=["f32", "fortran", "big-endian", "bool", "u64", "f16", "0-d", "empty"],
)
def test_reads_the_logical_array(tmp_path: Path, a: np.ndarray) -> None:
    p = save(tmp_path / "a.npy", a)
    for mmap in (False, True):
        (got,) = arrays(Numpy(files=[p], dont_use_mmap=not mmap))
        assert got.dtype == a.dtype.newbyteorder("=") and got.shape == a.shape
        assert got.flags.c_contiguous and np.array_equal(got, a)


def test_discovery_filter_list_and_pathlike(root: Path) -> None:
    assert values(Numpy(file_root=root)) == [0, 1, 2, 3, 4, 5, 6]
    assert values(Numpy(file_root=root, file_filter="[24].npy")) == [2, 4]
    lst = root / "list.txt"
    lst.write_text("3.npy\n\nsub/6.npy\n")
    assert values(Numpy(file_list=lst)) == [3, 6]
    assert values(Numpy(files=["1.npy", Path("sub/6.npy")], file_root=root)) == [1, 6]
    assert values(Numpy(files=root / "5.npy")) == [5]
    r = Numpy(file_root=root, max_batch_size=4)
    ((b,), *_rest) = r.next_epoch()
    assert b.dtype == ndd.int32 and b._sources[0] == os.path.join(str(root), "0.npy")
    with pytest.raises(InvalidArgumentError, match="mutually exclusive"):
        Numpy(file_list=lst, files=["a.npy"])
    with pytest.raises(FileReadError, match="no files matching"):
        Numpy(file_root=root, file_filter="*.NPY")


def test_sharding_shuffling_and_resume(root: Path) -> None:
    shards = [values(Numpy(file_root=root, num_shards=2, shard_id=k)) for k in (0, 1)]
    assert shards == [[0, 1, 2], [3, 4, 5, 6]]
    a = values(Numpy(file_root=root, random_shuffle=True, seed=3))
    assert sorted(a) == list(range(7)) and a == values(
        Numpy(file_root=root, random_shuffle=True, seed=3)
    )
    g = Numpy(file_root=root, shuffle_after_epoch=True, shuffle_after_epoch_seed=11)
    e1, e2 = values(g), values(g)
    assert sorted(e1) == sorted(e2) == list(range(7)) and e1 != e2
    r = Numpy(file_root=root, random_shuffle=True, seed=5, enable_checkpointing=True)
    full = [values(r, batch_size=2) for _ in range(2)]
    r = Numpy(file_root=root, random_shuffle=True, seed=5, enable_checkpointing=True)
    it = r.next_epoch(batch_size=2)
    head = [int(np.asarray(x).ravel()[0]) for x in next(it)[0].torch()]
    state = r.get_state()
    it.close()
    resumed = Numpy(file_root=root, random_shuffle=True, seed=5)
    resumed.set_state(state)
    tail = values(resumed, batch_size=2)
    assert head + tail == full[0]
    assert values(resumed, batch_size=2) == full[1]
    with pytest.raises(InvalidArgumentError, match="shuffle_after_epoch"):
        Numpy(file_root=root, shuffle_after_epoch=True, random_shuffle=True)


# --- regions of interest --------------------------------------------------------------------
ROI_CASES = [
    ({"roi_start": [1, 2], "roi_end": [3, 5]}, GRID[1:3, 2:5]),
    ({"roi_start": [1, 2], "roi_shape": [2, 3]}, GRID[1:3, 2:5]),
    ({"roi_start": 1, "roi_shape": 2}, GRID[1:3, 1:3]),
    ({"roi_start": [1], "roi_shape": [2], "roi_axes": [1]}, GRID[:, 1:3]),
    ({"roi_start": [1, 2], "roi_shape": [1, 1], "roi_axes": [1, 0]}, GRID[2:3, 1:2]),
    ({"roi_end": [2], "roi_axes": [-1]}, GRID[:, :2]),
    ({"rel_roi_start": [0.3, 0.3], "rel_roi_end": [0.8, 0.9]}, GRID[1:3, 2:5]),
    ({"rel_roi_start": [0.125, 0.25], "rel_roi_shape": [0.375, 0.25]}, GRID[1:2, 2:3]),
    ({"rel_roi_end": [0.5, 0.5]}, GRID[:2, :3]),
    ({"roi_start": [3, 4], "roi_shape": [3, 3], "out_of_bounds_policy": "trim_to_shape"},
     GRID[3:, 4:]),
    ({"roi_start": [-1, -1], "roi_shape": [3, 3], "out_of_bounds_policy": "trim_to_shape"},
     GRID[:2, :2]),
    ({"roi_start": [1, 1], "roi_end": [1, 1]}, GRID[1:1, 1:1]),
]  # fmt: skip


@pytest.mark.parametrize("kw,expect", ROI_CASES)
def test_roi(tmp_path: Path, kw: dict[str, Any], expect: np.ndarray) -> None:
    p = save(tmp_path / "g.npy", GRID)
    f = save(tmp_path / "f.npy", np.asfortranarray(GRID))
    for path in (p, f):
        for mmap in (False, True):
            (got,) = arrays(Numpy(files=[path], dont_use_mmap=not mmap, **kw))
            assert got.shape == expect.shape and np.array_equal(got, expect), (path, mmap)


def test_roi_padding_and_fill_value(tmp_path: Path) -> None:
    p = save(tmp_path / "g.npy", GRID)
    kw = {"roi_start": [-1, 4], "roi_shape": [3, 3], "out_of_bounds_policy": "pad"}
    (got,) = arrays(Numpy(files=[p], fill_value=-1, **kw))
    expect = np.full((3, 3), -1, np.float32)
    expect[1:, :2] = GRID[:2, 4:]
    assert np.array_equal(got, expect)
    ints = save(tmp_path / "i.npy", np.arange(6, dtype=np.uint8).reshape(2, 3))
    kw = {"roi_start": [0, 0], "roi_shape": [3, 3], "out_of_bounds_policy": "pad"}
    (got,) = arrays(Numpy(files=[ints], fill_value=2.7, **kw))
    assert got[2].tolist() == [3, 3, 3] and got.dtype == np.uint8
    (got,) = arrays(Numpy(files=[ints], fill_value=-5, dont_use_mmap=True, **kw))
    assert got[2].tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"roi_start": [3, 4], "roi_shape": [3, 3]}, "outside the array"),
        ({"roi_start": [3, 4], "roi_end": [1, 2]}, "ends before it starts"),
        ({"roi_start": [1, 1, 1]}, "3 values for 2 ROI axes"),
        ({"roi_start": [1, 1], "roi_axes": [0, 2]}, "axis 2 is out of range"),
    ],
)
def test_roi_errors_at_read(tmp_path: Path, kw: dict[str, Any], match: str) -> None:
    p = save(tmp_path / "g.npy", GRID)
    with pytest.raises(InvalidArgumentError, match=match):
        arrays(Numpy(files=[p], **kw))


@pytest.mark.parametrize(
    "kw",
    [
        {"roi_start": [1], "rel_roi_start": [0.1]},
        {"roi_end": [1], "roi_shape": [1]},
        {"rel_roi_end": [1], "rel_roi_shape": [1]},
        {"roi_start": [1], "out_of_bounds_policy": "wrap"},
        {"roi_axes": [0, 0], "roi_start": [1, 1]},
        {"use_o_direct": True},
        {"roi_start": [0.5]},
    ],
)
def test_bad_arguments(tmp_path: Path, kw: dict[str, Any]) -> None:
    p = save(tmp_path / "g.npy", GRID)
    with pytest.raises(InvalidArgumentError):
        Numpy(files=[p], **kw)


def test_roi_reads_only_the_roi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = np.arange(1000 * 1000, dtype=np.float32).reshape(1000, 1000)
    p = save(tmp_path / "big.npy", big)
    sizes: list[int] = []
    real = os.preadv
    monkeypatch.setattr(
        os, "preadv", lambda fd, bufs, off: sizes.append(len(bufs[0])) or real(fd, bufs, off)
    )
    (got,) = arrays(Numpy(files=[p], roi_start=[10, 10], roi_shape=[2, 3], dont_use_mmap=True))
    assert np.array_equal(got, big[10:12, 10:13]) and sum(sizes) < 5000


def test_accepted_no_op_arguments(tmp_path: Path) -> None:
    p = save(tmp_path / "g.npy", GRID)
    r = Numpy(
        files=[p], use_o_direct=True, dont_use_mmap=True, register_buffers=False,
        cache_header_information=True, lazy_init=True, read_ahead=True, tensor_init_bytes=10,
        initial_fill=8, skip_cached_images=False, prefetch_queue_depth=1,
    )  # fmt: skip
    assert [np.array_equal(a, GRID) for a in arrays(r)] == [True]
    assert [np.array_equal(a, GRID) for a in arrays(r)] == [True]  # cached header


# --- bad files ------------------------------------------------------------------------------
def corrupt_set(tmp_path: Path) -> list[Path]:
    good = [save(tmp_path / f"{i}.npy", np.full(4, i, np.int16)) for i in range(4)]
    raw = good[1].read_bytes()
    good[1].write_bytes(raw[:-3])  # truncated data
    good[2].write_bytes(b"\x93NUMPY\x01\x00" + raw[8:20])  # truncated header
    return good


def header(text: str, version: int = 1) -> bytes:
    body = text.encode("latin1")
    return b"\x93NUMPY" + bytes([version, 0]) + len(body).to_bytes(2, "little") + body


@pytest.mark.parametrize(
    "data,match",
    [
        (b"not a numpy file at all", "bad magic"),
        (b"\x93NUMPY\x09\x00\x10\x00{}", "version 9"),
        (header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }") + bytes(8),
         "unsupported element type"),
        (header("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }"),
         "structured arrays"),
        (header("{'descr': '<i4', 'x': 1}"), "exactly the keys"),
        (header("{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }"), "bad shape"),
        (header("__import__('os')"), "not a dict literal"),
        (header("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000, 100000000), }"),
         "truncated"),
        (b"\x93NUMPY\x01\x00\xff\x00{'descr'", "truncated .npy header"),
    ],
)  # fmt: skip
def test_corrupt_headers(tmp_path: Path, data: bytes, match: str) -> None:
    p = tmp_path / "bad.npy"
    p.write_bytes(data)
    with pytest.raises(DecodeError, match=match) as ei:
        arrays(Numpy(files=[p]))
    assert "readers.Numpy" in str(ei.value) and str(p) in str(ei.value)


def test_truncated_file_raises_or_is_skipped(tmp_path: Path) -> None:
    paths = corrupt_set(tmp_path)
    with pytest.raises(npy.NpyFormatError, match=r"readers.Numpy: sample 1: .*1.npy: truncated"):
        arrays(Numpy(files=paths))
    r = Numpy(files=paths, on_error="skip", max_batch_size=2, last_batch="partial")
    got = [np.asarray(t).tolist() for (b,) in r.next_epoch() for t in b.torch()]
    assert got == [[0] * 4, [3] * 4] and r.get_metadata()["skipped"] == 2
    missing = tmp_path / "gone.npy"
    r = Numpy(files=[paths[0], missing])
    with pytest.raises(FileNotFoundError, match=r"gone\.npy"):
        arrays(r)


# --- device ---------------------------------------------------------------------------------
def test_gpu_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    if not ndd.Device.gpu_count():
        pytest.skip("no GPU (fake-GPU mode is checked by the suite's fake-GPU run)")
    p = save(tmp_path / "g.npy", GRID)
    (t,) = next(iter(Numpy(files=[p], device="gpu").next_epoch()))
    assert t.device.device_type == "gpu" and np.array_equal(np.asarray(t.cpu()), GRID)


# --- decoders.numpy -------------------------------------------------------------------------
def encode(a: np.ndarray) -> np.ndarray:
    buf = io.BytesIO()
    np.save(buf, a)
    return np.frombuffer(buf.getvalue(), np.uint8).copy()


def test_decoder(tmp_path: Path) -> None:
    a = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    out = ndd.decoders.numpy(ndd.batch([encode(a), encode(a + 1)]))
    assert out.dtype == ndd.int16 and [np.asarray(t).tolist() for t in out.torch()] == [
        a.tolist(),
        (a + 1).tolist(),
    ]
    f = ndd.decoders.numpy(
        ndd.as_tensor(encode(np.array([0.5, -1.5, 2.6, 300.0]))), dtype=ndd.uint8
    )
    assert np.asarray(f).tolist() == [1, 0, 3, 255]
    with pytest.raises(InvalidArgumentError, match="same number of dimensions and element type"):
        ndd.decoders.numpy(ndd.batch([encode(a), encode(a.astype(np.float32))])).evaluate()
    mixed = ndd.decoders.numpy(
        ndd.batch([encode(a), encode(a.astype(np.float32))]), dtype=ndd.int32
    )
    assert mixed.dtype == ndd.int32
    with pytest.raises(DecodeError, match=r"decoders\.numpy: sample 0: .*truncated"):
        ndd.decoders.numpy(ndd.as_tensor(encode(np.arange(100))[:-8])).evaluate()
    # bytes read from files keep their sources
    p = save(tmp_path / "x.npy", a)
    (raw, _lab) = next(iter(ndd.readers.File(files=[str(p)]).next_epoch(batch_size=1)))
    assert np.array_equal(np.asarray(ndd.decoders.numpy(raw).torch()[0]), a)
    p.write_bytes(p.read_bytes()[:-2])
    (raw, _lab) = next(iter(ndd.readers.File(files=[str(p)]).next_epoch(batch_size=1)))
    with pytest.raises(DecodeError, match=r"x\.npy"):
        ndd.decoders.numpy(raw).evaluate()


# --- the reference --------------------------------------------------------------------------
@pytest.mark.dali
def test_matches_dali(tmp_path: Path) -> None:
    from tests._helpers.dali_oracle import dali_ndd

    dndd = dali_ndd()
    files = [
        save(tmp_path / "a.npy", GRID),
        save(tmp_path / "b.npy", np.asfortranarray(GRID * 2)),
        save(tmp_path / "c.npy", GRID[::-1].copy() + 0.5),
    ]
    cases: list[dict[str, Any]] = [{}] + [kw for kw, _ in ROI_CASES] + [
        {"roi_start": [-1, 4], "roi_shape": [3, 3], "out_of_bounds_policy": "pad",
         "fill_value": 7.0},
        {"rel_roi_start": [-0.5, 0.0], "rel_roi_end": [1.5, 1.0], "out_of_bounds_policy": "pad"},
        {"rel_roi_start": [0.1, 0.1], "rel_roi_shape": [0.5, 0.5]},
    ]  # fmt: skip
    for kw in cases:
        ours = [np.asarray(t) for (b,) in Numpy(files=files, **kw).next_epoch(batch_size=3)
                for t in b.torch()]  # fmt: skip
        theirs = [
            np.asarray(t)
            for (b,) in dndd.readers.Numpy(files=[str(f) for f in files], **kw).next_epoch(3)
            for t in b.tensors
        ]
        assert len(ours) == len(theirs) == 3, kw
        for x, y in zip(ours, theirs):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), kw
    data = [encode(GRID), encode(np.asfortranarray(GRID)), encode(GRID + 0.6)]
    for kw in ({}, {"dtype": "int32"}):
        ours = ndd.decoders.numpy(ndd.batch(data), **({"dtype": ndd.int32} if kw else {}))
        theirs = dndd.decoders.numpy(
            dndd.batch(data[:1] + data[2:]), **({"dtype": dndd.int32} if kw else {})
        )  # DALI's CPU decoder needs CUDA for Fortran order; compare the C-ordered ones
        for x, y in zip([ours.torch()[0], ours.torch()[2]], theirs.tensors):
            assert np.array_equal(np.asarray(x), np.asarray(y))
