"""Write MXNet RecordIO files (``.rec`` + ``.idx``) the way MXNet's writer does (test data)."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from pathlib import Path

MAGIC = 0xCED7230A
MAGIC_BYTES = struct.pack("<I", MAGIC)


def frame(payload: bytes) -> bytes:
    """One RecordIO record: split at aligned occurrences of the magic number (continuation
    flags 1/2/3), each part padded to 4 bytes."""
    out, start, parts = bytearray(), 0, []
    for i in range(0, len(payload) - len(payload) % 4, 4):
        if payload[i : i + 4] == MAGIC_BYTES:
            parts.append(payload[start:i])
            start = i + 4
    parts.append(payload[start:])
    for k, part in enumerate(parts):
        if len(parts) == 1:
            flag = 0
        else:
            flag = 1 if k == 0 else (3 if k == len(parts) - 1 else 2)
        out += struct.pack("<II", MAGIC, (flag << 29) | len(part)) + part
        out += b"\0" * (-len(part) % 4)
    return bytes(out)


def image_record(image: bytes, label: float | Sequence[float], key: int = 0) -> bytes:
    """The payload of an image record: IRHeader, optional label vector, image bytes."""
    if isinstance(label, (int, float)):
        return struct.pack("<IfQQ", 0, float(label), key, 0) + image
    labels = struct.pack(f"<{len(label)}f", *label)
    return struct.pack("<IfQQ", len(label), 0.0, key, 0) + labels + image


def write_recordio(
    rec: Path, idx: Path, samples: Sequence[tuple[bytes, float | Sequence[float]]]
) -> list[int]:
    """Write ``samples`` (image bytes, label) to ``rec`` and ``key\\toffset`` lines to ``idx``;
    return the offsets."""
    data, offsets = bytearray(), []
    for key, (image, label) in enumerate(samples):
        offsets.append(len(data))
        data += frame(image_record(image, label, key))
    rec.write_bytes(bytes(data))
    idx.write_text("".join(f"{k}\t{o}\n" for k, o in enumerate(offsets)))
    return offsets
