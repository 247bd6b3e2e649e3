"""TFRecord framing, index files and the ``tfrecord2idx`` tool.

A TFRecord file is a sequence of records, each framed as::

    uint64 length (little endian) | uint32 masked CRC-32C of the 8 length bytes
    length bytes of data          | uint32 masked CRC-32C of the data

An *index* lists each record as ``offset size`` (``size`` = ``length + 16``), one record a line
(the reference's format, written by ``tfrecord2idx``). Readers use it to find record ``i``
without scanning. When no index is given, :func:`load_or_build_index` scans the file once and
caches the result next to the data (``<file>.headrace-idx``) or, when that folder is not
writable, under ``$HEADRACE_CACHE/tfrecord-index``. A cached index records the data file's size,
modification time and inode, so a changed file is scanned again instead of read with a stale
index (and every read checks both CRCs and the index's record size besides).
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from headrace._core.errors import HeadraceError, InvalidArgumentError
from headrace.readers._example_proto import crc32c_module
from headrace.sample_data import cache_dir

HEADER = 12  # length + length CRC
FRAMING = 16  # header + data CRC
_MASK_DELTA = 0xA282EAD8
_CACHE_SUFFIX = ".headrace-idx"
_CACHE_MAGIC = "# headrace tfrecord index v1"


class TFRecordError(HeadraceError, ValueError, RuntimeError):
    """A record of a TFRecord file is corrupt, truncated or does not match ``features``.

    Attributes
    ----------
    path : str
        The TFRecord file.
    offset : int or None
        Byte offset of the record in the file.
    """

    def __init__(self, message: str, path: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.offset = offset


def mask_crc(crc: Any) -> Any:
    """TFRecord's mask of a CRC-32C (an int, or an int64 array of them).

    Examples
    --------
    >>> hex(mask_crc(0))
    '0xa282ead8'
    """
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crc(data: bytes | memoryview) -> int:
    """The masked CRC-32C TFRecord stores after the length and after the data.

    Examples
    --------
    >>> hex(masked_crc(b""))
    '0xa282ead8'
    """
    return mask_crc(crc32c_module().value(data))


def scan(path: str, what: str = "readers.TFRecord") -> tuple[np.ndarray, np.ndarray, str | None]:
    """Offsets and sizes of the records of ``path``, checking each length header's CRC.

    Returns ``(offsets, sizes, problem)``: ``problem`` is ``None`` for a well-formed file, else
    a message naming the file and the byte offset where framing broke (a truncated or corrupt
    record); the records before it are returned.
    """
    crc = crc32c_module().value
    offsets: list[int] = []
    sizes: list[int] = []
    problem = None
    with open(path, "rb") as f:
        total = os.fstat(f.fileno()).st_size
        pos = 0
        while pos < total:
            f.seek(pos)
            head = f.read(HEADER)
            if len(head) < HEADER:
                problem = f"truncated record header ({total - pos} bytes left)"
                break
            (length,) = struct.unpack_from("<Q", head)
            (stored,) = struct.unpack_from("<I", head, 8)
            if mask_crc(crc(head[:8])) != stored:
                problem = "corrupt record header (length CRC mismatch)"
                break
            if length > total - pos - FRAMING:
                problem = (
                    f"truncated record: the header declares {length} bytes of data, the file "
                    f"has {max(total - pos - FRAMING, 0)} left"
                )
                break
            offsets.append(pos)
            sizes.append(length + FRAMING)
            pos += length + FRAMING
        if problem is not None:
            problem = f"{what}: {path}: record {len(offsets)} at byte offset {pos}: {problem}."
    return np.asarray(offsets, np.int64), np.asarray(sizes, np.int64), problem


def read_index(index_path: str, what: str = "readers.TFRecord") -> tuple[np.ndarray, np.ndarray]:
    """Parse an index file of ``offset size`` lines (the reference's format)."""
    offsets: list[int] = []
    sizes: list[int] = []
    with open(index_path, encoding="ascii", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            try:
                off, size = (int(p) for p in parts[:2])
                if len(parts) != 2 or off < 0 or size < FRAMING:
                    raise ValueError
            except ValueError:
                raise InvalidArgumentError(
                    f"{what}: {index_path}:{lineno}: expected 'offset size' with a "
                    f"non-negative offset and a size of at least {FRAMING} (got {line.strip()!r})."
                ) from None
            offsets.append(off)
            sizes.append(size)
    return np.asarray(offsets, np.int64), np.asarray(sizes, np.int64)


def write_index(index_path: str, offsets: np.ndarray, sizes: np.ndarray, header: str = "") -> None:
    """Write ``offset size`` lines atomically (a temporary file renamed into place)."""
    folder = os.path.dirname(os.path.abspath(index_path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".idx", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            if header:
                f.write(header + "\n")
            f.writelines(f"{o} {s}\n" for o, s in zip(offsets.tolist(), sizes.tolist()))
        os.replace(tmp, index_path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _key(path: str) -> str:
    st = os.stat(path)
    return f"size={st.st_size} mtime_ns={st.st_mtime_ns} ino={st.st_ino}"


def cache_paths(path: str) -> list[str]:
    """Where an index built for ``path`` is cached: next to it, then in the cache folder."""
    digest = hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
    return [
        path + _CACHE_SUFFIX,
        str(cache_dir() / "tfrecord-index" / f"{digest[:32]}.idx"),
    ]


def _load_cached(candidate: str, key: str, total: int) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        with open(candidate, encoding="ascii") as f:
            if f.readline().strip() != f"{_CACHE_MAGIC} {key}":
                return None
        offsets, sizes = read_index(candidate)
    except (OSError, ValueError):
        return None
    ends = offsets + sizes
    contiguous = len(offsets) == 0 or (
        offsets[0] == 0 and bool((offsets[1:] == ends[:-1]).all()) and int(ends[-1]) == total
    )
    return (offsets, sizes) if contiguous else None


def load_or_build_index(
    path: str, what: str = "readers.TFRecord"
) -> tuple[np.ndarray, np.ndarray, str | None]:
    """The index of ``path``: from the cache when it matches the file, else scanned (and
    cached when the file is well formed). Returns ``(offsets, sizes, problem)`` as :func:`scan`.
    """
    key = _key(path)
    total = os.stat(path).st_size
    candidates = cache_paths(path)
    for candidate in candidates:
        hit = _load_cached(candidate, key, total)
        if hit is not None:
            return hit[0], hit[1], None
    offsets, sizes, problem = scan(path, what)
    if problem is None and _key(path) == key:  # never cache a broken or changing file
        for candidate in candidates:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(candidate)), exist_ok=True)
                write_index(candidate, offsets, sizes, f"{_CACHE_MAGIC} {key}")
                break
            except OSError:
                continue
    return offsets, sizes, problem


def main(argv: Sequence[str] | None = None) -> int:
    """``tfrecord2idx <tfrecord file> <index file>``: write the index of a TFRecord file.

    Each line of the index is ``offset size`` of one record. A corrupt or truncated file is
    reported (file and byte offset) with exit status 1 and no index written.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp(); p = os.path.join(d, "empty.tfrecord")
    >>> open(p, "wb").close()
    >>> main([p, p + ".idx"]), open(p + ".idx").read()
    (0, '')
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] in ("-h", "--help"):
        print("Usage: tfrecord2idx <tfrecord filename> <index filename>", file=sys.stderr)
        return 2
    try:
        offsets, sizes, problem = scan(args[0], "tfrecord2idx")
        if problem is not None:
            print(problem, file=sys.stderr)
            return 1
        write_index(args[1], offsets, sizes)
    except (OSError, HeadraceError) as e:
        print(f"tfrecord2idx: {e}", file=sys.stderr)
        return 1
    return 0


__all__ = [
    "FRAMING",
    "HEADER",
    "TFRecordError",
    "cache_paths",
    "load_or_build_index",
    "main",
    "masked_crc",
    "read_index",
    "scan",
    "write_index",
]
