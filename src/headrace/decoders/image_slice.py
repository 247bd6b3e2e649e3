"""``decoders.image_slice``: decode a region of each image given by anchor/shape inputs or
slice arguments.

The window of every sample is computed by ``slice``'s plan function
(:func:`headrace.ops._geometry_params.slice_params`) on the image's shape read from its header,
and the one image decode kernel (``image`` in ``backends/<backend>/decoders.py``) decodes it:
the result equals decoding the whole image, then ``ndd.slice`` with the same arguments. Windows
must lie inside the image (the reference has no out-of-bounds policy here) and may only cut the
H and W axes.

Examples
--------
>>> import cv2, numpy as np
>>> import headrace as ndd
>>> ok, png = cv2.imencode(".png", np.zeros((20, 30, 3), np.uint8))
>>> ndd.decoders.image_slice(ndd.as_tensor(png.ravel()), start=[3, 4], shape=[10, 5]).shape
(5, 10, 3)
"""

from __future__ import annotations

from typing import Any

from headrace import codecs
from headrace._core.batch import Batch
from headrace._core.errors import DecodeError, InvalidArgumentError, ShapeError
from headrace._dispatch.args import (
    Arg,
    forward_args,
    sample_args,
    to_bool,
    to_floats,
    to_int,
    to_ints,
    to_layout,
)
from headrace._dispatch.kernel_context import KernelContext, annotate
from headrace._dispatch.planned import LazySamples
from headrace._dispatch.schema import OpSchema
from headrace.decoders.image import _DECODER_ARGS, Roi, Vals, _decode_args, call_decoder
from headrace.ops._geometry_params import slice_params

_SLICE_ARGS = (
    Arg("start", to_ints, None, per_sample=True, doc="Absolute start."),
    Arg("end", to_ints, None, per_sample=True, doc="Absolute end."),
    Arg("shape", to_ints, None, per_sample=True, doc="Absolute extent."),
    Arg("rel_start", to_floats, None, per_sample=True, doc="Start relative to the extent."),
    Arg("rel_end", to_floats, None, per_sample=True, doc="End relative to the extent."),
    Arg("rel_shape", to_floats, None, per_sample=True, doc="Extent, relative."),
    Arg("axes", to_ints, None, per_sample=True, doc="Axes the values refer to ([1, 0])."),
    Arg("axis_names", to_layout, None, doc='Axes by layout name ("WH").'),
    Arg("normalized_anchor", to_bool, True, doc="A float anchor input is relative."),
    Arg("normalized_shape", to_bool, True, doc="A float shape input is relative."),
)
#: The reference's GPU decoder tuning: accepted, no effect (decoding runs on the CPU).
_GPU_TUNING = (
    Arg("affine", to_bool, True, doc="Accepted; no effect (GPU decoder thread pinning)."),
    Arg("device_memory_padding", to_int, 16777216, doc="Accepted; no effect."),
    Arg("device_memory_padding_jpeg2k", to_int, 0, doc="Accepted; no effect."),
    Arg("host_memory_padding", to_int, 8388608, doc="Accepted; no effect."),
    Arg("host_memory_padding_jpeg2k", to_int, 0, doc="Accepted; no effect."),
    Arg("hybrid_huffman_threshold", to_int, 1000000, doc="Accepted; no effect."),
    Arg("split_stages", to_bool, False, doc="Accepted; no effect (deprecated)."),
    Arg("use_chunk_allocator", to_bool, False, doc="Accepted; no effect (deprecated)."),
)


_NAMED = ("start", "end", "shape", "rel_start", "rel_end", "rel_shape")


def _slice_windows(kc: KernelContext, ins: list[Batch | None], v: Vals) -> Vals:
    """Each sample's window: ``slice_params`` on the ``(H, W, C)`` read from its header."""
    samples = ins[0]._samples  # type: ignore[union-attr]
    assert samples is not None
    anchors = ins[1]._samples if len(ins) > 1 and ins[1] is not None else None
    shapes = ins[2]._samples if len(ins) > 2 and ins[2] is not None else None
    peek: dict[str, Any] = {"op": kc.name}
    if v["output_type"] is not None:
        peek["output_type"] = v["output_type"]
    named = [k for k in _NAMED if v[k] is not None]
    if (anchors is not None or shapes is not None) and named:
        raise InvalidArgumentError(
            f"{kc.name}: the anchor/shape inputs cannot be combined with {named}; give the "
            "region either way, not both."
        )
    if anchors is None and shapes is None and not named:
        raise InvalidArgumentError(
            f"{kc.name}: give the region: the anchor and shape inputs, or slice arguments "
            "(start/rel_start with end/rel_end/shape/rel_shape)."
        )
    rois: list[Roi | BaseException] = []
    skip = v["on_error"] == "skip"
    for i in range(kc.n):
        a = sample_args(v, i)
        try:
            in_shape = codecs.peek_shape(
                samples[i], adjust_orientation=a["adjust_orientation"], **peek
            )
        except DecodeError as e:
            if not skip:
                raise annotate(e, kc.name, i, kc.source(i)) from None
            rois.append(e)  # (unreadable header: the sample is skipped when it is decoded)
            continue
        try:
            plan = slice_params(
                in_shape,
                "HWC",
                None,
                normalized_anchor=a["normalized_anchor"],
                normalized_shape=a["normalized_shape"],
                out_of_bounds_policy="pad",  # checked below, with this operator's message
                axes=a["axes"],
                axis_names=a["axis_names"],
                anchor_input=None if anchors is None else anchors[i],
                shape_input=None if shapes is None else shapes[i],
                op=kc.name,
                **{k: a[k] for k in _NAMED},
            )
            (y, x, c0), (h, w, c) = plan.kwargs["anchor"], plan.kwargs["shape"]
            if y < 0 or x < 0 or y + h > in_shape[0] or x + w > in_shape[1]:
                raise ShapeError(
                    f"{kc.name}: the region (y {y}..{y + h}, x {x}..{x + w}) is out of bounds "
                    f"of the image of shape {tuple(in_shape)}. Give a region inside the image."
                )
            if c0 != 0 or c != in_shape[2]:
                raise InvalidArgumentError(
                    f"{kc.name}: only the H and W axes of an image can be sliced (the window "
                    f"cuts the channels to {c0}..{c0 + c} of {in_shape[2]})."
                )
        except (DecodeError, InvalidArgumentError, ShapeError) as e:
            raise annotate(e, kc.name, i, kc.source(i)) from None
        rois.append((y, x, h, w))
    if not any(isinstance(r, BaseException) for r in rois):
        return _decode_args(v, rois)  # type: ignore[arg-type]

    def window(i: int) -> Roi:
        roi = rois[i]
        if isinstance(roi, BaseException):
            raise roi
        return roi

    return _decode_args(v, LazySamples(window, kc.n))


DECODE_SLICE = OpSchema(
    "decoders.image_slice",
    "decoders",
    mixed=True,
    inputs=("data", "anchor", "shape"),
    min_inputs=1,
    args=_DECODER_ARGS + _SLICE_ARGS + _GPU_TUNING,
    kernel="image",
    prepare=_slice_windows,
    cpu_only_inputs=True,
    inline_bytes=0,
)


def image_slice(
    data: Any,
    anchor: Any = None,
    shape_input: Any = None,
    /,
    *,
    start: Any = None,
    end: Any = None,
    shape: Any = None,
    rel_start: Any = None,
    rel_end: Any = None,
    rel_shape: Any = None,
    axes: Any = None,
    axis_names: str | None = None,
    normalized_anchor: bool | None = None,
    normalized_shape: bool | None = None,
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
) -> Any:
    """Decode a region of each image (equals decoding, then ``ndd.slice``).

    The region's start comes from the ``anchor`` input, ``start`` or ``rel_start`` (default 0);
    its end from the ``shape_input`` input, ``shape``, ``rel_shape``, ``end`` or ``rel_end``
    (default: the extent). The values list the axes of ``axis_names`` (default ``"WH"``: x
    first) or ``axes``.

    Parameters
    ----------
    data : Tensor or Batch
        Encoded images (1-D uint8).
    anchor, shape_input : Tensor or Batch, optional
        Start and extent per axis. Float values are fractions of the extent when
        ``normalized_anchor``/``normalized_shape`` (default True), integer values are pixels.
    start, end, shape : sequence of int, or Batch
        Absolute start, end, extent.
    rel_start, rel_end, rel_shape : sequence of float, or Batch
        Start, end, extent as fractions of the image's extent.
    axes : sequence of int, optional
        Axes the values refer to (``[1, 0]`` is W, H).
    axis_names : str, optional
        Axes by name in ``"HWC"`` (default ``"WH"``).
    normalized_anchor, normalized_shape : bool, optional
        Float positional inputs are relative (default True).
    output_type, dtype, adjust_orientation, use_fast_idct, on_error
        As :func:`headrace.decoders.image`.
    jpeg_fancy_upsampling, hw_decoder_load, preallocate_width_hint, preallocate_height_hint, \
memory_stats, affine, device_memory_padding, device_memory_padding_jpeg2k, \
host_memory_padding, host_memory_padding_jpeg2k, hybrid_huffman_threshold, split_stages, \
use_chunk_allocator
        The reference's GPU decoder tuning: ``jpeg_fancy_upsampling`` and ``hw_decoder_load``
        as in :func:`headrace.decoders.image`, the others accepted with no effect.
    device : {"cpu", "gpu", "mixed"}, optional
        ``"gpu"`` (or ``"mixed"``) decodes the regions on the GPU (see
        :func:`headrace.decoders.image`).

    Returns
    -------
    Tensor or Batch
        The regions, layout ``HWC``.

    Raises
    ------
    ShapeError
        A region leaves its image.
    InvalidArgumentError
        Several start or end forms, positional inputs with slice arguments, unknown axes, or a
        region that cuts the channels.
    DecodeError
        A sample is not a decodable image.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> ok, png = cv2.imencode(".png", np.zeros((20, 30, 3), np.uint8))
    >>> data = ndd.as_tensor(png.ravel())
    >>> anchor = ndd.as_tensor(np.array([0.1, 0.2], np.float32))  # x, y
    >>> shape = ndd.as_tensor(np.array([0.5, 0.5], np.float32))   # width, height
    >>> ndd.decoders.image_slice(data, anchor, shape).shape
    (10, 15, 3)
    """
    kwargs = forward_args(locals(), "data", "anchor", "shape_input")
    return call_decoder(DECODE_SLICE, data, kwargs, anchor, shape_input)


__all__ = ["image_slice"]
