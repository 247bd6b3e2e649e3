"""``readers.Webdataset``: samples from tar shards, one output per extension group.

A webdataset shard is a plain (uncompressed) tar archive. Consecutive members that share a
*key* — the name up to the first dot of the file name — form one sample; the rest of the file
name is the member's *extension* (``"a/0001.seg.png"`` has key ``"a/0001"`` and extension
``"seg.png"``). Members whose file name starts with a dot, and entries that are not regular
files, are ignored.

The sample list comes from the index files (``index_paths``, the reference's ``v1.1``/``v1.2``
format written by ``wds2idx``) or, without them, from one pass over the tar headers. Reads are
positional (``pread``) from files opened once, so samples can be visited in any order.
"""

from __future__ import annotations

import errno
import os
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from headrace._core.dtype import DType, from_numpy, uint8
from headrace._core.dtype import dtype as as_dtype
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, MissingArgumentError
from headrace.readers._base import EpochPlan, Reader
from headrace.readers._file_order import check_file_shuffle, file_order_plan
from headrace.readers._pread import MappedFiles, open_files
from headrace.readers._tar import BLOCK, TarMember, is_hidden, scan_tar, split_name, unsafe_name
from headrace.readers.file import FileReadError

INDEX_VERSIONS = ("v1.1", "v1.2")
SUPPORTED_DTYPES = ("u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f2", "f4", "f8")
MISSING_BEHAVIORS = ("empty", "skip", "error")


class WebdatasetFormatError(FileReadError):
    """A tar shard or its index file is malformed (``filename`` names it; the message says
    where). Also an ``OSError``, so ``on_error="skip"`` skips samples that fail to read."""


def _error(path: str, what: str) -> WebdatasetFormatError:
    return WebdatasetFormatError(errno.EIO, f"readers.Webdataset: {what}", path)


class Component(NamedTuple):
    """One member of a sample: extension, data offset and size in the shard, member name."""

    ext: str
    offset: int
    size: int
    name: str


class SampleEntry(NamedTuple):
    """One sample of a shard: its components and where it was described (for messages)."""

    components: list[Component]
    where: str


def _path_list(name: str, value: Any) -> list[str]:
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    if not isinstance(value, Sequence) or not value:
        raise InvalidTypeError(
            f"readers.Webdataset: {name} must be a path or a non-empty list of paths "
            f"(got {value!r})."
        )
    out = []
    for v in value:
        if not isinstance(v, (str, bytes, os.PathLike)):
            raise InvalidTypeError(f"readers.Webdataset: {name} holds a non-path {v!r}.")
        out.append(os.fsdecode(v))
    return out


def group_members(path: str, members: list[TarMember]) -> list[SampleEntry]:
    """Group consecutive members with the same key into samples (hidden files left out)."""
    samples: list[SampleEntry] = []
    last_key: str | None = None
    for m in members:
        if is_hidden(m.name):
            continue
        key, ext = split_name(m.name)
        if key != last_key:
            samples.append(SampleEntry([], f"{path}: member {m.name!r}"))
            last_key = key
        samples[-1].components.append(Component(ext, m.offset, m.size, m.name))
    return samples


def parse_index(index_path: str) -> list[SampleEntry]:
    """Read a webdataset index file (``v1.1``: ``ext offset size`` triples per line, ``v1.2``:
    ``ext offset size name`` quadruples), checking every field."""
    try:
        with open(index_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise _error(index_path, f"cannot read the index file ({e.strerror or e})") from e
    except UnicodeDecodeError:
        raise _error(index_path, "the index file is not UTF-8 text") from None
    head = lines[0].split() if lines else []
    if len(head) != 2 or head[0] not in INDEX_VERSIONS:
        raise _error(
            index_path,
            f"line 1: expected '<version> <sample count>' with version one of "
            f"{list(INDEX_VERSIONS)} (got {lines[0] if lines else ''!r})",
        )
    try:
        count = int(head[1])
    except ValueError:
        count = -1
    if count <= 0:
        raise _error(index_path, f"line 1: the sample count must be positive (got {head[1]!r})")
    width = 4 if head[0] == "v1.2" else 3
    body = lines[1 : 1 + count]
    if len(body) < count:
        raise _error(
            index_path, f"the header announces {count} samples, the file describes {len(body)}"
        )
    samples = []
    for lineno, line in enumerate(body, 2):
        fields = line.split()
        where = f"{index_path}: line {lineno}"
        if not fields or len(fields) % width:
            raise _error(
                index_path,
                f"line {lineno}: expected groups of {width} fields "
                f"('<ext> <offset> <size>{' <name>' if width == 4 else ''}'), got {len(fields)}",
            )
        comps = []
        for k in range(0, len(fields), width):
            ext = fields[k]
            try:
                offset, size = int(fields[k + 1]), int(fields[k + 2])
            except ValueError:
                raise _error(
                    index_path, f"line {lineno}: offset and size must be integers"
                ) from None
            if offset < 0 or size < 0 or offset % BLOCK:
                raise _error(
                    index_path,
                    f"line {lineno}: bad component offset/size ({offset}, {size}); offsets "
                    f"are non-negative multiples of {BLOCK}",
                )
            name = fields[k + 3] if width == 4 else f"<{ext} at offset {offset}>"
            comps.append(Component(ext, offset, size, name))
        samples.append(SampleEntry(comps, where))
    return samples


class _WebdatasetDataset:
    """The sample table of all shards; ``read(i)`` returns one array per output.

    Mapped shards (the default): each output views the mapping. With positional reads
    (``dont_use_mmap``), a sample whose members lie next to each other in the shard (the usual
    layout) is read with one ``pread`` covering them all; its outputs are slices of that buffer.
    """

    read_errors = (OSError,)
    _GAP = 2 * BLOCK  # per member: its header, plus the padding of the previous one

    def __init__(
        self,
        paths: list[str],
        dtypes: list[np.dtype],
        shard: np.ndarray,
        offsets: np.ndarray,
        sizes: np.ndarray,
        names: list[str],
        use_mmap: bool = True,
    ) -> None:
        self.paths = paths
        self.dtypes = dtypes
        self.shard = shard
        self.offsets = offsets
        self.sizes = sizes
        self.names = names
        self.files = open_files(paths, use_mmap)
        use_mmap = isinstance(self.files, MappedFiles)  # (many shards: positional reads)
        present = sizes >= 0
        big = np.iinfo(np.int64).max
        self.start = np.where(present, offsets, big).min(axis=1)
        end = np.where(present, offsets + sizes, 0).max(axis=1)
        total = np.where(present, sizes, 0).sum(axis=1)
        self.span = np.where(present.any(axis=1), end - self.start, -1)
        self.one_read = (self.span >= 0) & (self.span <= total + self._GAP * sizes.shape[1])
        self.one_read &= not use_mmap  # mapped: every member is a view anyway
        self.end = end.tolist()
        self.mapped = use_mmap
        self.dup = [
            len({o for o, z in zip(offs, szs) if z >= 0}) < int((np.asarray(szs) >= 0).sum())
            for offs, szs in zip(offsets.tolist(), sizes.tolist())
        ]

    def __len__(self) -> int:
        return len(self.shard)

    def source(self, index: int) -> str:
        return f"{self.paths[self.shard[index]]}:{self.names[index]}"

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        shard = int(self.shard[index])
        offs = self.offsets[index].tolist()
        sizes = self.sizes[index].tolist()
        try:
            if self.mapped and not self.dup[index]:
                m = self.files.mapping(shard, self.end[index])  # type: ignore[attr-defined]
                return tuple(
                    np.empty(0, dt) if size < 0 else np.frombuffer(m, dt, size // dt.itemsize, off)
                    for off, size, dt in zip(offs, sizes, self.dtypes)
                )
            if self.one_read[index]:
                start = int(self.start[index])
                buf = self.files.read(shard, start, int(self.span[index]))
                out = []
                for o, (off, size) in enumerate(zip(offs, sizes)):
                    if size < 0:
                        out.append(np.empty(0, self.dtypes[o]))
                        continue
                    part = buf[off - start : off - start + size]  # offsets are 512-aligned
                    if any(offs[p] == off and sizes[p] >= 0 for p in range(o)):
                        part = part.copy()  # one member feeding several outputs: no aliasing
                    out.append(part if self.dtypes[o] == np.uint8 else part.view(self.dtypes[o]))
                return tuple(out)
            out = []
            for o, (off, size) in enumerate(zip(offs, sizes)):
                dt = self.dtypes[o]
                if size < 0:
                    out.append(np.empty(0, dt))
                elif any(offs[p] == off and sizes[p] >= 0 for p in range(o)):
                    out.append(self.files.read(shard, off, size, dt).copy())
                else:
                    out.append(self.files.read(shard, off, size, dt))
            return tuple(out)
        except (OSError, EOFError) as e:
            raise _error(
                self.paths[shard],
                f"cannot read member {self.names[index]!r} of sample {index} (data at offsets "
                f"{[o for o, z in zip(offs, sizes) if z >= 0]}): {e}",
            ) from e


class Webdataset(Reader):
    """Read samples of the webdataset format from tar shards.

    Each entry of ``ext`` defines one output: the member of the sample whose extension is one
    of the entry's ``;``-separated alternatives (``"jpg;png"``), as a 1-D array of its raw bytes
    reinterpreted as that output's dtype (little-endian).

    Parameters
    ----------
    max_batch_size, name, device, num_inputs
        As every reader (``max_batch_size`` is the default ``next_epoch`` batch size).
    paths : str or os.PathLike, or list of them
        The tar shards, read in this order.
    ext : str or list of str
        One extension group per output; alternatives separated by ``;``; extensions may contain
        dots (``"seg.png"``). With several members matching one output, the first is used.
    index_paths : str or list of str, optional
        One index file per shard (written by ``wds2idx``). Without them the shards' tar headers
        are scanned once at construction.
    missing_component_behavior : {"empty", "skip", "error"}, optional
        A sample without a member for some output: that output is an empty array (default),
        the sample is left out, or construction fails naming the sample.
    dtypes : DType or list of DType, optional
        One per output (default ``uint8``); integer and float types of 1, 2, 4 or 8 bytes. A
        member whose size is not a multiple of its output's item size is an error.
    case_sensitive_extensions : bool
        Match extensions case-sensitively (default ``True``).
    shuffle_after_epoch : bool
        Visit the shards in a new order every epoch (seeded by ``shuffle_after_epoch_seed`` and
        the epoch, equal on every rank) while keeping each shard's samples in order. Excludes
        ``stick_to_shard``.
    shuffle_after_epoch_seed : int, optional
        Seed of that shard order; default: a fixed seed.
    dont_use_mmap : bool
        Read with ``pread`` into fresh arrays instead of returning views of a (private,
        copy-on-write) memory mapping of each shard. Mapping is faster on local disks. With
        more than 128 shards the reader reads with ``pread`` either way: every array viewing
        a mapping keeps its shard's file open, and batches drawn from hundreds of shards would
        exhaust the process's file descriptors (commonly 1024); at most 128 stay open.
    read_ahead, lazy_init, skip_cached_images, tensor_init_bytes, initial_fill
        Accepted for compatibility; no effect (``random_shuffle`` is a full permutation).
    **kwargs
        Common reader arguments: ``shard_id``, ``num_shards``, ``stick_to_shard``,
        ``pad_last_batch``, ``random_shuffle``, ``seed``, ``prefetch_queue_depth``,
        ``enable_checkpointing``, keyword-only ``last_batch`` and ``on_error``.

    Notes
    -----
    Malformed shards (a garbage or truncated header, a member running past the end of the file,
    a member name that is absolute or contains ``..``, a member size that does not fit its
    dtype) raise :class:`WebdatasetFormatError` naming the shard and the byte offset. With
    ``on_error="skip"`` the affected samples are left out instead (everything after a broken
    header, since the next header cannot be found), with a warning, and counted in
    ``get_metadata()["skipped"]``.

    Examples
    --------
    >>> import io, os, tarfile, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "shard-0.tar")
    >>> with tarfile.open(path, "w") as tf:
    ...     for name, data in [("a.jpg", b"JPEG"), ("a.cls", b"3"), ("b.png", b"PNG")]:
    ...         info = tarfile.TarInfo(name); info.size = len(data)
    ...         tf.addfile(info, io.BytesIO(data))
    >>> r = Webdataset(paths=path, ext=["jpg;png", "cls"])
    >>> [(np.asarray(i).tobytes(), np.asarray(c).tobytes()) for i, c in r.next_epoch()]
    [(b'JPEG', b'3'), (b'PNG', b'')]
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        paths: Any = None,
        ext: str | Sequence[str] | None = None,
        index_paths: Any = None,
        missing_component_behavior: str | None = None,
        dtypes: Any = None,
        case_sensitive_extensions: bool | None = None,
        shuffle_after_epoch: bool | None = None,
        shuffle_after_epoch_seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        self._use_mmap = not kwargs.get("dont_use_mmap")
        if paths is None:
            raise MissingArgumentError("readers.Webdataset: `paths` (the tar shards) is required.")
        if ext is None:
            raise MissingArgumentError(
                "readers.Webdataset: `ext` (one extension group per output) is required."
            )
        self._file_shuffle, self._file_seed = check_file_shuffle(
            "Webdataset", shuffle_after_epoch, shuffle_after_epoch_seed, self._stick_to_shard
        )
        self._global_shuffle = self._file_shuffle
        shards = _path_list("paths", paths)
        indexes = [] if index_paths in (None, [], ()) else _path_list("index_paths", index_paths)
        if indexes and len(indexes) != len(shards):
            raise InvalidArgumentError(
                f"readers.Webdataset: {len(indexes)} index_paths for {len(shards)} paths; give "
                "one index file per shard, or none."
            )
        groups = _ext_groups(ext, case_sensitive_extensions is not False)
        out_dtypes = _resolve_dtypes(dtypes, len(groups))
        behavior = _missing_behavior(missing_component_behavior)
        self._outputs = tuple((dt, None) for dt in out_dtypes)
        self._case_sensitive = case_sensitive_extensions is not False
        self._build(shards, indexes, groups, [dt.numpy for dt in out_dtypes], behavior)
        self._finish_init()

    def _problem(self, path: str, what: str, dropped: int) -> None:
        """An index-time problem: raise, or (``on_error="skip"``) warn and count the loss."""
        if not self._skip:
            raise _error(path, what)
        warnings.warn(
            f"readers.Webdataset: {path}: {what}; {dropped} sample(s) skipped (on_error='skip').",
            RuntimeWarning,
            stacklevel=4,
        )
        self._skipped += dropped

    def _shard_samples(self, shard: str, index: str | None) -> list[SampleEntry]:
        if not os.path.isfile(shard):
            raise _error(shard, "the shard does not exist or is not a file")
        if index is not None:
            return parse_index(index)
        members, problem = scan_tar(shard)
        samples = group_members(shard, members)
        if problem is not None:
            what = f"{problem.what} (at byte offset {problem.offset})"
            self._problem(shard, what, 1)
            # the sample the problem cuts is incomplete: leave it out (with a broken header the
            # next member's name is unknown, so the last sample read may be incomplete)
            cut = problem.member is None or (
                samples
                and split_name(problem.member)[0] == split_name(samples[-1].components[0].name)[0]
            )
            if samples and cut:
                samples.pop()
        return samples

    def _build(
        self,
        shards: list[str],
        indexes: list[str],
        groups: list[set[str]],
        dtypes: list[np.dtype],
        behavior: str,
    ) -> None:
        ext_map: dict[str, list[int]] = {}
        for o, group in enumerate(groups):
            for e in group:
                ext_map.setdefault(e, []).append(o)
        n_out = len(groups)
        rows_shard: list[int] = []
        rows_off: list[list[int]] = []
        rows_size: list[list[int]] = []
        names: list[str] = []
        starts: list[int] = []
        warned_multiple = False
        for s, shard in enumerate(shards):
            starts.append(len(rows_shard))
            file_size = os.path.getsize(shard) if os.path.isfile(shard) else 0
            for sample in self._shard_samples(shard, indexes[s] if indexes else None):
                off, size, first = [0] * n_out, [-1] * n_out, None
                bad = None
                for c in sample.components:
                    if unsafe_name(c.name):
                        bad = f"unsafe member name {c.name!r} (absolute or with '..'), refused"
                        break
                    if c.offset + c.size > file_size:
                        bad = (
                            f"member {c.name!r} ({c.size} bytes at offset {c.offset}) runs past "
                            f"the end of the shard ({file_size} bytes): truncated shard"
                        )
                        break
                    key = c.ext if self._case_sensitive else c.ext.lower()
                    for o in ext_map.get(key, ()):
                        if size[o] >= 0:
                            if not warned_multiple:
                                warnings.warn(
                                    f"readers.Webdataset: several members match output {o} in "
                                    f"{sample.where}; the first is used.",
                                    RuntimeWarning,
                                    stacklevel=3,
                                )
                                warned_multiple = True
                            continue
                        if c.size % dtypes[o].itemsize:
                            bad = (
                                f"member {c.name!r} has {c.size} bytes, not a multiple of the "
                                f"{dtypes[o].itemsize}-byte dtype of output {o}"
                            )
                            break
                        off[o], size[o] = c.offset, c.size
                        first = first or c.name
                    if bad:
                        break
                if bad:
                    self._problem(shard, f"{sample.where.removeprefix(shard + ': ')}: {bad}", 1)
                    continue
                if -1 in size:
                    if behavior == "skip":
                        continue
                    if behavior == "error":
                        missing = [o for o in range(n_out) if size[o] < 0]
                        raise InvalidArgumentError(
                            f"readers.Webdataset: {sample.where}: the sample has no member for "
                            f"output(s) {missing} (missing_component_behavior='error')."
                        )
                rows_shard.append(s)
                rows_off.append(off)
                rows_size.append(size)
                names.append(first or sample.components[0].name)
        if not rows_shard:
            raise InvalidArgumentError(
                f"readers.Webdataset: no samples in {shards} (with ext groups "
                f"{[sorted(g) for g in groups]})."
            )
        self._file_starts = starts
        self._dataset = _WebdatasetDataset(
            shards,
            dtypes,
            np.asarray(rows_shard, np.int32),
            np.asarray(rows_off, np.int64).reshape(-1, n_out),
            np.asarray(rows_size, np.int64).reshape(-1, n_out),
            names,
            self._use_mmap,
        )

    def _plan(self) -> EpochPlan:
        base = super()._plan()
        if not self._file_shuffle:
            return base
        return file_order_plan(base, self._file_starts, self._file_seed)


def _ext_groups(ext: Any, case_sensitive: bool) -> list[set[str]]:
    entries = [ext] if isinstance(ext, str) else ext
    if not isinstance(entries, Sequence) or not entries:
        raise InvalidTypeError(
            f"readers.Webdataset: ext must be a string or a non-empty list of strings (got "
            f"{ext!r})."
        )
    groups = []
    for e in entries:
        if not isinstance(e, str):
            raise InvalidTypeError(f"readers.Webdataset: ext holds a non-string {e!r}.")
        alts = {a if case_sensitive else a.lower() for a in e.split(";")}
        groups.append(alts)
    return groups


def _resolve_dtypes(dtypes: Any, n: int) -> list[DType]:
    if dtypes is None:
        return [uint8] * n
    items = list(dtypes) if isinstance(dtypes, (list, tuple)) else [dtypes]
    if len(items) != n:
        raise InvalidArgumentError(
            f"readers.Webdataset: {len(items)} dtypes for {n} outputs (ext groups); give one "
            "dtype per output."
        )
    out = []
    for d in items:
        try:
            dt = as_dtype(d)
            code = dt.numpy.str[1:] if from_numpy(dt.numpy) is dt else ""
        except (TypeError, ValueError, KeyError):
            code, dt = "", None
        if dt is None or code not in SUPPORTED_DTYPES:
            raise InvalidArgumentError(
                f"readers.Webdataset: unsupported output dtype {d!r}; supported: uint8/16/32/64, "
                "int8/16/32/64, float16/32/64."
            )
        out.append(dt)
    return out


def _missing_behavior(value: str | None) -> str:
    v = (value or "empty").lower()
    if v not in MISSING_BEHAVIORS:
        raise InvalidArgumentError(
            f"readers.Webdataset: invalid missing_component_behavior {value!r}; expected one of "
            f"{list(MISSING_BEHAVIORS)}."
        )
    return v


__all__ = ["Webdataset", "WebdatasetFormatError", "group_members", "parse_index"]
