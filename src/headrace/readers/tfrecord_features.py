"""Turning parsed ``tf.train.Example`` features into arrays, one record or a batch at a time.

:func:`record_extractor` handles one record and says what is wrong with it (a message naming
the feature); :func:`batch_extractor` handles the records of a batch together — one pass per
feature, the numbers of every record decoded by one numpy call, fixed-size features as views of
one array — and falls back to the per-record extractor for a batch it cannot take at once
(a missing feature, a count that does not fit, values of another type), so that both give the
same arrays and the same messages.

Examples
--------
>>> import headrace.tfrecord as tfrec
>>> from headrace.readers._example_proto import example_class
>>> examples = [example_class()() for _ in range(2)]
>>> for k, ex in enumerate(examples):
...     ex.features.feature["box"].float_list.value.extend([k, k, 1, 1] * (k + 1))
>>> fmaps = [ex.features.feature for ex in examples]
>>> extract = batch_extractor("box", tfrec.VarLenFeature([4], tfrec.float32, 0.0))
>>> [a.shape for a in extract(fmaps)]
[(1, 4), (2, 4)]
>>> print(record_extractor("box", tfrec.FixedLenFeature([4], tfrec.float32))(fmaps[1]))
feature 'box' holds 8 values; expected 4 (shape [4])
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from itertools import repeat
from typing import Any

import numpy as np

from headrace.tfrecord import LIST_FIELDS, Feature
from headrace.tfrecord import float32 as tf_float32
from headrace.tfrecord import string as tf_string

RecordExtractor = Callable[[Any], "np.ndarray | str"]
"""``extract(feature_map) -> array``, or a message saying what is wrong with the record."""
BatchExtractor = Callable[[list[Any]], "list[np.ndarray | str]"]
"""``extract(feature_maps) -> [array or message, one per record]``."""

_SERIALIZED_FLOATS = 32  # longer float lists are read from their serialized bytes


def record_extractor(name: str, f: Feature) -> RecordExtractor:
    """``extract(fmap) -> ndarray | str``: the feature's output, or what is wrong with it."""
    field = LIST_FIELDS[f.type]
    dtype = f.dtype
    fixed, shape = f.fixed, f.shape
    default = f.default_value
    missing_shape = (0, *shape)
    volume = math.prod(shape)
    need = (
        f"{volume} (shape {list(shape)})"
        if fixed
        else f"a multiple of {volume} (partial shape {list(shape)})"
    )

    def wrong_kind(feature: Any) -> str | None:
        kind = feature.WhichOneof("kind")
        if kind is None or kind == field:
            return None
        return f"feature {name!r} holds {kind} values, `features` declares {field.split('_')[0]}"

    def missing() -> np.ndarray | str:
        if not fixed:
            return np.empty(missing_shape, dtype)
        if default is None:
            return f"feature {name!r} is missing and has no default value"
        return default.copy()

    if f.type == tf_string:

        def extract(fmap: Any) -> np.ndarray | str:
            feature = fmap.get(name)
            if feature is None:
                return missing()
            values = feature.bytes_list.value
            if len(values) != 1:  # (values of another type leave this list empty)
                return wrong_kind(feature) or (
                    f"feature {name!r} holds {len(values)} byte strings, not 1"
                )
            return np.frombuffer(values[0], np.uint8)  # read-only: shares the fresh bytes

        return extract

    values_of = operator.attrgetter(f"{field}.value")
    one_dim = fixed and len(shape) == 1

    def extract_numbers(fmap: Any) -> np.ndarray | str:
        feature = fmap.get(name)
        if feature is None:
            return missing()
        values = values_of(feature)
        count = len(values)
        if fixed:
            if count != volume:  # (values of another type leave this list empty)
                return (
                    wrong_kind(feature) or f"feature {name!r} holds {count} values; expected {need}"
                )
            if one_dim:
                return np.fromiter(values, dtype, count)
            out_shape = shape
        else:
            if count == 0 and (problem := wrong_kind(feature)):
                return problem
            out_shape = f.shape_for(count)  # type: ignore[assignment]
            if out_shape is None:
                return f"feature {name!r} holds {count} values; expected {need}"
        if count > _SERIALIZED_FLOATS and field == "float_list":  # packed: one copy, no loop
            raw = getattr(feature, field).SerializeToString()
            arr = np.frombuffer(raw, "<f4", count, len(raw) - 4 * count)  # read-only
            return arr.reshape(out_shape)
        return np.fromiter(values, dtype, count).reshape(out_shape)

    return extract_numbers


def batch_extractor(name: str, f: Feature) -> BatchExtractor:
    """``extract(fmaps) -> [ndarray | str, ...]``: :func:`record_extractor` over a batch, with
    the usual case (every record holds the feature, with a count that fits) done at once."""
    one = record_extractor(name, f)
    field = LIST_FIELDS[f.type]
    get = operator.methodcaller("get", name)
    bytes_of, first = operator.attrgetter("bytes_list.value"), operator.itemgetter(0)

    def each(fmaps: list[Any]) -> list[np.ndarray | str]:
        return [one(fmap) for fmap in fmaps]

    if f.type == tf_string:

        def extract_bytes(fmaps: list[Any]) -> list[np.ndarray | str]:
            try:  # (map() over C callables: no Python frame per record)
                values = list(map(bytes_of, map(get, fmaps)))
            except AttributeError:  # a record without the feature
                return each(fmaps)
            if list(map(len, values)).count(1) != len(values):
                return each(fmaps)
            return list(map(np.frombuffer, map(first, values), repeat(np.uint8)))

        return extract_bytes

    values_of = operator.attrgetter(f"{field}.value")
    dtype, shape, fixed = f.dtype, f.shape, f.fixed
    volume = math.prod(shape)
    floats = f.type == tf_float32
    chain = itertools.chain.from_iterable

    def extract_numbers(fmaps: list[Any]) -> list[np.ndarray | str]:
        n = len(fmaps)
        if not n:
            return []
        try:
            values = list(map(values_of, map(get, fmaps)))
        except AttributeError:  # a record without the feature
            return each(fmaps)
        counts = list(map(len, values))
        first = counts[0]
        if fixed:
            if counts.count(volume) != n or (floats and volume > _SERIALIZED_FLOATS):
                return each(fmaps)
            dense = np.fromiter(chain(values), dtype, n * volume).reshape(n, *shape)
            if shape:
                return list(dense)  # views of one array
            return [dense[i, ...] for i in range(n)]  # 0-d arrays, not numpy scalars
        if (
            volume == 0
            or 0 in counts  # (an empty list may hold another type's values: an error)
            or (floats and max(counts) > _SERIALIZED_FLOATS)
        ):
            return each(fmaps)
        if counts.count(first) == n:  # the same count in every record: views of one array
            if first % volume:
                return each(fmaps)
            flat = np.fromiter(chain(values), dtype, n * first)
            return list(flat.reshape(n, first // volume, *shape) if shape else flat.reshape(n, -1))
        if any(c % volume for c in counts):
            return each(fmaps)
        flat = np.fromiter(chain(values), dtype, sum(counts))
        ends = itertools.accumulate(counts)
        return [flat[e - c : e].reshape(-1, *shape) for e, c in zip(ends, counts)]

    return extract_numbers


__all__ = ["BatchExtractor", "RecordExtractor", "batch_extractor", "record_extractor"]
