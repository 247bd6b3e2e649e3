"""Decoding only a window of a JPEG (``image_crop``, ``image_random_crop``, ``image_slice``).

The reference decodes only the crop: libjpeg-turbo skips the rows above the window without
producing pixels, stops after its last row, and converts only the window's columns.
nvImageCodec's CPU backend (the ``nvidia-nvimgcodec-cu12`` wheel, which runs without a GPU; the
``jpeg-roi`` extra, also part of the ``gpu`` extras) wraps that libjpeg-turbo route, with the
same accurate integer IDCT and fancy chroma upsampling as :func:`headrace.codecs.jpeg.decode_jpeg`,
so its pixels are those of a full decode, cropped (tested bit for bit for 4:2:0, 4:2:2, 4:4:4,
gray and progressive files). It releases the GIL. A 224x224 window of a 500x375 sample image:
~650 us instead of ~830 us for the whole image on one core.

:func:`decode_region` returns ``None`` whenever it cannot decode exactly what the full path would
give, and the caller then decodes the whole image: nvImageCodec not installed (or
``HEADRACE_JPEG_ROI=0``), CMYK files, the fast IDCT, a stream that does not end with the
end-of-image marker (a truncated file: the full decode names the error), or any codec failure.
Unlike a full decode, corrupt data below the window goes unnoticed, as in the reference.

Examples
--------
>>> import cv2, numpy as np
>>> jpg = cv2.imencode(".jpg", np.full((32, 48, 3), 90, np.uint8))[1]
>>> out = decode_region(jpg, (8, 16, 16, 24), gray=False)
>>> out is None or out.shape == (16, 24, 3)
True
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import threading
from typing import Any

import numpy as np

__all__ = ["MIN_NVIMGCODEC", "decode_region", "nvimgcodec_module", "region_decoding", "release"]

_ENV = "HEADRACE_JPEG_ROI"
_local = threading.local()  # one decoder per thread: a decoder is not thread-safe


_QUIET = "PYNVIMGCODEC_VERBOSITY"  # read once, when nvImageCodec is imported
_import_lock = threading.Lock()


@functools.cache
def nvimgcodec_module() -> Any:
    """The ``nvidia.nvimgcodec`` module (GPU decoding, CPU window decoding), or ``None`` when it
    is not installed, its native libraries do not load, or it is older than 0.9 (the first
    release with everything headrace calls: code-stream regions, ``Image.buffer_kind`` and
    ``device_id``).

    Imported here first, it logs nothing (unless ``PYNVIMGCODEC_VERBOSITY`` says otherwise):
    headrace handles a stream it cannot parse itself (a window is then decoded whole, and that
    decode names the error)."""
    with _import_lock:
        quiet = _QUIET not in os.environ and "nvidia.nvimgcodec" not in sys.modules
        if quiet:
            os.environ[_QUIET] = "0"
        try:
            from nvidia import nvimgcodec
        except Exception:  # ImportError, or a wheel whose native libraries do not load
            return None
        finally:
            if quiet:
                os.environ.pop(_QUIET, None)
    if release(getattr(nvimgcodec, "__version__", "0")) < MIN_NVIMGCODEC:
        return None
    return nvimgcodec


#: The oldest nvImageCodec release headrace uses.
MIN_NVIMGCODEC = (0, 9)


def release(version: str) -> tuple[int, ...]:
    """A version as numbers, for comparisons (leading digits of each part; others count as 0).

    Examples
    --------
    >>> release("0.9.0.20"), release("1.0rc1") >= MIN_NVIMGCODEC
    ((0, 9, 0, 20), True)
    """
    parts = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


@functools.cache
def _nvimgcodec() -> Any:
    """The nvImageCodec module when it has everything region decoding needs and it is not
    turned off, else None."""
    if os.environ.get(_ENV, "1") == "0":
        return None
    nvimgcodec = nvimgcodec_module()
    needed = ("Decoder", "CodeStream", "Region", "DecodeParams", "Backend", "BackendKind")
    if nvimgcodec is None or not all(hasattr(nvimgcodec, n) for n in needed):
        return None
    if not hasattr(nvimgcodec.CodeStream, "get_sub_code_stream"):
        return None
    return nvimgcodec


def region_decoding() -> bool:
    """Whether JPEG windows are decoded alone (nvImageCodec present, not disabled)."""
    return _nvimgcodec() is not None


def _decoder(nv: Any) -> Any:
    dec = getattr(_local, "decoder", None)
    if dec is None or _local.pid != os.getpid():  # (a forked child makes its own)
        _local.pid = os.getpid()
        cpu = nv.NVIMGCODEC_DEVICE_CPU_ONLY
        dec = nv.Decoder(
            device_id=cpu, max_num_cpu_threads=1, backends=[nv.Backend(nv.BackendKind.CPU_ONLY)]
        )
        _local.decoder = dec
        _local.params = {
            gray: nv.DecodeParams(
                color_spec=nv.ColorSpec.GRAY if gray else nv.ColorSpec.SRGB,
                apply_exif_orientation=False,
            )
            for gray in (False, True)
        }
    return dec


def decode_region(buf: np.ndarray, roi: tuple[int, int, int, int], gray: bool) -> np.ndarray | None:
    """The ``(y, x, h, w)`` window of a JPEG (1-D ``uint8``, stored orientation) as ``HxWx3``
    RGB, or ``HxWx1`` luma with ``gray``; ``None`` when only a full decode can tell (see the
    module's description)."""
    nv = _nvimgcodec()
    if nv is None or buf.size < 4 or buf[-2] != 0xFF or buf[-1] != 0xD9:
        return None
    y, x, h, w = roi
    try:
        dec = _decoder(nv)
        stream = nv.CodeStream(buf).get_sub_code_stream(region=nv.Region(y, x, y + h, x + w))
        out = dec.decode(stream, params=_local.params[gray])
        if out is None:
            return None
        img = np.asarray(out.cpu())
    except Exception:  # the full decode reports what is wrong
        return None
    if img.shape != (h, w, 1 if gray else 3) or img.dtype != np.uint8:
        return None
    return img
