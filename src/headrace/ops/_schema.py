"""One schema per operator: inputs, arguments, devices, kernels and dispatch.

An operator is declared once as an :class:`OpSchema`. Its public function (hand-written, typed,
documented) forwards to :meth:`OpSchema.call`, which

1. infers the batch size (``batch_size=`` or any ``Batch`` input/argument),
2. picks the device (explicit ``device=``; else GPU if any input is on a GPU; else CPU),
3. normalises the arguments once (per-sample ``Batch`` arguments stay per sample),
4. builds an invocation and applies the current :class:`~headrace.EvalMode`,
5. returns a ``Tensor`` for sample inputs and a ``Batch`` for batch inputs.

Kernels work on whole batches (lists of samples) and are registered per (op, device):
``cpu`` kernels live in ``headrace.backends.cpu``; ``gpu`` kernels in ``headrace.backends.torch``,
imported on first GPU use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU, Device
from headrace._core.device import device as _to_device
from headrace._core.errors import (
    BatchSizeMismatchError,
    InvalidArgumentError,
    InvalidTypeError,
    UnsupportedDeviceError,
)
from headrace._core.tensor import Tensor, _device_of
from headrace._exec import callsite as _callsite
from headrace._exec.context import EvalContext
from headrace._exec.eval_mode import EvalMode
from headrace._exec.invocation import Invocation, in_worker
from headrace._rng import resolve_rng
from headrace.capture._invariant import _InvariantProxy
from headrace.capture._invariant import unwrap as _unwrap_invariant
from headrace.capture._state import NOT_CAPTURED
from headrace.capture._state import _local as _cap_local

REGISTRY: dict[str, OpSchema] = {}
_NO_DEFAULT = object()


class PerSample(list):  # type: ignore[type-arg]
    """Argument values, one per sample."""

    __slots__ = ()


class ArgDict(dict):  # type: ignore[type-arg]
    """The argument values of one call; ``per_sample`` tells whether any is a ``PerSample``."""

    __slots__ = ("per_sample",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.per_sample = False


@dataclass(frozen=True)
class Arg:
    """One operator argument.

    Parameters
    ----------
    name : str
        Keyword name (the reference's spelling).
    convert : callable
        Turns one user value (scalar, list, numpy array) into what kernels expect.
    default : object
        Value used when the argument is omitted (``_NO_DEFAULT`` for required ones).
    per_sample : bool
        Whether a ``Tensor``/``Batch`` may give one value per sample.
    doc : str
        One-line description.
    """

    name: str
    convert: Callable[[Any], Any]
    default: Any = None
    per_sample: bool = False
    doc: str = ""


@dataclass
class OpSchema:
    """Declaration of one operator; see the module docstring."""

    name: str
    inputs: Sequence[str] = ("input",)
    args: Sequence[Arg] = ()
    devices: Sequence[str] = ("cpu", "gpu")
    num_outputs: int = 1
    random: bool = False
    min_inputs: int | None = None
    variadic: bool = False
    gpu_module: str | None = None
    cpu_only_inputs: bool = False
    output_devices: Callable[[Device], Sequence[Device]] | None = None
    check: Callable[[dict[str, Any]], None] | None = None
    inline_bytes: int = 1 << 16
    doc: str = ""
    kernels: dict[str, Callable[..., Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name in REGISTRY:
            raise RuntimeError(f"Operator {self.name!r} is declared twice.")
        REGISTRY[self.name] = self
        self.arg_map = {a.name: a for a in self.args}
        self.defaults = {a.name: a.default for a in self.args if a.default is not _NO_DEFAULT}
        self.required = tuple(a.name for a in self.args if a.default is _NO_DEFAULT)
        self._gpu_loaded = False

    # --- registration --------------------------------------------------------------------
    def kernel(self, device: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering a batch kernel for ``device``."""

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            if device in self.kernels:
                raise RuntimeError(f"{self.name}: a {device} kernel is already registered.")
            if device not in self.devices:
                raise RuntimeError(f"{self.name}: {device} is not among its devices.")
            self.kernels[device] = fn
            return fn

        return deco

    def _kernel_for(self, dev: Device) -> Callable[..., Any]:
        kind = dev.device_type
        k = self.kernels.get(kind)
        if k is None and kind == "gpu" and not self._gpu_loaded and "gpu" in self.devices:
            if self.gpu_module is None:
                raise UnsupportedDeviceError(f"{self.name}: no GPU kernel module is declared.")
            importlib.import_module(self.gpu_module)
            self._gpu_loaded = True
            k = self.kernels.get(kind)
        if k is None:
            supported = ", ".join(repr(d) for d in self.devices)
            raise UnsupportedDeviceError(
                f'Invalid device "{dev.device_type}" for operator `{self.name}`: it supports '
                f"{supported}."
            )
        return k

    def _out_devices(self, dev: Device) -> Sequence[Device]:
        if self.output_devices is not None:
            return self.output_devices(dev)
        return (dev,) * self.num_outputs

    # --- dispatch --------------------------------------------------------------------------
    def call(
        self,
        inputs: Sequence[Any],
        device: Any = None,
        batch_size: int | None = None,
        rng: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Run the operator on ``inputs`` with ``kwargs`` (``None`` values mean "default")."""
        loop = _cap_local.__dict__.get("loop")
        if loop is not None and not loop.suspended:
            r = loop.on_call(self, inputs, device, batch_size, rng, kwargs)
            if r is not NOT_CAPTURED:
                return r
        name = self.name
        # 1. inputs and batch size
        if type(batch_size) is _InvariantProxy:
            batch_size = _unwrap_invariant(batch_size)
        n = None if batch_size is None else _check_batch_size(name, batch_size)
        batch_mode = n is not None
        external = False
        in_gpu = False
        ins: list[Any] = []
        for i, x in enumerate(inputs):
            if x is None:
                ins.append(None)
                continue
            if isinstance(x, Batch):
                batch_mode = True
                if n is None:
                    n = x._bs
                elif x._bs != n:
                    _raise_bs(name, n, x._bs, batch_size)
            elif not isinstance(x, Tensor):
                x = _to_input(name, self.inputs, i, x)
            external |= x._external
            in_gpu |= x._device.device_type == "gpu"
            ins.append(x)
        # 2. arguments
        vals = ArgDict(self.defaults)
        lazy_args: list[tuple[str, Any]] = []
        for k, v in kwargs.items():
            if v is None:
                continue
            a = self.arg_map.get(k)
            if a is None:
                raise InvalidTypeError(f"{name}() got an unexpected keyword argument {k!r}.")
            if type(v) is _InvariantProxy:
                v = _unwrap_invariant(v)
            if isinstance(v, (Tensor, Batch)) or _is_array_arg(v):
                if isinstance(v, Batch):
                    batch_mode = True
                    if n is None:
                        n = v._bs
                    elif v._bs != n:
                        _raise_bs(name, n, v._bs, batch_size)
                elif not isinstance(v, Tensor):
                    v = Tensor._wrap(v, _st.dtype_of(v), None, _device_of(v))
                if not a.per_sample and isinstance(v, Batch):
                    raise InvalidArgumentError(
                        f"{name}: argument {k!r} cannot vary per sample; pass one value."
                    )
                lazy_args.append((k, v))
                vals[k] = None
            else:
                try:
                    vals[k] = a.convert(v)
                except (TypeError, ValueError) as e:
                    raise type(e)(f"{name}: invalid value for argument {k!r} ({e}).") from None
        for r in self.required:
            if r not in vals and not any(k == r for k, _ in lazy_args):
                raise InvalidTypeError(f"{name}() missing required keyword argument: {r!r}")
        if self.check is not None and not lazy_args:
            self.check(vals)
        if n is None:
            n = 1
        # 3. device
        if device is not None:
            if device == "mixed":
                raise UnsupportedDeviceError(
                    f'{name}: Invalid device type: mixed. "mixed" is a pipeline-mode concept; in '
                    'dynamic mode pass device="gpu" (decoders then decode on the CPU/GPU and '
                    "return GPU data)."
                )
            dev = _to_device(device)
            if dev.device_type not in self.devices:  # type: ignore[union-attr]
                supported = ", ".join(repr(d) for d in self.devices)
                raise UnsupportedDeviceError(
                    f'Invalid device "{device}" for operator `{name}`: it supports {supported}.'
                )
        elif in_gpu and "gpu" in self.devices:
            dev = ins_gpu_device(ins)
        elif len(self.devices) == 1 and self.devices[0] == "gpu":
            dev = Device("gpu")
        else:
            dev = CPU
        kern = self._kernel_for(dev)  # type: ignore[arg-type]
        rng_words = None
        if self.random:
            rng_words = resolve_rng(rng).draw(7)
        ctx = EvalContext.current()

        def run() -> tuple[Batch, ...]:
            kc = KernelContext(name, ctx, dev, n, rng_words)
            batches = [None if x is None else _as_input_batch(x, n, dev, self) for x in ins]
            if batches and batches[0] is not None:
                kc.sources = batches[0]._sources
            if lazy_args:
                for k, v in lazy_args:
                    r = vals[k] = _resolve_arg(self, k, v, n)
                    if type(r) is PerSample:
                        vals.per_sample = True
                if self.check is not None:
                    self.check(vals)
            return kern(kc, batches, vals)

        mode = EvalMode.current()
        if mode.value >= 2 or external or in_worker():
            outs = run()  # errors surface here, at the user's call, with their own type
            if mode is EvalMode.sync_full:
                _sync_device(dev)
            return _wrap_outputs(outs, batch_mode, self.num_outputs)
        if (
            mode is EvalMode.eager
            and self.inline_bytes
            and ctx.idle()
            and _input_bytes(ins) <= self.inline_bytes
        ):
            # Tiny work: handing it to another thread costs more than doing it. Run it now,
            # in order (nothing is queued), and keep eager semantics for errors: they surface
            # where the result is consumed. The call site is captured only if it fails.
            try:
                outs = run()
            except Exception as e:  # re-raised where the result is consumed
                inv = Invocation.failed(e, name)
                return _lazy_outputs(inv, n, batch_mode, self._out_devices(dev), self.num_outputs)
            return _wrap_outputs(outs, batch_mode, self.num_outputs)
        inv = Invocation(run, name, _callsite.capture(2), deferred=mode is EvalMode.deferred)
        n_out = None if vals.get("on_error") == "skip" else n  # skipping may shrink the batch
        res = _lazy_outputs(inv, n_out, batch_mode, self._out_devices(dev), self.num_outputs)
        if mode is EvalMode.eager:
            ctx.submit(inv)
        else:
            ctx.defer(res if self.num_outputs == 1 else res[0])
        return res


class KernelContext:
    """What a kernel gets besides its inputs: the op name, device, batch size, pool, randomness."""

    __slots__ = ("ctx", "device", "n", "name", "rng_words", "sources")

    def __init__(self, name: str, ctx: EvalContext, dev: Device, n: int, rng_words: Any) -> None:
        self.name = name
        self.ctx = ctx
        self.device = dev
        self.n = n
        self.rng_words = rng_words
        self.sources: list[str | None] | None = None

    def generator(self) -> np.random.Generator:
        """A numpy Generator determined by this call's RNG draw (same draw → same values)."""
        from headrace._rng import call_generator

        return call_generator(self.rng_words)

    def source(self, i: int) -> str | None:
        """Where sample ``i`` came from (a path), when known."""
        s = self.sources
        return s[i] if s is not None and i < len(s) else None

    def map(
        self, fn: Callable[[int], Any], parallel: bool = True, chunked: bool = False
    ) -> list[Any]:
        """``[fn(i) for i in range(n)]`` on the worker pool; errors name the sample.

        ``chunked=True`` gives each thread one contiguous run of samples (for light kernels).
        """

        def one(i: int) -> Any:
            try:
                return fn(i)
            except Exception as e:
                raise annotate(e, self.name, i, self.source(i)) from None

        if not parallel or self.n <= 1:
            return [one(i) for i in range(self.n)]
        return self.ctx.parallel_map(one, range(self.n), chunked)  # type: ignore[arg-type]


def annotate(e: BaseException, op: str, i: int, source: str | None) -> BaseException:
    """Prefix ``e``'s message with the operator, the sample index and its source (once)."""
    if getattr(e, "_headrace_annotated", False):
        return e
    where = f"sample {i}" + (f" ({source!r})" if source else "")
    msg = str(e.args[0]) if e.args else type(e).__name__
    prefix = f"{op}: " if not msg.startswith(f"{op}:") else ""
    rest = msg[len(op) + 2 :] if not prefix else msg
    e.args = (f"{op}: {where}: {rest}",) + tuple(e.args[1:])
    if hasattr(e, "sample_index"):
        e.sample_index = i  # type: ignore[attr-defined]
        if source is not None:
            e.source = source  # type: ignore[attr-defined]
    try:
        e._headrace_annotated = True  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return e


# --- helpers -----------------------------------------------------------------------------------
def _input_bytes(ins: list[Any]) -> int:
    """A cheap upper estimate of the input size; lazy inputs count as large."""
    total = 0
    for x in ins:
        if x is None:
            continue
        if isinstance(x, Batch):
            s = x._samples
            if s is None:
                return 1 << 62
            if s:
                total += len(s) * s[0].nbytes
        else:
            d = x._data
            if d is None:
                return 1 << 62
            total += d.nbytes
    return total


def _check_batch_size(name: str, bs: Any) -> int:
    if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)):
        raise InvalidTypeError(f"{name}: batch_size must be an int (got {bs!r}).")
    if bs < 0:
        raise InvalidArgumentError(f"{name}: batch_size must not be negative (got {bs}).")
    return int(bs)


def _raise_bs(name: str, a: int, b: int, explicit: int | None) -> None:
    if explicit is not None:
        raise BatchSizeMismatchError(
            f"Unexpected batch size: {b} (operator `{name}` was called with batch_size={a})."
        )
    raise BatchSizeMismatchError(f"Inconsistent batch size: {a} != {b}")


def _is_array_arg(v: Any) -> bool:
    """Torch tensors given as arguments are treated like Tensors (numpy arrays as constants)."""
    return _st.is_torch(v)


def _to_input(name: str, input_names: Sequence[str], i: int, x: Any) -> Tensor:
    try:
        return Tensor(x)
    except (TypeError, ValueError) as e:
        what = input_names[i] if i < len(input_names) else f"input {i}"
        raise type(e)(f"{name}: cannot use {type(x).__name__} as {what!r}: {e}") from None


def ins_gpu_device(ins: list[Any]) -> Device:
    """The GPU device of the inputs (they must agree)."""
    found: Device | None = None
    for x in ins:
        if x is not None and x._device.device_type == "gpu":
            if found is not None and x._device != found:
                raise RuntimeError(
                    f"Got inputs with different device ids: {found} and {x._device}."
                )
            found = x._device
    assert found is not None
    return found


def _as_input_batch(x: Tensor | Batch, n: int, dev: Device, schema: OpSchema) -> Batch:
    """A concrete Batch of ``n`` samples on the device the kernel needs."""
    want = CPU if schema.cpu_only_inputs else dev
    if isinstance(x, Batch):
        x.evaluate()
        b = x
        if b._device != want:
            samples = [_st.move(s, want, b._dtype) for s in b._samples]  # type: ignore[union-attr]
            moved = Batch._wrap(samples, b._dtype, b._layout, want)
            moved._sources = b._sources
            b = moved
        return b
    arr = x._resolved_data()
    if x._device != want:
        arr = _st.move(arr, want, x._dtype)
    b = Batch._wrap([arr] * n, x._dtype, x._layout, want)
    if x._source is not None:
        b._sources = [x._source] * n
    return b


def _resolve_arg(schema: OpSchema, k: str, v: Tensor | Batch, n: int) -> Any:
    a = schema.arg_map[k]
    conv = a.convert
    try:
        if isinstance(v, Batch):
            samples = [_st.move(s, CPU, v.dtype) for s in v._resolved()]
            return PerSample(conv(s) for s in samples)
        arr = v._resolved_data()
        if v._device.device_type != "cpu":
            arr = _st.move(arr, CPU, v._dtype)
        return conv(arr)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{schema.name}: invalid value for argument {k!r} ({e}).") from None


def _wrap_outputs(outs: tuple[Batch, ...], batch_mode: bool, num_outputs: int) -> Any:
    if batch_mode:
        res: tuple[Any, ...] = outs
    else:
        res = tuple(
            Tensor._wrap(b._samples[0], b._dtype, b._layout, b._device)  # type: ignore[index]
            for b in outs
        )
    return res[0] if num_outputs == 1 else res


def _lazy_outputs(
    inv: Invocation, n: int | None, batch_mode: bool, devs: Sequence[Device], num_outputs: int
) -> Any:
    if batch_mode:
        res: tuple[Any, ...] = tuple(
            Batch(invocation_result=(inv, k, n, None, None, devs[k])) for k in range(num_outputs)
        )
    else:
        res = tuple(
            Tensor(invocation_result=(inv, k, 0, None, None, devs[k])) for k in range(num_outputs)
        )
    return res[0] if num_outputs == 1 else res


def _sync_device(dev: Device) -> None:
    if dev.device_type == "gpu" and Device.gpu_count() and dev.torch_device().type == "cuda":
        import torch

        torch.cuda.synchronize(dev.device_id)


# --- argument converters ------------------------------------------------------------------------
def to_float(v: Any) -> float:
    """A scalar float argument."""
    return float(np.asarray(v).reshape(()))


def to_int(v: Any) -> int:
    """A scalar int argument."""
    a = np.asarray(v).reshape(())
    if a.dtype.kind == "f" and float(a) != int(a):
        raise ValueError(f"expected an integer, got {float(a)}")
    return int(a)


def to_bool(v: Any) -> bool:
    """A scalar bool argument."""
    return bool(np.asarray(v).reshape(()))


def to_floats(v: Any) -> np.ndarray:
    """A float32 array argument (scalar or vector)."""
    return np.asarray(v, dtype=np.float32)


def to_ints(v: Any) -> np.ndarray:
    """An int64 array argument (scalar or vector)."""
    a = np.asarray(v)
    if a.dtype.kind == "f":
        if not np.all(a == np.round(a)):
            raise ValueError(f"expected integers, got {a.tolist()}")
    return a.astype(np.int64)


def to_str(v: Any) -> str:
    """A string argument."""
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {type(v).__name__}")
    return v


def to_dtype(v: Any) -> _dt.DType:
    """A dtype argument."""
    return _dt.dtype(v)


def to_layout(v: Any) -> str:
    """A layout string argument."""
    if not isinstance(v, str):
        raise TypeError(f"expected a layout string, got {type(v).__name__}")
    return v


def to_any(v: Any) -> Any:
    """Pass the value through."""
    return v


def forward_args(loc: dict[str, Any], *inputs: str) -> dict[str, Any]:
    """A public operator function's keyword arguments: its ``locals()`` minus the named inputs,
    without the ``None`` values (they mean "operator default")."""
    return {k: v for k, v in loc.items() if v is not None and k not in inputs}


def sample_args(vals: dict[str, Any], i: int) -> dict[str, Any]:
    """The arguments of sample ``i`` (per-sample values picked)."""
    return {k: (v[i] if type(v) is PerSample else v) for k, v in vals.items()}


def has_per_sample(vals: dict[str, Any]) -> bool:
    """True when any argument varies per sample."""
    flag = getattr(vals, "per_sample", None)
    if flag is not None:
        return flag  # type: ignore[no-any-return]
    return any(type(v) is PerSample for v in vals.values())


def per_sample_kernel(
    sample_fn: Callable[..., Any],
    *,
    layout: Callable[[str | None, dict[str, Any]], str | None] | None = None,
    parallel: bool = True,
) -> Callable[..., tuple[Batch, ...]]:
    """A batch kernel applying ``sample_fn(sample, layout, **args)`` to every sample."""

    def kern(kc: KernelContext, ins: list[Batch], vals: dict[str, Any]) -> tuple[Batch, ...]:
        x = ins[0]
        lay = x._layout
        samples = x._samples
        assert samples is not None
        if has_per_sample(vals):
            outs = kc.map(lambda i: sample_fn(samples[i], lay, **sample_args(vals, i)), parallel)
        else:
            outs = kc.map(lambda i: sample_fn(samples[i], lay, **vals), parallel)
        dt = _st.dtype_of(outs[0]) if outs else x._dtype
        out_layout = layout(lay, vals) if layout is not None else lay
        if out_layout is not None and outs and len(out_layout) != outs[0].ndim:
            out_layout = None
        return (Batch._wrap(outs, dt, out_layout, kc.device),)

    return kern
