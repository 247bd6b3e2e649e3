"""Run NVIDIA DALI's dynamic mode as a test oracle (tests using it skip when DALI is absent).

``dali_run("hue", samples, layout="HWC", hue=[10.0, 20.0], per_sample=("hue",))`` runs
``ndd.hue`` of DALI on a batch of ``samples``; arguments named in ``per_sample`` give one value
per sample. A single numpy array instead of a list runs in tensor mode.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest


def dali_ndd() -> Any:
    """DALI's dynamic-mode module, or skip the test."""
    return pytest.importorskip("nvidia.dali.experimental.dynamic")


def dali_run(
    op: str,
    data: np.ndarray | Sequence[np.ndarray],
    *,
    layout: str | None = None,
    per_sample: Sequence[str] = (),
    **kw: Any,
) -> np.ndarray | list[np.ndarray]:
    """DALI's result of ``op`` (dotted names such as ``noise.gaussian``) as numpy.

    In a process that has imported PyAV (both bundle FFmpeg) DALI runs in a separate process
    (:mod:`tests._helpers.dali_isolated`), unless the arguments hold DALI objects (an ``rng``
    made here), which cannot travel.
    """
    if "av" in sys.modules and _picklable((data, kw)):
        from tests._helpers.dali_isolated import dali_run as isolated

        return isolated(op, data, layout=layout, per_sample=tuple(per_sample), **kw)
    dndd = dali_ndd()
    fn = dndd
    for part in op.split("."):
        fn = getattr(fn, part)
    for k in per_sample:
        kw[k] = dndd.batch([_narrow(v) for v in kw[k]])
    if isinstance(data, np.ndarray):
        x = dndd.as_tensor(data, layout=layout) if layout else dndd.as_tensor(data)
        return np.asarray(fn(x, **kw))
    b = dndd.batch(list(data), layout=layout)
    return [np.asarray(t) for t in fn(b, **kw).tensors]


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
    except Exception:  # TypeError, pickle.PicklingError, AttributeError
        return False
    return True


def _narrow(v: Any) -> np.ndarray:
    """Python/64-bit numbers as DALI's argument types (float32, int32)."""
    a = np.asarray(v)
    return a.astype(np.float32 if a.dtype.kind == "f" else np.int32)


def max_diff(a: Any, b: Any) -> float:
    """Largest absolute difference between two arrays or two lists of arrays."""
    if isinstance(a, list):
        return max((max_diff(x, y) for x, y in zip(a, b, strict=True)), default=0.0)
    assert a.shape == b.shape, f"shape {a.shape} vs {b.shape}"
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0
