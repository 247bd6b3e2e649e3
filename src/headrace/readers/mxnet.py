"""``readers.MXNet``: (image bytes, label) pairs from MXNet RecordIO files (``.rec`` + ``.idx``).

The RecordIO framing: each record is ``magic (0xced7230a, uint32 LE)``, a ``uint32`` word whose
low 29 bits are the payload length and high 3 bits the continuation flag, the payload, and zero
padding to a multiple of 4 bytes. The writer splits a payload wherever the magic number occurs
at an aligned position: flag 0 is a whole record, 1 the first part, 2 a middle part, 3 the last;
the reader joins the parts, putting the magic back between them.

An image record's payload starts with the 24-byte ``IRHeader`` (``uint32 flag``, ``float32
label``, two ``uint64`` ids). ``flag == 0``: the label is that float; ``flag = k > 0``: the
payload continues with ``k`` float32 labels. The rest is the image (encoded bytes).

The index file holds ``key offset`` lines (``im2rec`` writes them); the records are the byte
ranges between consecutive offsets, in offset order, over the ``.rec`` files taken as one
concatenated stream (the reference's rule), so a record may continue into the next file.
"""

from __future__ import annotations

import errno
import os
import struct
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.dtype import float32, uint8
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, MissingArgumentError
from headrace.readers._base import EpochPlan, Reader
from headrace.readers._file_order import check_file_shuffle, file_order_plan
from headrace.readers._pread import PositionalFiles
from headrace.readers.file import FileReadError

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_IR_HEADER = struct.Struct("<IfQQ")  # flag, label, id, id2
_LENGTH_MASK = (1 << 29) - 1


class RecordIOFormatError(FileReadError):
    """A RecordIO file or its index is malformed (``filename`` names it; the message gives the
    record's offset). Also an ``OSError``, so ``on_error="skip"`` skips the record."""


def _error(path: str, what: str) -> RecordIOFormatError:
    return RecordIOFormatError(errno.EIO, f"readers.MXNet: {what}", path)


def unpack_record(buf: bytes | memoryview, where: str, path: str) -> tuple[np.ndarray, np.ndarray]:
    """Parse the first record of ``buf`` into ``(image uint8 1-D, label float32 1-D)``.

    Examples
    --------
    >>> payload = _IR_HEADER.pack(0, 7.0, 0, 0) + b"IMG"
    >>> rec = struct.pack("<II", MAGIC, len(payload)) + payload + b"\\0"
    >>> img, lab = unpack_record(rec, "offset 0", "x.rec")
    >>> bytes(img), lab.tolist()
    (b'IMG', [7.0])
    """
    view = memoryview(buf)
    pos, parts = 0, []
    while True:
        if pos + 8 > len(view):
            raise _error(path, f"record at {where}: truncated record header")
        magic, word = struct.unpack_from("<II", view, pos)
        if magic != MAGIC:
            raise _error(
                path,
                f"record at {where}: wrong magic number 0x{magic:08x} at +{pos} (not RecordIO)",
            )
        cflag, length = word >> 29, word & _LENGTH_MASK
        if (cflag in (2, 3)) != bool(parts) or cflag > 3:
            raise _error(path, f"record at {where}: unexpected continuation flag {cflag} at +{pos}")
        pos += 8
        if pos + length > len(view):
            raise _error(
                path,
                f"record at {where}: truncated record (a {length}-byte part at +{pos}, "
                f"{len(view) - pos} bytes left)",
            )
        parts.append(view[pos : pos + length])
        pos += (length + 3) & ~3
        if cflag in (0, 3):
            break
    # parts were split where the magic number stood in the payload: put it back between them
    payload = parts[0] if len(parts) == 1 else memoryview(_MAGIC_BYTES.join(parts))
    if len(payload) < _IR_HEADER.size:
        raise _error(path, f"record at {where}: {len(payload)} bytes, too short for an IRHeader")
    flag, label, _, _ = _IR_HEADER.unpack_from(payload, 0)
    body = _IR_HEADER.size
    if flag > (len(payload) - body) // 4:
        raise _error(
            path,
            f"record at {where}: the header announces {flag} labels, more than the record holds",
        )
    if flag == 0:
        labels = np.array([label], np.float32)
    else:
        labels = np.frombuffer(payload, "<f4", flag, body).astype(np.float32)
        body += 4 * flag
    image = np.frombuffer(payload, np.uint8, offset=body)
    if not image.flags.writeable:
        image = image.copy()
    return image, labels


class _RecordIODataset:
    """Records as ``(file index, offset in file, size)`` spans over the concatenated files."""

    read_errors = (OSError,)

    def __init__(self, paths: list[str], sizes: list[int], spans: np.ndarray) -> None:
        self.paths = paths
        self.file_sizes = sizes
        self.spans = spans  # (n, 3): file, offset in file, size (may run into the next files)
        self.files = PositionalFiles(paths)

    def __len__(self) -> int:
        return len(self.spans)

    def source(self, index: int) -> str:
        f, off, _ = self.spans[index].tolist()
        return f"{self.paths[f]} at index {off}"

    def _bytes(self, f: int, off: int, size: int) -> np.ndarray:
        pieces = []
        while size > 0:
            if f >= len(self.paths):
                raise EOFError("past the last RecordIO file")
            take = min(size, self.file_sizes[f] - off)
            if take > 0:
                pieces.append(self.files.read(f, off, take))
                size -= take
            f, off = f + 1, 0
        return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)

    def read(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        f, off, size = self.spans[index].tolist()
        try:
            data = self._bytes(f, off, size)
        except (OSError, EOFError) as e:
            raise _error(self.paths[f], f"cannot read the record at offset {off} ({e})") from e
        return unpack_record(data.data, f"offset {off}", self.paths[f])


def _path_list(name: str, value: Any) -> list[str]:
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    if not isinstance(value, Sequence) or not value:
        raise InvalidTypeError(
            f"readers.MXNet: {name} must be a path or a non-empty list of paths (got {value!r})."
        )
    if not all(isinstance(v, (str, bytes, os.PathLike)) for v in value):
        raise InvalidTypeError(f"readers.MXNet: {name} must hold paths (got {value!r}).")
    return [os.fsdecode(v) for v in value]


def read_index(index_path: str) -> list[int]:
    """The record offsets of an index file of ``key offset`` lines, sorted."""
    try:
        with open(index_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise _error(index_path, f"cannot read the index file ({e.strerror or e})") from e
    except UnicodeDecodeError:
        raise _error(index_path, "the index file is not text") from None
    offsets = []
    for lineno, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        try:
            if len(fields) != 2:
                raise ValueError
            int(fields[0])
            offset = int(fields[1])
            if offset < 0:
                raise ValueError
        except ValueError:
            raise _error(
                index_path,
                f"line {lineno}: expected 'key offset' with a non-negative integer offset "
                f"(got {line!r})",
            ) from None
        offsets.append(offset)
    if not offsets:
        raise _error(index_path, "the index file lists no records")
    return sorted(offsets)


class MXNet(Reader):
    """Read ``(image bytes uint8 1-D, label float32 1-D)`` pairs from MXNet RecordIO files.

    Parameters
    ----------
    max_batch_size, name, device, num_inputs
        As every reader (``max_batch_size`` is the default ``next_epoch`` batch size).
    path : str or os.PathLike, or list of them
        The ``.rec`` files, taken as one stream in this order.
    index_path : str or os.PathLike, or a list holding one
        The index (``.idx``) of that stream: ``key offset`` lines as written by ``im2rec``.
        Records are the spans between consecutive offsets (empty spans are ignored).
    shuffle_after_epoch : bool
        Visit the ``.rec`` files in a new order every epoch (seeded by
        ``shuffle_after_epoch_seed`` and the epoch, equal on every rank), keeping each file's
        records in order; a record belongs to the file it starts in. Excludes ``stick_to_shard``.
    shuffle_after_epoch_seed : int, optional
        Seed of that file order; default: a fixed seed.
    dont_use_mmap, read_ahead, lazy_init, skip_cached_images, tensor_init_bytes, initial_fill
        Accepted for compatibility; no effect.
    **kwargs
        Common reader arguments: ``shard_id``, ``num_shards``, ``stick_to_shard``,
        ``pad_last_batch``, ``random_shuffle``, ``seed``, ``prefetch_queue_depth``,
        ``enable_checkpointing``, keyword-only ``last_batch`` and ``on_error``.

    Notes
    -----
    The label has shape ``(1,)`` when the record's header flag is 0 and ``(flag,)`` otherwise.
    A corrupt record (wrong magic, bad continuation flags, too short) raises
    :class:`RecordIOFormatError` naming the file and the record's offset, or is skipped with
    ``on_error="skip"``. Index offsets past the end of the data (a truncated ``.rec``) are
    refused at construction, or with ``on_error="skip"`` dropped with a warning and counted.

    Examples
    --------
    >>> import os, struct, tempfile
    >>> d = tempfile.mkdtemp()
    >>> payload = struct.pack("<IfQQ", 0, 5.0, 0, 0) + b"JPEG"
    >>> with open(os.path.join(d, "a.rec"), "wb") as f:
    ...     _ = f.write(struct.pack("<II", 0xCED7230A, len(payload)) + payload)
    >>> with open(os.path.join(d, "a.idx"), "w") as f:
    ...     _ = f.write("0\\t0\\n")
    >>> r = MXNet(path=os.path.join(d, "a.rec"), index_path=os.path.join(d, "a.idx"))
    >>> [(np.asarray(img).tobytes(), np.asarray(lab).tolist()) for img, lab in r.next_epoch()]
    [(b'JPEG', [5.0])]
    """

    _outputs = ((uint8, None), (float32, None))

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        path: Any = None,
        index_path: Any = None,
        shuffle_after_epoch: bool | None = None,
        shuffle_after_epoch_seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        if path is None or index_path is None:
            raise MissingArgumentError(
                "readers.MXNet: `path` (the .rec files) and `index_path` (their .idx) are required."
            )
        self._file_shuffle, self._file_seed = check_file_shuffle(
            "MXNet", shuffle_after_epoch, shuffle_after_epoch_seed, self._stick_to_shard
        )
        self._global_shuffle = self._file_shuffle
        paths = _path_list("path", path)
        indexes = _path_list("index_path", index_path)
        if len(indexes) != 1:
            raise InvalidArgumentError(
                f"readers.MXNet: index_path must name exactly one index file (got {len(indexes)})."
            )
        for p in paths:
            if not os.path.isfile(p):
                raise _error(p, "the RecordIO file does not exist or is not a file")
        sizes = [os.path.getsize(p) for p in paths]
        self._build(paths, sizes, read_index(indexes[0]), indexes[0])
        self._finish_init()

    def _build(self, paths: list[str], sizes: list[int], offsets: list[int], index: str) -> None:
        starts = np.concatenate([[0], np.cumsum(sizes)]).tolist()  # global offset of each file
        total = starts[-1]
        bad = [o for o in offsets if o >= total]
        if bad:
            what = (
                f"{len(bad)} record offset(s) of {index} (first: {bad[0]}) lie past the end of "
                f"the data ({total} bytes): truncated RecordIO file"
            )
            if not self._skip:
                raise _error(paths[-1], what)
            warnings.warn(f"readers.MXNet: {what}; skipped (on_error='skip').", RuntimeWarning, 3)
            self._skipped += len(bad)
            offsets = [o for o in offsets if o < total]
        spans = []
        f = 0
        for k, o in enumerate(offsets):
            end = offsets[k + 1] if k + 1 < len(offsets) else total
            if end == o:
                continue  # duplicate offsets: empty spans are no records
            while starts[f + 1] <= o:
                f += 1
            spans.append((f, o - starts[f], end - o))
        if not spans:
            raise InvalidArgumentError(f"readers.MXNet: {index} describes no records.")
        arr = np.asarray(spans, np.int64)
        self._file_starts = np.searchsorted(arr[:, 0], np.arange(len(paths))).tolist()
        self._dataset = _RecordIODataset(paths, sizes, arr)

    def _plan(self) -> EpochPlan:
        base = super()._plan()
        if not self._file_shuffle:
            return base
        return file_order_plan(base, self._file_starts, self._file_seed)


__all__ = ["MAGIC", "MXNet", "RecordIOFormatError", "read_index", "unpack_record"]
