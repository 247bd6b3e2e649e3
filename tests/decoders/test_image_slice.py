"""decoders.image_slice: equals decode + slice, every way of giving the region, the reference."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest
from tests._helpers.dali_oracle import dali_ndd

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, ShapeError

IMG = (np.arange(20 * 30 * 3) % 251).astype(np.uint8).reshape(20, 30, 3)


def _png(img: np.ndarray = IMG) -> np.ndarray:
    ok, buf = cv2.imencode(".png", img[..., ::-1].copy())
    assert ok
    return buf.ravel()


def _jpg(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = cv2.GaussianBlur(rng.integers(0, 255, (33, 47, 3), dtype=np.uint8), (5, 5), 0)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.ravel()


def f32(*v: float) -> ndd.Tensor:
    return ndd.as_tensor(np.array(v, np.float32))


def i32(*v: int) -> ndd.Tensor:
    return ndd.as_tensor(np.array(v, np.int32))


# (positional inputs, keyword arguments, the region of IMG as numpy [y, x] slices)
CASES: list[tuple[tuple[Any, ...], dict[str, Any], tuple[slice, slice]]] = [
    ((f32(0.1, 0.2), f32(0.5, 0.5)), {}, (slice(4, 14), slice(3, 18))),
    ((i32(3, 4), i32(5, 6)), {}, (slice(4, 10), slice(3, 8))),  # integers are pixels
    ((f32(0.1, 0.2), f32(5, 6)), {"normalized_shape": False}, (slice(4, 10), slice(3, 8))),
    ((f32(3, 4), f32(0.5, 0.5)), {"normalized_anchor": False}, (slice(4, 14), slice(3, 18))),
    ((), {"start": [3, 4], "shape": [5, 6]}, (slice(4, 10), slice(3, 8))),
    ((), {"start": [3, 4], "end": [8, 10]}, (slice(4, 10), slice(3, 8))),
    ((), {"rel_start": [0.1, 0.2], "rel_end": [0.5, 0.9]}, (slice(4, 18), slice(3, 15))),
    ((), {"rel_start": [0.1, 0.2], "shape": [5, 6]}, (slice(4, 10), slice(3, 8))),
    ((), {"start": [3, 4], "shape": [5, 6], "axis_names": "HW"}, (slice(3, 8), slice(4, 10))),
    ((), {"start": [3, 4], "shape": [5, 6], "axes": [0, 1]}, (slice(3, 8), slice(4, 10))),
    ((), {"start": [3], "shape": [5], "axes": [0]}, (slice(3, 8), slice(None))),
    ((), {"rel_shape": [0.5], "axis_names": "W"}, (slice(None), slice(0, 15))),
]


@pytest.mark.parametrize(("inputs", "kw", "region"), CASES)
def test_region_forms_equal_decode_then_crop(inputs: Any, kw: dict[str, Any], region: Any) -> None:
    out = ndd.decoders.image_slice(ndd.as_tensor(_png()), *inputs, **kw)
    assert out.layout == "HWC"
    np.testing.assert_array_equal(np.asarray(out), IMG[region])


def test_batches_per_sample_arguments_options_and_gpu() -> None:
    data = ndd.batch([_png(), _png(IMG[:10])])
    anchors = ndd.batch([np.array([0.5, 0.0], np.float32), np.array([0.0, 0.5], np.float32)])
    out = ndd.decoders.image_slice(data, anchors, f32(0.5, 0.5))
    np.testing.assert_array_equal(np.asarray(out.tensors[0]), IMG[0:10, 15:30])
    np.testing.assert_array_equal(np.asarray(out.tensors[1]), IMG[5:10, 0:15])
    starts = ndd.batch([np.array([1, 2], np.int32), np.array([3, 4], np.int32)])
    got = ndd.decoders.image_slice(data, start=starts, shape=[4, 4], output_type=ndd.types.GRAY)
    assert [t.shape for t in got.tensors] == [(4, 4, 1), (4, 4, 1)]
    f = ndd.decoders.image_slice(
        ndd.as_tensor(_png()), start=[0, 0], shape=[2, 2], dtype=ndd.float32
    )
    np.testing.assert_allclose(np.asarray(f), IMG[:2, :2] / 255.0, atol=1e-6)
    ignored = {"affine": False, "device_memory_padding": 1, "host_memory_padding": 1,
               "hybrid_huffman_threshold": 5, "split_stages": True, "use_chunk_allocator": True,
               "device_memory_padding_jpeg2k": 1, "host_memory_padding_jpeg2k": 1,
               "jpeg_fancy_upsampling": True, "hw_decoder_load": 0.1, "memory_stats": True,
               "preallocate_width_hint": 8, "preallocate_height_hint": 8}  # fmt: skip
    same = ndd.decoders.image_slice(ndd.as_tensor(_png()), start=[3, 4], shape=[5, 6], **ignored)
    np.testing.assert_array_equal(np.asarray(same), IMG[4:10, 3:8])
    pytest.importorskip("torch")
    g = ndd.decoders.image_slice(ndd.as_tensor(_png()), start=[3, 4], shape=[5, 6], device="gpu")
    assert g.device.device_type == "gpu"
    np.testing.assert_array_equal(np.asarray(g.cpu()), IMG[4:10, 3:8])


def test_errors_name_the_operator_and_sample() -> None:
    data = ndd.batch([_png(), _png()])
    with pytest.raises(ShapeError, match=r"decoders\.image_slice: sample 0: the region .* out of"):
        ndd.decoders.image_slice(data, start=[25, 4], shape=[10, 6]).evaluate()
    with pytest.raises(InvalidArgumentError, match="give the region"):
        ndd.decoders.image_slice(data).evaluate()
    with pytest.raises(ShapeError, match="out of bounds"):
        ndd.decoders.image_slice(data, start=[-2, 4], shape=[10, 6]).evaluate()
    with pytest.raises(InvalidArgumentError, match="cannot be combined"):
        ndd.decoders.image_slice(data, f32(0.1, 0.1), end=[5, 5]).evaluate()
    with pytest.raises(InvalidArgumentError, match="only the H and W axes"):
        ndd.decoders.image_slice(
            data, start=[0, 0, 0], shape=[2, 2, 1], axis_names="HWC"
        ).evaluate()
    with pytest.raises(InvalidArgumentError, match="not both"):
        ndd.decoders.image_slice(data, start=[1], axes=[0], axis_names="H").evaluate()
    with pytest.raises(ndd.DecodeError, match="sample 1"):
        bad = ndd.batch([_png(), np.arange(40, dtype=np.uint8)])
        ndd.decoders.image_slice(bad, start=[1, 1], shape=[2, 2]).evaluate()


@pytest.mark.dali
@pytest.mark.parametrize(("inputs", "kw", "region"), CASES)
def test_matches_dali(inputs: Any, kw: dict[str, Any], region: Any) -> None:
    dndd = dali_ndd()
    for data in (_png(), _jpg(1)):
        ours = np.asarray(ndd.decoders.image_slice(ndd.as_tensor(data), *inputs, **kw))
        theirs_in = [dndd.as_tensor(np.asarray(x)) for x in inputs]
        ref = np.asarray(dndd.decoders.image_slice(dndd.as_tensor(data), *theirs_in, **kw))
        assert ours.shape == ref.shape
        np.testing.assert_array_equal(ours, ref)


@pytest.mark.dali
def test_matches_dali_float_and_batches() -> None:
    dndd = dali_ndd()
    datas = [_jpg(2), _png(), _jpg(3)]
    anchors = [np.array(a, np.float32) for a in ([0.1, 0.2], [0.3, 0.0], [0.0, 0.45])]
    shapes = [np.array(s, np.float32) for s in ([0.33, 0.5], [0.5, 0.77], [0.9, 0.5])]
    ours = ndd.decoders.image_slice(ndd.batch(datas), ndd.batch(anchors), ndd.batch(shapes),
                                    dtype=ndd.float32)  # fmt: skip
    ref = dndd.decoders.image_slice(dndd.batch(datas), dndd.batch(anchors), dndd.batch(shapes),
                                    dtype=dndd.float32)  # fmt: skip
    for a, b in zip(ours.tensors, ref.tensors, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-6)


def test_slice_takes_integer_inputs_as_pixels_like_image_slice() -> None:
    x = ndd.tensor(IMG, layout="HWC")
    out = ndd.slice(x, i32(3, 4), i32(5, 6))  # normalized_anchor/shape default True: ignored
    np.testing.assert_array_equal(np.asarray(out), IMG[4:10, 3:8])
    rel = ndd.slice(x, f32(0.1, 0.2), f32(0.5, 0.5))
    np.testing.assert_array_equal(np.asarray(rel), IMG[4:14, 3:18])
