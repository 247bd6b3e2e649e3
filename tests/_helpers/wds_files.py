"""Write webdataset tar shards with :mod:`tarfile` (test data)."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Sequence
from pathlib import Path


def write_shard(
    path: Path, members: Sequence[tuple[str, bytes]], fmt: int = tarfile.GNU_FORMAT
) -> Path:
    """A tar archive holding ``members`` (name, content) in this order."""
    with tarfile.open(path, "w", format=fmt) as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tf.addfile(info, io.BytesIO(data))
    return path


def sample_members(
    first: int, count: int, exts: Sequence[str] = ("jpg", "cls")
) -> list[tuple[str, bytes]]:
    """``count`` samples ``%06d`` from ``first``: ``jpg`` holds ``img<i>`` repeated, ``cls`` the
    index as 4 little-endian bytes, other extensions ``<ext><i>``."""
    out = []
    for i in range(first, first + count):
        for e in exts:
            if e == "jpg":
                data = f"img{i}".encode() * (1 + i % 3)
            elif e == "cls":
                data = i.to_bytes(4, "little")
            else:
                data = f"{e}{i}".encode()
            out.append((f"{i:06d}.{e}", data))
    return out
