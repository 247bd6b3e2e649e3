"""readers.Numpy reads files that share the last file's header with two reads (npy_fast); any
other file goes through the general path. Both must give the arrays np.load gives."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from headrace.codecs import npy
from headrace.readers import Numpy
from headrace.readers import npy as npy_reader


def arrays(reader: Numpy, **kw: Any) -> list[np.ndarray]:
    return [np.asarray(t) for (b,) in reader.next_epoch(**kw) for t in b.tensors]


def mixed_files(tmp_path: Path) -> list[Path]:
    """Runs of files with one header, then files with others (shape, type, order, endianness)."""
    rng = np.random.default_rng(0)
    out = []
    kinds = (
        [((6, 5, 3), "<f4", False)] * 4
        + [
            ((6, 5, 3), "<i2", False),
            ((7, 5, 3), "<f4", False),
            ((6, 5, 3), "<f4", True),
            ((6, 5, 3), ">f4", False),
        ]
        + [((6, 5, 3), "<f4", False)] * 3
    )
    for k, (shape, dt, fortran) in enumerate(kinds):
        a = (rng.random(shape) * 100).astype(dt)
        p = tmp_path / f"{k:02d}.npy"
        np.save(p, np.asfortranarray(a) if fortran else a)
        out.append(p)
    return out


def roi_of(a: np.ndarray, lo: list[int], hi: list[int], fill: float) -> np.ndarray:
    out = np.full([b - s for s, b in zip(lo, hi)], fill, a.dtype.newbyteorder("="))
    src = tuple(slice(max(s, 0), min(b, n)) for s, b, n in zip(lo, hi, a.shape))
    dst = tuple(slice(x.start - s, x.stop - s) for x, s in zip(src, lo))
    out[dst] = a[src]
    return out


@pytest.mark.parametrize("mmap", [True, False])
def test_whole_arrays_of_mixed_headers(tmp_path: Path, mmap: bool) -> None:
    files = mixed_files(tmp_path)
    got = arrays(Numpy(files=files, dont_use_mmap=not mmap), batch_size=1)
    for p, a in zip(files, got):
        want = np.load(p)
        assert a.dtype == want.dtype.newbyteorder("=") and a.flags.c_contiguous
        np.testing.assert_array_equal(a, want)


@pytest.mark.parametrize("mmap", [True, False])
def test_rois_of_mixed_headers_with_padding(tmp_path: Path, mmap: bool) -> None:
    files = mixed_files(tmp_path)
    r = Numpy(files=files, roi_start=[2, -1, 1], roi_shape=[3, 3, 2], out_of_bounds_policy="pad",
              fill_value=-7, dont_use_mmap=not mmap)  # fmt: skip
    for p, a in zip(files, arrays(r, batch_size=1)):
        np.testing.assert_array_equal(a, roi_of(np.load(p), [2, -1, 1], [5, 2, 3], -7))
    inside = Numpy(files=files, roi_start=[1, 1, 0], roi_end=[4, 5, 2])
    for p, a in zip(files, arrays(inside, batch_size=1)):
        assert a.flags.c_contiguous
        np.testing.assert_array_equal(a, np.load(p)[1:4, 1:5, 0:2])


def test_the_fast_path_reads_header_and_data_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [tmp_path / f"{k}.npy" for k in range(5)]
    for k, p in enumerate(files):
        np.save(p, np.full((64, 64), k, np.float32))
    calls: list[str] = []
    for name in ("pread", "preadv"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    got = arrays(Numpy(files=files), batch_size=5)
    assert [int(a[0, 0]) for a in got] == list(range(5))
    first = calls.index("preadv") + 1  # the first file: the general path
    assert calls[first:].count("preadv") == 4 and "pread" not in calls[first:]


def test_a_truncated_file_with_the_same_header_is_still_an_error(tmp_path: Path) -> None:
    files = [tmp_path / f"{k}.npy" for k in range(4)]
    for k, p in enumerate(files):
        np.save(p, np.full((10, 10), k, np.int64))
    files[2].write_bytes(files[2].read_bytes()[:-8])
    with pytest.raises(npy.NpyFormatError, match=r"sample 2: .*2\.npy: truncated"):
        arrays(Numpy(files=files), batch_size=4)
    r = Numpy(files=files, on_error="skip", roi_start=[1, 1], roi_shape=[2, 2])
    assert [int(a[0, 0]) for a in arrays(r, batch_size=2, last_batch="partial")] == [0, 1, 3]


def test_many_headers_give_up_the_fast_path(tmp_path: Path) -> None:
    files = []
    for k in range(12):
        p = tmp_path / f"{k:02d}.npy"
        np.save(p, np.full((k + 1,), k, np.uint8))
        files.append(p)
    r = Numpy(files=files)
    got = arrays(r, batch_size=4)
    assert [a.tolist() for a in got] == [[k] * (k + 1) for k in range(12)]
    assert r._dataset.fast_misses >= npy_reader._FAST_MISSES  # no longer tried
