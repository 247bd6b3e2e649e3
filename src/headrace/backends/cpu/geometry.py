"""CPU kernels of the geometry ops (numpy/OpenCV): crop, slice, crop_mirror_normalize, flip,
pad, paste and erase (the resize-based ops have theirs in :mod:`.resize`).

Each kernel is ``op(x, layout, **plan.kwargs)`` with the plan from
:mod:`headrace.ops._geometry_params`; one sample in, a new array out (the input is never
modified). Windows, flips, padding and erasing are exact (bit-identical to DALI 2.4).
``crop_mirror_normalize`` on uint8 input maps each channel through a 256-entry lookup table
built in float32, then converts to the output type, so it equals DALI's float32 arithmetic
(max abs diff < 1e-5 for float32 output, exact for float16/uint8 output, which round half
away from zero as DALI does).

Examples
--------
>>> import numpy as np
>>> img = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
>>> crop(img, "HWC", anchor=(1, 1, 0), shape=(2, 2, 3), fill_values=np.zeros(1),
...      channel_axis=2).shape
(2, 2, 3)
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Sequence

import cv2
import numpy as np

from headrace._core.errors import InvalidArgumentError
from headrace._core.saturate import c_cast, saturate
from headrace.backends.cpu.misc import CV_DEPTHS
from headrace.backends.shared.common import box_fill, overlap

_slice = builtins.slice


def _fill_block(
    shape: Sequence[int],
    dtype: np.dtype,
    fill: np.ndarray,
    channel_axis: int | None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """A ``shape`` block of ``fill`` (one value, or one per channel); ``out``: fill it instead."""
    if out is None:
        out = np.empty(shape, dtype)
    if fill.size <= 1 or channel_axis is None:
        first = fill.reshape(-1)[:1] if fill.size else _ZERO
        out[...] = _converted(first.tobytes(), first.dtype.str, np.dtype(dtype).str)[0]
        return out
    if fill.size != shape[channel_axis]:
        raise InvalidArgumentError(
            f"fill_values: need 1 or {shape[channel_axis]} values, one per channel "
            f"(got {fill.size}). Give a scalar or one value per channel."
        )
    bshape = [1] * len(shape)
    bshape[channel_axis] = fill.size
    out[...] = _converted(fill.tobytes(), fill.dtype.str, np.dtype(dtype).str).reshape(bshape)
    return out


_ZERO = np.zeros(1, np.int64)


@functools.lru_cache(maxsize=256)
def _converted(raw: bytes, src: str, dtype: str) -> np.ndarray:
    """Fill values (``raw`` bytes of type ``src``) converted to ``dtype`` as the reference does
    (:func:`~headrace._core.saturate.c_cast`: truncated and wrapped, not saturated), made once
    per value (a conversion costs ~10 us; erase and padding crops fill every sample)."""
    out = c_cast(np.frombuffer(raw, src), np.dtype(dtype))
    out.flags.writeable = False
    return out


def window(
    x: np.ndarray,
    anchor: Sequence[int],
    shape: Sequence[int],
    fill_values: np.ndarray,
    channel_axis: int | None,
    dtype: np.dtype | None = None,
    copy: bool = True,
) -> np.ndarray:
    """Cut the box ``anchor``/``shape`` out of ``x``, filling what lies outside ``x``.

    Examples
    --------
    >>> window(np.ones((2, 2)), (-1, 0), (3, 2), np.array([5.0]), None).tolist()
    [[5.0, 5.0], [1.0, 1.0], [1.0, 1.0]]
    """
    out_dtype = x.dtype if dtype is None else np.dtype(dtype)
    src, dst, inside = overlap(anchor, shape, x.shape)
    if inside:
        view = x[src]
        if out_dtype != x.dtype:
            return saturate(view, out_dtype)
        return view.copy() if copy else view
    out = _fill_block(shape, out_dtype, np.asarray(fill_values), channel_axis)
    out[dst] = saturate(x[src], out_dtype)
    return out


def crop(
    x: np.ndarray,
    layout: str,
    *,
    anchor: Sequence[int],
    shape: Sequence[int],
    fill_values: np.ndarray,
    channel_axis: int | None,
    dtype: np.dtype | None = None,
) -> np.ndarray:
    """Crop one sample (any layout; plan from ``crop_params``).

    Examples
    --------
    >>> crop(np.zeros((4, 4, 1)), "HWC", anchor=(1, 1, 0), shape=(2, 2, 1),
    ...      fill_values=np.zeros(1), channel_axis=2).shape
    (2, 2, 1)
    """
    return window(x, anchor, shape, fill_values, channel_axis, dtype)


slice = crop


def flip(x: np.ndarray, layout: str, *, axes: Sequence[int]) -> np.ndarray:
    """Reverse the given axes (plan from ``flip_params``).

    Examples
    --------
    >>> flip(np.arange(3).reshape(1, 3, 1), "HWC", axes=(1,)).ravel().tolist()
    [2, 1, 0]
    """
    if not axes or x.size == 0:  # (an empty sample flips to itself; OpenCV returns None)
        return x.copy()
    if x.ndim == 3 and x.dtype != np.float16 and layout in ("HWC", "HW") and x.shape[2] <= 4:
        code = {(1,): 1, (0,): 0}.get(tuple(axes), -1)
        return cv2.flip(np.ascontiguousarray(x), code).reshape(x.shape)
    return np.ascontiguousarray(np.flip(x, tuple(axes)))


def pad(x: np.ndarray, layout: str, *, out_shape: Sequence[int], fill_value: float) -> np.ndarray:
    """Pad the end of each axis up to ``out_shape`` with ``fill_value``.

    Examples
    --------
    >>> pad(np.ones((1, 2)), "HW", out_shape=(2, 3), fill_value=0).tolist()
    [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    return window(x, (0,) * x.ndim, out_shape, np.asarray([fill_value]), None)


def paste(
    x: np.ndarray,
    layout: str,
    *,
    anchor: Sequence[int],
    out_shape: Sequence[int],
    fill_values: np.ndarray,
    channel_axis: int | None,
) -> np.ndarray:
    """Place ``x`` at ``anchor`` on a canvas of ``out_shape`` filled with ``fill_values``.

    Examples
    --------
    >>> paste(np.ones((1, 1, 1)), "HWC", anchor=(1, 0, 0), out_shape=(2, 1, 1),
    ...       fill_values=np.zeros(1), channel_axis=2).ravel().tolist()
    [0.0, 1.0]
    """
    neg = tuple(-a for a in anchor)
    return window(x, neg, out_shape, fill_values, channel_axis)


def erase(
    x: np.ndarray,
    layout: str | None,
    *,
    boxes: Sequence[tuple[Sequence[int], Sequence[int]]],
    fill_values: np.ndarray,
    channel_axis: int | None,
) -> np.ndarray:
    """Fill each box ``(lo, hi)`` of a copy of ``x`` with ``fill_values``.

    Examples
    --------
    >>> erase(np.ones((2, 2)), "HW", boxes=[((0, 0), (1, 2))], fill_values=np.zeros(1),
    ...       channel_axis=None).tolist()
    [[0.0, 0.0], [1.0, 1.0]]
    """
    out = x.copy()
    fill = np.asarray(fill_values)
    for lo, hi in boxes:
        region = tuple(_slice(a, b) for a, b in zip(lo, hi))
        if all(b > a for a, b in zip(lo, hi)):
            view = out[region]
            _fill_block(view.shape, out.dtype, box_fill(fill, lo, hi, channel_axis, x.shape),
                        channel_axis, out=view)  # fmt: skip
    return out


_CV_LUT_TYPES = CV_DEPTHS - {np.dtype(np.float64)}


_LUT_CACHE: dict[tuple[bytes, bytes, str, int], list[np.ndarray]] = {}
_LEVELS = np.arange(256, dtype=np.float32)


def _channel_luts(mul: np.ndarray, add: np.ndarray, dtype: np.dtype, channels: int) -> list:
    """Per-channel 256-entry tables ``saturate(level * mul[c] + add[c])``, cached by value; for
    several channels, entry ``channels`` is all of them as one ``(1, 256, channels)`` table (for
    one OpenCV lookup of every channel)."""
    key = (np.asarray(mul).tobytes(), np.asarray(add).tobytes(), np.dtype(dtype).str, channels)
    luts = _LUT_CACHE.get(key)
    if luts is None:
        luts = [saturate(_LEVELS * mul[c] + add[c], dtype) for c in range(channels)]
        if channels > 1:
            luts.append(np.ascontiguousarray(np.stack(luts, axis=1)).reshape(1, 256, channels))
        if len(_LUT_CACHE) > 256:
            _LUT_CACHE.clear()
        _LUT_CACHE[key] = luts
    return luts


def _cmn_lut(
    src: np.ndarray, out: np.ndarray, mul: np.ndarray, add: np.ndarray, chw: bool, mirror: bool
) -> None:
    """uint8 HWC source -> per-channel LUT into ``out`` (CHW or HWC), mirroring W if asked."""
    # OpenCV's LUT wins on real images; below ~4k pixels its per-call cost dominates
    # (OpenCV writes into the output planes only when they are contiguous: else it would
    # allocate its own and leave ``out`` unwritten)
    channels = src.shape[-1]
    use_cv = (
        out.dtype in _CV_LUT_TYPES
        and channels <= 4
        and src.size >= 12288
        and out.flags.c_contiguous
        and (chw or out.shape[-1] == channels)  # (HWC: no padding channel)
    )
    if use_cv:
        src = cv2.flip(src, 1) if mirror else src
    elif mirror:
        src = src[:, ::-1]
    luts = _channel_luts(mul, add, out.dtype, channels)
    if use_cv:
        if channels == 1:
            plane = out[0] if chw else out.reshape(src.shape[:2])
            cv2.LUT(src.reshape(src.shape[:2]), luts[0], dst=plane)
        elif chw:  # one lookup of every channel, one split into the output planes: two calls
            # that release the GIL (a split of the uint8 image and a lookup per plane were
            # 1 + C calls and scaled 1.5x on 2 threads; this, 1.9x)
            cv2.split(cv2.LUT(src, luts[channels]), [out[c] for c in range(channels)])
        else:  # HWC: the lookup is the whole output
            cv2.LUT(src, luts[channels], dst=out)
        return
    for c in range(src.shape[-1]):
        lut = luts[c]
        if chw:
            np.take(lut, src[..., c], out=out[c])
        else:
            out[..., c] = lut[src[..., c]]


def _cmn_padded(x: np.ndarray, layout: str, args: dict) -> np.ndarray:
    """Out-of-bounds window: normalise the part inside the input, fill the rest (raw values)."""
    src_box, dst_box = args["src_box"], list(args["dst_box"])
    shape, perm, c_axis = list(args["shape"]), args["perm"], args["channel_axis"]
    mirror_axis = args["mirror_axis"]
    if mirror_axis is not None:
        d = dst_box[mirror_axis]
        n = shape[mirror_axis]
        dst_box[mirror_axis] = _slice(n - d.stop, n - d.start)
    full = list(shape)
    pad, pad_fill = args["pad_output"], args["pad_values"]
    if pad:
        full[c_axis] += pad
        dst_box[c_axis] = _slice(0, shape[c_axis])
    out_shape = tuple(full[p] for p in perm)
    c_out = perm.index(c_axis) if c_axis is not None else None
    fill = np.asarray(args["fill_values"])
    if pad and fill.size == shape[c_axis] > 1:
        fill = np.append(fill, pad_fill)
    dt = np.dtype(args["dtype"])
    given = args["out"]  # a dense batch's sample: filled in place
    reuse = given is not None and given.shape == out_shape and given.dtype == dt
    out = _fill_block(out_shape, dt, fill, c_out, out=given if reuse else None)
    inner_kw = {
        k: args[k]
        for k in ("mirror_axis", "mul", "add", "perm", "channel_axis", "fill_values", "dtype")
    }
    if all(b.stop > b.start for b in src_box):
        region = out[tuple(dst_box[p] for p in perm)]
        inner = crop_mirror_normalize(
            x, layout, anchor=tuple(b.start for b in src_box),
            shape=tuple(b.stop - b.start for b in src_box), pad_output=0, out=region,
            **inner_kw,
        )  # fmt: skip
        if inner is not region:  # (written straight into the window when the kernel could)
            region[...] = inner
        if pad:  # the padding channels hold their values where there is image too
            dst_box[c_axis] = _slice(shape[c_axis], shape[c_axis] + pad)
            block = out[tuple(dst_box[p] for p in perm)]
            _fill_block(block.shape, dt, pad_fill, c_out, out=block)
    return out


def crop_mirror_normalize(
    x: np.ndarray,
    layout: str,
    *,
    anchor: Sequence[int],
    shape: Sequence[int],
    mirror_axis: int | None,
    mul: np.ndarray,
    add: np.ndarray,
    perm: Sequence[int],
    pad_output: int,
    channel_axis: int | None,
    fill_values: np.ndarray,
    dtype: np.dtype,
    pad_fill: np.ndarray | None = None,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Fused crop + mirror + ``x * mul + add`` per channel + transpose + cast; ``pad_output``
    channels (holding ``pad_fill``) after the image's.

    ``out`` (optional) is a preallocated output of the right shape and type, e.g. one sample
    of a dense batch, so the batch needs no stacking copy later.

    For uint8 HWC input this is one pass per channel through a lookup table written straight
    into the preallocated output (no float temporaries).

    Examples
    --------
    >>> img = np.full((8, 8, 3), 10, np.uint8)
    >>> f32 = np.dtype(np.float32)
    >>> p = dict(anchor=(2, 2, 0), shape=(4, 4, 3), mirror_axis=None, mul=np.full(3, 0.2, f32),
    ...          add=np.full(3, -1, f32), perm=(2, 0, 1), pad_output=0, channel_axis=2,
    ...          fill_values=np.zeros(1), dtype=f32)
    >>> crop_mirror_normalize(img, "HWC", **p)[:, 0, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    src_box, dst_box, inside = overlap(anchor, shape, x.shape)
    pad_values = np.zeros(int(pad_output)) if pad_fill is None else np.asarray(pad_fill, float)
    if not inside:
        res = _cmn_padded(x, layout, locals())
        if out is not None and res is not out:
            out[...] = res
            return out
        return res
    src = x[src_box]
    out_dtype = np.dtype(dtype)
    channels = src.shape[channel_axis] if channel_axis is not None else 1
    full = list(src.shape)
    if pad_output:
        full[channel_axis] += pad_output
    out_shape = tuple(full[p] for p in perm)
    if out is None or out.shape != out_shape or out.dtype != out_dtype:
        out = np.empty(out_shape, out_dtype)
    chw = layout == "HWC" and tuple(perm) == (2, 0, 1)
    hwc = layout == "HWC" and tuple(perm) == (0, 1, 2)
    if src.dtype == np.uint8 and (chw or hwc):
        _cmn_lut(src, out, mul, add, chw, mirror_axis is not None)
        if pad_output:
            block = out[channels:] if chw else out[..., channels:]
            _fill_block(block.shape, out_dtype, pad_values, 0 if chw else 2, out=block)
        return out
    if mirror_axis is not None:
        src = np.flip(src, mirror_axis)
    moved = np.moveaxis(src, channel_axis, -1) if channel_axis is not None else src[..., None]
    vals = moved.astype(np.float32) * mul + add
    if channel_axis is None:
        vals = vals[..., 0]
    else:
        vals = np.moveaxis(vals, -1, channel_axis)
    c_out = perm.index(channel_axis) if channel_axis is not None else 0
    image = out[(slice(None),) * c_out + (slice(0, channels),)] if pad_output else out
    image[...] = saturate(np.transpose(vals, perm), out_dtype)
    if pad_output:
        block = out[(slice(None),) * c_out + (slice(channels, None),)]
        _fill_block(block.shape, out_dtype, pad_values, c_out, out=block)
    return out
