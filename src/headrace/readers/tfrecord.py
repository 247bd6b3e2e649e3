"""``readers.TFRecord``: ``tf.train.Example`` records of TFRecord files, as named features.

Records are found through index files (the reference's ``offset size`` format; built and cached
on first use when not given, see :mod:`headrace.readers.tfrecord_index`), read from a memory map
of each file (or with positional reads), checked (both CRCs, the index's size) and turned into
one array per feature of ``features`` (see :mod:`headrace.tfrecord`): several batches at once
by one numpy walk of their wire format (:mod:`headrace.readers.tfrecord_scan`), or, for records
that walk does not take and to report problems, record by record with ``protobuf``. Needs the
``tfrecord`` extra (``pip install headrace[tfrecord]``).
"""

from __future__ import annotations

import array
import itertools
import mmap
import operator
import os
import struct
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.device import CPU
from headrace._core.dtype import DType, float32, int64, uint8
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, MissingArgumentError
from headrace._core.tensor import Tensor
from headrace.readers import _reference_features
from headrace.readers import _sharding as sh
from headrace.readers._base import EpochPlan, Reader
from headrace.readers._example_proto import crc32c_module, example_class, examples_class
from headrace.readers._reference_features import headrace_feature
from headrace.readers.file import FileReadError, MissingFileError
from headrace.readers.tfrecord_features import batch_extractor
from headrace.readers.tfrecord_index import (
    FRAMING,
    HEADER,
    TFRecordError,
    load_or_build_index,
    mask_crc,
    read_index,
)
from headrace.readers.tfrecord_scan import PAD, ExampleBatch
from headrace.tfrecord import Feature
from headrace.tfrecord import float32 as tf_float32
from headrace.tfrecord import int64 as tf_int64
from headrace.tfrecord import string as tf_string

_reference_features.install()  # features made with nvidia.dali.tfrecord become readable

_DTYPES: dict[int, DType] = {tf_int64: int64, tf_float32: float32, tf_string: uint8}
_DEFAULT_FILE_SHUFFLE_SEED = 0x7F4A_7C15  # shuffle_after_epoch without a seed: same every run
_MAX_OPEN_FILES = 64
_HEAD_CRC_CACHE = 1 << 16  # lengths whose header CRC (and field framing) is remembered
_JOIN_MAX = 1 << 26  # records of a batch parsed in one call when their bytes total at most this
_JOIN_MEAN = 1 << 14  # ... and average at most this (larger records: joining them costs a copy
# that outweighs one protobuf call per record, e.g. 18.5 vs 11 us per 100 KiB record)
_WALK_MIN = 128  # batches at least this large are read by one numpy walk (see read_groups)
_READ_BYTES = 1 << 25  # batches read together (read_groups) hold at most this many bytes
_HEAD_BYTES = np.arange(12)  # a record's length and its CRC
_CRC_BYTES = np.arange(4)
_WHAT = "readers.TFRecord"
_HEAD = struct.Struct("<QI")  # length, masked CRC of the length
_U32 = struct.Struct("<I")
_Problem = tuple[str, type, BaseException | None]  # what is wrong, error class, cause
_FEATURE_MAP = operator.attrgetter("features.feature")


class _OpenFile:
    """One open TFRecord file: its size and either a memory map or a descriptor."""

    __slots__ = ("fd", "mm", "size", "u8", "view")

    def __init__(self, path: str, use_mmap: bool) -> None:
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        self.size = os.fstat(self.fd).st_size
        self.mm: mmap.mmap | None = None
        self.u8: np.ndarray | None = None  # views for google_crc32c (no memoryviews) ...
        self.view: memoryview | None = None  # ... and for protobuf (no ndarrays)
        if use_mmap and self.size:
            self.mm = mmap.mmap(self.fd, 0, access=mmap.ACCESS_READ)
            self.u8 = np.frombuffer(self.mm, np.uint8)
            self.view = memoryview(self.mm)
            os.close(self.fd)
            self.fd = -1

    def read(self, offset: int, size: int) -> tuple[Any, Any]:
        """The record's bytes as ``(ndarray, memoryview)`` (views of the map when mapped)."""
        if self.view is not None:
            return self.u8[offset : offset + size], self.view[offset : offset + size]  # type: ignore[index]
        buf = os.pread(self.fd, size, offset)
        return np.frombuffer(buf, np.uint8), memoryview(buf)

    def close(self) -> None:
        # a map still viewed by a caller's array closes when the last view goes away
        self.u8 = self.view = self.mm = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class _Files:
    """Open files (at most ``_MAX_OPEN_FILES`` kept; the least recently used is dropped first,
    and closes once no read holds it)."""

    def __init__(self, paths: list[str], use_mmap: bool) -> None:
        self.paths = paths
        self.use_mmap = use_mmap
        self._open: OrderedDict[int, _OpenFile] = OrderedDict()
        self._last: tuple[int, _OpenFile | None] = (-1, None)
        self._lock = threading.Lock()

    def get(self, fid: int) -> _OpenFile:
        last = self._last  # fast path: records of one file tend to come together
        if last[0] == fid:
            return last[1]  # type: ignore[return-value]
        with self._lock:
            entry = self._open.get(fid)
            if entry is not None:
                self._open.move_to_end(fid)
            else:
                entry = self._open[fid] = _OpenFile(self.paths[fid], self.use_mmap)
                while len(self._open) > _MAX_OPEN_FILES:
                    # dropped, not closed: a read in progress may still hold it (a batch can
                    # span more files than this); it closes when the last holder lets go
                    _, old = self._open.popitem(last=False)
                    if self._last[1] is old:
                        self._last = (-1, None)
            self._last = (fid, entry)
            return entry

    def close(self) -> None:
        with self._lock:
            self._last = (-1, None)
            while self._open:
                self._open.popitem()[1].close()


class _TFRecordDataset:
    """Records of several files: ``read(i)`` returns one array per feature."""

    read_errors = (OSError, TFRecordError)

    def __init__(
        self,
        paths: list[str],
        file_ids: np.ndarray,
        offsets: np.ndarray,
        sizes: np.ndarray,
        first_record: np.ndarray,
        features: dict[str, Feature],
        warn_skips: bool,
        use_mmap: bool = True,
    ) -> None:
        self.files = _Files(paths, use_mmap)
        # array.array: compact, and indexing gives Python ints quickly
        self.file_ids = array.array("i", file_ids.astype(np.int32).tobytes())
        self.offsets = array.array("q", offsets.astype(np.int64).tobytes())
        self.sizes = array.array("q", sizes.astype(np.int64).tobytes())
        self.first_record = [int(v) for v in first_record]  # dataset index of each record 0
        # (numpy views of the same storage, for the batch reads of read_groups)
        self._where_np = tuple(
            np.frombuffer(a, t) for a, t in ((self.file_ids, np.int32), (self.offsets, np.int64),
                                             (self.sizes, np.int64))
        )  # fmt: skip
        self._prefix = [f"{p} (record " for p in paths]
        self.features = list(features.items())
        self.extractors = [batch_extractor(name, f) for name, f in features.items()]
        self.warn_skips = warn_skips
        self._crc = crc32c_module().value
        self._head_crcs: dict[int, int] = {}  # record length -> masked CRC of its 8 bytes
        self._parse = example_class().FromString
        self._parse_many = examples_class().FromString
        self._field_heads: dict[int, bytes] = {}  # record length -> its field framing

    def __len__(self) -> int:
        return len(self.offsets)

    def _where(self, index: int) -> tuple[str, int, int]:
        fid = self.file_ids[index]
        return self.files.paths[fid], index - self.first_record[fid], self.offsets[index]

    def source(self, index: int) -> str:
        fid = self.file_ids[index]
        return (
            f"{self._prefix[fid]}{index - self.first_record[fid]} at byte offset "
            f"{self.offsets[index]})"
        )

    def _fail(self, index: int, what: str, exc: type[Exception] = TFRecordError) -> Exception:
        path, record, offset = self._where(index)
        message = f"{_WHAT}: {path}: record {record} at byte offset {offset}: {what}."
        if self.warn_skips:
            warnings.warn(f"{message} The record is skipped (on_error='skip').", stacklevel=2)
        if exc is TFRecordError:
            return TFRecordError(message, path, offset)
        return FileReadError(5, message, path)  # EIO

    def _records(self, indices: list[int]) -> list[memoryview | _Problem]:
        """Each record's checked ``Example`` bytes (a view of the map or of a fresh buffer), or
        what is wrong with it. The data CRCs are compared all at once at the end."""
        out: list[memoryview | _Problem] = []
        offsets, sizes, file_ids = self.offsets, self.sizes, self.file_ids
        head_crcs, crc = self._head_crcs, self._crc
        opened: dict[int, _OpenFile] = {}  # this batch's files
        checked: list[int] = []  # positions in out of the records whose data CRC is pending
        computed: list[int] = []
        stored: list[int] = []
        for index in indices:
            offset, size, fid = offsets[index], sizes[index], file_ids[index]
            try:
                file = opened.get(fid)
                if file is None:
                    file = opened[fid] = self.files.get(fid)
                if offset + size > file.size:  # never ask for more than the file holds
                    out.append((
                        f"truncated record: the index says {size} bytes, the file ends "
                        f"{file.size - offset} bytes after the record's start", TFRecordError, None,
                    ))  # fmt: skip
                    continue
                u8, view, base = file.u8, file.view, offset  # read in place in the map ...
                if u8 is None or view is None:  # ... or with a positional read
                    (u8, view), base = file.read(offset, size), 0
                    if len(view) != size:
                        out.append(
                            (f"truncated record ({len(view)} of {size} bytes read)",
                             TFRecordError, None)
                        )  # fmt: skip
                        continue
            except OSError as e:
                if isinstance(e, FileReadError):
                    raise
                out.append((f"cannot read ({e.strerror or e})", OSError, e))
                continue
            length, length_crc = _HEAD.unpack_from(view, base)
            if head_crcs.get(length) != length_crc:  # the header's CRC depends on the length only
                if mask_crc(crc(u8[base : base + 8])) != length_crc:
                    out.append(("corrupt record header (length CRC mismatch)", TFRecordError, None))
                    continue
                if len(head_crcs) < _HEAD_CRC_CACHE:
                    head_crcs[length] = length_crc
            if length + FRAMING != size:
                out.append((
                    f"the record holds {length} bytes of data but the index gives it {size} "
                    f"bytes (expected {length + FRAMING}): a stale or wrong index file",
                    TFRecordError, None,
                ))  # fmt: skip
                continue
            start = base + HEADER
            end = start + length
            computed.append(crc(u8[start:end]))  # (releases the GIL)
            stored.append(_U32.unpack_from(view, end)[0])
            checked.append(len(out))
            out.append(view[start:end])
        if checked:
            masked = mask_crc(np.array(computed, np.int64))
            for j in np.flatnonzero(masked != np.array(stored, np.int64)).tolist():
                out[checked[j]] = ("corrupt record data (data CRC mismatch)", TFRecordError, None)
        return out

    def read_batch(self, indices: list[int], skip: bool) -> list[tuple[np.ndarray, ...] | None]:
        """The records' arrays, in order: each record's bytes are read and checked, parsed, then
        every feature is extracted for all records at once. A bad record raises its error
        naming the file and offset (the first bad one, in order), or is ``None`` with ``skip``.
        """
        if len(indices) >= _WALK_MIN:
            rows = self.read_groups([indices])
            if rows is not None:
                return rows[0]
        data = self._records(indices)
        fmaps = self._parse_together([d for d in data if type(d) is not tuple])
        if fmaps is None:  # one by one, to find the records that are not Examples
            parse = self._parse
            fmaps = []
            for k, d in enumerate(data):
                if type(d) is tuple:
                    continue
                try:
                    fmaps.append(parse(d).features.feature)
                except Exception as e:  # protobuf's DecodeError
                    data[k] = (f"not a tf.train.Example ({e})", TFRecordError, None)
        columns = [extract(fmaps) for extract in self.extractors]
        rows = list(zip(*columns))
        if len(rows) == len(indices) and not any(str in map(type, c) for c in columns):
            return rows  # type: ignore[return-value]
        out: list[tuple[np.ndarray, ...] | None] = []
        it = iter(rows)
        for index, d in zip(indices, data):
            row = None if type(d) is tuple else next(it)
            problem = (
                d
                if row is None
                else next(((o, TFRecordError, None) for o in row if type(o) is str), None)
            )
            if problem is None:
                out.append(row)
                continue
            what, kind, cause = problem
            exc = self._fail(index, what, kind)
            if not skip:
                raise exc from cause
            out.append(None)
        return out

    def read_groups(self, groups: list[list[int]]) -> list[list[tuple[np.ndarray, ...]]] | None:
        """The records of several batches read together, or ``None`` if one of them needs the
        record-by-record path (:meth:`read_batch`, which says what is wrong with it).

        The records are copied from the maps into one buffer, their framing and CRCs checked
        with a few numpy calls for all of them, and their features taken by one walk of the
        buffer (:mod:`~headrace.readers.tfrecord_scan`; a feature it cannot take comes from
        protobuf). Byte-string features are views of that buffer. Groups past ``_READ_BYTES``
        bytes (all but the first) are left out of the result.
        """
        indices = list(itertools.chain.from_iterable(groups))
        n = len(indices)
        if n < 2:
            return None
        at = np.fromiter(indices, np.int64, n)
        fids, offsets, sizes = (a[at] for a in self._where_np)
        ends = sizes.cumsum()  # (each record's end in the buffer below)
        if ends[-1] > _READ_BYTES and len(groups) > 1:  # fewer groups, within the bound
            last = np.cumsum([len(g) for g in groups]) - 1
            keep = max(1, int(np.searchsorted(ends[last], _READ_BYTES, "right")))
            groups, n = groups[:keep], int(last[keep - 1]) + 1
            fids, offsets, sizes, ends = fids[:n], offsets[:n], sizes[:n], ends[:n]
        try:
            files = {fid: self.files.get(fid) for fid in np.unique(fids).tolist()}
            limit = np.zeros(max(files) + 1, np.int64)
            limit[list(files)] = [f.size for f in files.values()]
            if np.count_nonzero(offsets + sizes > limit[fids]):
                return None  # (a truncated file: read_batch names the record)
            views = {k: f.view if f.view is not None else _Pread(f.fd) for k, f in files.items()}
            parts = [
                views[f][a:b]
                for f, a, b in zip(fids.tolist(), offsets.tolist(), (offsets + sizes).tolist())
            ]
        except OSError:  # read_batch says what went wrong
            return None
        buf = np.frombuffer(b"".join([*parts, bytes(PAD)]), np.uint8)
        del parts
        if len(buf) != ends[-1] + PAD:  # a short positional read: the file shrank
            return None
        starts = ends - sizes
        if not self._framing_ok(buf, starts, ends):
            return None
        columns = self._walk(buf, starts + HEADER, ends - 4)
        if columns is None:
            return None
        rows = list(zip(*columns))
        out, k = [], 0
        for g in groups:
            out.append(rows[k : k + len(g)])
            k += len(g)
        return out  # type: ignore[return-value]

    def _framing_ok(self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> bool:
        """Whether every record's length agrees with the index and both its CRCs match."""
        head = buf[starts[:, None] + _HEAD_BYTES]
        lengths = head[:, :8].copy().view("<u8").ravel().astype(np.int64)
        length_crcs = head[:, 8:].copy().view("<u4").ravel()
        if np.count_nonzero(lengths + FRAMING != ends - starts):
            return False
        head_crcs = self._head_crcs
        known = np.fromiter(map(head_crcs.get, lengths.tolist(), itertools.repeat(-1)), np.int64)
        for j in (known != length_crcs).nonzero()[0].tolist():  # lengths not seen yet
            if mask_crc(self._crc(head[j, :8])) != length_crcs[j]:
                return False
            if len(head_crcs) < _HEAD_CRC_CACHE:
                head_crcs[int(lengths[j])] = int(length_crcs[j])
        data_ends = ends - 4
        stored = buf[data_ends[:, None] + _CRC_BYTES].copy().view("<u4").ravel()
        crc = self._crc
        computed = np.fromiter(
            map(crc, [buf[a:b] for a, b in zip((starts + HEADER).tolist(), data_ends.tolist())]),
            np.int64,
            len(starts),
        )
        return not np.count_nonzero(mask_crc(computed) != stored)

    def _walk(
        self, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> list[list[Any]] | None:
        """Every feature of the records ``buf[starts[i]:ends[i]]``, or ``None`` when one of
        them needs the record-by-record path (not an ``Example``, or a feature with a problem
        to report)."""
        try:
            scan = ExampleBatch.walk(buf, starts, ends)
            walked = [scan.extract(name, f) for name, f in self.features] if scan else None
        except (IndexError, ValueError):  # (a layout the checks missed: protobuf says)
            return None
        if walked is None:
            return None
        columns: list[list[Any]] = []
        fmaps: list[Any] | None = None
        for column, extract in zip(walked, self.extractors):
            if column is None:
                if fmaps is None:
                    records = [memoryview(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
                    fmaps = self._parse_together(records)
                    if fmaps is None:
                        try:
                            fmaps = [self._parse(r).features.feature for r in records]
                        except Exception:  # protobuf's DecodeError: read_batch names the record
                            return None
                column = extract(fmaps)
                if str in map(type, column):
                    return None
            columns.append(column)
        return columns

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        return self.read_batch([index], False)[0]  # type: ignore[return-value]

    def _parse_together(self, records: list[memoryview]) -> list[Any] | None:
        """The feature maps of several records parsed in one protobuf call (each framed as an
        element of a repeated ``Example`` field); ``None`` if one of them does not parse."""
        total = sum(map(len, records))
        if len(records) < 2 or total > _JOIN_MAX or total > _JOIN_MEAN * len(records):
            return None
        heads = self._field_heads
        parts: list[Any] = []
        for record in records:
            n = len(record)
            head = heads.get(n)
            if head is None:
                head = _field_head(n)
                if len(heads) < _HEAD_CRC_CACHE:
                    heads[n] = head
            parts += (head, record)
        try:
            examples = self._parse_many(b"".join(parts)).examples
        except Exception:  # protobuf's DecodeError
            return None
        return list(map(_FEATURE_MAP, examples))


def _field_head(n: int) -> bytes:
    """The tag (field 1, length-delimited) and the varint length ``n`` that frame a field."""
    out = bytearray(b"\x0a")
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


class _Pread:
    """``_Pread(fd)[a:b]``: bytes ``a`` to ``b`` of a file read with one positional read (the
    slicing of a map, for files read without one)."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __getitem__(self, span: slice) -> bytes:
        return os.pread(self.fd, span.stop - span.start, span.start)


@dataclass(frozen=True)
class _FileOrderPlan(EpochPlan):
    """``shuffle_after_epoch``: every data epoch visits the files in a new order (the same on
    every rank), reading each file's records in sequence; the shard is taken from that order."""

    file_starts: tuple[int, ...] = ()
    file_seed: int = 0

    def order(self, epoch: int, pad: bool) -> np.ndarray:
        starts = self.file_starts
        key = (self.file_seed & (2**64 - 1)) | (epoch << 64)
        perm = np.random.Generator(np.random.Philox(key=key)).permutation(len(starts) - 1)
        base = np.concatenate(
            [np.arange(starts[f], starts[f + 1]) for f in perm] or [np.arange(0)]
        ).astype(np.int64)
        lo, hi = sh.shard_bounds(self.size, self.num_shards, self.shard_id)
        idx = base[lo:hi]
        if self.random_shuffle:
            idx = idx[self._permutation(len(idx), epoch, 1)]
        if pad and len(idx):
            extra = sh.padded_shard_size(self.size, self.num_shards) - len(idx)
            idx = np.concatenate([idx, np.full(extra, idx[-1], idx.dtype)])
        return idx


def _paths(value: Any, name: str) -> list[str]:
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    if not isinstance(value, Sequence) or not value:
        raise InvalidTypeError(
            f"{_WHAT}: {name} must be a path or a non-empty list of paths (got {value!r})."
        )
    out = []
    for p in value:
        if not isinstance(p, (str, bytes, os.PathLike)):
            raise InvalidTypeError(f"{_WHAT}: {name} must hold paths (got {p!r}).")
        out.append(os.fsdecode(p))
    return out


def _features(value: Any) -> dict[str, Feature]:
    if not isinstance(value, Mapping) or not value:
        raise InvalidTypeError(
            f"{_WHAT}: features must be a non-empty dict of name -> tfrecord.FixedLenFeature / "
            f"tfrecord.VarLenFeature (got {value!r})."
        )
    out = {}
    for name, f in value.items():
        if isinstance(name, str) and type(f).__module__.startswith("nvidia.dali"):
            mine = headrace_feature(f)
            if mine is None:
                raise InvalidTypeError(
                    f"{_WHAT}: features[{name!r}] is a feature of nvidia.dali.tfrecord made "
                    "before `import headrace` (or one headrace does not support); its settings "
                    "cannot be read back from Python. Import headrace first, or make it with "
                    "headrace.tfrecord: `import headrace.tfrecord as tfrec` takes the same calls "
                    "(tfrec.FixedLenFeature(shape, tfrec.int64, default), tfrec.VarLenFeature)."
                )
            f = mine
        if not isinstance(name, str) or not isinstance(f, Feature):
            raise InvalidTypeError(
                f"{_WHAT}: features[{name!r}] must map a str to a headrace.tfrecord Feature "
                f"(made by tfrecord.FixedLenFeature / tfrecord.VarLenFeature; got {f!r})."
            )
        out[name] = f
    return out


class TFRecord(Reader):
    """Read ``tf.train.Example`` records from TFRecord files; one output per feature.

    Each step yields a ``dict`` from feature name to a :class:`Tensor` (sample mode) or a
    :class:`Batch` (``batch_size`` given), in the order of ``features``: ``int64`` features as
    int64, ``float32`` as float32, ``string`` features as the bytes (1-D uint8, read-only) of
    the string (a view of a buffer shared by the records read together; copy it to keep one
    alone for long).
    Records are read several batches at a time (up to 512 records and 32 MiB), so that one
    numpy walk of their wire format takes every feature of all of them; the records, their
    order, errors and the reader's position are those of reading one batch at a time.
    Records are numbered across the files in the order given; sharding and shuffling work on
    those numbers.

    Parameters
    ----------
    max_batch_size, name, device, num_inputs
        As every reader (``max_batch_size`` is the default ``next_epoch`` batch size).
    path : str, os.PathLike or list of them
        The TFRecord files.
    index_path : str, os.PathLike or list of them, optional
        One index file per file of ``path`` (``offset size`` lines, as ``tfrecord2idx`` writes).
        Without it (or for an index file that does not exist) each file is scanned once and its
        index cached next to it (``<file>.headrace-idx``) or under ``$HEADRACE_CACHE``, keyed
        by the file's size, modification time and inode so a changed file is scanned again.
    features : dict of str to Feature
        What to extract: see :mod:`headrace.tfrecord`. A record that lacks a fixed-length
        feature yields its default (no default: an error); a missing variable-length feature
        yields an empty array. A feature of the wrong type or size is an error naming the file
        and the record's byte offset.
    shuffle_after_epoch : bool
        Visit the files in a new order every epoch (the same on every rank), reading each file
        in sequence; combines with ``random_shuffle``, excludes ``stick_to_shard``.
    shuffle_after_epoch_seed : int, optional
        Seed of that file order (default: a fixed seed, the same order in every run).
    dont_use_mmap : bool
        Read records with positional reads instead of through a memory map of each file (use
        it for files that may be rewritten while being read: a mapped file that shrinks under
        the reader makes the process fail).
    use_o_direct, lazy_init, read_ahead, skip_cached_images, tensor_init_bytes
        Accepted; they do not change what is read (reads go through the page cache; the index
        is loaded at construction).
    **kwargs
        Common reader arguments: ``shard_id``, ``num_shards``, ``stick_to_shard``,
        ``pad_last_batch``, ``random_shuffle``, ``seed``, ``prefetch_queue_depth``,
        ``enable_checkpointing``, keyword-only ``last_batch`` and ``on_error`` (``"skip"``
        drops corrupt records with a warning and counts them in ``get_metadata()["skipped"]``).

    Examples
    --------
    >>> import os, tempfile
    >>> import headrace.tfrecord as tfrec
    >>> from headrace.readers import TFRecord
    >>> from headrace.readers._example_proto import example_class
    >>> from headrace.readers.tfrecord_index import masked_crc
    >>> path = os.path.join(tempfile.mkdtemp(), "train.tfrecord")
    >>> with open(path, "wb") as f:
    ...     for label in (3, 5):
    ...         ex = example_class()()
    ...         ex.features.feature["label"].int64_list.value.append(label)
    ...         data = ex.SerializeToString(); head = len(data).to_bytes(8, "little")
    ...         for part in (head, masked_crc(head), data, masked_crc(data)):
    ...             _ = f.write(part.to_bytes(4, "little") if isinstance(part, int) else part)
    >>> r = TFRecord(path=path, features={"label": tfrec.FixedLenFeature([1], tfrec.int64, -1)})
    >>> [[int(t.item()) for t in out["label"].tensors] for out in r.next_epoch(batch_size=2)]
    [[3, 5]]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        path: Any = None,
        index_path: Any = None,
        features: Mapping[str, Feature] | None = None,
        shuffle_after_epoch: bool = False,
        shuffle_after_epoch_seed: int | None = None,
        use_o_direct: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        if path is None:
            raise MissingArgumentError(f"{_WHAT}: path (the TFRecord files) is required.")
        if features is None:
            raise MissingArgumentError(
                f"{_WHAT}: features (a dict of name -> tfrecord.FixedLenFeature / VarLenFeature) "
                "is required."
            )
        if shuffle_after_epoch and self._stick_to_shard:
            raise InvalidArgumentError(
                f"{_WHAT}: shuffle_after_epoch cannot be combined with stick_to_shard."
            )
        if shuffle_after_epoch_seed is not None and (
            isinstance(shuffle_after_epoch_seed, bool)
            or not isinstance(shuffle_after_epoch_seed, (int, np.integer))
        ):
            raise InvalidTypeError(
                f"{_WHAT}: shuffle_after_epoch_seed must be an integer "
                f"(got {shuffle_after_epoch_seed!r})."
            )
        self._file_shuffle = bool(shuffle_after_epoch)
        self._file_seed = (
            _DEFAULT_FILE_SHUFFLE_SEED
            if shuffle_after_epoch_seed is None
            else int(shuffle_after_epoch_seed) & (2**64 - 1)
        )
        feats = _features(features)
        paths = _paths(path, "path")
        indexes = None if index_path is None else _paths(index_path, "index_path")
        if indexes is not None and len(indexes) != len(paths):
            raise InvalidArgumentError(
                f"{_WHAT}: {len(paths)} files in path but {len(indexes)} in index_path; give "
                "one index file per TFRecord file."
            )
        crc32c_module(), example_class()  # a missing extra fails here, naming it
        self._outputs = tuple((_DTYPES[f.type], None) for f in feats.values())
        self._names = tuple(feats)
        all_off, all_size, file_ids, starts = [], [], [], [0]
        for fid, p in enumerate(paths):
            if not os.path.isfile(p):
                raise MissingFileError(2, f"{_WHAT}: TFRecord file not found", p)
            idx = indexes[fid] if indexes is not None else None
            if idx is not None and os.path.isfile(idx):
                offsets, sizes = read_index(idx, _WHAT)
            else:
                offsets, sizes, problem = load_or_build_index(p, _WHAT)
                if problem is not None:
                    if not self._skip:
                        raise TFRecordError(problem, p)
                    warnings.warn(
                        f"{problem} The rest of the file is skipped (on_error='skip').",
                        stacklevel=2,
                    )
            all_off.append(offsets)
            all_size.append(sizes)
            file_ids.append(np.full(len(offsets), fid, np.int32))
            starts.append(starts[-1] + len(offsets))
        self._file_starts = tuple(starts)
        self._dataset = _TFRecordDataset(
            paths,
            np.concatenate(file_ids),
            np.concatenate(all_off),
            np.concatenate(all_size),
            np.asarray(starts[:-1], np.int64),
            feats,
            self._skip,
            use_mmap=not kwargs.get("dont_use_mmap"),
        )
        self._finish_init()

    def _plan(self) -> EpochPlan:
        plan = super()._plan()
        if not self._file_shuffle:
            return plan
        return _FileOrderPlan(
            **{k: getattr(plan, k) for k in plan.__dataclass_fields__},
            file_starts=self._file_starts,
            file_seed=self._file_seed,
        )

    def _wrap(
        self, samples: Sequence[tuple[np.ndarray, ...]], sources: Sequence[str | None], batch: bool
    ) -> dict[str, Any]:  # type: ignore[override]
        out: dict[str, Any] = {}
        for j, (dt, layout) in enumerate(self._outputs):
            if batch:
                b = Batch._wrap([s[j] for s in samples], dt, layout, CPU)
                b._sources = sources  # (immutable: shared by the outputs)
                out[self._names[j]] = b
            else:
                t = Tensor._wrap(samples[0][j], dt, layout, CPU)
                t._source = sources[0]
                out[self._names[j]] = t
        return out

    def _close(self) -> None:
        """Close the files this reader holds open (they reopen on the next read; readers keep
        the reference's public surface, so this stays private)."""
        self._dataset.files.close()


__all__ = ["TFRecord", "TFRecordError"]
