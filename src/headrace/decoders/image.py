"""Image decoders: ``decoders.image``, ``decoders.image_crop``, ``decoders.image_random_crop``,
``peek_image_shape`` and ``imread``.

JPEG goes through libjpeg-turbo (``simplejpeg``), the other formats (PNG, BMP, TIFF, WebP, GIF,
PNM, JPEG 2000) through OpenCV; pixels equal the reference's CPU decoder. Samples are decoded on
the worker threads (the codecs release the GIL). ``device="gpu"`` (or ``"mixed"``) decodes the
batch in one call of a GPU decoder (nvImageCodec, or torchvision's nvJPEG; chosen by
``HEADRACE_GPU_DECODER``), samples it cannot take on the CPU; see
:mod:`headrace.backends.torch.gpu_decode`.

This module is the ops layer of the decoders: the schemas, and the ``prepare`` step turning the
arguments into what the one decode kernel (``image`` in ``backends/<backend>/decoders.py``)
takes: codec options, per-sample windows (peeked from the headers; random ones drawn from the
call's generator in sample order) and the skip policy.

A sample that cannot be decoded raises :class:`~headrace.DecodeError` naming the operator, the
sample index and the file it came from. With the keyword-only ``on_error="skip"`` such samples
are dropped from the output (the batch gets smaller), a warning names them, and
:func:`skipped_count` counts them. The output's ``kept`` lists the input samples it holds; the
other outputs of the same reader step must be aligned with ``labels.select(images.kept)``
(used unaligned they raise ``BatchSizeMismatchError``, so an image is never paired with another
image's label).

Examples
--------
>>> import cv2, numpy as np
>>> import headrace as ndd
>>> ok, jpg = cv2.imencode(".jpg", np.full((8, 10, 3), 128, np.uint8))
>>> img = ndd.decoders.image(ndd.as_tensor(jpg.ravel()))
>>> img.shape, img.layout
((8, 10, 3), 'HWC')
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from headrace import codecs
from headrace._core.batch import Batch
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace._dispatch.args import (
    Arg,
    forward_args,
    sample_args,
    to_bool,
    to_dtype,
    to_float,
    to_floats,
    to_int,
    to_str,
)
from headrace._dispatch.kernel_context import KernelContext, annotate
from headrace._dispatch.planned import LazySamples
from headrace._dispatch.schema import OpSchema
from headrace.io.file import encode_paths
from headrace.io.file import read as file_read
from headrace.ops._geometry_params import (
    check_crop_ranges,
    crop_window,
    crop_window_from_draws,
)

Vals = dict[str, Any]
#: A decode window: ``(y, x, height, width)``.
Roi = tuple[int, int, int, int]
#: ``prepare(kc, inputs, args) -> args`` of a decoder: the decode kernel's arguments.
Prepare = Callable[[KernelContext, list[Batch | None], Vals], Vals]

_skipped = 0
_skipped_lock = threading.Lock()


def skipped_count() -> int:
    """How many samples the decoders dropped with ``on_error="skip"`` in this process."""
    return _skipped


def _on_error(v: Any) -> str:
    s = to_str(v)
    if s not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {s!r}")
    return s


def _output_type(v: Any) -> Any:
    from headrace.types import image_type

    return image_type(v)


_DECODER_ARGS = (
    Arg("output_type", _output_type, None, doc="Colour space: RGB, BGR, GRAY, YCbCr, ANY_DATA."),
    Arg("dtype", to_dtype, None, doc="Output type: uint8 (default), uint16 or float32."),
    Arg("adjust_orientation", to_bool, True, doc="Apply the EXIF orientation."),
    Arg("use_fast_idct", to_bool, False, doc="Faster, less accurate JPEG IDCT."),
    Arg(
        "jpeg_fancy_upsampling",
        to_bool,
        False,
        doc="GPU (nvImageCodec): libjpeg's chroma upsampling; the CPU path always uses it.",
    ),
    Arg("hw_decoder_load", to_float, 0.9, doc="GPU: share of the hardware JPEG decoder."),
    Arg("preallocate_width_hint", to_int, 0, doc="Accepted for compatibility."),
    Arg("preallocate_height_hint", to_int, 0, doc="Accepted for compatibility."),
    Arg("memory_stats", to_bool, False, doc="Accepted for compatibility."),
    Arg("on_error", _on_error, "raise", doc="'raise' or 'skip' undecodable samples."),
) + tuple(
    Arg(name, conv, default, doc=f"Accepted; no effect: {what}.")
    for name, conv, default, what in (
        ("affine", to_bool, True, "GPU decoder thread affinity"),
        ("device_memory_padding", to_int, 16 << 20, "GPU decoder memory hint"),
        ("device_memory_padding_jpeg2k", to_int, 0, "GPU decoder memory hint"),
        ("host_memory_padding", to_int, 8 << 20, "GPU decoder pinned-memory hint"),
        ("host_memory_padding_jpeg2k", to_int, 0, "GPU decoder pinned-memory hint"),
        ("hybrid_huffman_threshold", to_int, 1_000_000, "GPU decoder Huffman-stage choice"),
        ("split_stages", to_bool, False, "GPU decoder staging"),
        ("use_chunk_allocator", to_bool, False, "GPU decoder allocator"),
    )
)
#: ``decoders.image`` only: the reference's GPU decoder cache (no effect here).
_CACHE_ARGS = (
    Arg("cache_size", to_int, 0, doc="Accepted; no effect (GPU decoder cache, MiB)."),
    Arg("cache_threshold", to_int, 0, doc="Accepted; no effect (GPU decoder cache)."),
    Arg("cache_type", to_str, "", doc="Accepted; no effect (GPU decoder cache policy)."),
    Arg("cache_batch_copy", to_bool, True, doc="Accepted; no effect (GPU decoder cache)."),
    Arg("cache_debug", to_bool, False, doc="Accepted; no effect (GPU decoder cache)."),
)
_CROP_ARGS = (
    Arg("crop", to_floats, None, per_sample=True, doc="(height, width) of the window."),
    Arg("crop_h", to_float, None, per_sample=True, doc="Window height."),
    Arg("crop_w", to_float, None, per_sample=True, doc="Window width."),
    Arg("crop_pos_x", to_float, 0.5, per_sample=True, doc="Horizontal position in [0, 1]."),
    Arg("crop_pos_y", to_float, 0.5, per_sample=True, doc="Vertical position in [0, 1]."),
    Arg("rounding", to_str, "round", doc="Anchor rounding: 'round' or 'truncate'."),
    Arg("crop_d", to_float, None, per_sample=True, doc="Window depth: 1 (images are 2-D)."),
    Arg("crop_pos_z", to_float, 0.5, per_sample=True, doc="Depth position (images: no effect)."),
)
_RANDOM_CROP_ARGS = (
    Arg("random_area", to_floats, np.array([0.08, 1.0], np.float32), doc="Area fraction range."),
    Arg(
        "random_aspect_ratio",
        to_floats,
        np.array([3 / 4, 4 / 3], np.float32),
        doc="Aspect ratio (w/h) range.",
    ),
    Arg("num_attempts", to_int, 10, doc="Attempts before the fallback window."),
)


def _note_skipped(kc: KernelContext, dropped: list[int]) -> None:
    """Count and report the samples a decoder dropped with ``on_error="skip"``."""
    global _skipped
    with _skipped_lock:
        _skipped += len(dropped)
    where = ", ".join(f"{i}" + (f" ({kc.source(i)!r})" if kc.source(i) else "") for i in dropped)
    warnings.warn(f"{kc.name}: skipped {len(dropped)} undecodable sample(s): {where}", stacklevel=2)


def _decode_args(v: Vals, rois: Sequence[Roi] | None = None) -> Vals:
    """The decode kernel's arguments: codec options, per-sample windows and the skip policy."""
    codec: Vals = {
        "adjust_orientation": v["adjust_orientation"],
        "use_fast_idct": v["use_fast_idct"],
    }
    if v["output_type"] is not None:
        codec["output_type"] = v["output_type"]
    if v["dtype"] is not None:
        codec["dtype"] = v["dtype"].numpy
    return {
        "codec": codec,
        "roi": rois,
        "dtype": v["dtype"],
        "on_error": v["on_error"],
        "report_skipped": _note_skipped,
        # GPU decoder options (nvImageCodec); the host decoder ignores them
        "hw_decoder_load": v["hw_decoder_load"],
        "jpeg_fancy_upsampling": v["jpeg_fancy_upsampling"],
    }


def _peek_hw(kc: KernelContext, data: np.ndarray, v: Vals, i: int) -> tuple[int, int]:
    try:
        h, w, _ = codecs.peek_shape(data, adjust_orientation=v["adjust_orientation"], op=kc.name)
    except DecodeError as e:
        raise annotate(e, kc.name, i, kc.source(i)) from None
    return h, w


def _no_window(kc: KernelContext, ins: list[Batch | None], v: Vals) -> Vals:
    """Whole images."""
    return _decode_args(v)


def _crop_windows(kc: KernelContext, ins: list[Batch | None], v: Vals) -> Vals:
    """The window of every sample from ``crop``/``crop_h``/``crop_w`` and the position, checked
    against the image size read from its header (when its sample is decoded)."""
    samples = ins[0]._samples  # type: ignore[union-attr]
    assert samples is not None

    def window(i: int) -> Roi:
        a = sample_args(v, i)
        h, w = _peek_hw(kc, samples[i], a, i)
        cd = a["crop_d"]
        if a["crop"] is not None:
            c = np.atleast_1d(a["crop"])
            if c.size not in (1, 2, 3):
                raise InvalidArgumentError(
                    f"{kc.name}: crop must be (height, width) or (depth, height, width), "
                    f"got {c.tolist()}."
                )
            ch, cw = float(c[-2] if c.size > 1 else c[0]), float(c[-1])
            cd = float(c[0]) if c.size == 3 else None
        else:
            if cd is not None and (a["crop_h"] is None or a["crop_w"] is None):
                raise InvalidArgumentError(
                    f"{kc.name}: crop_d must be given together with crop_h and crop_w."
                )
            ch, cw = a["crop_h"] or 0.0, a["crop_w"] or 0.0
        if cd is not None and cd > 1:
            raise InvalidArgumentError(
                f"{kc.name}: sample {i}: crop depth {cd:g} (crop_d) exceeds the image's depth "
                "of 1; decoded images are 2-D, so a depth window can only be 0 or 1."
            )
        if ch > h or cw > w:
            raise InvalidArgumentError(
                f"{kc.name}: sample {i}: crop window ({ch:g}, {cw:g}) is larger than the image "
                f"({h}, {w}). Use a smaller crop."
            )
        (y, x), (hh, ww) = crop_window(
            kc.name, (h, w), (ch, cw), (a["crop_pos_y"], a["crop_pos_x"]), a["rounding"]
        )
        return (y, x, hh, ww)

    return _decode_args(v, LazySamples(window, kc.n))


def _random_windows(kc: KernelContext, ins: list[Batch | None], v: Vals) -> Vals:
    """A random-resized-crop window per sample. The call's generator draws every sample's
    uniforms here, in sample order; each window is made from them when its sample is decoded,
    on that worker thread (reading the header is then part of the parallel work; the windows
    are the same on every device)."""
    samples = ins[0]._samples  # type: ignore[union-attr]
    assert samples is not None
    area, ratio, attempts = v["random_area"], v["random_aspect_ratio"], v["num_attempts"]
    check_crop_ranges(area, ratio, attempts)
    draws = kc.generator().random((kc.n, int(attempts), 4))

    def window(i: int) -> Roi:
        h, w = _peek_hw(kc, samples[i], v, i)
        (y, x), (hh, ww) = crop_window_from_draws(draws[i], (h, w), area, ratio)
        return (y, x, hh, ww)

    return _decode_args(v, LazySamples(window, kc.n))


def _decoder(name: str, args: tuple[Arg, ...], prepare: Prepare, random: bool = False) -> OpSchema:
    """A decoder: the batch kernel ``image`` of ``backends/<backend>/decoders.py`` decoding the
    windows ``prepare`` computes (CPU decoding; on the GPU the images are then uploaded)."""
    return OpSchema(
        f"decoders.{name}",
        "decoders",
        mixed=True,
        args=args,
        kernel="image",
        prepare=prepare,
        random=random,
        cpu_only_inputs=True,
        inline_bytes=0,
    )


DECODE = _decoder("image", _DECODER_ARGS + _CACHE_ARGS, _no_window)
DECODE_CROP = _decoder("image_crop", _DECODER_ARGS + _CROP_ARGS, _crop_windows)
DECODE_RANDOM_CROP = _decoder(
    "image_random_crop", _DECODER_ARGS + _RANDOM_CROP_ARGS, _random_windows, random=True
)
PEEK = OpSchema(
    "peek_image_shape",
    "decoders",
    devices=("cpu",),
    cpu_only_inputs=True,
    args=(
        Arg("dtype", to_dtype, None, doc="Output type (int64)."),
        Arg("adjust_orientation", to_bool, True, doc="Report the oriented shape."),
        Arg("image_type", _output_type, None, doc="Colour space deciding the channels."),
    ),
)


def call_decoder(schema: OpSchema, input: Any, kwargs: Vals, *extra: Any) -> Any:
    """Call a decoder; with ``on_error="skip"`` on a batch of a reader step, tell the step.

    A ``Tensor`` input (sample mode) has no batch to drop a sample from: its ``DecodeError`` is
    raised (catch it to skip the sample). On a ``Batch`` the output carries ``kept``, and the
    other outputs of the same reader step refuse to be used until aligned with
    ``batch.select(images.kept)`` (see :class:`headrace._core.batch.Step`).
    """
    if isinstance(kwargs.get("device"), str) and kwargs["device"] == "mixed":
        kwargs = {**kwargs, "device": "gpu"}  # the reference's name of the decoders' GPU device
    skip = kwargs.get("on_error") is not None and to_str(kwargs["on_error"]) == "skip"
    if skip and not isinstance(input, Batch):
        kwargs = {**kwargs, "on_error": "raise"}
    out = schema.call((input, *extra), **kwargs)
    step = getattr(input, "_step", None) if skip else None
    if step is not None and isinstance(out, Batch):
        step.watch(out)
    return out


# --- public functions ------------------------------------------------------------------------
def image(
    input: Any,
    /,
    *,
    output_type: Any = None,
    dtype: Any = None,
    adjust_orientation: bool | None = None,
    use_fast_idct: bool | None = None,
    jpeg_fancy_upsampling: bool | None = None,
    hw_decoder_load: float | None = None,
    preallocate_width_hint: int | None = None,
    preallocate_height_hint: int | None = None,
    memory_stats: bool | None = None,
    affine: bool | None = None,
    device_memory_padding: int | None = None,
    device_memory_padding_jpeg2k: int | None = None,
    host_memory_padding: int | None = None,
    host_memory_padding_jpeg2k: int | None = None,
    hybrid_huffman_threshold: int | None = None,
    split_stages: bool | None = None,
    use_chunk_allocator: bool | None = None,
    cache_size: int | None = None,
    cache_threshold: int | None = None,
    cache_type: str | None = None,
    cache_batch_copy: bool | None = None,
    cache_debug: bool | None = None,
    on_error: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Decode images (JPEG, PNG, BMP, TIFF, WebP, GIF, PNM, JPEG 2000) to HWC arrays.

    Parameters
    ----------
    input : Tensor or Batch
        Encoded files as 1-D uint8 (as ``readers.File`` produces).
    output_type : types.DALIImageType, optional
        ``RGB`` (default), ``BGR``, ``GRAY`` (1 channel), ``YCbCr`` or ``ANY_DATA`` (the file's
        own channels).
    dtype : DType, optional
        ``uint8`` (default), ``uint16`` or ``float32`` (scaled to [0, 1]).
    adjust_orientation : bool, optional
        Apply the EXIF orientation (default True).
    use_fast_idct : bool, optional
        Use libjpeg-turbo's fast integer IDCT.
    jpeg_fancy_upsampling : bool, optional
        GPU decoding with nvImageCodec: use libjpeg's "fancy" chroma upsampling (closer to the
        CPU's pixels, which always use it; may keep the hardware decoder out).
    hw_decoder_load : float, optional
        GPU decoding with nvImageCodec: the share of JPEGs given to the hardware decoder where
        the GPU has one (default 0.9).
    preallocate_width_hint, preallocate_height_hint, \
memory_stats, affine, device_memory_padding, device_memory_padding_jpeg2k, host_memory_padding, \
host_memory_padding_jpeg2k, hybrid_huffman_threshold, split_stages, use_chunk_allocator, \
cache_size, cache_threshold, cache_type, cache_batch_copy, cache_debug : optional
        The reference's GPU-decoder tuning (memory padding, Huffman stage, cache...): accepted
        for compatibility, no effect (the pixels do not depend on them).
    on_error : {"raise", "skip"}, optional
        Keyword-only extra: ``"skip"`` drops undecodable samples of a ``Batch`` instead of
        raising; the output's ``kept`` lists the input samples it holds. The other outputs of
        the same reader step (labels, ...) must then be aligned with
        ``labels.select(images.kept)``: used as they are, they raise
        ``BatchSizeMismatchError``. A ``Tensor`` input raises its ``DecodeError``.
    device : {"cpu", "gpu", "mixed"}, optional
        ``"gpu"`` (``"mixed"``, the reference's name, is the same) decodes the batch on the GPU
        and returns images there; ``HEADRACE_GPU_DECODER`` picks the GPU decoder.

    Returns
    -------
    Tensor or Batch
        uint8 images with layout ``HWC``.

    Raises
    ------
    DecodeError
        A sample is not a decodable image (message names the sample and its file).

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> ok, png = cv2.imencode(".png", np.zeros((4, 5, 3), np.uint8))
    >>> ndd.decoders.image(ndd.as_tensor(png.ravel()), output_type=ndd.types.GRAY).shape
    (4, 5, 1)
    """
    return call_decoder(DECODE, input, forward_args(locals(), "input"))


def image_crop(
    input: Any,
    /,
    *,
    crop: Any = None,
    crop_h: Any = None,
    crop_w: Any = None,
    crop_pos_x: Any = None,
    crop_pos_y: Any = None,
    rounding: str | None = None,
    output_type: Any = None,
    dtype: Any = None,
    adjust_orientation: bool | None = None,
    use_fast_idct: bool | None = None,
    jpeg_fancy_upsampling: bool | None = None,
    hw_decoder_load: float | None = None,
    preallocate_width_hint: int | None = None,
    preallocate_height_hint: int | None = None,
    memory_stats: bool | None = None,
    affine: bool | None = None,
    device_memory_padding: int | None = None,
    device_memory_padding_jpeg2k: int | None = None,
    host_memory_padding: int | None = None,
    host_memory_padding_jpeg2k: int | None = None,
    hybrid_huffman_threshold: int | None = None,
    split_stages: bool | None = None,
    use_chunk_allocator: bool | None = None,
    crop_d: Any = None,
    crop_pos_z: Any = None,
    on_error: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Decode a window of each image (equals decoding, then cropping).

    Parameters
    ----------
    crop : (float, float) or Batch, optional
        Window ``(height, width)``; or give ``crop_h`` and ``crop_w``. Per sample.
    crop_pos_x, crop_pos_y : float or Batch, optional
        Window position in [0, 1] (default 0.5: centred). Per sample.
    crop_d, crop_pos_z : float or Batch, optional
        The reference's volumetric window. Decoded images are 2-D (depth 1): a depth of 0 or 1
        and any ``crop_pos_z`` select the whole image, as in the reference; a larger depth
        raises ``InvalidArgumentError``. ``crop`` may also be ``(depth, height, width)``.
    Other parameters as :func:`image` (the GPU-decoder hints have no effect).

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> ok, png = cv2.imencode(".png", np.arange(30, dtype=np.uint8).reshape(5, 6, 1))
    >>> ndd.decoders.image_crop(ndd.as_tensor(png.ravel()), crop=(2, 3)).shape
    (2, 3, 3)
    """
    return call_decoder(DECODE_CROP, input, forward_args(locals(), "input"))


def image_random_crop(
    input: Any,
    /,
    *,
    random_area: Any = None,
    random_aspect_ratio: Any = None,
    num_attempts: int | None = None,
    output_type: Any = None,
    dtype: Any = None,
    adjust_orientation: bool | None = None,
    use_fast_idct: bool | None = None,
    jpeg_fancy_upsampling: bool | None = None,
    hw_decoder_load: float | None = None,
    preallocate_width_hint: int | None = None,
    preallocate_height_hint: int | None = None,
    memory_stats: bool | None = None,
    affine: bool | None = None,
    device_memory_padding: int | None = None,
    device_memory_padding_jpeg2k: int | None = None,
    host_memory_padding: int | None = None,
    host_memory_padding_jpeg2k: int | None = None,
    hybrid_huffman_threshold: int | None = None,
    split_stages: bool | None = None,
    use_chunk_allocator: bool | None = None,
    on_error: str | None = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: Any = None,
) -> Any:
    """Decode a random window of each image (the random-resized-crop window rule).

    Parameters
    ----------
    random_area : (float, float), optional
        Range of the window's area as a fraction of the image (default [0.08, 1]).
    random_aspect_ratio : (float, float), optional
        Range of width/height, sampled log-uniformly (default [3/4, 4/3]).
    num_attempts : int, optional
        Tries before falling back to the centred, aspect-clamped whole image (default 10).
    rng : headrace.random.RNG, optional
        Generator (default: the thread-local one). Each call draws a fixed amount.
    Other parameters as :func:`image`.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> ok, png = cv2.imencode(".png", np.zeros((40, 60, 3), np.uint8))
    >>> out = ndd.decoders.image_random_crop(ndd.as_tensor(png.ravel()), rng=ndd.random.RNG(1))
    >>> out.shape[0] <= 40 and out.shape[1] <= 60
    True
    """
    return call_decoder(DECODE_RANDOM_CROP, input, forward_args(locals(), "input"))


def peek_image_shape(
    input: Any,
    /,
    *,
    dtype: Any = None,
    adjust_orientation: bool | None = None,
    image_type: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """The (H, W, C) shape of encoded images without decoding them (int64 by default).

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> ok, png = cv2.imencode(".png", np.zeros((4, 5, 3), np.uint8))
    >>> ndd.peek_image_shape(ndd.as_tensor(png.ravel())).torch().tolist()
    [4, 5, 3]
    """
    return PEEK.call((input,), **forward_args(locals(), "input"))


def imread(filepaths: Any, /, *, device: Any = "cpu", **kwargs: Any) -> Any:
    """Read and decode images from paths: a ``str`` gives a Tensor, a list a Batch.

    Parameters
    ----------
    filepaths : str, os.PathLike, a list of them, or a Tensor/Batch of UTF-8 path bytes
        One path gives a Tensor, a list a Batch.
    device : {"cpu", "mixed", "gpu"}
        Where the decoded images live.
    **kwargs
        Arguments of :func:`image` (``output_type``, ``dtype``, ...).

    Examples
    --------
    >>> import cv2, numpy as np, tempfile, os
    >>> import headrace as ndd
    >>> p = os.path.join(tempfile.mkdtemp(), "a.png")
    >>> cv2.imwrite(p, np.zeros((3, 4, 3), np.uint8))
    True
    >>> ndd.imread(p).shape
    (3, 4, 3)
    >>> import pathlib
    >>> ndd.imread([pathlib.Path(p)] * 2).batch_size
    2
    """
    if device not in ("cpu", "mixed", "gpu"):
        raise ValueError(f"imread: device must be 'cpu' or 'mixed'/'gpu' (got {device!r}).")
    data = file_read(encode_paths(filepaths, "imread"))
    return image(data, device="gpu" if device == "mixed" else device, **kwargs)


__all__ = [
    "file_read",
    "image",
    "image_crop",
    "image_random_crop",
    "imread",
    "peek_image_shape",
    "skipped_count",
]
