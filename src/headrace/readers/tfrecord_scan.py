"""Reading the requested features of a whole batch of ``tf.train.Example`` records at once.

``readers.TFRecord`` spends most of its time in per-record Python (a protobuf call per record,
then a Python object per value) while holding the GIL. This module walks the wire format of all
the records of a batch together with numpy — one step of the walk is a handful of numpy calls
on arrays of one element per record, whatever the batch size — and hands out the features
asked for as arrays, byte strings as views of the batch's buffer (no copy per record).

It is a fast path, not a second parser: it takes the layout protobuf writes (``Example`` →
``Features`` → map entries of key then value → one ``BytesList`` / ``FloatList`` /
``Int64List`` whose values are one packed field, or one byte string for a string feature)
and returns ``None`` for anything else — another field order, unknown fields, unpacked
numbers, a missing feature, a count that does not fit, a non-ASCII key — so that the caller
parses that batch with protobuf and gives its usual results and messages. Every feature's list is
checked, requested or not (numbers: whole varints / 4-byte floats; byte strings: items that tile
the list), so a record protobuf refuses is never taken. The reader's tests compare it with
protobuf on generated records.

Examples
--------
>>> import numpy as np
>>> import headrace.tfrecord as tfrec
>>> from headrace.readers._example_proto import example_class
>>> records = []
>>> for k in range(3):
...     ex = example_class()()
...     ex.features.feature["label"].int64_list.value.append(k - 1)
...     ex.features.feature["jpeg"].bytes_list.value.append(b"x" * k)
...     records.append(ex.SerializeToString())
>>> scan = ExampleBatch.of(records)
>>> [int(a[0]) for a in scan.extract("label", tfrec.FixedLenFeature([1], tfrec.int64))]
[-1, 0, 1]
>>> [a.tobytes() for a in scan.extract("jpeg", tfrec.FixedLenFeature((), tfrec.string))]
[b'', b'x', b'xx']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace.tfrecord import Feature
from headrace.tfrecord import float32 as tf_float32
from headrace.tfrecord import int64 as tf_int64
from headrace.tfrecord import string as tf_string

PAD = 512  # zero bytes after the last record: reads past a broken record stay in the buffer
_KINDS = np.zeros(256, bool)  # the tags of Feature's three list fields
_KINDS[[0x0A, 0x12, 0x1A]] = True
_TAGS = {tf_string: 0x0A, tf_float32: 0x12, tf_int64: 0x1A}  # Feature's field of each type
_MAX_KEY = 0x80  # keys of one length byte (longer: the batch goes to protobuf)
_MAX_ITEMS = 64  # byte strings per list (more: the batch goes to protobuf)


def _varints(buf: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The varints that start at positions ``at``: ``(values, positions after them)``, or
    ``None`` for one longer than 10 bytes."""
    b = buf[at]
    more = (b >= 0x80).nonzero()[0]
    if not more.size:
        return b.astype(np.int64), at + 1
    value = (b & 0x7F).astype(np.uint64)
    after = at + 1
    shift = 7
    while more.size:
        if shift > 63:
            return None
        b = buf[after[more]]
        value[more] |= (b & 0x7F).astype(np.uint64) << np.uint64(shift)
        after[more] += 1
        more = more[b >= 0x80]
        shift += 7
    return value.view(np.int64), after


def _gather_index(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Positions ``starts[i] .. starts[i] + counts[i] - 1`` of every ``i``, concatenated."""
    total = int(counts.sum())
    if not total:
        return np.empty(0, np.int64)
    first = counts.cumsum() - counts  # where each run begins in the output
    return np.arange(total, dtype=np.int64) + np.repeat(starts - first, counts)


class ExampleBatch:
    """The map entries of a batch of serialized ``Example`` records, walked together.

    Make it with :meth:`of` (records given one by one) or :meth:`walk` (records already in one
    buffer); both give ``None`` when a record is not in the plain layout. Then take each
    feature with :meth:`extract` (``None`` when the batch needs protobuf for that feature).
    """

    __slots__ = ("_buf", "_entries", "_n")

    def __init__(self, buf: np.ndarray, n: int, entries: tuple[np.ndarray, ...]) -> None:
        self._buf = buf
        self._n = n
        # all map entries of the batch: (record, key start, key length, kind, list start, end)
        self._entries = entries

    @classmethod
    def of(cls, records: Sequence[Any]) -> ExampleBatch | None:
        """Join the records (bytes-like) in one buffer and walk their map entries."""
        n = len(records)
        if not n:
            return None
        sizes = np.fromiter(map(len, records), np.int64, n)
        ends = sizes.cumsum()
        buf = np.frombuffer(b"".join([*records, bytes(PAD)]), np.uint8)
        return cls.walk(buf, ends - sizes, ends)

    @classmethod
    def walk(cls, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> ExampleBatch | None:
        """Walk the records ``buf[starts[i]:ends[i]]`` (``buf`` holds at least ``PAD`` bytes
        after the last of them)."""
        n = len(starts)
        if not n or np.count_nonzero(starts == ends):  # a record without features: protobuf
            return None
        # Example.features: field 1, length-delimited, the whole record
        got = _varints(buf, starts + 1)
        if got is None:
            return None
        length, at = got
        bad = (buf[starts] != 0x0A) | (length < 0) | (at + length != ends) | (at == ends)
        if np.count_nonzero(bad):
            return None
        steps = []
        rows = np.arange(n)
        while rows.size:
            step = _entry(buf, at[rows], ends[rows])
            if step is None:
                return None
            steps.append((rows, *step))
            entry_end = step[-1]
            at[rows] = entry_end
            rows = rows[entry_end < ends[rows]]
        entries = steps[0] if len(steps) == 1 else tuple(map(np.concatenate, zip(*steps)))
        if not _lists_ok(buf, entries[3], entries[4], entries[5]):
            return None
        return cls(buf, n, entries)

    def _spans(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``(kind, list start, list end)`` of the feature in every record, or ``None`` if a
        record lacks it or holds it twice."""
        key = np.frombuffer(name.encode(), np.uint8)
        rows, key_start, key_len, kind, list_start, list_end = self._entries
        same = (key_len == key.size).nonzero()[0]
        if key.size and same.size:
            at = key_start[same, None] + np.arange(key.size)
            same = same[np.logical_and.reduce(self._buf[at] == key, axis=1)]
        if same.size != self._n:
            return None
        order = np.full(self._n, -1)
        order[rows[same]] = same
        if np.count_nonzero(order < 0):  # a record with the key twice, another without it
            return None
        return kind[order], list_start[order], list_end[order]

    def extract(self, name: str, f: Feature) -> list[np.ndarray] | None:
        """The arrays of feature ``name`` for every record, as ``batch_extractor`` gives them,
        or ``None`` when the batch needs protobuf for it."""
        spans = self._spans(name)
        if spans is None:
            return None
        kind, start, end = spans
        buf = self._buf
        # one byte string / one packed field of numbers, up to the list's end
        got = _varints(buf, start + 1)
        if got is None:
            return None
        length, first = got
        bad = (kind != _TAGS[f.type]) | (start == end) | (buf[start] != 0x0A) | (length < 0)
        if np.count_nonzero(bad | (first + length != end)):
            return None  # values of another type, none, or not packed (protobuf says which)
        # (the walk checked every list: whole 4-byte floats, whole varints of at most 64 bits)
        if f.type == tf_float32:
            return _shaped(buf[_gather_index(first, length)].view("<f4"), length >> 2, f)
        if f.type == tf_int64:
            return _shaped_varints(buf, first, length, f)
        return [buf[a:b] for a, b in zip(first.tolist(), end.tolist())]  # read-only views


def _entry(buf: np.ndarray, at: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """One map entry of each record: ``(key start, key length, kind tag, list start, entry
    end)`` (kind 0 and an empty list for a ``Feature`` without values).

    Every position is read before it is checked (the buffer's padding keeps reads of a broken
    record inside it); one test at the end refuses a step where any record breaks the layout.
    """
    got = _varints(buf, at + 1)
    if got is None:
        return None
    length, key_tag = got
    entry_end = key_tag + length
    key_len = buf[key_tag + 1].astype(np.int64)
    key_start = key_tag + 2
    value_tag = key_start + key_len
    got = _varints(buf, value_tag + 1)
    if got is None:
        return None
    value_len, feature = got
    tag = buf[feature]
    got = _varints(buf, feature + 1)
    if got is None:
        return None
    list_len, list_start = got
    empty = value_len == 0  # a Feature without values
    # (lengths are compared with what is left, never added: a length near 2**63 would wrap)
    bad = (
        (buf[at] != 0x0A)  # entry: field 1 of Features, length-delimited
        | (length < 4)
        | (length > ends - key_tag)
        | (buf[key_tag] != 0x0A)  # key: field 1, one length byte
        | (key_len >= _MAX_KEY)
        | (buf[value_tag] != 0x12)  # value: field 2, up to the entry's end
        | (value_len < 0)
        | (feature + value_len != entry_end)
        | ~(empty | (_KINDS[tag] & (list_len >= 0) & (list_start + list_len == entry_end)))
    )
    if np.count_nonzero(bad):
        return None
    if np.count_nonzero(buf[_gather_index(key_start, key_len)] >= 0x80):
        return None  # protobuf checks keys are UTF-8; ASCII needs no check
    if np.count_nonzero(empty):
        tag = np.where(empty, 0, tag)
        list_start = np.where(empty, entry_end, list_start)
    return key_start, key_len, tag, list_start, entry_end


def _lists_ok(buf: np.ndarray, kind: np.ndarray, start: np.ndarray, end: np.ndarray) -> bool:
    """Whether every ``Feature``'s list (requested or not) is one protobuf parses: numbers as
    one packed field of whole varints / 4-byte floats, byte strings as length-delimited items
    that tile the list (at most ``_MAX_ITEMS`` each). Any other layout, valid or not, is left
    to protobuf, so that a record is refused or read the same whatever its neighbours."""
    full = start < end
    rows = (((kind == 0x12) | (kind == 0x1A)) & full).nonzero()[0]
    if rows.size:
        s, e = start[rows], end[rows]
        got = _varints(buf, s + 1)
        if got is None:
            return False
        length, first = got
        floats = kind[rows] == 0x12
        bad = (buf[s] != 0x0A) | (length < 0) | (first + length != e) | (floats & (length & 3 != 0))
        if np.count_nonzero(bad):
            return False
        ints = ~floats
        if np.count_nonzero(ints) and not _whole_varints(buf, first[ints], length[ints]):
            return False
    rows = ((kind == 0x0A) & full).nonzero()[0]
    at, e = start[rows], end[rows]
    for _ in range(_MAX_ITEMS):
        if not at.size:
            return True
        got = _varints(buf, at + 1)
        if got is None:
            return False
        length, first = got
        if np.count_nonzero((buf[at] != 0x0A) | (length < 0) | (length > e - first)):
            return False
        at = first + length
        more = at < e
        at, e = at[more], e[more]
    return not at.size


def _whole_varints(buf: np.ndarray, first: np.ndarray, length: np.ndarray) -> bool:
    """Whether each run ``buf[first:first + length]`` is whole varints within 64 bits (at most
    10 bytes, a 10th byte of 0 or 1 as negative int64 are written; others are left to
    protobuf)."""
    raw = buf[_gather_index(first, length)]
    if not np.count_nonzero(raw >= 0x80):
        return True
    last = raw < 0x80
    nonempty = length > 0
    if np.count_nonzero(~last[length.cumsum()[nonempty] - 1]):
        return False  # a list ends inside a varint
    ends = last.nonzero()[0]
    widths = np.diff(ends, prepend=-1)
    longest = int(widths.max())
    return longest < 10 or (longest == 10 and not np.count_nonzero(raw[ends[widths == 10]] > 1))


def _shaped_varints(
    buf: np.ndarray, first: np.ndarray, length: np.ndarray, f: Feature
) -> list[np.ndarray] | None:
    """Decode packed varints (int64 two's complement; whole, as :func:`_lists_ok` checked) and
    shape them per record."""
    raw = buf[_gather_index(first, length)]
    if not np.count_nonzero(raw >= 0x80):  # one byte each: 0 to 127
        return _shaped(raw, length, f)
    ends = (raw < 0x80).nonzero()[0]
    starts = np.concatenate(([0], ends[:-1] + 1))
    widths = ends - starts + 1
    shifts = (np.arange(raw.size) - np.repeat(starts, widths)) * 7
    bits = (raw & 0x7F).astype(np.uint64) << shifts.astype(np.uint64)
    values = np.bitwise_or.reduceat(bits, starts).view(np.int64)
    # values per record: the varint ends that fall within each record's run of bytes
    counts = np.diff(np.searchsorted(ends, np.concatenate(([0], np.cumsum(length))) - 1, "right"))
    return _shaped(values, counts, f)


def _shaped(values: np.ndarray, counts: np.ndarray, f: Feature) -> list[np.ndarray] | None:
    """Split the concatenated values into one array per record, shaped as ``f`` says (the
    shapes of ``batch_extractor``), or ``None`` when a record's count does not fit."""
    n = len(counts)
    shape = f.shape
    volume = math.prod(shape)
    values = values.astype(f.dtype, copy=False)
    if f.fixed:
        if np.count_nonzero(counts != volume):
            return None
        dense = values.reshape(n, *shape)
        return list(dense) if shape else [dense[i, ...] for i in range(n)]
    if not volume or np.count_nonzero(counts == 0) or np.count_nonzero(counts % volume):
        return None
    if not np.count_nonzero(counts != counts[0]):
        per = int(counts[0]) // volume
        return list(values.reshape(n, per, *shape) if shape else values.reshape(n, -1))
    ends = counts.cumsum().tolist()
    return [values[e - c : e].reshape(-1, *shape) for e, c in zip(ends, counts.tolist())]


__all__ = ["PAD", "ExampleBatch"]
