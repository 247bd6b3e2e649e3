"""The shared contract every operator must pass (see the style guide's ``check_op``).

``check_op(op, samples, **args)`` runs ``op`` on a ragged batch built from ``samples`` and checks:

1. the inputs are not modified;
2. sample and batch agree: ``op(batch).tensors[i] == op(batch.tensors[i])`` (per-sample ``Batch``
   arguments are sliced to match);
3. a batch of one works;
4. all eval modes (deferred, eager, sync_cpu, sync_full) give equal outputs;
5. the CPU and the (fake) GPU kernels agree within ``atol``.

It returns the CPU batch result so tests can add op-specific checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import headrace as ndd

MODES = (ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full)


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


def check_op(
    op: Callable[..., Any],
    samples: Sequence[np.ndarray],
    *,
    layout: str | None = None,
    gpu: bool = True,
    atol: float = 0,
    gpu_atol: float | None = None,
    output: int | None = None,
    **args: Any,
) -> Any:
    """Run the contract checks for ``op`` on ``samples`` with ``args``; return the CPU result."""
    originals = [s.copy() for s in samples]
    b = ndd.batch(list(samples), layout=layout)

    def pick(r: Any) -> Any:
        return r[output] if output is not None else r

    ref = pick(op(b, **args))
    assert isinstance(ref, ndd.Batch) and ref.batch_size == len(samples)
    ref_h = host(ref)
    for s, o in zip(samples, originals):
        assert np.array_equal(s, o), "the operator modified its input"
    for i in range(len(samples)):
        one = pick(op(b.tensors[i], **{k: _slice_arg(v, i) for k, v in args.items()}))
        assert isinstance(one, ndd.Tensor)
        _close(np.asarray(one.cpu()), ref_h[i], atol, f"sample {i} vs batch")
    single = pick(
        op(
            ndd.batch(list(samples[:1]), layout=layout),
            **{
                k: (ndd.batch([v.tensors[0]]) if isinstance(v, ndd.Batch) else v)
                for k, v in args.items()
            },
        )
    )
    _close(host(single)[0], ref_h[0], atol, "batch of one")
    for mode in MODES:
        with mode:
            r = pick(op(b, **args))
            _close(host(r), ref_h, atol, f"mode {mode.name}")
    if gpu:
        g = pick(op(b.gpu(), **args))
        assert g.device.device_type == "gpu"
        _close(host(g), ref_h, atol if gpu_atol is None else gpu_atol, "gpu vs cpu")
    assert ref.layout is None or len(ref.layout) == ref.ndim
    return ref
