"""The shared contract every operator must pass (see the style guide's ``check_op``).

``check_op(op, *inputs, **args)`` calls ``op(*batches, **args)``, where each input is a list of
numpy samples turned into a ragged batch, and checks:

1. the inputs are not modified;
2. sample and batch agree: ``op(batch).tensors[i] == op(batch.tensors[i])`` (per-sample ``Batch``
   arguments are sliced to match), unless the operator is ``batch_level``: its samples depend on
   the whole batch (``permute_batch``, ``batch_permutation``);
3. a batch of one works (and equals the batch's first sample, unless ``batch_level``);
4. all eval modes (deferred, eager, sync_cpu, sync_full) give equal outputs;
5. the CPU and the (fake) GPU kernels agree within ``atol``;
6. with ``seed``, for random operators: the same RNG state gives the same output, the CPU draws
   equal the GPU draws, and two calls with one generator differ;
7. with ``empty`` (:func:`check_empty`): a batch of 0 samples gives a batch of 0 samples
   (``empty=True``) or raises ``empty`` (an exception type);
8. with ``bad=(overrides, error)`` (:func:`check_bad`): the call with ``args | overrides``
   raises ``error`` in every eval mode (and on the GPU).

A random operator (``seed``) draws in sample order, so only its first sample is compared with a
single-sample call. Operators without inputs (``ndd.zeros``, ``ndd.random.uniform``…) are
called with ``batch_size=n`` for the batch and without it for a sample. It returns the CPU batch
result so tests can add op-specific checks. ``tests/_helpers/op_table.py`` lists the cases of
every registered operator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import headrace as ndd
from headrace._core.displaced import DisplacedEvaluationError

MODES = (ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full)
#: Value of an entry of ``bad``'s overrides that removes the argument from the call.
DROP = object()
#: Key of ``bad``'s overrides replacing the inputs (a tuple of sample lists).
INPUTS = "*inputs"


def host(x: Any) -> list[np.ndarray] | np.ndarray:
    """numpy copies of a Tensor or of every sample of a Batch."""
    if isinstance(x, ndd.Batch):
        return [np.asarray(t) for t in x.cpu()]
    return np.asarray(x.cpu())


def _slice_arg(v: Any, i: int) -> Any:
    return v.tensors[i] if isinstance(v, ndd.Batch) else v


def _close(a: Any, b: Any, atol: float, what: str) -> None:
    if isinstance(a, list):
        assert len(a) == len(b), f"{what}: {len(a)} vs {len(b)} samples"
        for j, (x, y) in enumerate(zip(a, b)):
            _close(x, y, atol, f"{what} sample {j}")
        return
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} vs {b.dtype}"
    if atol == 0:
        assert np.array_equal(a, b), (
            f"{what}: values differ (max {np.abs(a.astype(float) - b).max()})"
        )
    else:
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).max() if a.size else 0
        assert diff <= atol, f"{what}: max abs diff {diff} > {atol}"


def _differ(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return any(x.shape != y.shape or not np.array_equal(x, y) for x, y in zip(a, b))


def _error_type(call: Callable[[], Any]) -> type[BaseException] | None:
    """The type of the error ``call`` raises, when called or when its result is computed.

    An error raised away from its call (deferred, eager) is an instance of a subclass of the
    original type and of ``DisplacedEvaluationError``: the original type is returned.
    """
    try:
        host(call())
    except Exception as e:
        kind = type(e)
        while issubclass(kind, DisplacedEvaluationError) and len(kind.__bases__) == 2:
            kind = kind.__bases__[0]  # (it may be displaced twice: GPU work runs asynchronously)
        return kind
    return None


class _Calls:
    """Calls of ``op`` on batches built from sample lists, with the contract's conventions."""

    def __init__(
        self,
        op: Callable[..., Any],
        inputs: Sequence[Sequence[np.ndarray]],
        layout: str | Sequence[str | None] | None,
        n: int | None,
        seed: int | None,
        output: int | None,
        args: Mapping[str, Any],
    ) -> None:
        self.op, self.inputs, self.seed, self.output, self.args = op, inputs, seed, output, args
        lays = [layout] * len(inputs) if isinstance(layout, str) or layout is None else layout
        self.layouts = list(lays) + [None] * (len(inputs) - len(lays))
        if inputs:
            n = len(inputs[0])
            assert all(len(s) == n for s in inputs), "inputs differ in length"
        assert n, "check_op needs samples (or n for operators without inputs)"
        self.n = n
        #: ``batch_size`` of an operator without inputs
        self.size = None if inputs else n
        self.batches = self.make(inputs)

    def make(self, inputs: Sequence[Sequence[np.ndarray]]) -> list[ndd.Batch]:
        """Batches of ``inputs`` with the inputs' layouts (where the ranks agree)."""
        out = []
        for samples, lay in zip(inputs, self.layouts):
            if not samples:
                dt = ndd.dtype(self.inputs[len(out)][0].dtype)
                out.append(ndd.batch([], dtype=dt, layout=lay))
            else:
                ok = lay is None or len(lay) == np.ndim(samples[0])
                out.append(ndd.batch(list(samples), layout=lay if ok else None))
        return out

    def __call__(
        self,
        ins: Sequence[Any],
        size: int | None,
        extra: Mapping[str, Any] | None = None,
        rng: Any = None,
    ) -> Any:
        kw = {**self.args, **(extra or {})}
        kw = {k: v for k, v in kw.items() if v is not DROP}
        if self.seed is not None:
            kw["rng"] = rng if rng is not None else ndd.random.RNG(seed=self.seed)
        if size is not None:
            kw["batch_size"] = size
        r = self.op(*ins, **kw)
        return r[self.output] if self.output is not None else r

    def gpu(self, ins: Sequence[Any], size: int | None, by_device: bool, extra: Any = None) -> Any:
        """The call on the (fake) GPU: GPU inputs, or ``device="gpu"``."""
        if by_device:
            return self(ins, size, {**(extra or {}), "device": "gpu"})
        return self([b.gpu() for b in ins], size, extra)


def check_op(
    op: Callable[..., Any],
    *inputs: Sequence[np.ndarray],
    layout: str | Sequence[str | None] | None = None,
    n: int | None = None,
    gpu: bool = True,
    gpu_by_device: bool = False,
    atol: float = 0,
    gpu_atol: float | None = None,
    output: int | None = None,
    seed: int | None = None,
    empty: bool | type[BaseException] | None = None,
    bad: tuple[Mapping[str, Any], type[BaseException]] | None = None,
    op_args: Mapping[str, Any] | None = None,
    batch_level: bool = False,
    **args: Any,
) -> Any:
    """Run the contract checks for ``op`` on ``inputs`` with ``args``; return the CPU result.

    Parameters
    ----------
    op : callable
        ``op(*batches, **args)``: the public function under test.
    *inputs : sequences of numpy arrays
        The samples of each positional input (all of the same length); none for generators.
    layout : str or sequence of str, optional
        Layout of the first input, or one per input.
    n : int, optional
        Batch size of an operator without inputs (passed as ``batch_size``).
    gpu : bool
        Also run on the (fake) GPU and compare.
    gpu_by_device : bool
        Run on the GPU with ``device="gpu"`` (inputs stay on the CPU) instead of GPU inputs.
    atol, gpu_atol : float
        Tolerance between modes and samples; between CPU and GPU (default ``atol``).
    output : int, optional
        Which output of a multi-output operator to check.
    seed : int, optional
        The operator is random: every call gets a fresh ``ndd.random.RNG(seed=seed)``.
    empty : bool or exception type, optional
        Also run :func:`check_empty` with it.
    bad : (dict, exception type), optional
        Also run :func:`check_bad` with it.
    op_args : mapping, optional
        Arguments of ``op`` (merged with ``**args``), for names such as ``layout``.
    batch_level : bool
        The output samples depend on the whole batch: no sample-by-sample comparison.
    """
    args = {**(op_args or {}), **args}
    call = _Calls(op, inputs, layout, n, seed, output, args)
    n, size, batches = call.n, call.size, call.batches
    originals = [[s.copy() for s in samples] for samples in inputs]

    ref = call(batches, size)
    assert isinstance(ref, ndd.Batch) and ref.batch_size == n
    ref_h = host(ref)
    for samples, orig in zip(inputs, originals):
        for s, o in zip(samples, orig):
            assert np.array_equal(s, o), "the operator modified its input"

    # sample = batch (a random operator draws in sample order: only the first sample repeats)
    for i in range(0 if batch_level else 1 if seed is not None else n):
        sliced = {k: _slice_arg(v, i) for k, v in args.items()}
        one = call([b.tensors[i] for b in batches], None, sliced)
        assert isinstance(one, ndd.Tensor)
        _close(np.asarray(one.cpu()), ref_h[i], atol, f"sample {i} vs batch")
    if not batch_level:
        first = {k: ndd.batch([v.tensors[0]]) for k, v in args.items() if isinstance(v, ndd.Batch)}
        single = call(call.make([s[:1] for s in inputs]), size and 1, first)
        _close(host(single)[0], ref_h[0], atol, "batch of one")

    for mode in MODES:
        with mode:
            _close(host(call(batches, size)), ref_h, atol, f"mode {mode.name}")
    if gpu:
        g = call.gpu(batches, size, gpu_by_device)
        assert g.device.device_type == "gpu"
        _close(host(g), ref_h, atol if gpu_atol is None else gpu_atol, "gpu vs cpu")

    if seed is not None:
        _close(host(call(batches, size)), ref_h, atol, "same seed, same draws")
        rng = ndd.random.RNG(seed=seed)
        # later calls draw anew (a low-entropy output such as two coin flips may repeat once)
        a = host(call(batches, size, rng=rng))
        later = [host(call(batches, size, rng=rng)) for _ in range(4)]
        assert any(_differ(a, b) for b in later), "five calls with one generator were all equal"
    assert ref.layout is None or len(ref.layout) == ref.ndim

    common = {"layout": layout, "n": n, "gpu": gpu, "gpu_by_device": gpu_by_device}
    common |= {"output": output, "seed": seed, "op_args": args}
    if empty is not None:
        check_empty(op, *inputs, empty=empty, **common)
    if bad is not None:
        check_bad(op, *inputs, bad=bad, **common)
    return ref


def check_empty(
    op: Callable[..., Any],
    *inputs: Sequence[np.ndarray],
    empty: bool | type[BaseException],
    layout: str | Sequence[str | None] | None = None,
    n: int | None = None,
    gpu: bool = True,
    gpu_by_device: bool = False,
    output: int | None = None,
    seed: int | None = None,
    op_args: Mapping[str, Any] | None = None,
    **args: Any,
) -> None:
    """A batch of 0 samples gives a batch of 0 samples (``empty=True``) or raises ``empty``.

    Inputs become empty batches of their type and layout, per-sample ``Batch`` arguments empty
    batches, and an operator without inputs gets ``batch_size=0``; on the CPU and the GPU.
    Other parameters as :func:`check_op`.
    """
    args = {**(op_args or {}), **args}
    call = _Calls(op, inputs, layout, n, seed, output, args)
    ins = call.make([[] for _ in inputs])
    extra = {k: ndd.batch([], dtype=v.dtype) for k, v in args.items() if isinstance(v, ndd.Batch)}
    size = None if inputs else 0
    runs = [("cpu", lambda: call(ins, size, extra))]
    if gpu:
        runs.append(("gpu", lambda: call.gpu(ins, size, gpu_by_device, extra)))
    for where, run in runs:
        if empty is True:
            r = run()
            assert isinstance(r, ndd.Batch) and r.batch_size == 0, f"{where}: {r!r}"
            assert host(r) == [], where
        else:
            got = _error_type(run)
            assert got is not None and issubclass(got, empty), (
                f"{where}: an empty batch raised {got}, expected {empty.__name__}"
            )


def check_bad(
    op: Callable[..., Any],
    *inputs: Sequence[np.ndarray],
    bad: tuple[Mapping[str, Any], type[BaseException]],
    layout: str | Sequence[str | None] | None = None,
    n: int | None = None,
    gpu: bool = True,
    gpu_by_device: bool = False,
    output: int | None = None,
    seed: int | None = None,
    op_args: Mapping[str, Any] | None = None,
    **args: Any,
) -> None:
    """The invalid call raises the same error type in every eval mode (and on the GPU).

    ``bad = (overrides, error)``: the call with ``args | overrides`` raises ``error`` (or a
    subclass); ``DROP`` removes an argument, the key ``INPUTS`` replaces the inputs (a tuple of
    sample lists). Errors raised away from their call count as their original type. Other
    parameters as :func:`check_op`.
    """
    args = {**(op_args or {}), **args}
    call = _Calls(op, inputs, layout, n, seed, output, args)
    overrides, error = dict(bad[0]), bad[1]
    batches = call.make(overrides.pop(INPUTS)) if INPUTS in overrides else call.batches
    got: dict[str, type[BaseException] | None] = {}
    for mode in MODES:
        with mode:
            got[mode.name] = _error_type(lambda: call(batches, call.size, overrides))
    got["default"] = _error_type(lambda: call(batches, call.size, overrides))
    if gpu:
        got["gpu"] = _error_type(lambda: call.gpu(batches, call.size, gpu_by_device, overrides))
    names = {k: v and v.__name__ for k, v in got.items()}
    kinds = set(got.values())
    assert len(kinds) == 1, f"bad call: the eval modes raise different errors: {names}"
    kind = kinds.pop()
    assert kind is not None and issubclass(kind, error), (
        f"bad call: expected {error.__name__}, got {names}"
    )
