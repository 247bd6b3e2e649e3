"""Reading byte ranges of a set of files opened once: positional reads or memory maps.

:class:`PositionalFiles` copies each range into a fresh array with one ``pread``;
:class:`MappedFiles` maps each file once (private copy-on-write mapping) and returns arrays that
view the mapping, so a read costs no system call and no copy (the reference's default; its
``dont_use_mmap=True`` selects the positional reads).
"""

from __future__ import annotations

import mmap
import os
import threading
import time

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


class MappedFiles(PositionalFiles):
    """Like :class:`PositionalFiles`, but ``read`` returns writable views of a private mapping
    of the file (writes never reach the file). A file that shrank since it was mapped raises
    ``EOFError`` instead of touching pages past its end.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(bytes(range(8)))
    >>> files = MappedFiles([f.name])
    >>> a = files.read(0, 2, 4); a[0] = 99
    >>> a.tolist(), files.read(0, 2, 4).tolist(), open(f.name, "rb").read()[2]
    ([99, 3, 4, 5], [99, 3, 4, 5], 2)
    """

    #: How long a file's checked size is trusted (seconds): one ``fstat`` per file per batch,
    #: not per sample (the check is racy either way; it catches files rewritten between reads).
    SIZE_TTL = 0.005

    def __init__(self, paths: list[str]) -> None:
        super().__init__(paths)
        self._maps: dict[int, mmap.mmap | None] = {}
        self._sizes: dict[int, tuple[int, float]] = {}  # file -> (size on disk, when checked)

    def _holds(self, i: int, end: int) -> bool:
        """Whether file ``i`` holds ``end`` bytes on disk now (its size checked at most
        :attr:`SIZE_TTL` ago, or now when ``end`` is past what was seen)."""
        seen = self._sizes.get(i)
        now = time.monotonic()
        if seen is not None and end <= seen[0] and now - seen[1] < self.SIZE_TTL:
            return True
        size = os.fstat(self._fd(i)).st_size
        self._sizes[i] = (size, now)
        return end <= size

    def _map(self, i: int) -> mmap.mmap | None:
        try:
            return self._maps[i]
        except KeyError:
            pass
        fd = self._fd(i)
        size = os.fstat(fd).st_size
        m = mmap.mmap(fd, size, access=mmap.ACCESS_COPY) if size else None
        with self._lock:
            return self._maps.setdefault(i, m)

    def mapping(self, i: int, end: int) -> mmap.mmap | None:
        """The mapping of file ``i``, checked to hold ``end`` bytes (now, on disk too)."""
        m = self._map(i)
        if end > (len(m) if m is not None else 0) or not self._holds(i, end):
            raise EOFError(f"{self.paths[i]}: the file is shorter than {end} bytes")
        return m

    def read(self, i: int, offset: int, size: int, dtype: np.dtype | type = np.uint8) -> np.ndarray:
        m = self._map(i)
        dt = np.dtype(dtype)
        if size == 0:
            return np.empty(0, dt)
        end = offset + size
        if m is None or end > len(m) or not self._holds(i, end):
            raise EOFError(f"{self.paths[i]}: {size} bytes at offset {offset} past the end")
        return np.frombuffer(m, dt, size // dt.itemsize, offset)

    def close(self) -> None:
        self._maps = {}  # mappings are released when the last array viewing them goes
        super().close()


def open_files(paths: list[str], use_mmap: bool) -> PositionalFiles:
    """Mapped files, or positional reads when ``use_mmap`` is false."""
    return MappedFiles(paths) if use_mmap else PositionalFiles(paths)


__all__ = ["MappedFiles", "PositionalFiles", "open_files"]
