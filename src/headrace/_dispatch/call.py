"""Dispatch of one operator call: bind inputs, bind arguments, pick the device, launch.

:func:`dispatch` (behind :meth:`OpSchema.call`)

1. binds the inputs and infers the batch size (``batch_size=`` or any ``Batch`` input/argument),
2. binds the arguments once (per-sample ``Batch`` arguments stay per sample, resolved later),
3. picks the device (explicit ``device=``; else GPU if any input is on a GPU; else CPU),
4. launches: runs now or builds an invocation as the current :class:`~headrace.EvalMode` says,
   and returns a ``Tensor`` for sample inputs, a ``Batch`` for batch inputs.

A capture loop bound to the thread (:mod:`.hooks`) sees every call first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from headrace._core import callsite as _callsite
from headrace._core import handoff as _ho
from headrace._core import meta as _meta
from headrace._core import storage as _st
from headrace._core.batch import Batch
from headrace._core.device import CPU, Device, _real_gpu_count
from headrace._core.device import device as _to_device
from headrace._core.errors import (
    BatchSizeMismatchError,
    InvalidArgumentError,
    InvalidTypeError,
    UnsupportedDeviceError,
)
from headrace._core.eval_mode import EvalMode
from headrace._core.invocation import Invocation, in_worker
from headrace._core.meta import Meta
from headrace._core.meta import of as meta_of
from headrace._core.proxy import Proxy
from headrace._core.tensor import Tensor, _device_of
from headrace._dispatch import per_frame
from headrace._dispatch.args import ArgDict, PerSample
from headrace._dispatch.chain import Stage, can_stage, run_chain
from headrace._dispatch.deprecated_args import warn_deprecated
from headrace._dispatch.hooks import NOT_CAPTURED, ParamsHook
from headrace._dispatch.hooks import _local as _hook_local
from headrace._dispatch.kernel_context import KernelContext
from headrace._exec.context import EvalContext, RunningCall
from headrace._rng import resolve_rng

if TYPE_CHECKING:
    from headrace._dispatch.schema import OpSchema


class _Bound:
    """The inputs of one call: values, batch size, and what they say about the call."""

    __slots__ = ("batch_mode", "external", "in_gpu", "ins", "n")

    def __init__(self) -> None:
        self.ins: list[Any] = []
        self.n: int | None = None
        self.batch_mode = False
        self.external = False
        self.in_gpu = False

    def take_batch_size(self, name: str, bs: int, explicit: int | None) -> None:
        self.batch_mode = True
        if self.n is None:
            self.n = bs
        elif bs != self.n:
            _raise_bs(name, self.n, bs, explicit)


def dispatch(
    schema: OpSchema,
    inputs: Sequence[Any],
    device: Any,
    batch_size: Any,
    rng: Any,
    kwargs: dict[str, Any],
) -> Any:
    """Run ``schema`` on ``inputs`` with ``kwargs`` (``None`` values mean "default")."""
    loop = _hook_local.__dict__.get("loop")
    if loop is not None and not loop.suspended:
        r = loop.on_call(schema, inputs, device, batch_size, rng, kwargs)
        if r is not NOT_CAPTURED:
            return r
    b = _bind_inputs(schema, inputs, batch_size, kwargs.get("on_error") == "skip")
    vals, lazy_args = _bind_args(schema, kwargs, b, batch_size)
    if b.n is None:
        b.n = 1
    dev = _pick_device(schema, device, b)
    hook = ParamsHook.replaced()
    if hook is not None:
        given = {k: v for k, v in kwargs.items() if v is not None}
        hook(dev.device_type, dev, batch_size, *inputs, **given)
    return _launch(schema, b, vals, lazy_args, dev, rng)


def _bind_inputs(
    schema: OpSchema, inputs: Sequence[Any], batch_size: Any, skips: bool = False
) -> _Bound:
    """The inputs; ``skips``: the op drops undecodable samples of input 0 (a decoder with
    ``on_error="skip"``), which may then come from a reader step it already shrank."""
    name = schema.name
    b = _Bound()
    if batch_size is not None:
        if isinstance(batch_size, Proxy):
            batch_size = batch_size.__headrace_unwrap__()
        b.n = _check_batch_size(name, batch_size)
        b.batch_mode = True
    ins = b.ins
    for i, x in enumerate(inputs):
        if x is None:
            if i == 0 and schema.inputs and schema.min_inputs != 0:  # a required data input
                raise InvalidTypeError(
                    f"{name}: input {schema.inputs[0]!r} is None; pass a Tensor, a Batch or "
                    "an array."
                )
            ins.append(None)
            continue
        if isinstance(x, Batch):
            if x._step is not None and not (i == 0 and skips):
                x._step.check(x)  # a skipping decoder dropped samples of its reader step
            b.take_batch_size(name, x._bs if x._bs is not None else x.batch_size, batch_size)
        elif not isinstance(x, Tensor):
            x = _to_input(name, schema.inputs, i, x)
        b.external |= x._external
        b.in_gpu |= x._device.device_type == "gpu"
        ins.append(x)
    return b


def _bind_args(
    schema: OpSchema, kwargs: dict[str, Any], b: _Bound, batch_size: Any
) -> tuple[ArgDict, list[tuple[str, Any]]]:
    """Converted argument values; ``Tensor``/``Batch`` values are kept to resolve at run time."""
    name = schema.name
    vals = ArgDict(schema.defaults)
    lazy_args: list[tuple[str, Any]] = []
    arg_map = schema.arg_map
    deprecated = schema.deprecated
    for k, v in kwargs.items():
        if isinstance(v, Proxy):  # e.g. capture.invariant(None): the wrapped value counts
            v = v.__headrace_unwrap__()
        if v is None:
            continue
        if deprecated and k in deprecated:
            warn_deprecated(name, k)
        a = arg_map.get(k)
        if a is None:
            raise InvalidTypeError(f"{name}() got an unexpected keyword argument {k!r}.")
        if isinstance(v, (Tensor, Batch)) or _st.is_torch(v):
            if isinstance(v, Batch):
                if not a.per_sample:
                    raise InvalidArgumentError(
                        f"{name}: argument {k!r} cannot vary per sample; pass one value."
                    )
                if v._step is not None:
                    v._step.check(v)
                b.take_batch_size(name, v._bs if v._bs is not None else v.batch_size, batch_size)
            elif not isinstance(v, Tensor):  # torch tensors act like Tensors (CUDA ones are
                # marked on the caller's current stream: the call waits for their writer)
                v = Tensor._wrap(v, _st.dtype_of(v), None, _device_of(v), ready=_ho.mark(v))
            lazy_args.append((k, v))
            vals[k] = None
        else:
            try:
                vals[k] = a.convert(v)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{name}: invalid value for argument {k!r} ({e}).") from None
    for r in schema.required:
        if r not in vals and not any(k == r for k, _ in lazy_args):
            raise InvalidTypeError(f"{name}() missing required keyword argument: {r!r}")
    if schema.check is not None and not lazy_args:
        schema.check(vals)
    return vals, lazy_args


def _pick_device(schema: OpSchema, device: Any, b: _Bound) -> Device:
    devices = schema.devices
    if device is not None:
        if device == "mixed" and schema.mixed:
            device = "gpu"  # (the reference's name of its decoders' GPU device)
        elif device == "mixed":
            raise UnsupportedDeviceError(
                f'{schema.name}: Invalid device type: mixed. "mixed" is a pipeline-mode concept; '
                'in dynamic mode pass device="gpu" (decoders then decode on the CPU/GPU and '
                "return GPU data)."
            )
        dev: Device = _to_device(device)  # type: ignore[assignment]
        if dev.device_type not in devices:
            raise schema._unsupported(str(device))
        return dev
    if b.in_gpu and "gpu" in devices:
        return _gpu_device_of(b.ins)
    if len(devices) == 1 and devices[0] == "gpu":
        return Device("gpu")
    return CPU


def _launch(
    schema: OpSchema,
    b: _Bound,
    vals: ArgDict,
    lazy_args: list[tuple[str, Any]],
    dev: Device,
    rng: Any,
) -> Any:
    name = schema.name
    kern = schema.kernel_for(dev)
    module = schema.modules.get(dev.device_type)
    rng_words = resolve_rng(rng).draw(7) if schema.random else None
    ctx = EvalContext.current()
    ins = b.ins
    n: int = b.n  # type: ignore[assignment]
    num_outputs = schema.num_outputs
    # the stream is chosen at the call (the executor thread has other thread-local settings)
    stream = _call_stream(ctx, dev) if dev.device_type == "gpu" and _real_gpu_count() else None

    def kernel_context() -> KernelContext:
        return KernelContext(name, ctx, dev, n, rng_words, module, stream)

    def resolved_vals(skip: Sequence[str] = ()) -> ArgDict:
        """The arguments with per-sample argument batches resolved (idempotent); ``skip``:
        per-frame arguments, left to :func:`per_frame.run` (elsewhere they are refused)."""
        if lazy_args:
            for k, v in lazy_args:
                if k in skip:
                    continue
                if per_frame.marked(v):
                    raise per_frame.PerFrameArguments(k)
                r = vals[k] = _resolve_arg(schema, k, v, n, stream)
                if type(r) is PerSample:
                    vals.per_sample = True
            if schema.check is not None and not skip:
                schema.check(vals)
        return vals

    def input_batch(x: Tensor | Batch) -> Batch:
        return _as_input_batch(x, n, dev, schema, stream)

    stage = None
    if b.batch_mode and can_stage(schema.planned, module, schema.kernel, dev, ins, stream):
        pixel = getattr(module, schema.kernel)
        stage = Stage(name, schema.planned, pixel, ins[0], resolved_vals, kernel_context, ctx)  # type: ignore[arg-type]

    def body() -> tuple[Batch, ...]:
        with RunningCall(ctx):  # (kernels that split a batch over a pool use this call's)
            return run_body()

    def run_body() -> tuple[Batch, ...]:
        frames = {k: v for k, v in lazy_args if per_frame.marked(v)} if lazy_args else None
        frame_inputs = (
            {
                i: schema.inputs[i]
                for i, x in enumerate(ins)
                if 0 < i < len(schema.inputs)
                and x is not None
                and schema.inputs[i] in schema.per_frame_inputs
                and per_frame.marked(x)
            }
            if schema.per_frame_inputs
            else None
        )
        if stage is not None and not frames and not frame_inputs:
            chained = run_chain(stage, input_batch)
            if chained is not None:
                return chained
        kc = kernel_context()
        batches = [None if x is None else input_batch(x) for x in ins]
        if batches and batches[0] is not None:
            kc.sources = batches[0]._sources
        if frames or frame_inputs:
            frames = frames or {}
            resolved_vals(tuple(frames))
            convert = {k: schema.arg_map[k].convert for k in frames}
            outs = per_frame.run(
                kern, kc, batches, vals, frames, convert, frame_inputs, schema.per_frame_vals
            )
        else:
            resolved_vals()
            outs = kern(kc, batches, vals)
        if stream is not None:
            _mark_outputs(outs, stream)
        return outs  # type: ignore[no-any-return]

    run = body if stream is None else lambda: _on_stream(stream, body)

    mode = EvalMode.current()
    batch_mode = b.batch_mode
    if mode.value >= 2 or b.external or in_worker():
        outs = run()  # errors surface here, at the user's call, with their own type
        if mode is EvalMode.sync_full and stream is not None:
            stream.synchronize()  # this call's stream only, not the whole device
        return _wrap_outputs(outs, batch_mode, num_outputs)
    if (
        mode is EvalMode.eager
        and schema.inline_bytes
        and ctx.idle()
        and _input_bytes(ins) <= schema.inline_bytes
    ):
        # Tiny work: handing it to another thread costs more than doing it. Run it now, in
        # order (nothing is queued), and keep eager semantics for errors: they surface where
        # the result is consumed. The call site is captured only if it fails.
        try:
            outs = run()
        except Exception as e:  # re-raised where the result is consumed
            inv = Invocation.failed(e, name)
            return _lazy_outputs(inv, n, batch_mode, schema.out_devices(dev), num_outputs)
        return _wrap_outputs(outs, batch_mode, num_outputs)
    inv = Invocation(
        run, name, _callsite.capture(3), deferred=mode is EvalMode.deferred, stage=stage
    )
    n_out = None if vals.get("on_error") == "skip" else n  # skipping may shrink the batch
    metas = _predicted(schema, ins, vals, lazy_args) if schema.meta is not None else None
    res = _lazy_outputs(inv, n_out, batch_mode, schema.out_devices(dev), num_outputs, metas)
    if mode is EvalMode.eager:
        ctx.submit(inv)
    else:
        ctx.defer(res if num_outputs == 1 else res[0])
    return res


# --- helpers -----------------------------------------------------------------------------------
def _call_stream(ctx: EvalContext, dev: Device) -> Any:
    """The torch stream a GPU call runs on: its context's, else (a call for another GPU) the
    thread's default one for that GPU; None without CUDA."""
    if ctx.device_id == dev.device_id:
        return ctx._torch_stream()
    if dev.torch_device().type != "cuda":
        return None
    return EvalContext.default_for(dev.device_id)._torch_stream()


def _on_stream(stream: Any, body: Any) -> Any:
    import torch

    with torch.cuda.stream(stream):
        return body()


def _mark_outputs(outs: Sequence[Batch], stream: Any) -> None:
    """Mark CUDA outputs as written by this call's work on ``stream`` (one event per call)."""
    ready = None
    for o in outs:
        s = o._samples
        if s and _ho.first_cuda(s) is not None:
            if ready is None:
                ready = _ho.mark(_ho.first_cuda(s), stream)
            o._ready = ready


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
    if isinstance(bs, bool) or not isinstance(bs, int | np.integer):
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


def _to_input(name: str, input_names: Sequence[str], i: int, x: Any) -> Tensor:
    if isinstance(x, Proxy):
        x = x.__headrace_unwrap__()
        if isinstance(x, (Tensor, Batch)):
            return x  # type: ignore[return-value]
    try:
        return Tensor(x)
    except (TypeError, ValueError) as e:
        what = input_names[i] if i < len(input_names) else f"input {i}"
        raise type(e)(f"{name}: cannot use {type(x).__name__} as {what!r}: {e}") from None


def _gpu_device_of(ins: list[Any]) -> Device:
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


def _as_input_batch(
    x: Tensor | Batch, n: int, dev: Device, schema: OpSchema, stream: Any = None
) -> Batch:
    """A concrete Batch of ``n`` samples on the device the kernel needs; GPU inputs made on
    another stream are waited for on ``stream`` (the call's)."""
    want = CPU if schema.cpu_only_inputs else dev
    if isinstance(x, Batch):
        x.evaluate()
        if x._device.device_type == "gpu":
            _wait_input(x._ready, x._samples, stream)  # type: ignore[arg-type]
        if x._device != want:
            samples = [_st.move(s, want, x._dtype) for s in x._samples]  # type: ignore[union-attr]
            moved = Batch._wrap(samples, x._dtype, x._layout, want)
            moved._sources = x._sources
            moved._step = x._step
            return moved
        return x
    arr = x._resolved_data()
    if x._device.device_type == "gpu":
        _wait_input(x._ready, [arr], stream)
    if x._device != want:
        arr = _st.move(arr, want, x._dtype)
    out = Batch._wrap([arr] * n, x._dtype, x._layout, want)
    if x._source is not None:
        out._sources = [x._source] * n
    return out


def _wait_input(ready: Any, samples: list[Any], stream: Any) -> None:
    """``stream`` (the call's; None for a CPU call: torch's current one, which a CPU call
    copying GPU data to the host uses) waits for GPU input samples made elsewhere. A no-op
    without CUDA."""
    if stream is None:
        _ho.wait_on_current(ready, samples)
    elif ready is not None:
        _ho.wait(ready, samples, stream)


def _resolve_arg(schema: OpSchema, k: str, v: Tensor | Batch, n: int, stream: Any = None) -> Any:
    conv = schema.arg_map[k].convert
    try:
        if isinstance(v, Batch):
            gpu = v._device.device_type == "gpu"
            if gpu:
                _wait_input(v._ready, v._resolved(), stream)
            samples = _st.samples_to_host(v._resolved(), v.dtype) if gpu else v._resolved()
            return PerSample(conv(s) for s in samples)
        arr = v._resolved_data()
        if v._device.device_type != "cpu":
            _wait_input(v._ready, [arr], stream)
            arr = _st.move(arr, CPU, v._dtype)
        return conv(arr)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{schema.name}: invalid value for argument {k!r} ({e}).") from None


def _wrap_outputs(outs: tuple[Batch, ...], batch_mode: bool, num_outputs: int) -> Any:
    if batch_mode:
        res: tuple[Any, ...] = outs
    else:
        res = tuple(
            Tensor._wrap(b._samples[0], b._dtype, b._layout, b._device, ready=b._ready)  # type: ignore[index]
            for b in outs
        )
    return res[0] if num_outputs == 1 else res


def _predicted(
    schema: OpSchema, ins: Sequence[Any], vals: ArgDict, lazy_args: list[tuple[str, Any]]
) -> Sequence[Meta | None] | None:
    """The schema's prediction of a pending call's output metadata (None: not known). A rule
    sees ``None`` only for an absent input: an input whose metadata is not known means no
    prediction."""
    assert schema.meta is not None
    in_metas = []
    for x in ins:
        m = None if x is None else meta_of(x)
        if m is None and x is not None:
            return None
        in_metas.append(m)
    try:
        metas = schema.meta(in_metas, vals, dict(lazy_args))
    except Exception:  # (bad arguments: the call reports them where it runs)
        if _meta.CHECK:  # the test-suite wants a rule's own faults raised
            raise
        return None
    if metas is None or len(metas) != schema.num_outputs:
        return None
    return metas


def _lazy_outputs(
    inv: Invocation,
    n: int | None,
    batch_mode: bool,
    devs: Sequence[Device],
    num_outputs: int,
    metas: Sequence[Meta | None] | None = None,
) -> Any:
    ms = metas or (None,) * num_outputs
    if batch_mode:
        res: tuple[Any, ...] = tuple(
            Batch(invocation_result=(inv, k, n, ms[k], devs[k])) for k in range(num_outputs)
        )
    else:
        res = tuple(
            Tensor(invocation_result=(inv, k, 0, ms[k], devs[k])) for k in range(num_outputs)
        )
    return res[0] if num_outputs == 1 else res
