"""GPU decoder kernels: images, ``.npy`` arrays and compressed chunks are decoded on the host
(the CPU kernels) and each uploaded once (nvImageCodec decoding is not wired yet), so GPU results
equal the CPU ones.

Examples
--------
>>> image.__name__
'image'
"""

from __future__ import annotations

from headrace.backends.shared import host
from headrace.backends.shared import video as _video

image = host.on_host(host.image)
inflate = host.on_host(host.inflate)
numpy = host.on_host(host.numpy)
video = host.on_host(_video.video)

__all__ = ["image", "inflate", "numpy", "video"]
