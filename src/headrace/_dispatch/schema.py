"""One schema per operator: its inputs, arguments, devices, and where its kernels live.

An operator is declared once as an :class:`OpSchema` in its ``ops`` (or ``decoders``,
``random``…) module. Its kernels are *found by name*: the kernel of ``op`` for device ``cpu`` is
the attribute ``op`` (or ``kernel=``) of ``headrace.backends.cpu.<family>``; for ``gpu`` it is the
same name in ``headrace.backends.torch.<family>``. Backend modules are imported on the first call
that needs them; nothing registers kernels as an import side effect.

A kernel found by name is one of two things:

* with ``planned=Planned(...)``: a per-sample *pixel kernel* ``fn(sample, layout, **plan.kwargs)``;
  the plan (output shape, dtype and the kernel's parameters) comes from the schema's plan function
  on the CPU, identically for every backend (see :mod:`headrace._dispatch.planned`). A backend may
  also define ``<kernel>_batched(samples, layout, plans)``, the same work on the whole batch at
  once (e.g. a few large GPU kernels instead of one launch per sample);
* otherwise: a *batch kernel* ``fn(kc, inputs, args) -> tuple[Batch, ...]``. The schema's
  ``prepare(kc, inputs, args) -> args``, when given, runs first (on the calling thread, for every
  backend): ops-layer work such as per-sample windows drawn in sample order.

Examples
--------
>>> import headrace as ndd
>>> from headrace._dispatch.schema import REGISTRY
>>> s = REGISTRY["brightness_contrast"]
>>> s.family, s.kernel, s.planned is not None
('color', 'brightness_contrast', True)
>>> s.kernel_for(ndd.device("cpu")).__name__
'planned_brightness_contrast'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from headrace._core.batch import Batch
from headrace._core.device import Device
from headrace._core.errors import UnsupportedDeviceError
from headrace._dispatch.args import REQUIRED, Arg
from headrace._dispatch.call import dispatch
from headrace._dispatch.deprecated_args import DEPRECATED_ARGS
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.planned import Planned, planned_kernel

Vals = dict[str, Any]

#: Every declared operator by name.
REGISTRY: dict[str, OpSchema] = {}
#: The package holding each device type's kernels.
BACKENDS = {"cpu": "headrace.backends.cpu", "gpu": "headrace.backends.torch"}


@dataclass
class OpSchema:
    """Declaration of one operator; see the module docstring.

    ``family`` names the backend modules (``backends/<backend>/<family>.py``) holding its
    kernels; ``kernel`` the attribute there (default: the last part of ``name``).
    ``capture=False`` keeps the op out of capture-mode recording (it runs eagerly).
    ``min_inputs=0`` makes every input optional (a ``None`` first input is an error otherwise).
    ``prepare`` (batch kernels only; planned ops have ``Planned.prepare``) turns the call's
    arguments into what the kernel takes before it runs. ``per_frame_inputs`` names inputs that,
    marked with ``ndd.per_frame``, hold one value per frame of the first input's sequences (as a
    per-frame argument does: ``warp_affine``'s ``mtx``). ``per_frame_vals`` adjusts the frames'
    argument values before a per-frame call runs them: ``(vals, counts, frame_shapes, layout)``,
    ``counts`` the frames of each sequence (``rotate``: one canvas for all frames of a sequence).
    ``mixed``: the reference runs the op on its ``"mixed"`` backend (the decoders), so
    ``device="mixed"`` is accepted and means ``"gpu"``. ``meta`` predicts the outputs'
    :class:`~headrace._core.meta.Meta` of a pending call from the inputs' (``None`` where
    unknown), the converted arguments and the tensor-valued ones (see
    :mod:`headrace._dispatch.meta_rules`).
    """

    name: str
    family: str
    inputs: Sequence[str] = ("input",)
    args: Sequence[Arg] = ()
    devices: Sequence[str] = ("cpu", "gpu")
    num_outputs: int = 1
    random: bool = False
    planned: Planned | None = None
    kernel: str = ""
    min_inputs: int | None = None
    variadic: bool = False
    cpu_only_inputs: bool = False
    per_frame_inputs: Sequence[str] = ()
    mixed: bool = False
    meta: Callable[[list[Any], Any, dict[str, Any]], Sequence[Any] | None] | None = None
    per_frame_vals: Callable[[Any, list[int], list[tuple[int, ...]], str | None], None] | None = (
        None
    )
    output_devices: Callable[[Device], Sequence[Device]] | None = None
    check: Callable[[dict[str, Any]], None] | None = None
    prepare: Callable[[KernelContext, list[Batch | None], Vals], Vals] | None = None
    inline_bytes: int = 1 << 16
    capture: bool = True
    doc: str = ""
    kernels: dict[str, Callable[..., Any]] = field(default_factory=dict, repr=False)
    modules: dict[str, ModuleType] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.name in REGISTRY:
            raise RuntimeError(f"Operator {self.name!r} is declared twice.")
        if self.prepare is not None and self.planned is not None:
            raise ValueError(f"{self.name}: use Planned.prepare for a planned operator.")
        REGISTRY[self.name] = self
        if not self.kernel:
            self.kernel = self.name.rsplit(".", 1)[-1]
        self.arg_map = {a.name: a for a in self.args}
        self.deprecated = DEPRECATED_ARGS.get(self.name)  # warned about when given
        self.defaults = {a.name: a.default for a in self.args if a.default is not REQUIRED}
        self.required = tuple(a.name for a in self.args if a.default is REQUIRED)

    def __reduce__(self) -> tuple[Callable[[str], OpSchema], tuple[str]]:
        """Pickled by name (e.g. for worker processes): the same process-wide declaration."""
        return registered, (self.name,)

    def call(
        self,
        inputs: Sequence[Any],
        device: Any = None,
        batch_size: int | None = None,
        rng: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Run the operator on ``inputs`` with ``kwargs`` (``None`` values mean "default")."""
        return dispatch(self, inputs, device, batch_size, rng, kwargs)

    # --- kernels, found by name ----------------------------------------------------------------
    def backend_module(self, kind: str) -> ModuleType:
        """The module holding this op's kernels for device type ``kind`` (imported lazily)."""
        mod = self.modules.get(kind)
        if mod is None:
            pkg = BACKENDS.get(kind)
            if pkg is None or kind not in self.devices:
                raise self._unsupported(kind)
            mod = self.modules[kind] = importlib.import_module(f"{pkg}.{self.family}")
        return mod

    def kernel_for(self, dev: Device) -> Callable[..., Any]:
        """The batch kernel for ``dev``'s device type."""
        kind = dev.device_type
        k = self.kernels.get(kind)
        if k is None:
            mod = self.backend_module(kind)
            fn = getattr(mod, self.kernel, None)
            if fn is None:
                raise UnsupportedDeviceError(
                    f"Operator `{self.name}` has no {kind} kernel: "
                    f"{mod.__name__}.{self.kernel} is missing."
                )
            if self.planned is not None:
                fn = planned_kernel(self.planned, fn, getattr(mod, f"{self.kernel}_batched", None))
            elif self.prepare is not None:
                fn = _prepared(self.prepare, fn)
            k = self.kernels[kind] = fn
        return k

    def _unsupported(self, kind: str) -> UnsupportedDeviceError:
        supported = ", ".join(repr(d) for d in self.devices)
        return UnsupportedDeviceError(
            f'Invalid device "{kind}" for operator `{self.name}`: it supports {supported}.'
        )

    def out_devices(self, dev: Device) -> Sequence[Device]:
        """The devices of the outputs when the op runs on ``dev``."""
        if self.output_devices is not None:
            return self.output_devices(dev)
        return (dev,) * self.num_outputs


def registered(name: str) -> OpSchema:
    """The declaration of operator ``name``, importing the module that declares it if needed
    (``headrace`` itself, or its namespace: ``transforms.crop`` is in ``headrace.transforms``)."""
    if name not in REGISTRY:
        importlib.import_module("headrace")
    if name not in REGISTRY and "." in name:
        importlib.import_module("headrace." + name.rsplit(".", 1)[0])
    return REGISTRY[name]


def _prepared(
    prepare: Callable[[KernelContext, list[Batch | None], Vals], Vals],
    fn: Callable[..., tuple[Batch, ...]],
) -> Callable[..., tuple[Batch, ...]]:
    """The batch kernel ``fn`` run on the arguments ``prepare`` makes."""

    def kern(kc: KernelContext, ins: list[Batch | None], vals: Vals) -> tuple[Batch, ...]:
        return fn(kc, ins, prepare(kc, ins, vals))

    kern.__name__ = kern.__qualname__ = fn.__name__
    return kern
