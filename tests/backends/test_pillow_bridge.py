"""The zero-copy Pillow resampler equals Pillow's own ``fromarray(...).resize(...)``."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from headrace.backends.cpu import _pillow_bridge as B


def _noisy(h: int, w: int, c: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, c), dtype=np.uint8)


def _pillow(x: np.ndarray, size, resample, box) -> np.ndarray:
    mode = {1: "L", 3: "RGB"}[x.shape[-1]]
    src = Image.fromarray(x[..., 0] if mode == "L" else x, mode)
    out = np.asarray(src.resize((size[1], size[0]), resample, box=box))
    return out.reshape(size[0], size[1], x.shape[-1])


@pytest.mark.parametrize("c", [1, 3])
@pytest.mark.parametrize(
    "resample", [Image.Resampling.BILINEAR, Image.Resampling.BICUBIC, Image.Resampling.LANCZOS]
)
@pytest.mark.parametrize(
    ("shape", "size", "box"),
    [
        ((37, 53), (20, 30), (0.0, 0.0, 53.0, 37.0)),
        ((64, 41), (24, 17), (0.3, 1.25, 40.6, 63.0)),  # fractional window
        ((50, 50), (80, 70), (2.0, 3.0, 45.0, 47.5)),  # upscaling
    ],
)
def test_bit_identical_to_pillow(c, resample, shape, size, box):
    x = _noisy(*shape, c)
    out = B.pillow_resize(x, size, resample, box)
    assert out.shape == (*size, c) and out.dtype == np.uint8 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, _pillow(x, size, resample, box))


def test_four_channels_are_resampled_band_by_band_without_premultiplying():
    x = _noisy(33, 47, 4, seed=1)
    x[..., 3] = np.where(np.arange(47) % 3 == 0, 0, 255)[None, :]  # alpha that premultiplying
    box = (0.5, 0.0, 46.0, 33.0)  # would visibly change
    out = B.pillow_resize(x, (15, 21), Image.Resampling.BILINEAR, box)
    for band in range(4):
        ref = _pillow(x[..., band : band + 1], (15, 21), Image.Resampling.BILINEAR, box)
        np.testing.assert_array_equal(out[..., band : band + 1], ref)


def test_a_view_of_pillows_buffer_outlives_the_image_and_the_input():
    import gc

    x = _noisy(40, 60, 1, seed=2)
    box = (0.0, 0.0, 60.0, 40.0)
    expected = _pillow(x, (20, 30), Image.Resampling.BILINEAR, box)
    gray = B.pillow_resize(x, (20, 30), Image.Resampling.BILINEAR, box)
    assert not gray.flags.owndata  # one-channel results are views of Pillow's buffer
    del x
    gc.collect()
    for seed in range(20):  # churn Pillow's allocator: a freed buffer would be reused here
        B.pillow_resize(_noisy(40, 60, 1, seed=seed + 10), (20, 30), Image.Resampling.BILINEAR,
                        box)  # fmt: skip
    np.testing.assert_array_equal(gray, expected)


def test_images_pillow_cannot_export_in_one_block_fall_back_to_a_copy():
    # above Pillow's 16 MiB block size an image is stored in several blocks: no Arrow export
    x = _noisy(2100, 2200, 3, seed=3)
    box = (0.0, 0.0, 2200.0, 2100.0)
    src = Image.core.map_buffer(np.dstack([x, x[..., :1]]), (2200, 2100), "raw", 0,
                                ("RGB", 0, 1))  # fmt: skip
    big = src.resize((2150, 2050), Image.Resampling.BILINEAR, box)
    assert B._export(big, 3) is None
    np.testing.assert_array_equal(
        B._from_pillow(big, 3), _pillow(x, (2050, 2150), Image.Resampling.BILINEAR, box)
    )
