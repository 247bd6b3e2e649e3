"""Positional reads into fresh numpy arrays from a set of files opened once."""

from __future__ import annotations

import os
import threading

import numpy as np


class PositionalFiles:
    """Read byte ranges of files by position; each file is opened on first use and kept open.

    ``read(i, offset, size, dtype)`` returns a new writable array holding the bytes (one read,
    no intermediate copy) and raises ``EOFError`` when the file is shorter than asked.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(bytes(range(8)))
    >>> files = PositionalFiles([f.name])
    >>> files.read(0, 2, 4).tolist(), files.read(0, 0, 8, "<u4").tolist()
    ([2, 3, 4, 5], [50462976, 117835012])
    >>> files.close()
    """

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self._fds: dict[int, int] = {}
        self._lock = threading.Lock()

    def _fd(self, i: int) -> int:
        fd = self._fds.get(i)
        if fd is None:
            with self._lock:
                fd = self._fds.get(i)
                if fd is None:
                    fd = os.open(self.paths[i], os.O_RDONLY | getattr(os, "O_BINARY", 0))
                    self._fds[i] = fd
        return fd

    def read(self, i: int, offset: int, size: int, dtype: np.dtype | type = np.uint8) -> np.ndarray:
        dt = np.dtype(dtype)
        out = np.empty(size // dt.itemsize, dt)
        view = memoryview(out.view(np.uint8)) if size else memoryview(b"")
        fd = self._fd(i)
        got = 0
        while got < size:
            if hasattr(os, "preadv"):
                n = os.preadv(fd, [view[got:]], offset + got)
            else:  # pragma: no cover - platforms without preadv
                chunk = os.pread(fd, size - got, offset + got)
                view[got : got + len(chunk)] = chunk
                n = len(chunk)
            if n == 0:
                raise EOFError(f"{self.paths[i]}: {size} bytes at offset {offset}, got {got}")
            got += n
        return out

    def size(self, i: int) -> int:
        return os.fstat(self._fd(i)).st_size

    def close(self) -> None:
        with self._lock:
            fds, self._fds = self._fds, {}
        for fd in fds.values():
            try:
                os.close(fd)
            except OSError:  # pragma: no cover
                pass

    def __del__(self) -> None:
        self.close()


__all__ = ["PositionalFiles"]
