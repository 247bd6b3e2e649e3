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
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch import meta_rules as _meta
from headrace._dispatch.args import Arg, forward_args, to_dtype, to_float, to_floats, to_ints
from headrace._dispatch.schema import OpSchema
from headrace._rng import RNG, RNGState, get_default_rng, set_seed

_SHAPE_LIKE = ("shape_like",)
_COMMON = (
    Arg("shape", to_ints, None, doc="Shape of each sample (default: a scalar)."),
    Arg("dtype", to_dtype, None, doc="Output type."),
)


def _schema(
    name: str,
    *args: Arg,
    inputs: tuple[str, ...] = _SHAPE_LIKE,
    devices: tuple[str, ...] = ("cpu", "gpu"),
) -> OpSchema:
    """A random op: a batch kernel named ``name`` in ``backends/<backend>/random.py`` drawing
    from the call's generator (the GPU kernels draw on the host, then upload)."""
    return OpSchema(
        f"random.{name}",
        "random",
        inputs,
        _COMMON + args,
        devices=devices,
        random=True,
        min_inputs=0,  # shape_like is optional
    )


def _per_sample(name: str, convert: Any, default: Any, doc: str) -> Arg:
    return Arg(name, convert, default, per_sample=True, doc=doc)


UNIFORM = _schema(
    "uniform",
    _per_sample(
        "range",
        to_floats,
        np.array([-1.0, 1.0], np.float32),
        "[lo, hi) of a continuous distribution.",
    ),
    _per_sample("values", to_floats, None, "Discrete values to pick from."),
)
NORMAL = _schema(
    "normal",
    _per_sample("mean", to_float, 0.0, "Mean."),
    _per_sample("stddev", to_float, 1.0, "Standard deviation."),
)
COIN_FLIP = _schema("coin_flip", _per_sample("probability", to_float, 0.5, "Probability of 1."))
CHOICE = _schema(
    "choice",
    _per_sample("p", to_floats, None, "Probabilities."),
    inputs=("a", "shape_like"),
    devices=("cpu",),
)
BETA = _schema(
    "beta",
    _per_sample("alpha", to_float, 1.0, "Alpha (> 0)."),
    _per_sample("beta", to_float, 1.0, "Beta (> 0)."),
    devices=("cpu",),
)


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
    """0/1 values, 1 with ``probability`` (default 0.5); ``dtype`` int32 (the default),
    uint8 or bool, the types the reference supports.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.random.coin_flip(batch_size=8, probability=1.0).torch().tolist()
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    if dtype is not None and to_dtype(dtype) not in _COIN_FLIP_TYPES:
        raise InvalidArgumentError(
            f"random.coin_flip: data type {to_dtype(dtype)} is not supported. Supported types "
            "are: bool, uint8, int32."
        )
    return COIN_FLIP.call((shape_like,), **forward_args(locals(), "shape_like"))


_COIN_FLIP_TYPES = (_dt.bool_, _dt.uint8, _dt.int32)


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


# What a pending call's outputs are, before they are computed (``headrace._core.meta``).
UNIFORM.meta = NORMAL.meta = _meta.random_value(_dt.float32)
COIN_FLIP.meta = _meta.random_value(_dt.int32)


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
