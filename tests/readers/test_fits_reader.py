"""experimental.readers.Fits: FITS files written with astropy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import headrace as ndd
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace.readers.fits import Fits

fits = pytest.importorskip("astropy.io.fits")


def write(path: Path, *images: np.ndarray | None, compressed: bool = False) -> Path:
    hdus: list[Any] = [fits.PrimaryHDU(images[0])]
    for im in images[1:]:
        hdus.append(fits.CompImageHDU(im) if compressed else fits.ImageHDU(im))
    fits.HDUList(hdus).writeto(path)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    for i in range(5):
        write(tmp_path / f"{i}.fits", None, np.full((2, 3), i, np.int16), np.full(4, i, np.float32))
    write(
        tmp_path / "sub" / "5.fits", None, np.full((2, 3), 5, np.int16), np.full(4, 5, np.float32)
    )
    return tmp_path


def epoch(r: Fits, **kw: Any) -> list[tuple[np.ndarray, ...]]:
    out = []
    for outs in r.next_epoch(**kw):
        if isinstance(outs[0], ndd.Batch):
            cols = [[np.asarray(t) for t in o.torch()] for o in outs]
            out += list(zip(*cols))
        else:
            out.append(tuple(np.asarray(o) for o in outs))
    return out


def test_default_hdu_and_several_outputs(root: Path) -> None:
    got = epoch(Fits(file_root=root))
    assert [int(a[0].ravel()[0]) for a in got] == [0, 1, 2, 3, 4, 5]
    assert got[0][0].dtype == np.int16 and got[0][0].shape == (2, 3) and len(got[0]) == 1
    two = epoch(Fits(file_root=root, hdu_indices=[3, 2], max_batch_size=4))
    assert two[5][0].dtype == np.float32 and two[5][0].tolist() == [5.0] * 4
    assert two[5][1].tolist() == [[5] * 3] * 2


def test_stored_types_compression_and_primary(tmp_path: Path) -> None:
    u16 = np.arange(6, dtype=np.uint16).reshape(2, 3) * 10000
    p = write(tmp_path / "a.fits", np.arange(3, dtype=np.uint8), u16, np.eye(2))
    (a, b, c), = epoch(Fits(files=[p], hdu_indices=[1, 2, 3], dont_use_mmap=True))  # fmt: skip
    assert a.dtype == np.uint8 and b.dtype == np.uint16 and np.array_equal(b, u16)
    assert c.dtype == np.float64 and c.dtype.isnative and np.array_equal(c, np.eye(2))
    comp = write(
        tmp_path / "c.fits", None, np.arange(20, dtype=np.int32).reshape(4, 5), compressed=True
    )
    ((d,),) = epoch(Fits(files=[comp]))
    assert np.array_equal(d, np.arange(20).reshape(4, 5))
    r = Fits(files=[p], hdu_indices=[2], dtypes=[ndd.uint16])
    assert epoch(r)[0][0].dtype == np.uint16
    with pytest.raises(InvalidArgumentError, match="dtypes"):
        epoch(Fits(files=[p], hdu_indices=[2], dtypes=ndd.float32))
    with pytest.raises(InvalidArgumentError, match="one per hdu_indices"):
        Fits(files=[p], hdu_indices=[1, 2], dtypes=[ndd.uint8])
    with pytest.raises(InvalidArgumentError, match="hdu_indices"):
        Fits(files=[p], hdu_indices=[0])


def test_sharding_shuffle_and_resume(root: Path) -> None:
    shards = [
        [
            int(a[0].ravel()[0])
            for a in epoch(Fits(last_batch="partial", file_root=root, num_shards=2, shard_id=k))
        ]
        for k in (0, 1)
    ]
    assert shards == [[0, 1, 2], [3, 4, 5]]
    r = Fits(
        last_batch="partial", file_root=root, random_shuffle=True, seed=1, enable_checkpointing=True
    )
    full = [int(a[0].ravel()[0]) for a in epoch(r, batch_size=2)]
    r = Fits(
        last_batch="partial", file_root=root, random_shuffle=True, seed=1, enable_checkpointing=True
    )
    it = r.next_epoch(batch_size=2)
    first = [int(np.asarray(t).ravel()[0]) for t in next(it)[0].torch()]
    state = r.get_state()
    it.close()
    resumed = Fits(last_batch="partial", file_root=root, random_shuffle=True, seed=1)
    resumed.set_state(state)
    assert first + [int(a[0].ravel()[0]) for a in epoch(resumed, batch_size=2)] == full
    assert sorted(full) == list(range(6))


def test_corrupt_truncated_and_missing_hdu(root: Path) -> None:
    raw = (root / "1.fits").read_bytes()
    (root / "1.fits").write_bytes(raw[: len(raw) - 2880])  # the last HDU lost its data
    (root / "2.fits").write_bytes(b"garbage" * 500)
    with pytest.raises(DecodeError, match=r"Fits: sample 1 \(.*1\.fits'\): corrupt or truncated"):
        epoch(Fits(file_root=root, hdu_indices=[3]))
    r = Fits(
        file_root=root, hdu_indices=[3], on_error="skip", max_batch_size=3, last_batch="partial"
    )
    assert [int(a[0][0]) for a in epoch(r)] == [0, 3, 4, 5]
    assert r.get_metadata()["skipped"] == 2
    with pytest.raises(DecodeError, match="HDU 9 does not exist"):
        epoch(Fits(files=[root / "0.fits"], hdu_indices=[9]))
    with pytest.raises(DecodeError, match="HDU 1 holds no image data"):
        epoch(Fits(files=[root / "0.fits"], hdu_indices=[1]))


def test_missing_extra(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "astropy.io.fits", None)
    with pytest.raises(ImportError, match=r"pip install headrace\[fits\]"):
        Fits(file_root=root)


def test_exposed_as_experimental() -> None:
    assert ndd.experimental.readers.Fits is Fits
