"""The ``.npy`` format: header parsing, regions of interest, and reading arrays from files or bytes.

The header (magic, version, a Python-literal dict with ``descr``, ``fortran_order`` and
``shape``) is parsed here, checked against the bytes that follow it, and the data is viewed in
place (``mmap`` for files) so a region of interest copies only what it covers. Outputs are
always C-ordered and in native byte order: a Fortran-ordered file gives the same logical array
as ``np.load``, a big-endian one is byte-swapped.

Supported element types: bool, signed and unsigned integers (8 to 64 bits), float16, float32
and float64. Complex, structured, object and string arrays are refused with a
:class:`NpyFormatError`.

Examples
--------
>>> import io, numpy as np
>>> from headrace.codecs import npy
>>> buf = io.BytesIO(); np.save(buf, np.arange(6, dtype=np.int16).reshape(2, 3))
>>> npy.decode(buf.getvalue()).tolist()
[[0, 1, 2], [3, 4, 5]]
>>> roi = npy.Roi(start=(0, 1), shape=(2, 1))
>>> npy.decode(buf.getvalue(), roi=roi).tolist()
[[1], [4]]
"""

from __future__ import annotations

import ast
import functools
import math
import mmap
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace._core.errors import DecodeError, InvalidArgumentError

MAGIC = b"\x93NUMPY"
#: Bytes read first from a file: the header and, for small files, all of the data.
FIRST_READ = 4096
_MAX_HEADER = 1 << 20  # a header this large is not a real .npy file
#: A ROI whose stored bytes span at most this much is read with one ``pread``; larger spans
#: are memory mapped so only the pages holding the ROI are touched.
SPAN_READ_MAX = 1 << 20
_FAST = re.compile(
    r"\{'descr': '([<>|=]?[a-zA-Z]\d*)', 'fortran_order': (True|False), "
    r"'shape': \(((?:\d+, ?)*\d*)\), *\}\s*\Z"
)
_KINDS = {"b": (1,), "i": (1, 2, 4, 8), "u": (1, 2, 4, 8), "f": (2, 4, 8)}
POLICIES = ("error", "trim_to_shape", "pad")


class NpyFormatError(DecodeError):
    """The bytes are not a readable ``.npy`` array (bad magic, header, type, or truncated)."""


@dataclass(frozen=True)
class NpyHeader:
    """A parsed ``.npy`` header.

    Attributes
    ----------
    dtype : numpy.dtype
        The element type as stored (byte order included).
    shape : tuple of int
    fortran_order : bool
    offset : int
        Where the data starts, in bytes from the start of the file.
    """

    dtype: np.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    offset: int

    @property
    def nbytes(self) -> int:
        """Bytes of data the header declares."""
        return math.prod(self.shape) * self.dtype.itemsize

    def view(self, buffer: Any, base: int = 0) -> np.ndarray:
        """The logical array over ``buffer`` (data starting at ``base``), without copying."""
        order = "F" if self.fortran_order else "C"
        return np.ndarray(self.shape, self.dtype, buffer=buffer, offset=base, order=order)


def header_size(prefix: bytes, where: str = "data") -> int:
    """Total header bytes (magic to data) from the first 12 bytes of a ``.npy`` file."""
    if len(prefix) < 10 or prefix[:6] != MAGIC:
        raise NpyFormatError(f"{where}: not a .npy file (bad magic at offset 0).", source=where)
    major = prefix[6]
    if major == 1:
        return 10 + int.from_bytes(prefix[8:10], "little")
    if major in (2, 3):
        if len(prefix) < 12:
            raise NpyFormatError(f"{where}: truncated .npy header (offset 8).", source=where)
        n = int.from_bytes(prefix[8:12], "little")
        if n > _MAX_HEADER:
            raise NpyFormatError(f"{where}: .npy header of {n} bytes is too large.", source=where)
        return 12 + n
    raise NpyFormatError(
        f"{where}: unsupported .npy format version {major}.{prefix[7]} (offset 6).", source=where
    )


def _literal(text: str, where: str) -> tuple[str, bool, tuple[int, ...]]:
    m = _FAST.match(text)
    if m is not None:
        dims = tuple(int(s) for s in m.group(3).replace(" ", "").split(",") if s)
        return m.group(1), m.group(2) == "True", dims
    try:
        d = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise NpyFormatError(
            f"{where}: the .npy header is not a dict literal.", source=where
        ) from None
    if not isinstance(d, dict) or set(d) != {"descr", "fortran_order", "shape"}:
        raise NpyFormatError(
            f"{where}: the .npy header must have exactly the keys descr, fortran_order, shape.",
            source=where,
        )
    descr, fortran, shape = d["descr"], d["fortran_order"], d["shape"]
    if not isinstance(descr, str):
        raise NpyFormatError(
            f"{where}: structured arrays are not supported (descr {descr!r}).", source=where
        )
    if not isinstance(fortran, bool):
        raise NpyFormatError(f"{where}: fortran_order must be True or False.", source=where)
    if not isinstance(shape, tuple) or not all(
        isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape
    ):
        raise NpyFormatError(f"{where}: bad shape {shape!r} in the .npy header.", source=where)
    return descr, fortran, shape


def parse_header(head: bytes, file_size: int | None = None, where: str = "data") -> NpyHeader:
    """Parse the header at the start of ``head`` and check the data fits in ``file_size`` bytes.

    Parameters
    ----------
    head : bytes
        At least the whole header (see :func:`header_size`).
    file_size : int, optional
        Size of the whole file or buffer (default: ``len(head)``).
    where : str
        Names the file or sample in errors.

    Raises
    ------
    NpyFormatError
        Bad magic or header, unsupported element type, or fewer data bytes than declared.
    """
    size = len(head) if file_size is None else file_size
    offset = header_size(bytes(head[:12]), where)
    if offset > len(head):
        raise NpyFormatError(
            f"{where}: truncated .npy header: {offset} bytes declared, {size} present.",
            source=where,
        )
    try:
        text = bytes(head[10 if head[6] == 1 else 12 : offset]).decode(
            "latin1" if head[6] < 3 else "utf-8"
        )
    except UnicodeDecodeError:
        raise NpyFormatError(f"{where}: the .npy header is not text.", source=where) from None
    descr, fortran, shape = _literal(text, where)
    try:
        dt = np.dtype(descr)
    except TypeError:
        raise NpyFormatError(
            f"{where}: unknown .npy element type {descr!r}.", source=where
        ) from None
    if dt.kind not in _KINDS or dt.itemsize not in _KINDS[dt.kind]:
        raise NpyFormatError(
            f"{where}: unsupported element type {descr!r} ({dt}); supported: bool, int8-64, "
            "uint8-64, float16, float32, float64.",
            source=where,
        )
    hdr = NpyHeader(dt, tuple(shape), fortran, offset)
    if offset + hdr.nbytes > size:
        raise NpyFormatError(
            f"{where}: truncated: the header declares {hdr.nbytes} data bytes of shape "
            f"{hdr.shape} at offset {offset}, but only {max(size - offset, 0)} follow.",
            source=where,
        )
    return hdr


# --- regions of interest -----------------------------------------------------------------------
def _vec(name: str, value: Any, integral: bool) -> tuple[float, ...] | None:
    if value is None:
        return None
    arr = np.atleast_1d(np.asarray(value))
    if arr.ndim != 1 or arr.dtype.kind not in "iuf":
        raise InvalidArgumentError(f"{name} must be a number or a list of numbers (got {value!r}).")
    if integral and arr.dtype.kind == "f" and not np.all(arr == np.round(arr)):
        raise InvalidArgumentError(f"{name} must hold integers (got {value!r}).")
    return tuple(float(v) for v in arr)


def _round(v: float) -> int:
    """Round half away from zero."""
    return math.floor(v + 0.5) if v >= 0 else math.ceil(v - 0.5)


@dataclass(frozen=True)
class Roi:
    """A region of interest: start (absolute or relative), end or shape (absolute or relative),
    the axes they give, and what happens outside the array.

    Relative values are fractions of the extent. The start and the end are rounded half away
    from zero; the ROI's extent is ``end - start``.

    Examples
    --------
    >>> Roi(rel_start=(0.25,), rel_shape=(0.5,), axes=(1,)).bounds((3, 8))
    ([0, 2], [3, 6])
    """

    start: tuple[float, ...] | None = None
    end: tuple[float, ...] | None = None
    shape: tuple[float, ...] | None = None
    rel_start: tuple[float, ...] | None = None
    rel_end: tuple[float, ...] | None = None
    rel_shape: tuple[float, ...] | None = None
    axes: tuple[int, ...] = ()
    policy: str = "error"
    fill_value: float = 0.0

    @classmethod
    def from_args(
        cls,
        op: str,
        *,
        roi_start: Any = None,
        roi_end: Any = None,
        roi_shape: Any = None,
        rel_roi_start: Any = None,
        rel_roi_end: Any = None,
        rel_roi_shape: Any = None,
        roi_axes: Any = None,
        out_of_bounds_policy: str | None = None,
        fill_value: Any = None,
    ) -> Roi | None:
        """The ROI the reference's arguments describe, or ``None`` when they describe none."""
        if roi_start is not None and rel_roi_start is not None:
            raise InvalidArgumentError(f"{op}: roi_start and rel_roi_start are mutually exclusive.")
        ends = {
            "roi_end": roi_end, "rel_roi_end": rel_roi_end,
            "roi_shape": roi_shape, "rel_roi_shape": rel_roi_shape,
        }  # fmt: skip
        given = [k for k, v in ends.items() if v is not None]
        if len(given) > 1:
            raise InvalidArgumentError(f"{op}: {' and '.join(given)} are mutually exclusive.")
        policy = "error" if out_of_bounds_policy is None else str(out_of_bounds_policy)
        if policy not in POLICIES:
            raise InvalidArgumentError(
                f"{op}: out_of_bounds_policy must be one of {POLICIES} (got {policy!r})."
            )
        axes = tuple(int(a) for a in np.atleast_1d(roi_axes)) if roi_axes is not None else ()
        if len(set(axes)) != len(axes):
            raise InvalidArgumentError(f"{op}: roi_axes {list(axes)} repeats an axis.")
        fill = 0.0 if fill_value is None else float(fill_value)
        if roi_start is None and rel_roi_start is None and not given:
            return None
        return cls(
            start=_vec("roi_start", roi_start, True),
            end=_vec("roi_end", roi_end, True),
            shape=_vec("roi_shape", roi_shape, True),
            rel_start=_vec("rel_roi_start", rel_roi_start, False),
            rel_end=_vec("rel_roi_end", rel_roi_end, False),
            rel_shape=_vec("rel_roi_shape", rel_roi_shape, False),
            axes=axes,
            policy=policy,
            fill_value=fill,
        )

    def bounds(self, shape: Sequence[int], where: str = "data") -> tuple[list[int], list[int]]:
        """``(start, end)`` per dimension of an array of ``shape``, after the policy
        (``"trim_to_shape"`` clips; ``"pad"`` may leave them outside; ``"error"`` raises)."""
        ndim = len(shape)
        axes = self.axes or tuple(range(ndim))
        for a in axes:
            if not -ndim <= a < ndim:
                raise InvalidArgumentError(
                    f"{where}: roi_axes: axis {a} is out of range for a {ndim}-D array."
                )
        axes = tuple(a % ndim for a in axes) if ndim else axes
        if len(set(axes)) != len(axes):
            raise InvalidArgumentError(f"{where}: roi_axes {list(self.axes)} repeats an axis.")
        n = len(axes)

        def per_axis(name: str, v: tuple[float, ...] | None) -> tuple[float, ...] | None:
            if v is None or len(v) == n:
                return v
            if len(v) == 1:
                return v * n
            raise InvalidArgumentError(
                f"{where}: {name} has {len(v)} values for {n} ROI axes (array shape "
                f"{tuple(shape)}, roi_axes {list(self.axes) or 'all'})."
            )

        start, end, shp = (
            per_axis("roi_start", self.start), per_axis("roi_end", self.end),
            per_axis("roi_shape", self.shape),
        )  # fmt: skip
        rstart, rend, rshp = (
            per_axis("rel_roi_start", self.rel_start), per_axis("rel_roi_end", self.rel_end),
            per_axis("rel_roi_shape", self.rel_shape),
        )  # fmt: skip
        lo = [0] * ndim
        hi = list(shape)
        for j, a in enumerate(axes):
            ext = shape[a]
            s = start[j] if start else rstart[j] * ext if rstart else 0.0
            if end:
                e = end[j]
            elif rend:
                e = rend[j] * ext
            elif shp:
                e = s + shp[j]
            elif rshp:
                e = s + rshp[j] * ext
            else:
                e = float(ext)
            lo[a], hi[a] = _round(s), _round(e)
            if hi[a] < lo[a]:
                raise InvalidArgumentError(
                    f"{where}: the ROI ends before it starts on axis {a} (start {lo[a]}, "
                    f"end {hi[a]})."
                )
        if self.policy == "error":
            if any(lo[a] < 0 or hi[a] > shape[a] for a in range(ndim)):
                raise InvalidArgumentError(
                    f"{where}: the ROI [{lo}, {hi}) is outside the array of shape "
                    f"{tuple(shape)} (out_of_bounds_policy='error'; use 'trim_to_shape' or 'pad')."
                )
        elif self.policy == "trim_to_shape":
            for a in range(ndim):
                lo[a] = min(max(lo[a], 0), shape[a])
                hi[a] = min(max(hi[a], lo[a]), shape[a])
        return lo, hi


def fill_scalar(value: float, dtype: np.dtype) -> Any:
    """``value`` in ``dtype``: rounded half away from zero and saturated for integers; for
    floats, through float32 first (the reference's argument type: 0.1 fills a float64 array
    with 0.10000000149011612)."""
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(min(max(_round(value), int(info.min)), int(info.max)))
    return dtype.type(np.float32(value))


def convert(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a`` as ``dtype``: floats to integers round half away from zero, integers saturate,
    anything to bool is ``!= 0`` (NaN becomes 0 in integers)."""
    dtype = np.dtype(dtype)
    if a.dtype == dtype:
        return a
    if dtype.kind == "b":
        return a != 0
    if dtype.kind in "iu" and a.dtype.kind in "iufb":
        info = np.iinfo(dtype)
        if a.dtype.kind == "f":
            v = np.nan_to_num(a.astype(np.float64), nan=0.0)
            v = np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5))
            return np.clip(v, info.min, info.max).astype(dtype)
        if a.dtype.kind != "b":
            src = np.iinfo(a.dtype)
            if src.min < info.min or src.max > info.max:
                return np.clip(a, max(src.min, info.min), min(src.max, info.max)).astype(dtype)
    return a.astype(dtype)


def _native(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("=") if dtype.byteorder not in ("=", "|") else dtype


def extract(view: np.ndarray, roi: Roi | None, where: str = "data") -> np.ndarray:
    """A C-ordered, native-endian copy of ``view`` (its ROI, padded per the policy)."""
    if roi is None:
        out = np.empty(view.shape, _native(view.dtype))
        out[...] = view
        return out
    lo, hi = _bounds(roi, view.shape, where)
    return _cut(view, lo, hi, roi.fill_value)


@functools.lru_cache(maxsize=1024)
def _bounds_cached(roi: Roi, shape: tuple[int, ...], where: str) -> tuple[list[int], list[int]]:
    return roi.bounds(shape, where)


def _bounds(roi: Roi, shape: tuple[int, ...], where: str) -> tuple[list[int], list[int]]:
    """``roi.bounds`` memoised per shape (the same for every file of a data set)."""
    try:
        return _bounds_cached(roi, tuple(shape), "")
    except InvalidArgumentError:
        roi.bounds(shape, where)  # the same error, naming ``where``
        raise


def _cut(view: np.ndarray, lo: Sequence[int], hi: Sequence[int], fill: float) -> np.ndarray:
    """Copy ``view[lo:hi]`` (C order, native), padding with ``fill`` outside ``view``."""
    out_dt = _native(view.dtype)
    inner = tuple(slice(max(a, 0), min(max(b, 0), n)) for a, b, n in zip(lo, hi, view.shape))
    shape = tuple(b - a for a, b in zip(lo, hi))
    sub = view[inner]
    if sub.shape == shape:
        out = np.empty(shape, out_dt)
        out[...] = sub
        return out
    out = np.full(shape, fill_scalar(fill, out_dt), out_dt)
    dst = tuple(slice(s.start - a, s.start - a + k) for s, a, k in zip(inner, lo, sub.shape))
    out[dst] = sub
    return out


def decode(data: Any, roi: Roi | None = None, where: str = ".npy data") -> np.ndarray:
    """The array in ``.npy`` bytes (a ``bytes``-like object or a 1-D uint8 array).

    Raises
    ------
    NpyFormatError
        The bytes are not a readable ``.npy`` array.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        buf = memoryview(data).cast("B")
    else:
        buf = memoryview(np.ascontiguousarray(data, dtype=np.uint8).reshape(-1)).cast("B")
    hdr = parse_header(buf[:FIRST_READ], len(buf), where)
    if hdr.offset > FIRST_READ:
        hdr = parse_header(buf, len(buf), where)
    return extract(hdr.view(buf, hdr.offset), roi, where)


def read_file(
    path: str,
    roi: Roi | None = None,
    *,
    use_mmap: bool = True,
    header: NpyHeader | None = None,
) -> tuple[np.ndarray, NpyHeader]:
    """Read the array (or its ROI) stored in the ``.npy`` file ``path``.

    Without a ROI the file is read once into the output's buffer. With one, only the byte span
    between the ROI's first and last element is read (one ``pread``) when it is small
    (``SPAN_READ_MAX``) or ``use_mmap=False``; otherwise the file is memory mapped and only the
    pages holding the ROI are touched. Only the ROI is copied.
    ``header`` skips parsing when the caller cached it.

    Returns
    -------
    (array, header)

    Raises
    ------
    NpyFormatError
        Bad header, unsupported type, or a file shorter than its header declares.
    OSError
        The file cannot be opened or read.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        head = b""
        if header is None or header.offset + header.nbytes > size:
            head = os.pread(fd, FIRST_READ, 0)
            header = parse_header(head, size, path)
            if header.offset > len(head):
                head = os.pread(fd, header.offset, 0)
                header = parse_header(head, size, path)
        hdr = header
        if roi is None:
            nbytes = hdr.nbytes
            raw = np.empty(nbytes, np.uint8)
            have = head[hdr.offset : hdr.offset + nbytes]
            raw[: len(have)] = np.frombuffer(have, np.uint8)
            done = len(have)
            mv = memoryview(raw)
            while done < nbytes:
                n = os.preadv(fd, [mv[done:]], hdr.offset + done)
                if n <= 0:
                    raise NpyFormatError(
                        f"{path}: truncated while reading (offset {hdr.offset + done}).",
                        source=path,
                    )
                done += n
            view = hdr.view(raw)
            if not hdr.fortran_order and hdr.dtype.isnative:
                return view, hdr
            return extract(view, None, path), hdr
        if hdr.nbytes == 0:
            return extract(hdr.view(b""), roi, path), hdr
        lo, hi = _bounds(roi, hdr.shape, path)  # checks the ROI before reading anything
        span = _span(hdr, lo, hi)
        if span is None:  # the ROI covers no element of the array: all padding (or empty)
            return extract(hdr.view(np.zeros(hdr.nbytes, np.uint8)), roi, path), hdr
        if use_mmap and span[1] - span[0] > SPAN_READ_MAX:
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            try:
                out = _cut(hdr.view(mm, hdr.offset), lo, hi, roi.fill_value)
            finally:
                try:
                    mm.close()
                except BufferError:  # pragma: no cover - a view still alive; GC closes it
                    pass
            return out, hdr
        return _read_span(fd, hdr, roi, lo, hi, span, head, path), hdr
    finally:
        os.close(fd)


def _strides(hdr: NpyHeader) -> tuple[int, ...]:
    """Byte strides of the stored array (C or Fortran order)."""
    dims = hdr.shape if hdr.fortran_order else hdr.shape[::-1]
    out, step = [], hdr.dtype.itemsize
    for d in dims:
        out.append(step)
        step *= d
    return tuple(out if hdr.fortran_order else out[::-1])


def _span(hdr: NpyHeader, lo: list[int], hi: list[int]) -> tuple[int, int] | None:
    """Byte range (from the data start) between the first and the last stored element inside
    ``[lo, hi)``; ``None`` when no element is inside."""
    strides = _strides(hdr)
    inner_lo = [min(max(a, 0), n) for a, n in zip(lo, hdr.shape)]
    inner_hi = [min(max(b, 0), n) for b, n in zip(hi, hdr.shape)]
    if any(b <= a for a, b in zip(inner_lo, inner_hi)):
        return None
    first = sum(a * s for a, s in zip(inner_lo, strides))
    last = sum((b - 1) * s for b, s in zip(inner_hi, strides)) + hdr.dtype.itemsize
    return first, last


def _read_span(
    fd: int,
    hdr: NpyHeader,
    roi: Roi,
    lo: list[int],
    hi: list[int],
    span: tuple[int, int],
    head: bytes,
    path: str,
) -> np.ndarray:
    """Read only the bytes between the ROI's first and last element (from ``head`` when the
    first read already holds them), then extract."""
    first, last = span
    start = hdr.offset + first
    if start + (last - first) <= len(head):
        buf: Any = memoryview(head)[start : start + last - first]
    else:
        buf = np.empty(last - first, np.uint8)
        n = os.preadv(fd, [memoryview(buf)], start)
        if n != len(buf):
            raise NpyFormatError(
                f"{path}: truncated while reading (offset {start + n}).", source=path
            )
    inner_lo = [min(max(a, 0), n) for a, n in zip(lo, hdr.shape)]
    inner_hi = [min(max(b, 0), n) for b, n in zip(hi, hdr.shape)]
    sub_shape = tuple(b - a for a, b in zip(inner_lo, inner_hi))
    sub = np.ndarray(sub_shape, hdr.dtype, buffer=buf, strides=_strides(hdr))
    shifted_lo = [a - i for a, i in zip(lo, inner_lo)]
    shifted_hi = [b - i for b, i in zip(hi, inner_lo)]
    return _cut(sub, shifted_lo, shifted_hi, roi.fill_value)


__all__ = [
    "FIRST_READ",
    "POLICIES",
    "NpyFormatError",
    "NpyHeader",
    "Roi",
    "decode",
    "convert",
    "extract",
    "fill_scalar",
    "header_size",
    "parse_header",
    "read_file",
]
