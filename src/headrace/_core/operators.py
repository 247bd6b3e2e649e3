"""Python operator overloads shared by :class:`Tensor` and :class:`Batch`.

Each dunder forwards to the ``arithmetic`` operator, so Tensor and Batch behave the same way.
"""

from __future__ import annotations

from typing import Any, Self

from headrace._core.entry import op as _op


def _arith(name: str, *operands: Any) -> Any:
    return _op("arithmetic")(name, *operands)


class ArithmeticMixin:
    """Element-wise operators with reflected forms; comparisons return bool tensors."""

    __slots__ = ()

    def __add__(self, o: Any) -> Any:
        return _arith("add", self, o)

    def __radd__(self, o: Any) -> Any:
        return _arith("add", o, self)

    def __sub__(self, o: Any) -> Any:
        return _arith("sub", self, o)

    def __rsub__(self, o: Any) -> Any:
        return _arith("sub", o, self)

    def __mul__(self, o: Any) -> Any:
        return _arith("mul", self, o)

    def __rmul__(self, o: Any) -> Any:
        return _arith("mul", o, self)

    def __truediv__(self, o: Any) -> Any:
        return _arith("fdiv", self, o)

    def __rtruediv__(self, o: Any) -> Any:
        return _arith("fdiv", o, self)

    def __floordiv__(self, o: Any) -> Any:
        return _arith("div", self, o)

    def __rfloordiv__(self, o: Any) -> Any:
        return _arith("div", o, self)

    def __mod__(self, o: Any) -> Any:
        return _arith("mod", self, o)

    def __rmod__(self, o: Any) -> Any:
        return _arith("mod", o, self)

    def __pow__(self, o: Any) -> Any:
        return _arith("pow", self, o)

    def __rpow__(self, o: Any) -> Any:
        return _arith("pow", o, self)

    def __and__(self, o: Any) -> Any:
        return _arith("bitand", self, o)

    def __rand__(self, o: Any) -> Any:
        return _arith("bitand", o, self)

    def __or__(self, o: Any) -> Any:
        return _arith("bitor", self, o)

    def __ror__(self, o: Any) -> Any:
        return _arith("bitor", o, self)

    def __xor__(self, o: Any) -> Any:
        return _arith("bitxor", self, o)

    def __rxor__(self, o: Any) -> Any:
        return _arith("bitxor", o, self)

    def __lshift__(self, o: Any) -> Any:
        return _arith("lshift", self, o)

    def __rlshift__(self, o: Any) -> Any:
        return _arith("lshift", o, self)

    def __rshift__(self, o: Any) -> Any:
        return _arith("rshift", self, o)

    def __rrshift__(self, o: Any) -> Any:
        return _arith("rshift", o, self)

    def __eq__(self, o: Any) -> Any:  # type: ignore[override]
        return _arith("eq", self, o)

    def __ne__(self, o: Any) -> Any:  # type: ignore[override]
        return _arith("neq", self, o)

    def __lt__(self, o: Any) -> Any:
        return _arith("lt", self, o)

    def __le__(self, o: Any) -> Any:
        return _arith("leq", self, o)

    def __gt__(self, o: Any) -> Any:
        return _arith("gt", self, o)

    def __ge__(self, o: Any) -> Any:
        return _arith("geq", self, o)

    def __neg__(self) -> Any:
        return _arith("minus", self)

    def __pos__(self) -> Any:
        return self

    def __invert__(self) -> Any:
        return _arith("bitnot", self)

    def __abs__(self) -> Any:
        return _arith("abs", self)

    __hash__ = object.__hash__


class DeviceMixin:
    """``cpu()``, ``gpu()`` and ``to_device()``, shared by Tensor and Batch."""

    __slots__ = ()

    def cpu(self) -> Self:
        """This data on the CPU (``self`` when already there)."""
        from headrace._core.device import CPU

        return self.to_device(CPU)

    def gpu(self, index: int | None = None) -> Self:
        """This data on a GPU (``self`` when already there)."""
        from headrace._core.device import Device

        return self.to_device(Device("gpu", index))

    def to_device(self, device: Any, force_copy: bool = False) -> Self:
        """This data on ``device``; ``self`` when already there unless ``force_copy``."""
        from headrace._core.device import device as to_device

        dev = to_device(device)
        if dev is None:
            raise ValueError("to_device: a device is required (got None).")
        if dev == self._device and not force_copy:  # type: ignore[attr-defined]
            return self
        return _op("copy")(self, device=dev)  # type: ignore[no-any-return]
