"""Feature descriptions for ``readers.TFRecord`` (the reference's ``tfrecord`` module).

A ``features`` dictionary maps the name of a ``tf.train.Example`` feature to a :class:`Feature`
made by :func:`FixedLenFeature` or :func:`VarLenFeature` (the counterparts of TensorFlow's
``tf.io.FixedLenFeature`` / ``tf.io.VarLenFeature``). The value types are the constants
:data:`int64`, :data:`string` and :data:`float32`; each output is one array per record:

* ``int64`` features give ``int64`` arrays, ``float32`` features ``float32`` arrays;
* ``string`` features give the bytes of the (single) byte string as a 1-D ``uint8`` array
  (ready for ``decoders.image``), so a string feature must be a ``FixedLenFeature`` of shape
  ``()`` or ``[1]``.

Examples
--------
>>> import headrace.tfrecord as tfrec
>>> features = {
...     "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
...     "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
...     "image/object/bbox": tfrec.VarLenFeature([4], tfrec.float32, 0.0),
... }
>>> features["image/class/label"]
FixedLenFeature([1], int64, -1)
>>> features["image/object/bbox"].shape_for(8)
(2, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError, InvalidTypeError

int64 = 0
"""Feature value type: 64-bit integers (``Int64List``); outputs are ``int64``."""
string = 1
"""Feature value type: byte strings (``BytesList``); outputs are 1-D ``uint8`` arrays."""
float32 = 2
"""Feature value type: 32-bit floats (``FloatList``); outputs are ``float32``."""

_TYPE_NAMES = {int64: "int64", string: "string", float32: "float32"}
_NUMPY = {int64: np.dtype(np.int64), string: np.dtype(np.uint8), float32: np.dtype(np.float32)}
#: The ``Feature.kind`` oneof field of ``tf.train.Feature`` that holds each type's values.
LIST_FIELDS = {int64: "int64_list", string: "bytes_list", float32: "float_list"}


@dataclass(frozen=True)
class Feature:
    """How to read one feature of a ``tf.train.Example``; make it with :func:`FixedLenFeature`
    or :func:`VarLenFeature`.

    Attributes
    ----------
    fixed : bool
        ``True`` for a fixed-length feature (every record holds ``prod(shape)`` values).
    type : int
        :data:`int64`, :data:`string` or :data:`float32`.
    shape : tuple of int
        The output shape of a fixed-length feature; for a variable-length one, the trailing
        dimensions (the *partial shape*; the number of values decides the leading one).
    default_value : numpy.ndarray or None
        What a record without this feature yields (fixed-length features; ``None``: such a
        record is an error). A missing variable-length feature yields an empty array.
    """

    fixed: bool
    type: int
    shape: tuple[int, ...]
    default_value: np.ndarray | None

    @property
    def dtype(self) -> np.dtype[Any]:
        """The numpy dtype of the output (``uint8`` for strings)."""
        return _NUMPY[self.type]

    def shape_for(self, count: int) -> tuple[int, ...] | None:
        """The output shape of a record holding ``count`` values (``None`` if they do not fit).

        Examples
        --------
        >>> VarLenFeature([3], float32, 0.0).shape_for(6)
        (2, 3)
        >>> FixedLenFeature([2], int64, 0).shape_for(3) is None
        True
        """
        if self.type == string:
            return (count,)
        if self.fixed:
            return self.shape if count == math.prod(self.shape) else None
        inner = math.prod(self.shape)
        if inner == 0:
            return (0, *self.shape) if count == 0 else None
        if count % inner:
            return None
        return (count // inner, *self.shape)

    def __repr__(self) -> str:
        kind = "FixedLenFeature" if self.fixed else "VarLenFeature"
        shape = list(self.shape)
        default = self.default_value
        if default is None:
            shown = "None"
        elif self.type == string:
            shown = repr(default.tobytes())
        else:
            uniform = default.size > 0 and bool((default == default.flat[0]).all())
            shown = repr(default.flat[0].item()) if uniform else repr(default.tolist())
        return f"{kind}({shape}, {_TYPE_NAMES[self.type]}, {shown})"


def _check_type(value_type: Any) -> int:
    if isinstance(value_type, bool) or value_type not in _TYPE_NAMES:
        raise InvalidArgumentError(
            "tfrecord: the feature type must be tfrecord.int64, tfrecord.string or "
            f"tfrecord.float32 (got {value_type!r})."
        )
    return int(value_type)


def _check_shape(shape: Any, what: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = [shape]
    if isinstance(shape, (str, bytes)) or not isinstance(shape, (Sequence, np.ndarray)):
        raise InvalidTypeError(f"tfrecord: {what} must be a list of integers (got {shape!r}).")
    dims = []
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
            raise InvalidArgumentError(
                f"tfrecord: {what} must hold non-negative integers (got {list(shape)!r})."
            )
        dims.append(int(d))
    return tuple(dims)


def _default(value_type: int, shape: tuple[int, ...], default: Any) -> np.ndarray | None:
    if default is None:
        return None
    if value_type == string:
        if isinstance(default, str):
            default = default.encode("utf-8")
        if not isinstance(default, (bytes, bytearray, memoryview)):
            raise InvalidTypeError(
                f"tfrecord: a string feature's default must be str or bytes (got {default!r})."
            )
        return np.frombuffer(bytes(default), np.uint8).copy()
    dtype = _NUMPY[value_type]
    try:
        arr = np.asarray(default)
        if value_type == int64 and arr.dtype.kind not in "iub":
            raise TypeError
        if arr.dtype.kind not in "iubf":
            raise TypeError
        return np.broadcast_to(arr.astype(dtype), shape).copy()
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"tfrecord: the default {default!r} does not fit a {_TYPE_NAMES[value_type]} "
            f"feature of shape {list(shape)}."
        ) from None


def FixedLenFeature(shape: Any, type: int, default_value: Any = None) -> Feature:
    """A feature with the same number of values in every record, output in ``shape``.

    Parameters
    ----------
    shape : list of int
        The output shape; every record holds ``prod(shape)`` values (``()`` or ``[1]`` for
        one value). A ``string`` feature must have one value: its output is that byte string
        as a 1-D ``uint8`` array.
    type : int
        :data:`int64`, :data:`string` or :data:`float32`.
    default_value : scalar, array-like, str or bytes, optional
        The value (broadcast to ``shape``) of a record without this feature. Without one such
        a record is an error.

    Examples
    --------
    >>> FixedLenFeature([2], float32, 0.5).default_value
    array([0.5, 0.5], dtype=float32)
    """
    value_type = _check_type(type)
    dims = _check_shape(shape, "shape")
    if value_type == string and math.prod(dims) != 1:
        raise InvalidArgumentError(
            f"tfrecord: a string feature holds one byte string; its shape must be () or [1] "
            f"(got {list(dims)}): tensors of strings are not supported."
        )
    return Feature(True, value_type, dims, _default(value_type, dims, default_value))


def VarLenFeature(*args: Any, **kwargs: Any) -> Feature:
    """A feature with any number of values per record.

    ``VarLenFeature(type, default_value)`` yields 1-D arrays;
    ``VarLenFeature(partial_shape, type, default_value)`` yields arrays of shape
    ``(n, *partial_shape)``, where ``n`` is the number of values divided by
    ``prod(partial_shape)`` (a record whose count does not divide is an error).

    Parameters
    ----------
    partial_shape : list of int, optional
        The trailing dimensions of the output.
    type : int
        :data:`int64` or :data:`float32` (variable-length string features are not supported,
        as in the reference).
    default_value : scalar
        Checked against ``type`` and kept for compatibility; a record without this feature
        yields an empty array of shape ``(0, *partial_shape)``.

    Examples
    --------
    >>> VarLenFeature(int64, 0)
    VarLenFeature([], int64, 0)
    >>> VarLenFeature([2, 2], float32, 0.0).shape_for(8)
    (2, 2, 2)
    """
    rest = list(args)
    first = rest[0] if rest else None
    if isinstance(first, (Sequence, np.ndarray)) and not isinstance(first, (str, bytes)):
        if "partial_shape" in kwargs:
            raise InvalidTypeError("tfrecord.VarLenFeature: partial_shape given twice.")
        kwargs["partial_shape"] = rest.pop(0)
    if len(rest) > 2:
        raise InvalidTypeError(
            f"tfrecord.VarLenFeature takes at most 3 arguments ({len(args)} given)."
        )
    bound: dict[str, Any] = dict(zip(("type", "default_value"), rest))
    for k, v in kwargs.items():
        if k not in ("partial_shape", "type", "default_value") or k in bound:
            raise InvalidTypeError(f"tfrecord.VarLenFeature: unexpected or repeated argument {k!r}")
        bound[k] = v
    if "type" not in bound:
        raise InvalidTypeError("tfrecord.VarLenFeature: missing the value type.")
    value_type = _check_type(bound["type"])
    dims = _check_shape(bound.get("partial_shape", ()), "partial_shape")
    if value_type == string:
        raise InvalidArgumentError(
            "tfrecord: variable-length string features are not supported (tensors of strings); "
            "read one byte string with FixedLenFeature((), tfrecord.string, default)."
        )
    default = _default(value_type, (), bound.get("default_value"))
    return Feature(False, value_type, dims, default)


__all__ = ["Feature", "FixedLenFeature", "VarLenFeature", "float32", "int64", "string"]
