"""CPU random kernels: numpy draws from the call's generator, in sample order.

They are the host kernels of :mod:`headrace.backends.shared.host`, which the torch backend runs too
(then uploads), so every device draws the same values for the same RNG state.

Examples
--------
>>> import headrace as ndd
>>> from headrace._dispatch.schema import REGISTRY
>>> REGISTRY["random.uniform"].kernel_for(ndd.device("cpu")) is uniform
True
"""

from __future__ import annotations

from headrace.backends.shared.host import beta, choice, coin_flip, normal, uniform

__all__ = ["beta", "choice", "coin_flip", "normal", "uniform"]
