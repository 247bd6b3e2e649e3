"""Shared-memory slots that carry a worker process's outputs to its parent, never pickled.

Used by :class:`headrace.pytorch.Loader` and capture-mode loops with worker processes. A slot
holds a list of arrays: NumPy arrays or CPU torch tensors, each read back as what it was.
Each worker owns a small ring of *slots*; the parent says in every task which slot to fill and
only reuses a slot after it has copied the previous batch out of it, so a slot is never written
while it is read. A slot is a file in ``/dev/shm`` (POSIX shared memory; the temporary folder
where that does not exist) mapped by both processes. The worker creates a slot's file the first
time it needs it and replaces it by a larger one when a batch does not fit; every file is named
``<prefix>-w<worker>-s<slot>-<generation>`` after a prefix unique to the loader, so the parent
removes all of them when it closes, even those of a worker that died.

Examples
--------
>>> import numpy as np, torch
>>> prefix = new_prefix()
>>> writer, reader = SlotWriter(prefix, worker=0), SlotReader()
>>> meta = writer.write(0, [torch.arange(6).view(2, 3), torch.ones(2, dtype=torch.bfloat16),
...                         np.full((2, 2), 7, np.uint8)])
>>> [t.tolist() for t in reader.read(meta)]
[[[0, 1, 2], [3, 4, 5]], [1.0, 1.0], [[7, 7], [7, 7]]]
>>> type(reader.read(meta)[2]).__name__
'ndarray'
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

import numpy as np

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


def _flat_bytes(a: Any) -> tuple[str, str, np.ndarray]:
    """``(kind, dtype name, the data as a flat uint8 NumPy array)`` of an array or tensor."""
    if isinstance(a, np.ndarray):
        return "numpy", a.dtype.str, np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    import torch  # a CPU torch tensor (bfloat16 included: viewed as bytes)

    flat = a.detach().contiguous().view(-1).view(torch.uint8).numpy()
    return "torch", str(a.dtype).removeprefix("torch."), flat


class SlotWriter:
    """The worker's side: writes a list of NumPy arrays / CPU torch tensors into a slot, returns
    the metadata (file name; kind, dtype, shape, offset of every array) the parent needs."""

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

    def write(self, slot: int, arrays: list[Any]) -> tuple[str, list[tuple[Any, ...]]]:
        flats = [_flat_bytes(a) for a in arrays]
        layout, offset = [], 0
        for a, (kind, dtype, flat) in zip(arrays, flats):
            layout.append((kind, dtype, tuple(a.shape), offset))
            offset += -(-flat.size // _ALIGN) * _ALIGN
        name, buf = self._slot(slot, offset)
        for (_, _, flat), (_, _, _, off) in zip(flats, layout):
            if flat.size:
                np.copyto(np.frombuffer(buf, np.uint8, flat.size, off), flat)
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

    def read(self, meta: tuple[str, list[tuple[Any, ...]]], key: Any = (0, 0)) -> list[Any]:
        """Fresh arrays holding a copy of the slot's contents (the slot is then free); ``key``
        names the slot (a worker may replace its file by a larger one)."""
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
        for kind, dtype_name, shape, off in layout:
            if kind == "numpy":
                a = np.empty(shape, np.dtype(dtype_name))
                flat = a.reshape(-1).view(np.uint8)
            else:
                import torch

                a = torch.empty(shape, dtype=getattr(torch, dtype_name))
                flat = a.view(-1).view(torch.uint8).numpy()
            if flat.size:
                np.copyto(flat, np.frombuffer(buf, np.uint8, flat.size, off))
            out.append(a)
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
