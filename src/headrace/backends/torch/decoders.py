"""GPU decoder kernels: images are decoded on the host (the CPU kernel) and each uploaded once
(nvImageCodec decoding is not wired yet), so GPU pixels equal the CPU ones; ``inflate`` likewise
decompresses on the host and uploads.

Examples
--------
>>> image.__name__
'image'
"""

from __future__ import annotations

from headrace.backends import host

image = host.on_host(host.image)
inflate = host.on_host(host.inflate)

__all__ = ["image", "inflate"]
