"""``readers.File``: encoded files and integer labels from a folder tree or a file list."""

from __future__ import annotations

import errno
import fnmatch
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.dtype import int32, uint8
from headrace._core.errors import HeadraceError, InvalidArgumentError, InvalidTypeError
from headrace.codecs.readfile import read_file
from headrace.readers._base import Reader, as_path, as_paths
from headrace.readers._preshuffle import preshuffled

#: The reference's default ``file_filters``: image and audio files.
DEFAULT_FILE_FILTERS = (
    "*.jpg", "*.jpeg", "*.png", "*.bmp", "*.tif", "*.tiff", "*.pnm", "*.ppm", "*.pgm",
    "*.pbm", "*.jp2", "*.webp", "*.flac", "*.ogg", "*.wav",
)  # fmt: skip


class FileReadError(HeadraceError, OSError, RuntimeError):
    """A path of the dataset is missing or cannot be read (``filename`` names it).

    Also a ``RuntimeError``, which is what the reference raises in these cases.
    """


class MissingFileError(FileReadError, FileNotFoundError):
    """A path of the dataset does not exist."""


def _fail(path: str, what: str, code: int = errno.ENOENT) -> FileReadError:
    cls = MissingFileError if code == errno.ENOENT else FileReadError
    return cls(code, f"readers.File: {what}", path)


class _FileDataset:
    """Paths and labels; ``read(i)`` returns ``(bytes as uint8 1-D, label int32 (1,))``."""

    read_errors = (OSError,)

    def __init__(self, paths: list[str], labels: Sequence[int]) -> None:
        self.paths = paths
        self.labels = np.asarray(labels, dtype=np.int32)

    def __len__(self) -> int:
        return len(self.paths)

    def source(self, index: int) -> str:
        return self.paths[index]

    def read(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        path = self.paths[index]
        try:
            data = read_file(path)  # one read into a fresh buffer, GIL released
        except OSError as e:
            msg = f"cannot read sample {index} ({e.strerror or e})"
            raise _fail(path, msg, e.errno or errno.EIO) from e
        return data, self.labels[index : index + 1].copy()


def _matches(name: str, filters: Sequence[str], case_sensitive: bool) -> bool:
    if not case_sensitive:
        name = name.lower()
        return any(fnmatch.fnmatchcase(name, f.lower()) for f in filters)
    return any(fnmatch.fnmatchcase(name, f) for f in filters)


def scan_folder(
    root: str,
    filters: Sequence[str],
    case_sensitive: bool = False,
    dir_filters: Sequence[str] | None = None,
) -> tuple[list[str], list[int]]:
    """Files directly inside each sub-folder of ``root``; label = index of the sorted sub-folder
    (among those matching ``dir_filters`` when given).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> for c in ("dog", "cat"):
    ...     (d / c).mkdir(); _ = (d / c / "1.jpg").write_bytes(b"x")
    >>> [(pathlib.Path(p).parent.name, lab) for p, lab in zip(*scan_folder(str(d), ["*.jpg"]))]
    [('cat', 0), ('dog', 1)]
    """
    if not os.path.isdir(root):
        raise _fail(root, "file_root does not exist or is not a folder")
    classes = sorted(
        e.name
        for e in os.scandir(root)
        if e.is_dir() and (dir_filters is None or _matches(e.name, dir_filters, case_sensitive))
    )
    paths: list[str] = []
    labels: list[int] = []
    for label, cls in enumerate(classes):
        folder = os.path.join(root, cls)
        names = sorted(
            e.name
            for e in os.scandir(folder)
            if e.is_file() and _matches(e.name, filters, case_sensitive)
        )
        paths += [os.path.join(folder, n) for n in names]
        labels += [label] * len(names)
    if not paths:
        where = "sub-folders"
        if dir_filters is not None:
            where += f" matching {list(dir_filters)}"
        raise _fail(root, f"no files matching {list(filters)} in the {where} of file_root")
    return paths, labels


def parse_file_list(file_list: str, root: str | None) -> tuple[list[str], list[int]]:
    """Read a text file of ``path label`` lines; relative paths start at ``root`` (default: the
    list's own folder)."""
    if not os.path.isfile(file_list):
        raise _fail(file_list, "file_list does not exist")
    base = root if root is not None else os.path.dirname(os.path.abspath(file_list))
    paths: list[str] = []
    labels: list[int] = []
    with open(file_list, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.rsplit(maxsplit=1)
            try:
                label = int(parts[1])
            except (IndexError, ValueError):
                raise InvalidArgumentError(
                    f"readers.File: {file_list}:{lineno}: expected 'path label' with an integer "
                    f"label (got {line!r})."
                ) from None
            paths.append(os.path.join(base, parts[0]))
            labels.append(label)
    if not paths:
        raise _fail(file_list, "file_list lists no files")
    return paths, labels


def _explicit_files(files: Any, labels: Any, root: str | None) -> tuple[list[str], list[int]]:
    if isinstance(files, (str, bytes, os.PathLike)) or not isinstance(files, Sequence):
        raise InvalidTypeError(f"readers.File: files must be a list of paths (got {files!r}).")
    paths = [os.path.join(root, p) if root else p for p in as_paths(files, "files", "File")]
    if not paths:
        raise InvalidArgumentError("readers.File: files is empty.")
    if labels is None:
        return paths, list(range(len(paths)))
    labels = [int(v) for v in labels]
    if len(labels) != len(paths):
        raise InvalidArgumentError(
            f"readers.File: {len(paths)} files but {len(labels)} labels; give one label per file."
        )
    return paths, labels


class File(Reader):
    """Read files as encoded bytes (uint8, 1-D) with an int32 label of shape ``(1,)``.

    Exactly one source: ``file_root`` alone (each sub-folder is a class; labels are the indices
    of the sorted sub-folder names; files are filtered by ``file_filters``), ``file_list`` (a text
    file of ``path label`` lines, paths relative to ``file_root`` or to the list's folder), or
    ``files`` with optional ``labels`` (default: each file's index).

    Parameters
    ----------
    max_batch_size, name, device, num_inputs
        As every reader (``max_batch_size`` is the default ``next_epoch`` batch size).
    file_root : str or os.PathLike, optional
    file_list : str or os.PathLike, optional
    files : list of str or os.PathLike, optional
    labels : list of int, optional
    file_filters : list of str, optional
        Glob patterns for the files in the sub-folders of ``file_root`` (case-insensitive unless
        ``case_sensitive_filter``); default: the reference's list, :data:`DEFAULT_FILE_FILTERS`
        (images, and ``*.flac``, ``*.ogg``, ``*.wav`` audio).
    dir_filters : list of str, optional
        Glob patterns selecting the sub-folders of ``file_root`` (labels count the selected ones).
    case_sensitive_filter : bool
        Match ``file_filters`` and ``dir_filters`` case-sensitively.
    shuffle_after_epoch : bool
        Shuffle the whole dataset (before sharding) in every epoch with a permutation seeded by
        ``(shuffle_after_epoch_seed, epoch)``, the same on every rank. Excludes
        ``random_shuffle``, ``stick_to_shard``.
    shuffle_after_epoch_seed : int, optional
        Seed of that shuffle (default: ``seed`` when given, else a fixed seed, so every run and
        every rank shuffles alike).
    **kwargs
        Common reader arguments: ``shard_id``, ``num_shards``, ``stick_to_shard``,
        ``pad_last_batch``, ``random_shuffle``, ``seed``, ``prefetch_queue_depth``,
        ``enable_checkpointing``, keyword-only ``last_batch`` and ``on_error`` ...

    Examples
    --------
    >>> from headrace.readers import File
    >>> r = File(files=[__file__, __file__], labels=[3, 4])
    >>> ((data, lab),) = r.next_epoch(batch_size=2)
    >>> [int(t.item()) for t in lab], lab.shape
    ([3, 4], [(1,), (1,)])
    """

    _outputs = ((uint8, None), (int32, None))

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        file_root: str | os.PathLike[str] | None = None,
        file_list: str | os.PathLike[str] | None = None,
        files: Sequence[str | os.PathLike[str]] | None = None,
        labels: Sequence[int] | None = None,
        file_filters: Sequence[str] | str | None = None,
        dir_filters: Sequence[str] | str | None = None,
        case_sensitive_filter: bool = False,
        shuffle_after_epoch: bool = False,
        shuffle_after_epoch_seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        if shuffle_after_epoch_seed is not None:
            if isinstance(shuffle_after_epoch_seed, bool) or not isinstance(
                shuffle_after_epoch_seed, (int, np.integer)
            ):
                raise InvalidTypeError(
                    "readers.File: shuffle_after_epoch_seed must be an integer "
                    f"(got {type(shuffle_after_epoch_seed).__name__})."
                )
            if shuffle_after_epoch:
                self._seed = int(shuffle_after_epoch_seed) & ((1 << 64) - 1)
                self._seed_given = True
        if shuffle_after_epoch and (self._random_shuffle or self._stick_to_shard):
            raise InvalidArgumentError(
                "readers.File: shuffle_after_epoch cannot be combined with random_shuffle or "
                "stick_to_shard."
            )
        self._global_shuffle = bool(shuffle_after_epoch)
        root = as_path(file_root, "file_root", "File") if file_root is not None else None
        if file_list is not None and files is not None:
            raise InvalidArgumentError("readers.File: give either file_list or files, not both.")
        if labels is not None and files is None:
            raise InvalidArgumentError("readers.File: labels can only be given with files.")
        if files is not None:
            paths, labs = _explicit_files(files, labels, root)
        elif file_list is not None:
            paths, labs = parse_file_list(as_path(file_list, "file_list", "File"), root)
        elif root is not None:
            filters = [file_filters] if isinstance(file_filters, str) else file_filters
            dirs = [dir_filters] if isinstance(dir_filters, str) else dir_filters
            paths, labs = scan_folder(
                root, filters or DEFAULT_FILE_FILTERS, bool(case_sensitive_filter), dirs
            )
        else:
            raise InvalidArgumentError(
                "readers.File: give file_root, file_list or files to say what to read."
            )
        if self._random_shuffle:  # (shuffled once before sharding, as the reference)
            pairs = preshuffled(list(zip(paths, labs)), True)
            paths, labs = [p for p, _ in pairs], [lab for _, lab in pairs]
        self._dataset = _FileDataset(paths, labs)
        self._finish_init()


__all__ = ["DEFAULT_FILE_FILTERS", "File", "FileReadError", "MissingFileError"]
