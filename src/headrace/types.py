"""DALI-compatible enum values (``headrace.types``).

The integer values equal the reference's, so code that passes ``types.INTERP_LINEAR`` or
``types.RGB`` keeps working, and so do plain strings where an operator takes them.

Examples
--------
>>> from headrace import types
>>> int(types.INTERP_LINEAR), types.RGB.name
(1, 'RGB')
"""

from __future__ import annotations

import enum
from typing import Any


class DALIDataType(enum.IntEnum):
    """Element types, numbered as the reference numbers them."""

    NO_TYPE = -1
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    UINT64 = 3
    INT8 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    FLOAT16 = 8
    FLOAT = 9
    FLOAT64 = 10
    BOOL = 11
    STRING = 12
    _BOOL_VEC = 13
    _INT32_VEC = 14
    _STRING_VEC = 15
    _FLOAT_VEC = 16
    FEATURE = 17
    _FEATURE_VEC = 18
    _FEATURE_DICT = 19
    IMAGE_TYPE = 20
    DATA_TYPE = 21
    INTERP_TYPE = 22
    TENSOR_LAYOUT = 23
    PYTHON_OBJECT = 24
    _TENSOR_LAYOUT_VEC = 25
    _DATA_TYPE_VEC = 26
    _INT64_VEC = 27


class DALIImageType(enum.IntEnum):
    """Colour spaces of decoded images."""

    RGB = 0
    BGR = 1
    GRAY = 2
    YCbCr = 3
    ANY_DATA = 4


class DALIInterpType(enum.IntEnum):
    """Resampling filters."""

    INTERP_NN = 0
    INTERP_LINEAR = 1
    INTERP_CUBIC = 2
    INTERP_LANCZOS3 = 3
    INTERP_TRIANGULAR = 4
    INTERP_GAUSSIAN = 5


# Flat constants, as ``nvidia.dali.types`` exposes them.
NO_TYPE = DALIDataType.NO_TYPE
UINT8 = DALIDataType.UINT8
UINT16 = DALIDataType.UINT16
UINT32 = DALIDataType.UINT32
UINT64 = DALIDataType.UINT64
INT8 = DALIDataType.INT8
INT16 = DALIDataType.INT16
INT32 = DALIDataType.INT32
INT64 = DALIDataType.INT64
FLOAT16 = DALIDataType.FLOAT16
FLOAT = DALIDataType.FLOAT
FLOAT64 = DALIDataType.FLOAT64
BOOL = DALIDataType.BOOL
STRING = DALIDataType.STRING
DATA_TYPE = DALIDataType.DATA_TYPE
INTERP_TYPE = DALIDataType.INTERP_TYPE
IMAGE_TYPE = DALIDataType.IMAGE_TYPE

RGB = DALIImageType.RGB
BGR = DALIImageType.BGR
GRAY = DALIImageType.GRAY
YCbCr = DALIImageType.YCbCr
ANY_DATA = DALIImageType.ANY_DATA

INTERP_NN = DALIInterpType.INTERP_NN
INTERP_LINEAR = DALIInterpType.INTERP_LINEAR
INTERP_CUBIC = DALIInterpType.INTERP_CUBIC
INTERP_LANCZOS3 = DALIInterpType.INTERP_LANCZOS3
INTERP_TRIANGULAR = DALIInterpType.INTERP_TRIANGULAR
INTERP_GAUSSIAN = DALIInterpType.INTERP_GAUSSIAN


_ENUM_CLASSES: dict[str, type[enum.IntEnum]] = {
    c.__name__: c for c in (DALIDataType, DALIImageType, DALIInterpType)
}


def native(value: Any) -> Any:
    """Map the reference's own enum values (``nvidia.dali.types.INT8``, ``RGB``...) to ours.

    Anything else, including lists that hold no such value, comes back unchanged; lists and
    tuples of them are mapped element by element. The reference is never imported: its values
    are recognised by their type's module and name.

    Examples
    --------
    >>> native(INTERP_CUBIC) is INTERP_CUBIC, native([1, 2])
    (True, [1, 2])
    """
    t = type(value)
    if isinstance(value, (list, tuple)):
        if value and _is_foreign(value[0]):
            return t(native(v) for v in value)
        return value
    if _is_foreign(value):
        return _ENUM_CLASSES[t.__name__][value.name]
    return value


def _is_foreign(value: Any) -> bool:
    t = type(value)
    return (
        t.__name__ in _ENUM_CLASSES
        and t.__module__.startswith("nvidia.dali")
        and not isinstance(value, enum.Enum)
    )


def interp_type(value: object) -> DALIInterpType:
    """Normalise an interpolation argument (enum, int or name such as ``"linear"``).

    Examples
    --------
    >>> interp_type("cubic") is INTERP_CUBIC
    True
    """
    if isinstance(value, DALIInterpType):
        return value
    value = native(value)
    if isinstance(value, str):
        key = value.upper()
        if not key.startswith("INTERP_"):
            key = "INTERP_" + key
        if key == "INTERP_NEAREST":
            key = "INTERP_NN"
        try:
            return DALIInterpType[key]
        except KeyError:
            names = ", ".join(m.name for m in DALIInterpType)
            raise ValueError(f"Unknown interpolation type {value!r}. Use one of {names}.") from None
    try:
        return DALIInterpType(int(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ValueError(f"Unknown interpolation type {value!r}.") from None


#: The image types by upper-case name (a decoder's ``output_type`` is read once per sample).
_IMAGE_TYPES_BY_NAME = {m.name.upper(): m for m in DALIImageType}


def image_type(value: object) -> DALIImageType:
    """Normalise a colour-space argument (enum, int or name such as ``"rgb"``).

    Examples
    --------
    >>> image_type("gray") is GRAY
    True
    """
    if isinstance(value, DALIImageType):
        return value
    value = native(value)
    if isinstance(value, str):
        member = _IMAGE_TYPES_BY_NAME.get(value.upper())
        if member is not None:
            return member
        names = ", ".join(m.name for m in DALIImageType)
        raise ValueError(f"Unknown image type {value!r}. Use one of {names}.")
    try:
        return DALIImageType(int(value))  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ValueError(f"Unknown image type {value!r}.") from None
