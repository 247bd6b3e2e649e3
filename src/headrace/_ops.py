"""Class-style operators, as the reference keeps them in ``ndd._ops``.

Every operator function (``ndd.resize``, ``ndd.random.uniform``, ``ndd.decoders.image``, ...)
has a class here, named as the reference names it (``_ops.Resize``, ``_ops.random.Uniform``,
``_ops.decoders.Image``): the constructor takes ``max_batch_size``, ``name``, ``device``,
``num_inputs`` and any operator argument (fixed for every call), calling the instance runs the
operator function with those arguments plus the call's own. A random operator's ``seed`` gives
the instance its own generator (``ndd.random.RNG(seed)``), which an ``rng`` passed to a call
overrides. An instance checks that later calls look like its first one (batch or sample, the
number of dimensions, layout and type of each input) and that no batch exceeds
``max_batch_size``. ``_all_functions`` and ``_all_ops`` list the functions and the classes,
``Reader`` is the readers' base class and ``readers`` the readers.

The reference calls this module private; headrace keeps the same names so that programs (and
the reference's own tests) written against them run. The functions stay the API to use.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> flip = ndd._ops.Flip(horizontal=1)
>>> x = ndd.tensor(np.arange(6, dtype=np.uint8).reshape(1, 3, 2), layout="HWC")
>>> np.asarray(flip(x))[0, :, 0].tolist()
[4, 2, 0]
>>> a = ndd._ops.random.Uniform(seed=7)(range=[0.0, 1.0], shape=[3])
>>> b = ndd._ops.random.Uniform(seed=7)(range=[0.0, 1.0], shape=[3])
>>> np.array_equal(np.asarray(a), np.asarray(b))
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

import headrace
from headrace import readers
from headrace._core.batch import Batch
from headrace._core.device import Device
from headrace._dispatch.hooks import ParamsHook
from headrace._dispatch.schema import REGISTRY, OpSchema
from headrace.random import RNG
from headrace.readers._base import Reader

__all__ = ["Operator", "Reader", "class_name", "readers"]

#: Name parts the reference writes in capitals (``bbox_paste`` -> ``BBoxPaste``).
_ACRONYMS = {"bbox": "BBox", "mfcc": "MFCC", "nvtx": "NVTX", "rms": "RMS", "roi": "ROI"}
_DEVICES = ("cpu", "gpu", "mixed")
#: Sub-packages ``import headrace`` leaves for first use, whose operators get classes too.
_LAZY_PACKAGES = ("experimental", "segmentation")


def class_name(function_name: str) -> str:
    """The reference's class name of an operator function: ``crop_mirror_normalize`` ->
    ``CropMirrorNormalize``, ``mfcc`` -> ``MFCC``.

    Examples
    --------
    >>> class_name("random_bbox_crop"), class_name("roi_random_crop")
    ('RandomBBoxCrop', 'ROIRandomCrop')
    """
    return "".join(_ACRONYMS.get(t, t.capitalize()) for t in function_name.split("_"))


class _SchemaInfo:
    """What the reference's tests read of an operator's schema (``_schema``)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def Name(self) -> str:  # (the reference's spelling)
        """The operator's class name, with its module path (``random__Uniform``)."""
        *path, leaf = self._name.split(".")
        return "__".join([*path, class_name(leaf)])

    def IsDocHidden(self) -> bool:
        return False

    def IsDocPartiallyHidden(self) -> bool:
        return False

    def IsInternal(self) -> bool:
        return False


def _op_device(device: Any) -> Device | str:
    """A class-style operator's device: ``"mixed"``, or a :class:`Device` from ``"cpu"``,
    ``"gpu"``, ``"gpu:N"``, ``"cuda:N"``, a ``Device`` or a ``torch.device``."""
    if isinstance(device, Device) or device == "mixed":
        return device
    if type(device).__module__ == "torch":  # torch.device("cuda", 0) -> "cuda:0"
        device = str(device)
    try:
        return Device(device)
    except (TypeError, ValueError):
        raise ValueError(
            f"Invalid device: {device!r}. Use one of {', '.join(_DEVICES)} (or 'gpu:N')."
        ) from None


def _signature(x: Any) -> tuple[Any, ...]:
    """What a call's input must keep from the first call: batch or sample, and its traits."""
    if isinstance(x, Batch):
        return ("batch", x.ndim, x.layout, x.dtype)
    if isinstance(x, headrace.Tensor):
        return ("tensor", x.ndim, x.layout, x.dtype)
    return ("other", type(x))


class Operator:
    """Base of the class-style operators (see the module docstring)."""

    _function: ClassVar[Callable[..., Any]]
    _schema: ClassVar[_SchemaInfo]
    _random: ClassVar[bool] = False

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: str | Device = "cpu",
        num_inputs: int | None = None,
        **init_args: Any,
    ) -> None:
        """Fix the operator's device and arguments for every call of this instance.

        ``seed`` (random operators) seeds the instance's own generator.
        """
        del name, num_inputs  # (accepted as the reference's; nothing here depends on them)
        self._max_batch_size = max_batch_size
        self._device = _op_device(device)
        init_args.pop("_backend", None)  # (the reference's internal choice of kernel)
        seed = init_args.pop("seed", None) if self._random else None
        self._rng = RNG(seed=seed) if seed is not None else None
        self._init_args = init_args
        self._first: tuple[Any, ...] | None = None

    def __call__(
        self, *inputs: Any, batch_size: int | None = None, rng: Any = None, **args: Any
    ) -> Any:
        """Run the operator on ``inputs`` with the instance's arguments and these ``args``.

        Returns what the operator function returns (a ``Tensor``/``Batch`` or a tuple).
        """
        op = self._schema.Name()
        sizes = [x.batch_size for x in inputs if isinstance(x, Batch)]
        if batch_size is not None:
            sizes.append(batch_size)
        limit = self._max_batch_size
        if limit is not None and any(n > limit for n in sizes):
            raise RuntimeError(
                f"{op}: batch size {max(sizes)} exceeds this instance's max_batch_size of "
                f"{limit}. Create the operator with a larger max_batch_size."
            )
        signature = tuple(_signature(x) for x in inputs)
        if self._first is None:
            self._first = signature
        elif signature != self._first:
            raise RuntimeError(
                f"{op}: the inputs of this call ({signature}) are not compatible with the "
                f"previous call ({self._first}). Use one instance per kind of input."
            )
        kwargs = {**self._init_args, **args}
        if self._random:
            chosen = rng if rng is not None else self._rng
            if chosen is not None:
                kwargs["rng"] = chosen
        elif rng is not None:
            kwargs["rng"] = rng
        if batch_size is not None:
            kwargs["batch_size"] = batch_size
        return type(self)._function(*inputs, device=self._device, **kwargs)

    @classmethod
    def _process_params(
        cls, backend: str, op_device: Any, batch_size: Any, *raw_args: Any, **raw_kwargs: Any
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The reference's per-call hook on an operator's raw inputs and given arguments.

        headrace calls it only while it is replaced (the reference's tests spy on it); the
        original returns what it got.

        Examples
        --------
        >>> Operator._process_params("cpu", None, None, 1, matrix=2)
        ((1,), {'matrix': 2})
        """
        del backend, op_device, batch_size
        return raw_args, raw_kwargs


ParamsHook.owner, ParamsHook.original = Operator, Operator.__dict__["_process_params"]


def _function_of(name: str) -> Callable[..., Any] | None:
    """The public function of the schema ``name`` (``random.uniform``), or ``None``."""
    obj: Any = headrace
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if callable(obj) else None


def _make_class(schema: OpSchema, function: Callable[..., Any]) -> type[Operator]:
    summary = (function.__doc__ or "").strip().split("\n\n")[0].strip()
    doc = (
        f"{summary or f'The {schema.name} operator.'}\n\nThe class-style form of "
        f"``headrace.{schema.name}`` (its docstring describes the arguments)."
    )

    def __init__(self: Operator, *args: Any, **kwargs: Any) -> None:
        Operator.__init__(self, *args, **kwargs)

    def __call__(self: Operator, *inputs: Any, **kwargs: Any) -> Any:
        return Operator.__call__(self, *inputs, **kwargs)

    __init__.__doc__ = f"Fix the device and arguments of every call.\n\n{doc}"
    __call__.__doc__ = f"Run the operator on the inputs.\n\n{doc}"
    leaf = schema.name.split(".")[-1]
    return type(
        class_name(leaf),
        (Operator,),
        {
            "__init__": __init__,
            "__call__": __call__,
            "__doc__": doc,
            "__module__": __name__,
            "__qualname__": ".".join([*schema.name.split(".")[:-1], class_name(leaf)]),
            "_function": staticmethod(function),
            "_schema": _SchemaInfo(schema.name),
            "_random": schema.random,
        },
    )


def _build() -> tuple[list[Callable[..., Any]], list[type[Operator]]]:
    for package in _LAZY_PACKAGES:  # their operators register when they are imported
        importlib.import_module(f"headrace.{package}")
    functions: list[Callable[..., Any]] = []
    classes: list[type[Operator]] = []
    for name in sorted(REGISTRY):
        function = _function_of(name)
        if name.startswith("_") or function is None:
            continue  # internal schemas (arithmetic, subscripts) have no public function
        schema = REGISTRY[name]
        if not hasattr(function, "_schema"):
            function._schema = _SchemaInfo(name)  # type: ignore[attr-defined]
        cls = _make_class(schema, function)
        *path, _ = name.split(".")
        space = globals()
        for part in path:
            space = space.setdefault(part, SimpleNamespace()).__dict__
        space[cls.__name__] = cls
        functions.append(function)
        classes.append(cls)
    return functions, classes


_all_functions, _all_ops = _build()
# the readers, under the reference's path (``_ops.readers.File``, ``_ops.experimental.readers``)
experimental: Any = globals().setdefault("experimental", SimpleNamespace())
experimental.readers = importlib.import_module("headrace.experimental").readers
