"""Shared-memory slots that carry a worker's batch outputs to the loader, never pickled.

Each worker owns a small ring of *slots*; the parent says in every task which slot to fill and
only reuses a slot after it has copied the previous batch out of it, so a slot is never written
while it is read. A slot is a file in ``/dev/shm`` (POSIX shared memory; the temporary folder
where that does not exist) mapped by both processes. The worker creates a slot's file the first
time it needs it and replaces it by a larger one when a batch does not fit; every file is named
``<prefix>-w<worker>-s<slot>-<generation>`` after a prefix unique to the loader, so the parent
removes all of them when it closes, even those of a worker that died.

Examples
--------
>>> import torch
>>> prefix = new_prefix()
>>> writer, reader = SlotWriter(prefix, worker=0), SlotReader()
>>> meta = writer.write(0, [torch.arange(6).view(2, 3), torch.ones(2, dtype=torch.bfloat16)])
>>> [t.tolist() for t in reader.read(meta)]
[[[0, 1, 2], [3, 4, 5]], [1.0, 1.0]]
>>> writer.close(); reader.close(); remove_all(prefix)  # the slot's file
1
"""

from __future__ import annotations

import glob
import mmap
import os
import secrets
import tempfile
from typing import Any

_ALIGN = 64
_MIN_SLOT = 1 << 20


def shm_dir() -> str:
    """Where slot files live: ``/dev/shm`` when present, else the temporary folder."""
    return "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


def new_prefix() -> str:
    """A file-name prefix unique to one loader (process id + random token)."""
    return f"headrace-{os.getpid()}-{secrets.token_hex(4)}"


def remove_all(prefix: str) -> int:
    """Delete every slot file of ``prefix``; returns how many there were."""
    n = 0
    for path in glob.glob(os.path.join(shm_dir(), glob.escape(prefix) + "-*")):
        try:
            os.unlink(path)
            n += 1
        except FileNotFoundError:
            pass
    return n


def _map(path: str, size: int, create: bool) -> mmap.mmap:
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        if create:
            os.ftruncate(fd, size)
        return mmap.mmap(fd, size)
    finally:
        os.close(fd)


def _nbytes(t: Any) -> int:
    return int(t.numel()) * int(t.element_size())


class SlotWriter:
    """The worker's side: writes a list of CPU torch tensors into a slot, returns the metadata
    (file name, dtype, shape, offset of every tensor) the parent needs to read them."""

    def __init__(self, prefix: str, worker: int) -> None:
        self.prefix, self.worker = prefix, worker
        self._maps: dict[int, tuple[str, mmap.mmap]] = {}
        self._generation = 0

    def _slot(self, slot: int, need: int) -> tuple[str, mmap.mmap]:
        cur = self._maps.get(slot)
        if cur is not None and len(cur[1]) >= need:
            return cur
        if cur is not None:  # too small: replace it (the parent maps the new name)
            cur[1].close()
            try:
                os.unlink(os.path.join(shm_dir(), cur[0]))
            except FileNotFoundError:
                pass
        size = max(_MIN_SLOT, -(-need // _MIN_SLOT) * _MIN_SLOT)
        self._generation += 1
        name = f"{self.prefix}-w{self.worker}-s{slot}-{self._generation}"
        self._maps[slot] = (name, _map(os.path.join(shm_dir(), name), size, create=True))
        return self._maps[slot]

    def write(self, slot: int, tensors: list[Any]) -> tuple[str, list[tuple[str, tuple, int]]]:
        import torch

        layout, offset = [], 0
        for t in tensors:
            layout.append((str(t.dtype).removeprefix("torch."), tuple(t.shape), offset))
            offset += -(-_nbytes(t) // _ALIGN) * _ALIGN
        name, buf = self._slot(slot, offset)
        for t, (_, _, off) in zip(tensors, layout):
            n = _nbytes(t)
            if n:
                dst = torch.frombuffer(buf, dtype=torch.uint8, count=n, offset=off)
                dst.copy_(t.contiguous().view(-1).view(torch.uint8))
        return name, layout

    def close(self) -> None:
        for _, m in self._maps.values():
            m.close()
        self._maps.clear()


class SlotReader:
    """The parent's side: maps slot files by name and copies tensors out of them."""

    def __init__(self) -> None:
        self._maps: dict[str, mmap.mmap] = {}
        self._by_slot: dict[tuple[int, int], str] = {}

    def read(
        self, meta: tuple[str, list[tuple[str, tuple, int]]], key: tuple[int, int] = (0, 0)
    ) -> list[Any]:
        """Fresh tensors holding a copy of the slot's contents (the slot is then free)."""
        import torch

        name, layout = meta
        old = self._by_slot.get(key)
        if old is not None and old != name:  # the worker replaced the slot by a larger one
            self._maps.pop(old).close()
        self._by_slot[key] = name
        buf = self._maps.get(name)
        if buf is None:
            path = os.path.join(shm_dir(), name)
            buf = self._maps[name] = _map(path, os.path.getsize(path), create=False)
        out = []
        for dtype_name, shape, off in layout:
            dtype = getattr(torch, dtype_name)
            t = torch.empty(shape, dtype=dtype)
            n = _nbytes(t)
            if n:
                src = torch.frombuffer(buf, dtype=torch.uint8, count=n, offset=off)
                t.view(-1).view(torch.uint8).copy_(src)
            out.append(t)
        return out

    def close(self) -> None:
        for m in self._maps.values():
            try:
                m.close()
            except BufferError:  # pragma: no cover - a view still exported
                pass
        self._maps.clear()
        self._by_slot.clear()


__all__ = ["SlotReader", "SlotWriter", "new_prefix", "remove_all", "shm_dir"]
