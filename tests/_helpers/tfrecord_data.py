"""Write TFRecord files for tests: ``tf.train.Example`` encoded by hand (protobuf wire format),
framed with masked CRC-32C checksums, independent of headrace's own parsing code.

``write_tfrecord(path, [{"label": 3, "image": b"...", "box": [0.1, 0.2]}, ...])`` writes one
record per dict: ``bytes`` (or a list of them) become a ``BytesList``, floats a ``FloatList``
(packed), ints an ``Int64List`` (packed). ``raw`` records (bytes) are framed as they are.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import google_crc32c


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_feature(value: Any) -> bytes:
    """A ``tf.train.Feature`` message."""
    values = value if isinstance(value, list) else [value]
    if values and isinstance(values[0], (bytes, str)):
        items = [v.encode() if isinstance(v, str) else v for v in values]
        return _field(1, b"".join(_field(1, v) for v in items))
    if values and isinstance(values[0], float):
        return _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)))
    if value == []:
        return b""  # a Feature with no list set
    return _field(3, _field(1, b"".join(_varint(int(v)) for v in values)))


def encode_example(features: Mapping[str, Any]) -> bytes:
    """A ``tf.train.Example`` message."""
    entries = b"".join(
        _field(1, _field(1, k.encode()) + _field(2, encode_feature(v))) for k, v in features.items()
    )
    return _field(1, entries)


def masked_crc(data: bytes) -> int:
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc(head)) + data + struct.pack("<I", masked_crc(data))


def write_tfrecord(path: Path, records: Iterable[Mapping[str, Any] | bytes]) -> list[int]:
    """Write the records; returns each record's byte offset."""
    offsets = []
    pos = 0
    with open(path, "wb") as f:
        for r in records:
            rec = frame(r if isinstance(r, bytes) else encode_example(r))
            offsets.append(pos)
            f.write(rec)
            pos += len(rec)
    return offsets


def write_index(path: Path, tfrecord: Path) -> None:
    """The reference's index format (``offset size`` lines), from the framing."""
    data = tfrecord.read_bytes()
    lines, pos = [], 0
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        lines.append(f"{pos} {n + 16}\n")
        pos += n + 16
    path.write_text("".join(lines))
