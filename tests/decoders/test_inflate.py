"""decoders.inflate: lz4.block round trips, chunked samples, layouts, bad data, missing extra.

The reference runs this operator on the GPU only (its CPU build has no kernel), so there is no
differential test: ``lz4.block`` is the oracle.
"""

from __future__ import annotations

import sys
import zlib
from typing import Any

import numpy as np
import pytest

import headrace as ndd
from headrace._core.errors import BackendUnavailableError, InvalidArgumentError

lz4_block = pytest.importorskip("lz4.block")


def lz4(x: np.ndarray) -> bytes:
    return bytes(lz4_block.compress(np.ascontiguousarray(x).tobytes(), store_size=False))


def u8(b: bytes) -> np.ndarray:
    return np.frombuffer(b, np.uint8).copy()


RNG = np.random.default_rng(0)
FRAMES = RNG.integers(0, 4, (4, 6, 5, 3)).astype(np.uint8)  # compressible
BLOCKS = [lz4(f) for f in FRAMES]
SIZES = [len(b) for b in BLOCKS]
OFFSETS = np.cumsum([0, *SIZES[:-1]]).tolist()
PACKED = u8(b"".join(BLOCKS))


@pytest.mark.parametrize(
    "dtype", [ndd.uint8, ndd.int16, ndd.uint16, ndd.int32, ndd.float32, ndd.float64, ndd.int64]
)
def test_round_trip_every_dtype(dtype: Any) -> None:
    x = (RNG.standard_normal((3, 7)) * 100).astype(dtype.numpy)
    out = ndd.decoders.inflate(ndd.as_tensor(u8(lz4(x))), shape=[3, 7], dtype=dtype)
    assert out.dtype == dtype and out.shape == (3, 7) and out.layout is None
    np.testing.assert_array_equal(np.asarray(out), x)


@pytest.mark.parametrize(
    "chunks",
    [
        {"chunk_sizes": SIZES},
        {"chunk_offsets": OFFSETS},
        {"chunk_offsets": OFFSETS, "chunk_sizes": SIZES},
    ],
)
def test_chunked_samples_become_sequences(chunks: dict[str, Any]) -> None:
    out = ndd.decoders.inflate(ndd.as_tensor(PACKED), shape=[6, 5, 3], layout="HWC", **chunks)
    assert out.shape == (4, 6, 5, 3) and out.layout == "FHWC"
    np.testing.assert_array_equal(np.asarray(out), FRAMES)


def test_chunk_subsets_reordered_per_sample_arguments_and_names() -> None:
    # chunks read in any order, gaps allowed
    out = ndd.decoders.inflate(
        ndd.as_tensor(PACKED),
        shape=[6, 5, 3],
        chunk_offsets=[OFFSETS[2], OFFSETS[0]],
        chunk_sizes=[SIZES[2], SIZES[0]],
        layout="HWC",
        sequence_axis_name="T",
    )
    assert out.layout == "THWC"
    np.testing.assert_array_equal(np.asarray(out), FRAMES[[2, 0]])
    one = ndd.decoders.inflate(ndd.as_tensor(u8(BLOCKS[1])), shape=[6, 5, 3], chunk_sizes=SIZES[1])
    assert one.shape == (1, 6, 5, 3)  # chunk arguments always add the sequence axis
    small = RNG.integers(0, 3, (2, 2)).astype(np.uint8)
    data = ndd.batch([PACKED, u8(lz4(small))])
    out = ndd.decoders.inflate(
        data,
        shape=ndd.batch([np.array([6, 5, 3], np.int32), np.array([4], np.int32)]),
        chunk_sizes=ndd.batch([np.array(SIZES, np.int32), np.array([len(lz4(small))], np.int32)]),
    )
    assert [t.shape for t in out.tensors] == [(4, 6, 5, 3), (1, 4)]
    np.testing.assert_array_equal(np.asarray(out.tensors[1])[0], small.ravel())
    assert ndd.decoders.inflate(ndd.as_tensor(PACKED[:0]), shape=[0]).shape == (0,)


def test_deflate_beyond_the_reference() -> None:
    x = np.arange(100, dtype=np.float32).reshape(10, 10)
    for blob in (zlib.compress(x.tobytes()), _gzip(x.tobytes())):
        out = ndd.decoders.inflate(
            ndd.as_tensor(u8(blob)), shape=[10, 10], dtype=ndd.float32, algorithm="deflate"
        )
        np.testing.assert_array_equal(np.asarray(out), x)
    with pytest.raises(ndd.DecodeError, match="truncated"):
        blob = zlib.compress(x.tobytes())
        ndd.decoders.inflate(
            ndd.as_tensor(u8(blob[: len(blob) // 2])), shape=[10, 10], algorithm="DEFLATE"
        ).evaluate()


def _gzip(b: bytes) -> bytes:
    import gzip

    return gzip.compress(b)


def test_gpu_output_equals_cpu() -> None:
    pytest.importorskip("torch")
    out = ndd.decoders.inflate(ndd.as_tensor(PACKED), shape=[6, 5, 3], chunk_sizes=SIZES,
                               device="gpu")  # fmt: skip
    assert out.device.device_type == "gpu"
    np.testing.assert_array_equal(np.asarray(out.cpu()), FRAMES)


@pytest.mark.parametrize(
    ("data", "kw", "error", "msg"),
    [
        (u8(BLOCKS[0]), {"shape": [6, 5, 4]}, ndd.DecodeError, "decompresses to 90 bytes"),
        (u8(BLOCKS[0]), {"shape": [6, 5, 2]}, ndd.DecodeError, "cannot decompress"),
        (u8(BLOCKS[0]), {"shape": [9000, 9000]}, ndd.DecodeError, "cannot hold 81000000 bytes"),
        (u8(b"\xff" * 30), {"shape": [10]}, ndd.DecodeError, "cannot decompress LZ4"),
        (PACKED, {"shape": [90], "chunk_sizes": [SIZES[0], 10**6]}, InvalidArgumentError,
         "chunk 1 .* outside"),
        (PACKED, {"shape": [90], "chunk_offsets": [0], "chunk_sizes": SIZES}, InvalidArgumentError,
         "1 chunk_offsets but 4 chunk_sizes"),
        (PACKED, {"shape": [6, 5, 3], "chunk_sizes": SIZES, "layout": "HW"}, InvalidArgumentError,
         "layout 'HW' has 2 axes"),
        (PACKED, {"shape": [6, 5, 3], "chunk_sizes": SIZES, "layout": "HWC",
                  "sequence_axis_name": "H"}, InvalidArgumentError, "sequence_axis_name"),
        (u8(BLOCKS[0]), {"shape": [90], "algorithm": "zstd"}, ValueError, "algorithm must be"),
        (np.zeros(8, np.float32), {"shape": [2]}, InvalidArgumentError, "1-D uint8"),
    ],
)  # fmt: skip
def test_errors(data: np.ndarray, kw: dict[str, Any], error: type, msg: str) -> None:
    with pytest.raises(error, match=msg) as e:
        ndd.decoders.inflate(ndd.as_tensor(data), **kw).evaluate()
    if error is not ValueError and "uint8" not in msg:
        assert "decoders.inflate" in str(e.value)


def test_sample_named_in_errors_and_shape_required() -> None:
    bad = ndd.batch([u8(BLOCKS[0]), u8(BLOCKS[1][:-4])])
    with pytest.raises(ndd.DecodeError, match=r"decoders\.inflate: sample 1"):
        ndd.decoders.inflate(bad, shape=[6, 5, 3]).evaluate()
    with pytest.raises((TypeError, ValueError), match="shape"):
        ndd.decoders.inflate(ndd.as_tensor(u8(BLOCKS[0])))


def test_missing_lz4_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "lz4", None)
    monkeypatch.setitem(sys.modules, "lz4.block", None)
    with pytest.raises(BackendUnavailableError, match=r"pip install headrace\[lz4\]"):
        ndd.decoders.inflate(ndd.as_tensor(u8(BLOCKS[0])), shape=[90]).evaluate()
