"""GPU decoder kernels: images and ``.npy`` arrays are decoded on the host (the CPU kernel) and
each uploaded once (nvImageCodec decoding is not wired yet), so GPU pixels equal the CPU ones.

Examples
--------
>>> image.__name__
'image'
"""

from __future__ import annotations

from headrace.backends import host

image = host.on_host(host.image)
numpy = host.on_host(host.numpy)

__all__ = ["image", "numpy"]
