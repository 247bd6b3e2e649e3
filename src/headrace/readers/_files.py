"""Finding the files of the readers that take ``file_root``/``file_filter``/``file_list``/``files``
(``readers.Numpy``, ``experimental.readers.Fits``): the reference's discovery rules.

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> (d / "sub").mkdir()
>>> for p in ("b.npy", "a.npy", "sub/c.npy", "skip.txt"):
...     _ = (d / p).write_bytes(b"")
>>> [pathlib.Path(p).relative_to(d).as_posix() for p in discover(str(d), "*.npy", "x")]
['a.npy', 'b.npy', 'sub/c.npy']
"""

from __future__ import annotations

import errno
import fnmatch
import os
from collections.abc import Sequence
from typing import Any

from headrace._core.errors import InvalidArgumentError, InvalidTypeError
from headrace.readers.file import FileReadError, MissingFileError


def _missing(path: str, what: str) -> FileReadError:
    return MissingFileError(errno.ENOENT, what, path)


def discover(root: str, file_filter: str, op: str) -> list[str]:
    """Files of ``root`` matching ``file_filter`` (case-sensitive glob on the name), then those
    of each direct sub-folder; folders and files in sorted order."""
    if not os.path.isdir(root):
        raise _missing(root, f"{op}: file_root does not exist or is not a folder")
    folders = [root] + [
        os.path.join(root, e.name) for e in sorted(os.scandir(root), key=lambda e: e.name)
        if e.is_dir()
    ]  # fmt: skip
    paths: list[str] = []
    for folder in folders:
        names = sorted(
            e.name
            for e in os.scandir(folder)
            if e.is_file() and fnmatch.fnmatchcase(e.name, file_filter)
        )
        paths += [os.path.join(folder, n) for n in names]
    if not paths:
        raise _missing(root, f"{op}: no files matching {file_filter!r} in file_root")
    return paths


def _list_file(file_list: str, root: str | None, op: str) -> list[str]:
    if not os.path.isfile(file_list):
        raise _missing(file_list, f"{op}: file_list does not exist")
    base = root if root is not None else os.path.dirname(os.path.abspath(file_list))
    with open(file_list, encoding="utf-8") as f:
        names = [line.strip() for line in f]
    paths = [os.path.join(base, n) for n in names if n]
    if not paths:
        raise _missing(file_list, f"{op}: file_list lists no files")
    return paths


def resolve_files(
    op: str,
    file_root: Any,
    file_filter: str,
    file_list: Any,
    files: Any,
) -> list[str]:
    """The paths of a reader from its exactly-one source: ``files``, ``file_list`` or
    ``file_root`` (relative paths of the first two start at ``file_root`` when given)."""
    root = os.fsdecode(file_root) if file_root is not None else None
    if file_list is not None and files is not None:
        raise InvalidArgumentError(f"{op}: file_list and files are mutually exclusive.")
    if files is not None:
        if isinstance(files, (str, bytes, os.PathLike)):
            files = [files]
        if not isinstance(files, Sequence):
            raise InvalidTypeError(f"{op}: files must be a list of paths (got {files!r}).")
        paths = [os.fsdecode(p) for p in files]
        if not paths:
            raise InvalidArgumentError(f"{op}: files is empty.")
        return [os.path.join(root, p) if root else p for p in paths]
    if file_list is not None:
        return _list_file(os.fsdecode(file_list), root, op)
    if root is None:
        raise InvalidArgumentError(f"{op}: give file_root, file_list or files to say what to read.")
    return discover(root, file_filter, op)


__all__ = ["discover", "resolve_files"]
