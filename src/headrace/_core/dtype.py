"""Element types: :class:`DType`, the constants (``int8`` … ``bool``) and conversions.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> ndd.dtype(np.uint8) is ndd.uint8
True
>>> ndd.float32.name, ndd.float32.bytes
('f32', 4)
"""

from __future__ import annotations

import builtins
import enum
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace import types as _types
from headrace._core.errors import InvalidArgumentError


class DType:
    """An element type: kind (signed, unsigned, float, bool, enum) and width in bits.

    Parameters
    ----------
    kind : DType.Kind
        The family of the type.
    bits : int
        Width in bits.
    exponent_bits, significand_bits : int, optional
        For floats; default by width (16 → 5/10, 32 → 8/23, 64 → 11/52, 8 → 4/3).
    bytes : int, optional
        Storage size; default ``ceil(bits / 8)``.
    type_id : headrace.types.DALIDataType, optional
        The reference's type id.
    name : str, optional
        Short name; generated from the kind and width when omitted.
    docs : str, optional
        Docstring of the constant.

    Examples
    --------
    >>> DType(DType.Kind.signed, 32).name
    'i32'
    """

    class Kind(enum.Enum):
        """Type families."""

        signed = "signed"
        unsigned = "unsigned"
        float = "float"
        bool = "bool"
        enum = "enum"

    _FLOAT_DEFAULTS: dict[int, tuple[int, int]] = {
        8: (4, 3),
        16: (5, 10),
        32: (8, 23),
        64: (11, 52),
    }

    def __init__(
        self,
        kind: DType.Kind,
        bits: int,
        exponent_bits: int | None = None,
        significand_bits: int | None = None,
        bytes: int | None = None,
        type_id: _types.DALIDataType | None = None,
        name: str | None = None,
        docs: str | None = None,
    ) -> None:
        if not isinstance(kind, DType.Kind):
            raise TypeError(f"DType: kind must be a DType.Kind (got {kind!r}).")
        if kind is DType.Kind.float:
            if exponent_bits is None or significand_bits is None:
                if bits not in self._FLOAT_DEFAULTS:
                    raise ValueError(
                        f"DType: a {bits}-bit float needs exponent_bits and significand_bits."
                    )
                exponent_bits, significand_bits = self._FLOAT_DEFAULTS[bits]
        else:
            exponent_bits = significand_bits = None
        self.kind = kind
        self.bits = bits
        self.exponent_bits = exponent_bits
        self.significand_bits = significand_bits
        self.bytes = bytes if bytes is not None else math.ceil(bits / 8)
        self.type_id = type_id
        self.name = name if name is not None else self._default_name()
        if docs is not None:
            self.__doc__ = docs
        self._hash = builtins.hash((kind, bits, exponent_bits, significand_bits, self._enum_id()))

    def _enum_id(self) -> int | None:
        return (
            int(self.type_id) if self.kind is DType.Kind.enum and self.type_id is not None else None
        )

    def _default_name(self) -> str:
        if self.kind is DType.Kind.signed:
            return f"i{self.bits}"
        if self.kind is DType.Kind.unsigned:
            return f"u{self.bits}"
        if self.kind is DType.Kind.bool:
            return "bool"
        if self.kind is DType.Kind.float:
            e, s = self.exponent_bits, self.significand_bits
            if (e, s) == self._FLOAT_DEFAULTS.get(self.bits):
                return f"f{self.bits}"
            if (self.bits, e, s) == (16, 8, 7):
                return "bfloat16"
            if (self.bits, e, s) == (19, 8, 10):
                return "tf32"
            return f"f{self.bits}e{e}m{s}"
        return f"enum{self.bits}"

    # --- identity -------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, DType):
            return NotImplemented
        return (
            self.kind is other.kind
            and self.bits == other.bits
            and self.exponent_bits == other.exponent_bits
            and self.significand_bits == other.significand_bits
            and self._enum_id() == other._enum_id()
        )

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return (
            f"DType(kind={self.kind}, bits={self.bits}, exponent_bits={self.exponent_bits}, "
            f"significand_bits={self.significand_bits})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (dtype, (self.name,)) if self.name in _BY_NAME else super().__reduce__()

    # --- properties used across the library -----------------------------------------------
    @property
    def is_float(self) -> bool:
        """True for floating-point types."""
        return self.kind is DType.Kind.float

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integer types."""
        return self.kind in (DType.Kind.signed, DType.Kind.unsigned)

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype that stores this type on the CPU (bfloat16 is stored as uint16)."""
        try:
            return _TO_NUMPY[self]
        except KeyError:
            raise TypeError(f"DType {self} has no numpy equivalent.") from None

    # --- construction helpers --------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Create a tensor of this type: ``ndd.float32([1, 2])``."""
        if "dtype" in kwargs:
            raise ValueError("dtype cannot be overridden")
        from headrace._core.entry import op

        return op("tensor")(*args, dtype=self, **kwargs)

    @staticmethod
    def from_type_id(type_id: Any) -> DType:
        """The constant for a reference type id."""
        try:
            return _BY_TYPE_ID[int(type_id)]
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"Invalid dtype: {type_id!r}") from None

    @staticmethod
    def from_fw_type(fw_type: Any) -> DType:
        """The constant for a numpy or torch dtype (or numpy scalar type)."""
        key = _fw_key(fw_type)
        if key is not None:
            found = _BY_FW.get(key)
            if found is not None:
                return found
        raise TypeError(f"Cannot convert {fw_type!r} to a headrace dtype.")

    @staticmethod
    def parse(name: str) -> DType:
        """The constant registered under ``name``, or a new type parsed from ``iN/uN/fN/fNeXmY``.

        Examples
        --------
        >>> DType.parse("f32") is DType.parse("float32")
        True
        """
        found = _BY_NAME.get(name)
        if found is not None:
            return found
        m = re.fullmatch(r"([iuf])(\d+)(?:e(\d+)m(\d+))?", name)
        if not m:
            raise ValueError(f"Invalid dtype name: {name!r}")
        letter, bits_s, e_s, s_s = m.groups()
        bits = int(bits_s)
        if bits <= 0:
            raise ValueError(f"Invalid dtype name: {name!r}")
        if letter == "i":
            return DType(DType.Kind.signed, bits)
        if letter == "u":
            return DType(DType.Kind.unsigned, bits)
        if e_s is None:
            return DType(DType.Kind.float, bits)
        e, s = int(e_s), int(s_s)
        if e == 0 or s == 0:
            raise ValueError(f"Invalid dtype name: {name!r} (zero exponent or significand bits)")
        return DType(DType.Kind.float, bits, e, s)


_T = _types.DALIDataType
_K = DType.Kind

int8 = DType(_K.signed, 8, type_id=_T.INT8, docs="8-bit signed integer.")
int16 = DType(_K.signed, 16, type_id=_T.INT16, docs="16-bit signed integer.")
int32 = DType(_K.signed, 32, type_id=_T.INT32, docs="32-bit signed integer.")
int64 = DType(_K.signed, 64, type_id=_T.INT64, docs="64-bit signed integer.")
uint8 = DType(_K.unsigned, 8, type_id=_T.UINT8, docs="8-bit unsigned integer.")
uint16 = DType(_K.unsigned, 16, type_id=_T.UINT16, docs="16-bit unsigned integer.")
uint32 = DType(_K.unsigned, 32, type_id=_T.UINT32, docs="32-bit unsigned integer.")
uint64 = DType(_K.unsigned, 64, type_id=_T.UINT64, docs="64-bit unsigned integer.")
float16 = DType(_K.float, 16, type_id=_T.FLOAT16, docs="IEEE half precision float.")
float32 = DType(_K.float, 32, type_id=_T.FLOAT, docs="IEEE single precision float.")
float64 = DType(_K.float, 64, type_id=_T.FLOAT64, docs="IEEE double precision float.")
bfloat16 = DType(_K.float, 16, 8, 7, name="bfloat16", docs="Brain float (8-bit exponent).")
bool_ = DType(_K.bool, 8, type_id=_T.BOOL, name="bool", docs="Boolean.")
DataType = DType(_K.enum, 32, type_id=_T.DATA_TYPE, name="DataType", docs="Element-type enum.")
ImageType = DType(_K.enum, 32, type_id=_T.IMAGE_TYPE, name="ImageType", docs="Colour-space enum.")
InterpType = DType(_K.enum, 32, type_id=_T.INTERP_TYPE, name="InterpType", docs="Filter enum.")

ALL_TYPES: tuple[DType, ...] = (
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    float32,
    float64,
    bfloat16,
    bool_,
    DataType,
    ImageType,
    InterpType,
)

_BY_NAME: dict[str, DType] = {}
for _t in ALL_TYPES:
    _BY_NAME[_t.name] = _t
for _alias, _t in {
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "uint8": uint8,
    "uint16": uint16,
    "uint32": uint32,
    "uint64": uint64,
    "float16": float16,
    "float32": float32,
    "float64": float64,
    "half": float16,
    "float": float32,
    "double": float64,
}.items():
    _BY_NAME[_alias] = _t
_BY_TYPE_ID: dict[int, DType] = {int(t.type_id): t for t in ALL_TYPES if t.type_id is not None}

_TO_NUMPY: dict[DType, np.dtype] = {
    int8: np.dtype(np.int8),
    int16: np.dtype(np.int16),
    int32: np.dtype(np.int32),
    int64: np.dtype(np.int64),
    uint8: np.dtype(np.uint8),
    uint16: np.dtype(np.uint16),
    uint32: np.dtype(np.uint32),
    uint64: np.dtype(np.uint64),
    float16: np.dtype(np.float16),
    float32: np.dtype(np.float32),
    float64: np.dtype(np.float64),
    bool_: np.dtype(np.bool_),
    bfloat16: np.dtype(np.uint16),
    DataType: np.dtype(np.int32),
    ImageType: np.dtype(np.int32),
    InterpType: np.dtype(np.int32),
}
_FROM_NUMPY: dict[np.dtype, DType] = {
    v: k for k, v in _TO_NUMPY.items() if k not in (bfloat16, DataType, ImageType, InterpType)
}
_BY_FW: dict[Any, DType] = dict(_FROM_NUMPY)


def _fw_key(fw_type: Any) -> Any:
    """A hashable key for a numpy / torch dtype, or None."""
    if isinstance(fw_type, np.dtype):
        return fw_type
    if isinstance(fw_type, type) and issubclass(fw_type, np.generic):
        return np.dtype(fw_type)
    mod = type(fw_type).__module__
    if mod == "torch":  # torch.dtype
        _register_torch()
        return fw_type
    return None


_torch_registered = False
# The one numpy/DType -> torch dtype map, built on first use (``import headrace`` never imports
# torch): ``_TO_TORCH`` by DType (enums map as int32), ``_NP_TO_TORCH`` by numpy dtype.
_TO_TORCH: dict[DType, Any] = {}
_NP_TO_TORCH: dict[np.dtype, Any] = {}


def _register_torch() -> None:
    global _torch_registered
    if _torch_registered:
        return
    import torch

    for t, d in _torch_pairs(torch):
        _BY_FW[t] = d
        _TO_TORCH[d] = t
        if d is not bfloat16:  # bfloat16's numpy storage is uint16
            _NP_TO_TORCH[d.numpy] = t
    _torch_registered = True


def _torch_pairs(torch: Any) -> list[tuple[Any, DType]]:
    types = (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64)
    pairs = [(getattr(torch, t.numpy.name), t) for t in types]
    return [*pairs, (torch.bfloat16, bfloat16), (torch.bool, bool_)]


def to_torch_dtype(t: Any) -> Any:
    """The torch dtype of a :class:`DType`, a numpy dtype (or scalar type) or a torch dtype.

    Imports torch on first use.

    Examples
    --------
    >>> import numpy as np
    >>> to_torch_dtype(uint16), to_torch_dtype(np.dtype(np.uint32)), to_torch_dtype(np.bool_)
    (torch.uint16, torch.uint32, torch.bool)
    """
    _register_torch()
    if isinstance(t, DType):
        found = _TO_TORCH.get(int32 if t.kind is DType.Kind.enum else t)
    elif type(t).__module__ == "torch":
        return t
    else:
        try:
            found = _NP_TO_TORCH.get(np.dtype(t))
        except TypeError:
            found = None
    if found is None:
        raise TypeError(f"{t} has no torch equivalent.")
    return found


def from_numpy(np_dtype: np.dtype) -> DType:
    """The constant for a numpy dtype (fast path used on every array)."""
    try:
        return _FROM_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(
            f"Unsupported numpy dtype {np_dtype} (headrace handles bool, integers and floats)."
        ) from None


def dtype(*args: Any, **kwargs: Any) -> DType:
    """Convert to a :class:`DType`, or construct one when given several arguments.

    ``DType`` → itself; a type id (``headrace.types`` or the reference's own
    ``nvidia.dali.types``) → its constant; ``str`` → :meth:`DType.parse`;
    a numpy or torch dtype → the matching constant (the identical object).

    Examples
    --------
    >>> import numpy as np
    >>> dtype("i32") is dtype(np.int32)
    True
    """
    if len(args) != 1 or kwargs:
        return DType(*args, **kwargs)
    x = args[0]
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        return DType.parse(x)
    x = _types.native(x)
    if isinstance(x, enum.IntEnum) and isinstance(x, _types.DALIDataType):
        return DType.from_type_id(x)
    if x is builtins.bool:
        return bool_
    if x is builtins.int or x is builtins.float:
        raise ValueError(
            f"Do not use Python built-in type {x.__name__}. Use one of the headrace types "
            "(e.g. ndd.int32, ndd.float32)."
        )
    return DType.from_fw_type(x)


def type_id(dtype: Any) -> _types.DALIDataType:
    """The reference type id of a dtype.

    Examples
    --------
    >>> import headrace as ndd
    >>> int(ndd.type_id(ndd.float32))
    9
    """
    x = _types.native(dtype)
    if isinstance(x, DType):
        if x.type_id is None:
            raise ValueError(f"Invalid dtype: {x} has no type id")
        return x.type_id
    if isinstance(x, _types.DALIDataType):
        return x
    raise ValueError(f"Invalid dtype: {x!r}")


# Type promotion (the reference's table). -------------------------------------------------------
def promote(a: DType, b: DType) -> DType:
    """Result type of a binary arithmetic operation on ``a`` and ``b``.

    Examples
    --------
    >>> promote(uint8, int8) is int16
    True
    """
    if a is b or a == b:
        return a
    ka, kb = a.kind, b.kind
    if ka is _K.bool:
        return b
    if kb is _K.bool:
        return a
    if ka is _K.float and kb is _K.float:
        return a if a.bits >= b.bits else b
    if ka is _K.float:
        return a
    if kb is _K.float:
        return b
    if ka is kb:
        return a if a.bits >= b.bits else b
    s, u = (a, b) if ka is _K.signed else (b, a)
    if s.bits <= u.bits:
        return _SIGNED_BY_BITS[min(2 * u.bits, 64)]
    return s


_SIGNED_BY_BITS = {8: int8, 16: int16, 32: int32, 64: int64}

#: Arithmetic expressions computed (and returned) in floating point, float32 for integers.
FLOAT_EXPRESSIONS = frozenset(
    (
        "sqrt rsqrt cbrt exp log log2 log10 fabs floor ceil sin cos tan asin acos atan sinh cosh "
        "tanh asinh acosh atanh fdiv fpow atan2"
    ).split()
)
#: Comparison expressions (bool result, operands compared in their promoted type).
COMPARISONS = frozenset(("eq", "neq", "lt", "leq", "gt", "geq"))
#: Bitwise expressions (integer or bool operands only).
BITWISE = frozenset(("bitand", "bitor", "bitxor", "bitnot", "lshift", "rshift"))


def arithmetic_types(expression: str, dts: Sequence[DType]) -> tuple[DType, DType]:
    """(compute type, output type) of the arithmetic ``expression`` on operands of types ``dts``.

    The operand types are promoted with :func:`promote`; comparisons give bool, floating-point
    expressions (``fdiv``, ``sqrt``…) of integers give float32.

    Examples
    --------
    >>> arithmetic_types("add", [uint8, int8]) == (int16, int16)
    True
    >>> arithmetic_types("fdiv", [int32, int32]) == (float32, float32)
    True
    >>> arithmetic_types("lt", [uint8, float16]) == (float16, bool_)
    True
    """
    t = dts[0]
    for d in dts[1:]:
        t = promote(t, d)
    if expression in COMPARISONS:
        return t, bool_
    if expression in BITWISE:
        if t.is_float:
            raise InvalidArgumentError(
                f"Bitwise operation {expression!r} needs integer or bool operands (got {t})."
            )
        return t, t
    if expression in FLOAT_EXPRESSIONS:
        ft = t if t.is_float else float32
        return ft, ft
    return t, t
