"""The fast path of ``readers.Numpy``: files whose header is the same as the last file's.

The files of a data set usually share one header (element type, shape, order). Once a file has
been read by the general path (:func:`headrace.codecs.npy.read_file`), a :class:`FastRead` keeps
that header's bytes and everything derived from it — the data's size, the ROI's bounds, the byte
span holding the ROI, the strides, the padding — so the next files cost two reads: their header,
compared byte for byte with the kept one, and the data (or the ROI's span), straight into the
output's buffer. A file with another header, a shorter file, or a short read goes back to the
general path, which reads it (or raises its error) as before.

Examples
--------
>>> import numpy as np, os, tempfile
>>> from headrace.codecs import npy
>>> d = tempfile.mkdtemp()
>>> for k in range(2):
...     np.save(os.path.join(d, f"{k}.npy"), np.arange(12.0).reshape(3, 4) + k)
>>> roi = npy.Roi(start=(1, 1), shape=(2, 2))
>>> _, hdr = npy.read_file(os.path.join(d, "0.npy"), roi)
>>> head = open(os.path.join(d, "0.npy"), "rb").read(hdr.offset)
>>> fast = FastRead.make(head, hdr, roi, use_mmap=True)
>>> fast.read(os.path.join(d, "1.npy")).tolist()
[[6.0, 7.0], [10.0, 11.0]]
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace.codecs import npy

_OPEN = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class FastRead:
    """How to read a file whose header bytes are :attr:`head` (see the module's description)."""

    head: bytes
    hdr: npy.NpyHeader
    need: int  # the smallest file size that holds all the data the header declares
    start: int  # where the bytes to read start in the file (after the header: the data)
    count: int  # how many bytes to read
    sub_shape: tuple[int, ...]  # the part of the array those bytes hold (the ROI inside it)
    strides: tuple[int, ...]
    out_shape: tuple[int, ...] | None  # None: the whole array
    out_dtype: np.dtype
    dst: tuple[slice, ...] | None  # where the part goes in a padded output (None: no padding)
    fill: Any

    @classmethod
    def make(
        cls, head: bytes, hdr: npy.NpyHeader, roi: npy.Roi | None, use_mmap: bool
    ) -> FastRead | None:
        """The fast read of files whose header bytes are ``head`` (parsed: ``hdr``), or
        ``None`` where the general path is the better one (an empty array or ROI, a large span
        to map, a header not in the first read)."""
        if hdr.nbytes == 0 or hdr.offset > npy.FIRST_READ or len(head) != hdr.offset:
            return None
        out_dtype = npy._native(hdr.dtype)
        strides = npy._strides(hdr)
        if roi is None:
            if hdr.fortran_order or not hdr.dtype.isnative:
                return None  # (converted by the general path)
            return cls(head, hdr, hdr.offset + hdr.nbytes, hdr.offset, hdr.nbytes, hdr.shape,
                       strides, None, out_dtype, None, None)  # fmt: skip
        lo, hi = npy._bounds(roi, hdr.shape, "")
        span = npy._span(hdr, lo, hi)
        if span is None or (use_mmap and span[1] - span[0] > npy.SPAN_READ_MAX):
            return None
        inner_lo = [min(max(a, 0), n) for a, n in zip(lo, hdr.shape)]
        inner_hi = [min(max(b, 0), n) for b, n in zip(hi, hdr.shape)]
        sub_shape = tuple(b - a for a, b in zip(inner_lo, inner_hi))
        out_shape = tuple(b - a for a, b in zip(lo, hi))
        dst = None
        if sub_shape != out_shape:
            dst = tuple(slice(i - a, i - a + k) for i, a, k in zip(inner_lo, lo, sub_shape))
        return cls(head, hdr, hdr.offset + hdr.nbytes, hdr.offset + span[0], span[1] - span[0],
                   sub_shape, strides, out_shape, out_dtype, dst,
                   npy.fill_scalar(roi.fill_value, out_dtype))  # fmt: skip

    def read(self, path: str) -> np.ndarray | None:
        """The array (or its ROI) of ``path``, or ``None`` if the file is not one this read
        fits (another header, too short): read it with the general path then."""
        fd = os.open(path, _OPEN)
        try:
            if os.fstat(fd).st_size < self.need:
                return None
            head = self.head
            buf = np.empty(self.count, np.uint8)
            if self.start == len(head):  # header and data in one read
                got = bytearray(len(head))
                if os.preadv(fd, [got, buf], 0) != len(head) + self.count or got != head:
                    return None
            elif (
                os.pread(fd, len(head), 0) != head or os.preadv(fd, [buf], self.start) != self.count
            ):
                return None
        finally:
            os.close(fd)
        if self.out_shape is None:
            return buf.view(self.hdr.dtype).reshape(self.sub_shape)
        sub = np.ndarray(self.sub_shape, self.hdr.dtype, buffer=buf, strides=self.strides)
        if self.dst is None:
            return sub.astype(self.out_dtype, order="C")
        out = np.full(self.out_shape, self.fill, self.out_dtype)
        out[self.dst] = sub
        return out


__all__ = ["FastRead"]
