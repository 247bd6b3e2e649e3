"""The batched GPU image decoders behind ``decoders.image(..., device="gpu")``: nvImageCodec
(``from nvidia import nvimgcodec``) and torchvision's nvJPEG ``decode_jpeg``.

Each takes the planned samples of one call (:class:`Job`: the encoded bytes and the window to
decode, in the stored, unoriented coordinates) and decodes them **in one library call**,
returning one ``HWC`` torch tensor per job, or ``None`` for a job the library could not decode
(the caller decodes those on the host). Nothing else is done here: orientation, channel order
and the output type are applied by :mod:`headrace.backends.torch.gpu_decode`.

Examples
--------
>>> raw_window((0, 0, 2, 3), 6, (4, 5))  # the window of an image rotated by EXIF 6
(2, 0, 3, 2)
"""

from __future__ import annotations

import functools
import threading
from typing import Any, NamedTuple

import numpy as np

from headrace.codecs.jpeg_region import nvimgcodec_module

#: ``(y, x, height, width)``
Roi = tuple[int, int, int, int]


class Job(NamedTuple):
    """One sample for a GPU decoder (a named tuple: cheap to make, one per sample).

    Attributes
    ----------
    index : int
        The sample's index in the batch.
    data : numpy.ndarray
        The encoded bytes (1-D uint8).
    raw : tuple or None
        ``(y, x, h, w)`` to decode, in stored (unoriented) coordinates; ``None``: all of it.
    shape : tuple
        ``(h, w, c)`` the decoder must return (stored orientation).
    orientation : int
        The EXIF orientation to apply afterwards (1: none).
    """

    index: int
    data: np.ndarray
    raw: Roi | None
    shape: tuple[int, int, int]
    orientation: int


def raw_window(roi: Roi, orientation: int, oriented_hw: tuple[int, int]) -> Roi:
    """The window of the stored image that, once oriented, is window ``roi`` of the oriented one.

    ``orient(img, k)[y:y+h, x:x+w]`` equals ``orient(img[ry:ry+rh, rx:rx+rw], k)`` for
    ``(ry, rx, rh, rw) = raw_window((y, x, h, w), k, orient(img, k).shape[:2])``.

    Examples
    --------
    >>> raw_window((1, 2, 3, 4), 1, (10, 20)), raw_window((1, 2, 3, 4), 3, (10, 20))
    ((1, 2, 3, 4), (6, 14, 3, 4))
    """
    y, x, h, w = roi
    oh, ow = oriented_hw
    if orientation == 2:
        return y, ow - x - w, h, w
    if orientation == 3:
        return oh - y - h, ow - x - w, h, w
    if orientation == 4:
        return oh - y - h, x, h, w
    if orientation == 5:
        return x, y, w, h
    if orientation == 6:
        return ow - x - w, y, w, h
    if orientation == 7:
        return ow - x - w, oh - y - h, w, h
    if orientation == 8:
        return x, oh - y - h, w, h
    return roi


# --- nvImageCodec -------------------------------------------------------------------------------
_decoders: dict[tuple[Any, ...], tuple[Any, threading.Lock]] = {}
_decoders_lock = threading.Lock()


#: Decoders (by :func:`key_of`) whose library build decoded no region: windows are then cut
#: from whole images decoded on the GPU.
_NO_REGIONS: set[tuple[Any, ...]] = set()


def key_of(device_id: int | None, hw_load: float, fancy: bool) -> tuple[Any, ...]:
    """The cache key of a decoder's options."""
    return (device_id, round(hw_load, 3), fancy)


def _nvimgcodec_decoder(device_id: int | None, hw_load: float, fancy: bool) -> tuple[Any, Any]:
    """A cached decoder (and its lock) for one GPU (``None``: the CPU-only backend, used on
    machines without CUDA) and one set of options."""
    key = key_of(device_id, hw_load, fancy)
    with _decoders_lock:
        got = _decoders.get(key)
        if got is None:
            nv = nvimgcodec_module()
            kinds = nv.BackendKind
            options = ":fancy_upsampling=1" if fancy else ""
            if device_id is None:
                dec = nv.Decoder(
                    device_id=nv.NVIMGCODEC_DEVICE_CPU_ONLY,
                    backends=[nv.Backend(kinds.CPU_ONLY)],
                    options=options,
                )
            else:
                backends = [
                    nv.Backend(kinds.HW_GPU_ONLY, load_hint=hw_load),
                    nv.Backend(kinds.GPU_ONLY),
                    nv.Backend(kinds.HYBRID_CPU_GPU),
                ]
                dec = nv.Decoder(device_id=device_id, backends=backends, options=options)
            got = _decoders[key] = (dec, threading.Lock())
    return got


def decode_nvimgcodec(
    jobs: list[Job], target: Any, *, gray: bool, hw_load: float, fancy: bool
) -> list[Any]:
    """Decode all ``jobs`` with one ``Decoder.decode`` call (windows as code-stream regions).

    On CUDA the library decodes on a side stream of the GPU, which waits for nothing queued on
    the call's stream (so decoding the next batch overlaps the operators still running on this
    one); the call's stream waits for the decode and copies the images into memory torch owns
    (whole images: one copy for the batch), and the side stream waits for those copies before
    the library frees its buffers there. On the CPU (no CUDA) the images are copied.
    """
    import torch

    nv = nvimgcodec_module()
    cuda = target.type == "cuda"
    if cuda and target.index is None:
        target = torch.device("cuda", torch.cuda.current_device())
    dev_id = target.index if cuda else None
    dec, lock = _nvimgcodec_decoder(dev_id, hw_load, fancy)
    # whole images as arrays (nvImageCodec makes the code streams without Python objects),
    # windows as regions of a code stream
    regions = key_of(dev_id, hw_load, fancy) not in _NO_REGIONS
    srcs: list[Any] = []
    for j in jobs:
        if j.raw is None or not regions:  # (a window is then cut after decoding, below)
            srcs.append(np.ascontiguousarray(j.data))
        else:
            y, x, h, w = j.raw
            cs = nv.CodeStream(j.data)
            srcs.append(cs.get_sub_code_stream(region=nv.Region(y, x, y + h, x + w)))
    params = nv.DecodeParams(
        apply_exif_orientation=False,
        color_spec=nv.ColorSpec.GRAY if gray else nv.ColorSpec.SRGB,
        allow_any_depth=False,
    )
    cur = torch.cuda.current_stream(target) if cuda else None
    side = _side_stream(torch, target) if cuda else None
    stream = side.cuda_stream if side is not None else 0
    with lock:
        imgs: list[Any] = list(dec.decode(srcs, params=params, cuda_stream=stream))
        if not regions:
            imgs = [im if im is None or j.raw is None else _Window(im, j.raw)
                    for j, im in zip(jobs, imgs)]  # fmt: skip
        # windows the library would not decode as regions: whole images on the GPU, cut there
        redo = [k for k, (j, im) in enumerate(zip(jobs, imgs))
                if regions and im is None and j.raw is not None]  # fmt: skip
        if redo and 2 * len(redo) >= sum(j.raw is not None for j in jobs):
            # most regions refused: this library build does not decode them (e.g. nvJPEG < 13.2
            # with fancy upsampling, where only some windows pass); decode whole images from now
            # on instead of decoding twice (and warning) on every call
            _NO_REGIONS.add(key_of(dev_id, hw_load, fancy))
        if redo:
            whole = dec.decode([np.ascontiguousarray(jobs[k].data) for k in redo], params=params,
                               cuda_stream=stream)  # fmt: skip
            for k, im in zip(redo, whole):
                imgs[k] = None if im is None else _Window(im, jobs[k].raw)
    # the call's stream waits for the decode (DLPack's name of the legacy default stream is 1)
    consumer = (cur.cuda_stream or 1) if cur is not None else 1
    out: list[Any] = []
    together: list[tuple[int, Any]] = []  # whole device images, copied together below
    for k, (j, img) in enumerate(zip(jobs, imgs)):
        win = None
        if isinstance(img, _Window):
            img, win = img.image, img.raw
        if img is None:
            out.append(None)
            continue
        on_device = cuda and img.buffer_kind == nv.ImageBufferKind.STRIDED_DEVICE
        if on_device:
            t = _from_dlpack(torch, img, consumer)
        else:
            t = torch.from_numpy(np.array(img.cpu(), copy=True)).to(target)
        if win is not None:
            y, x, h, w = win
            t = t[y : y + h, x : x + w]
        if on_device:
            # into memory torch's allocator owns: the library frees its own buffers
            # asynchronously on its stream, which consumers elsewhere could not guard against
            if win is None and t.is_contiguous():
                together.append((k, t))
                out.append(None)
                continue
            t = t.clone(memory_format=torch.contiguous_format)
        out.append(t if tuple(t.shape) == j.shape else None)
    if together:  # one copy for the whole images: each a view of the batch's buffer
        flat = torch.cat([t.reshape(-1) for _, t in together])
        for (k, t), part in zip(together, torch.split(flat, [t.numel() for _, t in together])):
            out[k] = part.view(t.shape) if tuple(t.shape) == jobs[k].shape else None
    if cur is not None and side is not None:
        copied = torch.cuda.Event()
        copied.record(cur)
        side.wait_event(copied)  # the library's buffers are freed there once the copies are done
    return out


class _Window(NamedTuple):
    """A whole decoded image standing for the window ``raw`` of it."""

    image: Any
    raw: Roi


def _from_dlpack(torch: Any, img: Any, stream: int) -> Any:
    """``img`` as a torch tensor sharing its memory (the capsule keeps the image alive), ordered
    after its decoding on consumer ``stream``. The same as ``torch.from_dlpack(img)``, without
    torch probing a newer protocol version first (a failed keyword call per image)."""
    try:
        capsule = img.__dlpack__(stream=stream)
    except TypeError:
        return torch.from_dlpack(img)
    return torch.from_dlpack(capsule)


# --- torchvision --------------------------------------------------------------------------------
@functools.cache
def torchvision_decode_jpeg() -> Any:
    """``(torchvision.io.decode_jpeg, ImageReadMode)``, or ``None`` when torchvision is absent."""
    try:
        from torchvision.io import ImageReadMode, decode_jpeg
    except Exception:  # ImportError, or a torchvision built for another torch
        return None
    return decode_jpeg, ImageReadMode


def decode_torchvision(jobs: list[Job], target: Any, *, gray: bool) -> list[Any]:
    """Decode all ``jobs`` with one batched ``decode_jpeg(list, device=...)`` call (nvJPEG on
    CUDA), then cut each window on the device. A batch the library refuses is retried sample
    by sample, so one bad file only sends itself to the host."""
    import torch

    from headrace._core.storage import numpy_to_torch

    decode_jpeg, mode_enum = torchvision_decode_jpeg()
    mode = mode_enum.GRAY if gray else mode_enum.RGB
    datas = [numpy_to_torch(np.ascontiguousarray(j.data)) for j in jobs]

    def decode_all() -> list[Any]:
        try:
            return list(decode_jpeg(datas, mode=mode, device=target))
        except RuntimeError:
            chw = []
            for d in datas:
                try:
                    chw.append(decode_jpeg(d, mode=mode, device=target))
                except RuntimeError:
                    chw.append(None)
            return chw

    if target.type != "cuda":
        chw = decode_all()
    else:
        # torchvision writes its outputs from its own stream without ordering them after the
        # caller's stream, where the memory was allocated: decode on a side stream that waits
        # for the call's stream, then order the call's stream after it
        cur = torch.cuda.current_stream(target)
        side = _side_stream(torch, target)
        side.wait_stream(cur)
        with torch.cuda.stream(side):
            chw = decode_all()
        cur.wait_stream(side)
        for t in chw:
            if t is not None:
                t.record_stream(cur)
    out: list[Any] = []
    for j, t in zip(jobs, chw):
        if t is None:
            out.append(None)
            continue
        hwc = t.permute(1, 2, 0)
        if j.raw is not None:
            y, x, h, w = j.raw
            hwc = hwc[y : y + h, x : x + w]
        out.append(hwc if tuple(hwc.shape) == j.shape else None)
    return out


_SIDE_STREAMS: dict[int, Any] = {}


def _side_stream(torch: Any, device: Any) -> Any:
    """The stream torchvision decodes on for ``device`` (one per GPU, made on first use)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    s = _SIDE_STREAMS.get(index)
    if s is None:
        s = _SIDE_STREAMS[index] = torch.cuda.Stream(device=index)
    return s


__all__ = [
    "Job",
    "decode_nvimgcodec",
    "decode_torchvision",
    "nvimgcodec_module",
    "raw_window",
    "torchvision_decode_jpeg",
]
