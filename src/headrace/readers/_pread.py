"""Reading byte ranges of a set of files: positional reads or memory maps.

:class:`PositionalFiles` copies each range into a fresh array with one ``pread``;
:class:`MappedFiles` maps each file (private copy-on-write mapping) and returns arrays that
view the mapping, so a read costs no system call and no copy (the reference's default; its
``dont_use_mmap=True`` selects the positional reads).

At most :data:`MAX_OPEN` files (and as many mappings, each of which holds a descriptor) are kept
open, the first opened dropped first: a data set of thousands of shards would otherwise run into
the common limit of 1024 descriptors. A dropped file closes when no read holds it any more, and a
dropped mapping when no array views it.
"""

from __future__ import annotations

import mmap
import os
import threading
import time
from collections import OrderedDict

import numpy as np

MAX_OPEN = 128


class _Fd:
    """An open file descriptor, closed when the last holder lets it go."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:  # pragma: no cover
            pass


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
        self._fds: OrderedDict[int, _Fd] = OrderedDict()
        self._lock = threading.Lock()

    def _file(self, i: int) -> _Fd:
        """File ``i``, open (hold the result while using its descriptor)."""
        f = self._fds.get(i)
        if f is None:
            with self._lock:
                f = self._fds.get(i)
                if f is None:
                    f = _Fd(os.open(self.paths[i], os.O_RDONLY | getattr(os, "O_BINARY", 0)))
                    self._fds[i] = f
                    while len(self._fds) > MAX_OPEN:
                        self._fds.popitem(last=False)
        return f

    def read(self, i: int, offset: int, size: int, dtype: np.dtype | type = np.uint8) -> np.ndarray:
        dt = np.dtype(dtype)
        out = np.empty(size // dt.itemsize, dt)
        view = memoryview(out.view(np.uint8)) if size else memoryview(b"")
        held = self._file(i)
        fd = held.fd
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
        return os.fstat(self._file(i).fd).st_size

    def close(self) -> None:
        """Drop every open file (each closes at once unless a read in progress holds it)."""
        with self._lock:
            self._fds = OrderedDict()

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
        self._maps: OrderedDict[int, mmap.mmap | None] = OrderedDict()
        self._sizes: dict[int, tuple[int, float]] = {}  # file -> (size on disk, when checked)

    def _holds(self, i: int, end: int) -> bool:
        """Whether file ``i`` holds ``end`` bytes on disk now (its size checked at most
        :attr:`SIZE_TTL` ago, or now when ``end`` is past what was seen)."""
        seen = self._sizes.get(i)
        now = time.monotonic()
        if seen is not None and end <= seen[0] and now - seen[1] < self.SIZE_TTL:
            return True
        size = os.fstat(self._file(i).fd).st_size
        self._sizes[i] = (size, now)
        return end <= size

    def _map(self, i: int) -> mmap.mmap | None:
        try:
            return self._maps[i]
        except KeyError:
            pass
        held = self._file(i)
        size = os.fstat(held.fd).st_size
        m = mmap.mmap(held.fd, size, access=mmap.ACCESS_COPY) if size else None
        with self._lock:
            m = self._maps.setdefault(i, m)
            while len(self._maps) > MAX_OPEN:  # (arrays viewing a dropped map keep it alive)
                self._maps.popitem(last=False)
        return m

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
        self._maps = OrderedDict()  # mappings are released when the last array viewing them goes
        super().close()


def open_files(paths: list[str], use_mmap: bool) -> PositionalFiles:
    """Mapped files, or positional reads when ``use_mmap`` is false or there are more files
    than :data:`MAX_OPEN`: every array viewing a mapping keeps its file open, so a batch drawn
    from hundreds of shards would hold hundreds of descriptors (and a few batches in flight,
    more than the common limit of 1024); positional reads copy instead and keep at most
    :data:`MAX_OPEN` open.

    Examples
    --------
    >>> type(open_files(["a"], True)).__name__, type(open_files(["a"] * 1000, True)).__name__
    ('MappedFiles', 'PositionalFiles')
    """
    return MappedFiles(paths) if use_mmap and len(paths) <= MAX_OPEN else PositionalFiles(paths)


__all__ = ["MAX_OPEN", "MappedFiles", "PositionalFiles", "open_files"]
