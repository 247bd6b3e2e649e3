"""``ndd.random``: generators (:class:`RNG`) and random operators.

Every random operator takes exactly 7 words from its ``rng`` (or the thread-local default) per
call, so results depend only on the generator's state, never on threads or timing.

Examples
--------
>>> import headrace as ndd
>>> rng = ndd.random.RNG(seed=42)
>>> a = ndd.random.uniform(batch_size=4, range=[0, 1], rng=rng.clone())
>>> b = ndd.random.uniform(batch_size=4, range=[0, 1], rng=rng.clone())
>>> [x.item() for x in a] == [x.item() for x in b]
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch, split_dense
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import (
    Arg,
    forward_args,
    has_per_sample,
    sample_args,
    to_dtype,
    to_float,
    to_floats,
    to_ints,
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema
from headrace._rng import RNG, RNGState, get_default_rng, set_seed

_GPU = "headrace.backends.torch.random"
_COMMON = (
    Arg("shape", to_ints, None, doc="Shape of each sample (default: a scalar)."),
    Arg("dtype", to_dtype, None, doc="Output type."),
)
UNIFORM = OpSchema(
    "random.uniform",
    inputs=("shape_like",),
    random=True,
    gpu_module=_GPU,
    args=_COMMON
    + (
        Arg(
            "range",
            to_floats,
            np.array([-1.0, 1.0], np.float32),
            per_sample=True,
            doc="[lo, hi) of a continuous distribution.",
        ),
        Arg("values", to_floats, None, per_sample=True, doc="Discrete values to pick from."),
    ),
)
NORMAL = OpSchema(
    "random.normal",
    inputs=("shape_like",),
    random=True,
    gpu_module=_GPU,
    args=_COMMON
    + (
        Arg("mean", to_float, 0.0, per_sample=True, doc="Mean."),
        Arg("stddev", to_float, 1.0, per_sample=True, doc="Standard deviation."),
    ),
)
COIN_FLIP = OpSchema(
    "random.coin_flip",
    inputs=("shape_like",),
    random=True,
    gpu_module=_GPU,
    args=_COMMON + (Arg("probability", to_float, 0.5, per_sample=True, doc="Probability of 1."),),
)
CHOICE = OpSchema(
    "random.choice",
    inputs=("a", "shape_like"),
    random=True,
    devices=("cpu",),
    args=_COMMON + (Arg("p", to_floats, None, per_sample=True, doc="Probabilities."),),
)
BETA = OpSchema(
    "random.beta",
    inputs=("shape_like",),
    random=True,
    devices=("cpu",),
    args=_COMMON
    + (
        Arg("alpha", to_float, 1.0, per_sample=True, doc="Alpha (> 0)."),
        Arg("beta", to_float, 1.0, per_sample=True, doc="Beta (> 0)."),
    ),
)


def _shape(v: dict[str, Any], like: Any, i: int) -> tuple[int, ...]:
    if v["shape"] is not None:
        return tuple(int(s) for s in np.atleast_1d(v["shape"]))
    if like is not None:
        return tuple(like._samples[i].shape)
    return ()


def _random_kernel(draw: Any, default_dtype: _dt.DType | None, like_index: int = 0) -> Any:
    def kern(kc: KernelContext, ins: list[Batch], v: dict[str, Any]) -> tuple[Batch]:
        gen = kc.generator()
        like = ins[like_index] if len(ins) > like_index else None
        dt = v["dtype"] or (default_dtype if default_dtype is not None else ins[0]._dtype)
        if not has_per_sample(v) and like is None and like_index == 0:
            # one vectorised draw for the whole batch (same values as drawing sample by sample)
            shape = _shape(v, None, 0)
            vals = np.asarray(draw(gen, v, (kc.n, *shape), ins, 0)).astype(dt.numpy, copy=False)
            return (Batch._wrap(split_dense(vals), dt, None, kc.device, dense=vals),)
        per = has_per_sample(v)
        outs = []
        for i in range(kc.n):
            a = sample_args(v, i) if per else v
            vals = np.asarray(draw(gen, a, _shape(a, like, i), ins, i))
            outs.append(vals.astype(dt.numpy, copy=False))
        return (Batch._wrap(outs, dt, None, kc.device),)

    return kern


def _draw_uniform(gen: np.random.Generator, a: dict[str, Any], shape: Any, ins: Any, i: int) -> Any:
    if a["values"] is not None:
        vals = np.atleast_1d(a["values"])
        return vals[gen.integers(0, len(vals), size=shape)]
    r = a["range"]
    if r.ndim != 1 or r.shape[0] != 2:
        raise InvalidArgumentError(f"random.uniform: range must be [lo, hi] (got {r.tolist()}).")
    lo, hi = float(r[0]), float(r[1])
    if hi < lo:
        raise InvalidArgumentError(f"random.uniform: range [{lo}, {hi}] is reversed.")
    return gen.uniform(lo, hi, size=shape)


def _draw_normal(gen: np.random.Generator, a: dict[str, Any], shape: Any, ins: Any, i: int) -> Any:
    return gen.normal(a["mean"], a["stddev"], size=shape)


def _draw_coin(gen: np.random.Generator, a: dict[str, Any], shape: Any, ins: Any, i: int) -> Any:
    p = a["probability"]
    if not 0.0 <= p <= 1.0:
        raise InvalidArgumentError(f"random.coin_flip: probability must be in [0, 1] (got {p}).")
    return gen.random(size=shape) < p


def _draw_choice(gen: np.random.Generator, a: dict[str, Any], shape: Any, ins: Any, i: int) -> Any:
    src = ins[0]._samples[i]
    pool = np.arange(int(src)) if src.ndim == 0 else src
    p = a["p"]
    if p is not None:
        p = np.asarray(p, np.float64)
        if p.shape[0] != pool.shape[0]:
            raise InvalidArgumentError(
                f"random.choice: p has {p.shape[0]} entries for {pool.shape[0]} choices."
            )
        p = p / p.sum()
    idx = gen.choice(pool.shape[0], size=shape, p=p)
    return pool[idx]


def _draw_beta(gen: np.random.Generator, a: dict[str, Any], shape: Any, ins: Any, i: int) -> Any:
    if a["alpha"] <= 0 or a["beta"] <= 0:
        raise InvalidArgumentError("random.beta: alpha and beta must be positive.")
    return gen.beta(a["alpha"], a["beta"], size=shape)


UNIFORM.legacy_kernel("cpu")(_random_kernel(_draw_uniform, _dt.float32))
NORMAL.legacy_kernel("cpu")(_random_kernel(_draw_normal, _dt.float32))
COIN_FLIP.legacy_kernel("cpu")(_random_kernel(_draw_coin, _dt.int32))
CHOICE.legacy_kernel("cpu")(_random_kernel(_draw_choice, None, like_index=1))
BETA.legacy_kernel("cpu")(_random_kernel(_draw_beta, _dt.float32))


def uniform(
    shape_like: Any = None,
    /,
    *,
    batch_size: int | None = None,
    device: Any = None,
    dtype: Any = None,
    range: Any = None,
    shape: Any = None,
    values: Any = None,
    rng: RNG | None = None,
) -> Any:
    """Uniformly distributed values in ``range`` (default [-1, 1)) or picked from ``values``.

    Examples
    --------
    >>> import headrace as ndd
    >>> x = ndd.random.uniform(batch_size=3, range=[0, 1], shape=2, rng=ndd.random.RNG(1))
    >>> x.batch_size, x.shape[0], x.dtype is ndd.float32
    (3, (2,), True)
    """
    return UNIFORM.call((shape_like,), **forward_args(locals(), "shape_like"))


def normal(
    shape_like: Any = None,
    /,
    *,
    batch_size: int | None = None,
    device: Any = None,
    dtype: Any = None,
    mean: Any = None,
    stddev: Any = None,
    shape: Any = None,
    rng: RNG | None = None,
) -> Any:
    """Normally distributed values.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.random.normal(shape=[1000], rng=ndd.random.RNG(0)).shape
    (1000,)
    """
    return NORMAL.call((shape_like,), **forward_args(locals(), "shape_like"))


def coin_flip(
    shape_like: Any = None,
    /,
    *,
    batch_size: int | None = None,
    device: Any = None,
    dtype: Any = None,
    probability: Any = None,
    shape: Any = None,
    rng: RNG | None = None,
) -> Any:
    """0/1 values (int32), 1 with ``probability`` (default 0.5).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.random.coin_flip(batch_size=8, probability=1.0).torch().tolist()
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    return COIN_FLIP.call((shape_like,), **forward_args(locals(), "shape_like"))


def choice(
    a: Any,
    shape_like: Any = None,
    /,
    *,
    batch_size: int | None = None,
    device: Any = None,
    dtype: Any = None,
    p: Any = None,
    shape: Any = None,
    rng: RNG | None = None,
) -> Any:
    """Values picked from ``a`` (a scalar ``a`` means ``range(a)``), optionally weighted by ``p``.

    Examples
    --------
    >>> import headrace as ndd
    >>> int(ndd.random.choice(ndd.tensor([7, 8]), p=[0.0, 1.0]).item())
    8
    """
    return CHOICE.call((a, shape_like), **forward_args(locals(), "a", "shape_like"))


def beta(
    shape_like: Any = None,
    /,
    *,
    batch_size: int | None = None,
    device: Any = None,
    dtype: Any = None,
    alpha: Any = None,
    beta: Any = None,
    shape: Any = None,
    rng: RNG | None = None,
) -> Any:
    """Beta-distributed values (CPU only).

    Examples
    --------
    >>> import headrace as ndd
    >>> 0 <= ndd.random.beta(alpha=2.0, beta=5.0, rng=ndd.random.RNG(3)).item() <= 1
    True
    """
    return BETA.call((shape_like,), **forward_args(locals(), "shape_like"))


__all__ = [
    "RNG",
    "RNGState",
    "beta",
    "choice",
    "coin_flip",
    "get_default_rng",
    "normal",
    "set_seed",
    "uniform",
]
