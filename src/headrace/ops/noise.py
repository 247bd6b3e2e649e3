"""``ndd.noise``: additive Gaussian, salt-and-pepper and shot (Poisson) noise.

Each call draws from its ``rng`` (or the thread's default generator) a fixed amount, then one
seed per sample; equal generators give equal noise on the CPU and the GPU. The noise follows the
reference's distributions, not its exact draws.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> x = ndd.tensor(np.full((4, 4), 10, np.uint8))
>>> np.asarray(ndd.noise.gaussian(x, mean=2.0, stddev=0.0).cpu()).max()
np.uint8(12)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from headrace._core.batch import Batch
from headrace._core.tensor import Tensor
from headrace._dispatch.args import Arg, forward_args, to_bool, to_float
from headrace._dispatch.schema import OpSchema, Planned
from headrace._rng import RNG
from headrace.ops import _filter_params as P

TensorOrBatch = Tensor | Batch
Scalar = float | TensorOrBatch


def _schema(name: str, sampler: Callable[..., Any], *args: Arg, kernel: str) -> OpSchema:
    """A noise op: ``sampler`` (``_filter_params``) draws one seed per sample in sample order;
    the pixel kernels are ``kernel`` in ``backends/<backend>/filters.py``."""
    planned = Planned(sampler, random=True)
    return OpSchema(name, "filters", args=args, random=True, planned=planned, kernel=kernel)


def _f(name: str, default: float | None, doc: str) -> Arg:
    return Arg(name, to_float, default, per_sample=True, doc=doc)


GAUSSIAN = _schema(
    "noise.gaussian",
    P.noise_gaussian_sampler,
    _f("mean", 0.0, "Mean of the noise."),
    _f("stddev", 1.0, "Standard deviation of the noise."),
    kernel="noise_gaussian",
)
SALT_AND_PEPPER = _schema(
    "noise.salt_and_pepper",
    P.noise_salt_and_pepper_sampler,
    _f("prob", 0.05, "Probability that a pixel is replaced."),
    _f("salt_vs_pepper", 0.5, "Probability that a replaced pixel is salt."),
    _f("salt_val", None, "Salt value (default: the type's maximum, 1 for floats)."),
    _f("pepper_val", None, "Pepper value (default: the type's minimum, -1 for floats)."),
    Arg("per_channel", to_bool, False, doc="Draw per channel instead of per pixel."),
    kernel="noise_salt_and_pepper",
)
SHOT = _schema(
    "noise.shot",
    P.noise_shot_sampler,
    _f("factor", 12.0, "Photon-count factor (reference's effective 12)."),
    kernel="noise_shot",
)


def gaussian(
    input: Any,
    /,
    *,
    mean: Scalar | None = None,
    stddev: Scalar | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Add Gaussian noise: ``out = in + N(mean, stddev)``, rounded and saturated to the type.

    Parameters
    ----------
    input : Tensor or Batch
        Any shape, layout and numeric type.
    mean, stddev : float, scalar or Batch, optional
        Defaults 0 and 1; may vary per sample.
    device, batch_size
        As for every operator.
    rng : random.RNG, optional
        Generator to draw from (default: the thread's default generator).

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Raises
    ------
    InvalidArgumentError
        For a negative ``stddev``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.zeros(1000, np.float32))
    >>> y = np.asarray(ndd.noise.gaussian(x, stddev=2.0, rng=ndd.random.RNG(1)).cpu())
    >>> 1.8 < float(y.std()) < 2.2
    True
    """
    return GAUSSIAN.call((input,), **forward_args(locals(), "input"))


def salt_and_pepper(
    input: Any,
    /,
    *,
    prob: Scalar | None = None,
    salt_vs_pepper: Scalar | None = None,
    salt_val: Scalar | None = None,
    pepper_val: Scalar | None = None,
    per_channel: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Replace a ``prob`` fraction of pixels with ``salt_val`` or ``pepper_val``.

    Parameters
    ----------
    input : Tensor or Batch
        Any shape and numeric type; a ``C`` axis (or the last axis without a layout) is one
        pixel unless ``per_channel=True``.
    prob : float, scalar or Batch, optional
        Replacement probability (default 0.05).
    salt_vs_pepper : float, scalar or Batch, optional
        Probability that a replaced pixel becomes salt (default 0.5).
    salt_val, pepper_val : float, scalar or Batch, optional
        Defaults: the type's maximum and minimum (1 and -1 for floats).
    per_channel : bool, optional
        Replace channels independently (default False).
    device, batch_size
        As for every operator.
    rng : random.RNG, optional
        Generator to draw from (default: the thread's default generator).

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.full((2, 2, 3), 9, np.uint8), layout="HWC")
    >>> np.asarray(ndd.noise.salt_and_pepper(x, prob=1.0, salt_vs_pepper=1.0).cpu()).min()
    np.uint8(255)
    """
    return SALT_AND_PEPPER.call((input,), **forward_args(locals(), "input"))


def shot(
    input: Any,
    /,
    *,
    factor: Scalar | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """Add shot noise: ``out = Poisson(in / factor) * factor``, rounded and saturated.

    Parameters
    ----------
    input : Tensor or Batch
        Any shape, layout and numeric type (non-negative values).
    factor : float, scalar or Batch, optional
        Default 12 (the reference documents 20 but uses 12); 0 returns the input.
    device, batch_size
        As for every operator.
    rng : random.RNG, optional
        Generator to draw from (default: the thread's default generator).

    Returns
    -------
    Tensor or Batch
        Same shape, type and layout as the input.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> x = ndd.tensor(np.full(3, 7, np.uint8))
    >>> np.asarray(ndd.noise.shot(x, factor=0.0).cpu()).tolist()
    [7, 7, 7]
    """
    return SHOT.call((input,), **forward_args(locals(), "input"))


__all__ = ["gaussian", "salt_and_pepper", "shot"]
