"""``readers.TFRecord``: ``tf.train.Example`` records of TFRecord files, as named features.

Records are found through index files (the reference's ``offset size`` format; built and cached
on first use when not given, see :mod:`headrace.readers.tfrecord_index`), read with one
positional read each, checked (both CRCs, the index's size), parsed with ``protobuf`` and turned
into one array per feature of ``features`` (see :mod:`headrace.tfrecord`). Needs the
``tfrecord`` extra (``pip install headrace[tfrecord]``).
"""

from __future__ import annotations

import math
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
from headrace._core.errors import InvalidArgumentError, InvalidTypeError
from headrace._core.tensor import Tensor
from headrace.readers import _sharding as sh
from headrace.readers._base import EpochPlan, Reader
from headrace.readers._example_proto import crc32c_module, example_class
from headrace.readers.file import FileReadError, MissingFileError
from headrace.readers.tfrecord_index import (
    FRAMING,
    HEADER,
    TFRecordError,
    load_or_build_index,
    read_index,
)
from headrace.tfrecord import LIST_FIELDS, Feature
from headrace.tfrecord import float32 as tf_float32
from headrace.tfrecord import int64 as tf_int64
from headrace.tfrecord import string as tf_string

_DTYPES: dict[int, DType] = {tf_int64: int64, tf_float32: float32, tf_string: uint8}
_DEFAULT_FILE_SHUFFLE_SEED = 0x7F4A_7C15  # shuffle_after_epoch without a seed: same every run
_MAX_OPEN_FILES = 64
_WHAT = "readers.TFRecord"


class _Files:
    """Open file descriptors (at most ``_MAX_OPEN_FILES``, least recently used closed first)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._open: OrderedDict[int, tuple[int, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, fid: int) -> tuple[int, int]:
        """``(fd, size)`` of file ``fid``."""
        with self._lock:
            hit = self._open.get(fid)
            if hit is not None:
                self._open.move_to_end(fid)
                return hit
            fd = os.open(self.paths[fid], os.O_RDONLY | getattr(os, "O_BINARY", 0))
            entry = (fd, os.fstat(fd).st_size)
            self._open[fid] = entry
            while len(self._open) > _MAX_OPEN_FILES:
                os.close(self._open.popitem(last=False)[1][0])
            return entry

    def close(self) -> None:
        with self._lock:
            while self._open:
                os.close(self._open.popitem()[1][0])

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


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
    ) -> None:
        self.files = _Files(paths)
        self.file_ids, self.offsets, self.sizes = file_ids, offsets, sizes
        self.first_record = first_record  # dataset index of each file's record 0
        self.features = list(features.items())
        self.warn_skips = warn_skips
        self._crc = crc32c_module().value
        self._example = example_class()

    def __len__(self) -> int:
        return len(self.offsets)

    def _where(self, index: int) -> tuple[str, int, int]:
        fid = int(self.file_ids[index])
        return self.files.paths[fid], index - int(self.first_record[fid]), int(self.offsets[index])

    def source(self, index: int) -> str:
        path, record, offset = self._where(index)
        return f"{path} (record {record} at byte offset {offset})"

    def _fail(self, index: int, what: str, exc: type[Exception] = TFRecordError) -> Exception:
        path, record, offset = self._where(index)
        message = f"{_WHAT}: {path}: record {record} at byte offset {offset}: {what}."
        if self.warn_skips:
            warnings.warn(f"{message} The record is skipped (on_error='skip').", stacklevel=2)
        if exc is TFRecordError:
            return TFRecordError(message, path, offset)
        return FileReadError(5, message, path)  # EIO

    def _masked(self, data: Any) -> int:
        c = self._crc(data)
        return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        fid, offset = int(self.file_ids[index]), int(self.offsets[index])
        size = int(self.sizes[index])
        try:
            fd, total = self.files.get(fid)
            if offset + size > total:  # never ask for more than the file holds
                raise self._fail(
                    index, f"truncated record: the index says {size} bytes, the file ends "
                    f"{total - offset} bytes after the record's start"
                )  # fmt: skip
            buf = os.pread(fd, size, offset)
        except OSError as e:
            if isinstance(e, FileReadError):
                raise
            raise self._fail(index, f"cannot read ({e.strerror or e})", OSError) from e
        if len(buf) != size:
            raise self._fail(index, f"truncated record ({len(buf)} of {size} bytes read)")
        (length,) = struct.unpack_from("<Q", buf)
        (length_crc,) = struct.unpack_from("<I", buf, HEADER - 4)
        (data_crc,) = struct.unpack_from("<I", buf, size - 4)
        raw = np.frombuffer(buf, np.uint8)  # google_crc32c takes ndarray views, not memoryviews
        if self._masked(raw[:8]) != length_crc:
            raise self._fail(index, "corrupt record header (length CRC mismatch)")
        if length + FRAMING != size:
            raise self._fail(
                index, f"the record holds {length} bytes of data but the index gives it "
                f"{size} bytes (expected {length + FRAMING}): a stale or wrong index file"
            )  # fmt: skip
        if self._masked(raw[HEADER : HEADER + length]) != data_crc:
            raise self._fail(index, "corrupt record data (data CRC mismatch)")
        try:
            example = self._example.FromString(memoryview(buf)[HEADER : HEADER + length])
        except Exception as e:  # protobuf's DecodeError
            raise self._fail(index, f"not a tf.train.Example ({e})") from None
        fmap = example.features.feature
        return tuple(self._extract(index, fmap, name, f) for name, f in self.features)

    def _extract(self, index: int, fmap: Any, name: str, f: Feature) -> np.ndarray:
        if name not in fmap:
            if not f.fixed:
                return np.empty((0, *f.shape), f.dtype)
            if f.default_value is None:
                raise self._fail(index, f"feature {name!r} is missing and has no default value")
            return f.default_value.copy()
        feature = fmap[name]
        field = LIST_FIELDS[f.type]
        kind = feature.WhichOneof("kind")
        if kind is not None and kind != field:
            raise self._fail(
                index, f"feature {name!r} holds {kind} values, `features` declares "
                f"{field.split('_')[0]}"
            )  # fmt: skip
        values = getattr(feature, field).value
        count = len(values)
        if f.type == tf_string:
            if count != 1:
                raise self._fail(index, f"feature {name!r} holds {count} byte strings, not 1")
            return np.frombuffer(values[0], np.uint8).copy()
        shape = f.shape_for(count)
        if shape is None:
            need = (
                f"{math.prod(f.shape)} (shape {list(f.shape)})"
                if f.fixed
                else f"a multiple of {math.prod(f.shape)} (partial shape {list(f.shape)})"
            )
            raise self._fail(index, f"feature {name!r} holds {count} values; expected {need}")
        if f.type == tf_float32 and count > 32:  # packed floats: one buffer copy, no iteration
            raw = getattr(feature, field).SerializeToString()
            return np.frombuffer(raw, "<f4", count, len(raw) - 4 * count).reshape(shape).copy()
        return np.fromiter(values, f.dtype, count).reshape(shape)


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
    int64, ``float32`` as float32, ``string`` features as the bytes (1-D uint8) of the string.
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
    use_o_direct, dont_use_mmap, lazy_init, read_ahead, skip_cached_images, tensor_init_bytes
        Accepted; they do not change what is read (records are read with positional reads
        through the page cache; the index is loaded at construction).
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
    >>> [out["label"].tolist() for out in r.next_epoch(batch_size=2)]
    [[[3], [5]]]
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
            raise InvalidArgumentError(f"{_WHAT}: path (the TFRecord files) is required.")
        if features is None:
            raise InvalidArgumentError(
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
        self, samples: Sequence[tuple[np.ndarray, ...]], sources: list[str | None], batch: bool
    ) -> dict[str, Any]:  # type: ignore[override]
        out: dict[str, Any] = {}
        for j, (dt, layout) in enumerate(self._outputs):
            if batch:
                b = Batch._wrap([s[j] for s in samples], dt, layout, CPU)
                b._sources = list(sources)
                out[self._names[j]] = b
            else:
                t = Tensor._wrap(samples[0][j], dt, layout, CPU)
                t._source = sources[0]
                out[self._names[j]] = t
        return out

    def close(self) -> None:
        """Close the files this reader holds open (they reopen on the next read)."""
        self._dataset.files.close()


__all__ = ["TFRecord", "TFRecordError"]
