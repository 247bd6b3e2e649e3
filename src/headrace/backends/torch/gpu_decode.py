"""The GPU kernel of ``decoders.image``, ``image_crop``, ``image_random_crop`` and
``image_slice``: the whole batch decoded in one call of a GPU decoder.

Backends, chosen per call by ``HEADRACE_GPU_DECODER`` (``auto``, the default, takes the first
available in this order):

``nvimgcodec``
    nvImageCodec (``pip install headrace[gpu-cu12]`` or ``[gpu-cu13]``): one batched decode,
    the hardware JPEG decoder where the GPU has one (share: ``hw_decoder_load``), windows decoded
    as code-stream regions; images reach torch through DLPack without a copy. Without CUDA
    (asked for explicitly) its CPU backend runs, which is how the tests exercise this path.
``torchvision``
    ``torchvision.io.decode_jpeg(list, device="cuda")`` (batched nvJPEG); windows are cut on the
    device after decoding.
``host``
    The CPU decoder on the worker threads, writing every image into one (pinned, when CUDA
    exists) buffer, uploaded with one asynchronous copy; the samples are views of it. Its
    results equal the CPU operator's exactly (``auto`` picks it when there is no CUDA).

The GPU backends take JPEGs (gray or colour, not CMYK) decoded as RGB, BGR or GRAY; every other
sample (other formats, CMYK, ``YCbCr``/``ANY_DATA``, a file the GPU library rejects) is decoded
on the host, so the pixels of those equal the CPU's, and ``on_error`` behaves as on the CPU. The
windows (crop, random crop, slice) are planned on the host from the headers by the operator, so
every backend and the CPU decode the same windows. GPU JPEG pixels differ from libjpeg-turbo's
by IDCT rounding (a few levels).

Examples
--------
>>> import os
>>> os.environ.get("HEADRACE_GPU_DECODER", "auto") in ("auto", "host", "nvimgcodec",
...                                                  "torchvision")
True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from headrace import codecs
from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.errors import BackendUnavailableError, DecodeError, InvalidArgumentError
from headrace._dispatch.kernel_context import KernelContext, annotate
from headrace.backends.shared.host import encoded_samples
from headrace.backends.torch.gpu_decode_backends import (
    Job,
    decode_nvimgcodec,
    decode_torchvision,
    nvimgcodec_module,
    raw_window,
    torchvision_decode_jpeg,
)
from headrace.types import DALIImageType

Vals = dict[str, Any]
BACKENDS = ("nvimgcodec", "torchvision", "host")
_AVAILABLE: dict[str, Callable[[], Any]] = {
    "nvimgcodec": nvimgcodec_module,
    "torchvision": torchvision_decode_jpeg,
}
_GPU_TYPES = (DALIImageType.RGB, DALIImageType.BGR, DALIImageType.GRAY)


def backend_for(target: Any) -> str:
    """The decoder backend for output device ``target`` (a ``torch.device``), from
    ``HEADRACE_GPU_DECODER``.

    Examples
    --------
    >>> import torch
    >>> backend_for(torch.device("cpu"))  # auto, without CUDA
    'host'
    """
    want = os.environ.get("HEADRACE_GPU_DECODER", "").strip().lower() or "auto"
    if want == "auto":
        if target.type != "cuda":
            return "host"
        return next((b for b in BACKENDS[:2] if _AVAILABLE[b]() is not None), "host")
    if want not in BACKENDS:
        raise InvalidArgumentError(
            f"HEADRACE_GPU_DECODER must be one of auto, {', '.join(BACKENDS)} (got {want!r})."
        )
    if want != "host" and _AVAILABLE[want]() is None:
        hint = "pip install headrace[gpu-cu12] (or [gpu-cu13], matching torch's CUDA)"
        if want == "torchvision":
            hint = "install the torchvision build matching torch"
        raise BackendUnavailableError(
            f"HEADRACE_GPU_DECODER={want}: {want} cannot be imported; {hint}, or unset the "
            "variable to pick an available decoder."
        )
    return want


def image(kc: KernelContext, ins: list[Any], v: Vals) -> tuple[Batch]:
    """Decode every sample (its window ``v["roi"][i]`` when given) onto the GPU.

    ``v`` is what the decoders' ``prepare`` made (see :func:`headrace.backends.shared.host.image`)
    plus ``hw_decoder_load`` and ``jpeg_fancy_upsampling`` for nvImageCodec.
    """
    x = ins[0]
    samples = encoded_samples(kc, x)
    target = kc.device.torch_device()
    backend = backend_for(target)
    outs: list[Any] = [None] * len(samples)
    host_idx = list(range(len(samples)))
    if backend != "host" and samples:
        host_idx = _decode_on_gpu(backend, samples, v, target, outs)
    dense = None
    if host_idx:
        decoded, dense = _decode_on_host(kc, samples, v, host_idx, target)
        for i, t in zip(host_idx, decoded):
            outs[i] = t
        if len(host_idx) != len(samples):
            dense = None
    return (_finish(kc, x, outs, v, dense),)


# --- GPU decoders -------------------------------------------------------------------------------
def _plan(samples: list[Any], v: Vals) -> tuple[list[Job], list[int]]:
    """The jobs a GPU decoder can take, and the indices of the samples left to the host."""
    kw = v["codec"]
    ot = kw.get("output_type", DALIImageType.RGB)
    rois = v["roi"]
    if ot not in _GPU_TYPES:
        return [], list(range(len(samples)))
    channels = 1 if ot == DALIImageType.GRAY else 3
    jobs: list[Job] = []
    host: list[int] = []
    for i, s in enumerate(samples):
        try:
            info = codecs.probe(s)
        except DecodeError:  # decoded on the host, which raises the sample's error
            host.append(i)
            continue
        if info.format != "jpeg" or info.channels not in (1, 3):
            host.append(i)
            continue
        k = info.orientation if kw["adjust_orientation"] else 1
        oriented = (info.width, info.height) if k >= 5 else (info.height, info.width)
        roi = rois[i] if rois else None
        if roi is not None and not _inside(roi, oriented):
            host.append(i)  # the host decoder names the bad window
            continue
        raw = None if roi is None else raw_window(tuple(roi), k, oriented)
        hw = (info.height, info.width) if raw is None else (raw[2], raw[3])
        if hw[0] == 0 or hw[1] == 0:
            host.append(i)
            continue
        jobs.append(Job(i, s, raw, (*hw, channels), k))
    return jobs, host


def _inside(roi: Any, hw: tuple[int, int]) -> bool:
    y, x, h, w = (int(a) for a in roi)
    return y >= 0 and x >= 0 and h >= 0 and w >= 0 and y + h <= hw[0] and x + w <= hw[1]


def _decode_on_gpu(
    backend: str, samples: list[Any], v: Vals, target: Any, outs: list[Any]
) -> list[int]:
    """Decode what the GPU decoder can into ``outs``; returns the indices left to the host."""
    jobs, host = _plan(samples, v)
    if not jobs:
        return host
    kw = v["codec"]
    gray = kw.get("output_type") == DALIImageType.GRAY
    if backend == "nvimgcodec":
        got = decode_nvimgcodec(
            jobs,
            target,
            gray=gray,
            hw_load=float(v.get("hw_decoder_load", 0.9)),
            fancy=bool(v.get("jpeg_fancy_upsampling", False)),
        )
    else:
        got = decode_torchvision(jobs, target, gray=gray)
    bgr = kw.get("output_type") == DALIImageType.BGR
    dtype = v["dtype"]
    for j, t in zip(jobs, got):
        if t is None:
            host.append(j.index)
        else:
            outs[j.index] = _post(t, j.orientation, bgr, dtype)
    host.sort()
    return host


def orient(t: Any, orientation: int) -> Any:
    """An ``HWC`` torch tensor with an EXIF orientation (1-8) applied (a view or a copy).

    Examples
    --------
    >>> import torch
    >>> orient(torch.arange(6).reshape(2, 3, 1), 6)[..., 0].tolist()
    [[3, 0], [4, 1], [5, 2]]
    """
    if orientation >= 5:
        t = t.transpose(0, 1)
    dims = {2: (1,), 3: (0, 1), 4: (0,), 6: (1,), 7: (0, 1), 8: (0,)}.get(orientation)
    return t.flip(dims) if dims else t


def _post(t: Any, orientation: int, bgr: bool, dtype: _dt.DType | None) -> Any:
    """Orientation, channel order and output type of one decoded uint8 ``HWC`` image."""
    import torch

    t = orient(t, orientation)
    if bgr:
        t = t.flip(2)
    if dtype is _dt.float32:
        t = t.to(torch.float32) / 255.0
    elif dtype is _dt.uint16:
        t = (t.to(torch.int32) * 257).to(torch.uint16)
    return t.contiguous()


# --- host decoding ------------------------------------------------------------------------------
def _decode_on_host(
    kc: KernelContext, samples: list[Any], v: Vals, idx: list[int], target: Any
) -> tuple[list[Any], Any]:
    """Decode samples ``idx`` on the worker threads into one buffer (pinned when CUDA exists),
    upload it once (asynchronously, on the current stream) and return the samples as views of
    it (``None`` for those dropped by ``on_error="skip"``), and the dense batch when every
    shape is equal."""
    import torch

    kw = v["codec"]
    rois = v["roi"]
    skip = v["on_error"] == "skip"
    name = kc.name

    def one(i: int) -> Any:
        try:
            return codecs.decode(samples[i], roi=rois[i] if rois else None, op=name, **kw)
        except DecodeError as e:
            if skip:
                return None
            raise annotate(e, name, i, kc.source(i)) from None
        except Exception as e:
            raise annotate(e, name, i, kc.source(i)) from None

    arrays = kc.ctx.parallel_map(one, idx)
    got = [a for a in arrays if a is not None]
    if not got:
        return arrays, None
    sizes = [a.nbytes for a in got]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    pin = target.type == "cuda"
    buf = torch.empty(offsets[-1], dtype=torch.uint8, pin_memory=pin)
    host = buf.numpy()

    def put(k: int) -> None:
        a = got[k]
        host[offsets[k] : offsets[k + 1]].view(a.dtype).reshape(a.shape)[...] = a

    kc.ctx.parallel_map(put, range(len(got)))
    dev = buf.to(target, non_blocking=True) if pin else buf
    tdt = _dt.to_torch_dtype(_dt.from_numpy(got[0].dtype))
    shapes = {a.shape for a in got}
    if len(shapes) == 1 and len(got) == len(arrays):
        dense = dev.view(tdt).view(len(got), *got[0].shape)
        return list(dense.unbind(0)), dense
    views = iter(
        dev[offsets[k] : offsets[k + 1]].view(tdt).view(a.shape) for k, a in enumerate(got)
    )
    return [None if a is None else next(views) for a in arrays], None


def _finish(kc: KernelContext, x: Batch, outs: list[Any], v: Vals, dense: Any) -> Batch:
    """The output batch; samples dropped by ``on_error="skip"`` reported and left out."""
    name = kc.name
    keep = list(range(len(outs)))
    if v["on_error"] == "skip" and any(o is None for o in outs):
        keep = [i for i, o in enumerate(outs) if o is not None]
        if x._step is not None:  # the step's other outputs now refuse to be used unaligned
            x._step.record(name, len(outs), tuple(keep), x._sources)
        v["report_skipped"](kc, [i for i, o in enumerate(outs) if o is None])
        outs = [outs[i] for i in keep]
        dense = None
    out = Batch._wrap(outs, v["dtype"] or _dt.uint8, "HWC", kc.device, dense=dense)
    if v["on_error"] == "skip":
        out._kept = tuple(keep)
    if x._sources is not None:
        out._sources = [x._sources[i] for i in keep]
    return out


__all__ = ["BACKENDS", "backend_for", "image", "orient"]
