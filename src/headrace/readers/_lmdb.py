"""LMDB databases as an indexed list of records (the storage of ``readers.Caffe``/``Caffe2``).

The ``lmdb`` package (extra ``headrace[lmdb]``) is imported on first use. Each database is
opened read-only without locking; its keys are listed once, in the database's (sorted) key order,
and several databases are concatenated in the order given. Record ``i`` is then one ``get`` in a
short read transaction, safe from any thread.

A database whose data file is shorter than the pages its header declares (a truncated copy) is
refused when opened: reading it would touch memory past the end of the mapped file.

Examples
--------
>>> import pytest, tempfile
>>> lmdb = pytest.importorskip("lmdb")
>>> d = tempfile.mkdtemp()
>>> with lmdb.open(d, map_size=1 << 20) as env, env.begin(write=True) as txn:
...     _ = txn.put(b"b", b"2"); _ = txn.put(b"a", b"1")
>>> db = LMDBRecords([d], "readers.Caffe")
>>> len(db), db.get(0, bytes), db.source(1).endswith("[b'b']")
(2, b'1', True)
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from headrace._core.errors import BackendUnavailableError, InvalidTypeError
from headrace.readers.file import FileReadError, MissingFileError

T = TypeVar("T")

# py-lmdb opens an environment once per process: readers of the same database share it.
_envs: dict[str, list[Any]] = {}  # real path -> [environment, number of users]
_envs_lock = threading.Lock()
#: Environments whose readers were garbage-collected while the lock was held (a ``__del__`` run by
#: the GC inside ``_acquire``): released by the next holder of the lock, never re-entrantly.
_pending: list[list[str]] = []


def require_lmdb(op: str) -> Any:
    """Import ``lmdb`` or raise an error naming the extra to install."""
    try:
        import lmdb
    except ImportError as e:
        raise BackendUnavailableError(
            f"{op} reads LMDB databases with the 'lmdb' package, which is not installed: "
            "pip install headrace[lmdb]"
        ) from e
    return lmdb


def as_paths(op: str, path: Any) -> list[str]:
    """``path`` (a path or a list of paths, ``os.PathLike`` allowed) as a list of strings."""
    if isinstance(path, (str, bytes, os.PathLike)):
        return [os.fsdecode(path)]
    if (
        isinstance(path, Sequence)
        and path
        and all(isinstance(p, (str, bytes, os.PathLike)) for p in path)
    ):
        return [os.fsdecode(p) for p in path]
    raise InvalidTypeError(
        f"{op}: path must be a path or a non-empty list of paths to LMDB databases (got {path!r})."
    )


def _data_file(path: str) -> str:
    return os.path.join(path, "data.mdb") if os.path.isdir(path) else path


class LMDBRecords:
    """The records of one or more LMDB databases, by position.

    Parameters
    ----------
    paths : list of str
        Database folders (or data files, for databases created without a sub-folder).
    op : str
        The reader's name, used in error messages.
    read_ahead : bool
        Ask the OS to read ahead (``lmdb``'s ``readahead``).
    """

    def __init__(self, paths: list[str], op: str, read_ahead: bool = False) -> None:
        lmdb = require_lmdb(op)
        self.op = op
        self.paths = paths
        self.envs: list[Any] = []
        self.keys: list[bytes] = []
        self.db_of: list[int] = []
        self._real: list[str] = []
        self._errors = (lmdb.Error,)
        for d, path in enumerate(paths):
            env = self._acquire(lmdb, path, read_ahead)
            self.envs.append(env)
            try:
                with env.begin(buffers=False) as txn:
                    keys = list(txn.cursor().iternext(keys=True, values=False))
            except lmdb.Error as e:
                self.close()
                raise FileReadError(
                    errno.EIO, f"{op}: cannot list the records of the database ({e})", path
                ) from None
            self.keys += keys
            self.db_of += [d] * len(keys)
        if not self.keys:
            self.close()
            raise FileReadError(errno.ENODATA, f"{op}: the database holds no records", paths[0])

    def _acquire(self, lmdb: Any, path: str, read_ahead: bool) -> Any:
        """The shared environment of ``path`` (opened and checked on first use)."""
        real = os.path.realpath(path)
        with _envs_lock:
            _release_pending()
            entry = _envs.get(real)
            if entry is None:
                entry = _envs[real] = [self._open(lmdb, path, read_ahead), 0]
            entry[1] += 1
            self._real.append(real)
            return entry[0]

    def _open(self, lmdb: Any, path: str, read_ahead: bool) -> Any:
        data = _data_file(path)
        if not os.path.exists(data):
            what = "is not an LMDB database (no data.mdb)" if os.path.isdir(path) else "not found"
            raise MissingFileError(errno.ENOENT, f"{self.op}: the database {what}", path)
        try:
            env = lmdb.open(
                path,
                readonly=True,
                lock=False,
                readahead=bool(read_ahead),
                subdir=os.path.isdir(path),
                max_readers=1024,
            )
        except lmdb.Error as e:
            raise FileReadError(
                errno.EIO, f"{self.op}: cannot open the database ({e})", path
            ) from None
        need = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
        have = os.path.getsize(data)
        if need > have:
            env.close()
            raise FileReadError(
                errno.EIO,
                f"{self.op}: the database is truncated (its header declares {need} bytes of "
                f"pages, the data file has {have})",
                data,
            )
        return env

    def __len__(self) -> int:
        return len(self.keys)

    def source(self, index: int) -> str:
        """``path[key]`` of record ``index``."""
        return f"{self.paths[self.db_of[index]]}[{self.keys[index]!r}]"

    def error(self, index: int, what: str) -> FileReadError:
        """A clear error about record ``index``: the reader, the database, the record."""
        path = self.paths[self.db_of[index]]
        return FileReadError(
            errno.EIO, f"{self.op}: record {index} (key {self.keys[index]!r}): {what}", path
        )

    def get(self, index: int, parse: Callable[[Any], T]) -> T:
        """``parse(value)`` of record ``index`` (the value is only valid during the call)."""
        env = self.envs[self.db_of[index]]
        try:
            with env.begin(buffers=True) as txn:
                value = txn.get(self.keys[index])
                if value is None:
                    raise self.error(index, "the record disappeared from the database")
                return parse(value)
        except self._errors as e:
            raise self.error(index, f"cannot read the record ({e})") from None

    def close(self) -> None:
        """Release the environments (each is closed when its last reader lets it go)."""
        with _envs_lock:
            _release_pending()
            _release(self._real)
            self._real = []
            self.envs = []

    def __del__(self) -> None:
        real = getattr(self, "_real", None)
        if not real:
            return
        if _envs_lock.acquire(blocking=False):
            try:
                _release(real)
            finally:
                _envs_lock.release()
        else:  # the GC ran this inside a locked section (maybe this thread's): defer
            _pending.append(real)
        self._real = []


def _release(reals: list[str]) -> None:
    """Drop one user of each environment (``_envs_lock`` held); close those left unused."""
    for real in reals:
        entry = _envs.get(real)
        if entry is not None:
            entry[1] -= 1
            if entry[1] <= 0:
                del _envs[real]
                entry[0].close()


def _release_pending() -> None:
    while _pending:
        _release(_pending.pop())


__all__ = ["LMDBRecords", "as_paths", "require_lmdb"]
