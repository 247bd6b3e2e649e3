"""GPU random kernels: the values are drawn on the host (the CPU kernels' numpy draws) and
uploaded once, so CPU and GPU results are identical for the same RNG state.

Examples
--------
>>> uniform.__name__
'uniform'
"""

from __future__ import annotations

from headrace.backends.shared import host

uniform = host.on_host(host.uniform)
normal = host.on_host(host.normal)
coin_flip = host.on_host(host.coin_flip)

__all__ = ["coin_flip", "normal", "uniform"]
