"""GPU decoder kernels. Images are decoded a batch at a time by a GPU decoder (nvImageCodec, or
torchvision's nvJPEG) with a per-sample CPU fallback, or on the host into one buffer uploaded
once (see :mod:`headrace.backends.torch.gpu_decode`); ``.npy`` arrays and compressed chunks are
decoded on the host (the CPU kernels) and uploaded.

Examples
--------
>>> image.__name__
'image'
"""

from __future__ import annotations

from headrace.backends.shared import host
from headrace.backends.shared import video as _video
from headrace.backends.torch.gpu_decode import image

inflate = host.on_host(host.inflate)
numpy = host.on_host(host.numpy)
video = host.on_host(_video.video)

__all__ = ["image", "inflate", "numpy", "video"]
