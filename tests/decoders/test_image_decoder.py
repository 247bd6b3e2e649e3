import io

import cv2
import numpy as np
import pytest
from PIL import Image

import headrace as ndd


def _natural(h: int, w: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) % 256], -1)
    img = img + rng.integers(-20, 20, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def _encode(img: np.ndarray, ext: str) -> np.ndarray:
    ok, buf = cv2.imencode(ext, img[..., ::-1].copy())
    assert ok
    return buf.ravel()


@pytest.fixture(scope="module")
def jpegs() -> list[np.ndarray]:
    return [_encode(_natural(30 + 7 * i, 40 + 5 * i, i), ".jpg") for i in range(4)]


def test_matches_pillow_for_lossless_formats():
    img = _natural(21, 17, 3)
    for ext in (".png", ".bmp", ".tiff", ".webp"):
        params = [cv2.IMWRITE_WEBP_QUALITY, 101] if ext == ".webp" else []
        _, buf = cv2.imencode(ext, img[..., ::-1].copy(), params)
        out = ndd.decoders.image(ndd.as_tensor(buf.ravel()))
        ref = np.asarray(Image.open(io.BytesIO(buf.tobytes())).convert("RGB"))
        assert np.array_equal(np.asarray(out), ref), ext
        assert out.layout == "HWC" and out.dtype is ndd.uint8


def test_jpeg_matches_pillow_closely_and_output_types(jpegs):
    out = ndd.decoders.image(ndd.as_tensor(jpegs[0]))
    ref = np.asarray(Image.open(io.BytesIO(jpegs[0].tobytes())).convert("RGB"))
    assert np.abs(np.asarray(out).astype(int) - ref).max() <= 2
    gray = ndd.decoders.image(ndd.as_tensor(jpegs[0]), output_type=ndd.types.GRAY)
    assert gray.shape[-1] == 1
    bgr = ndd.decoders.image(ndd.as_tensor(jpegs[0]), output_type=ndd.types.BGR)
    assert np.array_equal(np.asarray(bgr), np.asarray(out)[..., ::-1])


def test_crop_equals_decode_then_crop(jpegs):
    full = ndd.decoders.image(ndd.batch(jpegs))
    cropped = ndd.decoders.image_crop(
        ndd.batch(jpegs), crop=(10, 12), crop_pos_x=0.0, crop_pos_y=1.0
    )
    for f, c in zip(full, cropped):
        h = f.shape[0]
        assert np.array_equal(np.asarray(c), np.asarray(f)[h - 10 :, :12])
    per = ndd.decoders.image_crop(
        ndd.batch(jpegs), crop_h=ndd.batch([5.0, 6.0, 7.0, 8.0]), crop_w=9.0
    )
    assert [s[0] for s in per.shape] == [5, 6, 7, 8]
    with pytest.raises(ValueError, match="larger than the image"):
        ndd.decoders.image_crop(ndd.batch(jpegs), crop=(1000, 10)).evaluate()


def test_random_crop_reproducible_and_inside(jpegs):
    a = ndd.decoders.image_random_crop(ndd.batch(jpegs), rng=ndd.random.RNG(seed=3))
    b = ndd.decoders.image_random_crop(ndd.batch(jpegs), rng=ndd.random.RNG(seed=3))
    full = ndd.decoders.image(ndd.batch(jpegs))
    assert a.shape == b.shape
    for x, y, f in zip(a, b, full):
        assert np.array_equal(np.asarray(x), np.asarray(y))
        assert x.shape[0] <= f.shape[0] and x.shape[1] <= f.shape[1]
        area = x.shape[0] * x.shape[1] / (f.shape[0] * f.shape[1])
        assert area >= 0.08 * 0.9 or x.shape[:2] == f.shape[:2]


def test_corrupt_sample_error_names_index_and_source(tmp_path, jpegs):
    paths = []
    for i, data in enumerate([jpegs[0], jpegs[1][:50], jpegs[2]]):
        p = tmp_path / f"img_{i}.jpg"
        p.write_bytes(data.tobytes())
        paths.append(str(p))
    with pytest.raises(ndd.DecodeError) as info:
        ndd.imread(paths).evaluate()
    msg = str(info.value)
    assert "decoders.image" in msg and "sample 1" in msg and "img_1.jpg" in msg
    with pytest.warns(UserWarning, match="img_1.jpg"):
        ok = ndd.imread(paths, on_error="skip")
        assert ok.batch_size == 2
    before = ndd.decoders.skipped_count()
    with pytest.warns(UserWarning):
        ndd.decoders.image(
            ndd.batch([jpegs[0], np.zeros(10, np.uint8)]), on_error="skip"
        ).evaluate()
    assert ndd.decoders.skipped_count() == before + 1



@pytest.mark.parametrize("op", ["image_crop", "image_random_crop", "image_slice"])
def test_window_decoders_skip_a_corrupt_header(jpegs, op):
    """The window is made from the header when the sample is decoded: an unreadable header
    is that sample's decode error, named, or skipped with on_error="skip"."""
    bad = jpegs[1].copy()
    bad[2:40] = 0  # no JPEG markers left
    batch = ndd.batch([jpegs[0], bad, jpegs[2]])
    decode = getattr(ndd.decoders, op)
    kw = {
        "image_crop": {"crop": (8, 8)},
        "image_random_crop": {"rng": ndd.random.RNG(seed=3)},
        "image_slice": {"rel_start": [0.25, 0.25], "rel_shape": [0.5, 0.5]},
    }[op]
    with pytest.raises(ndd.DecodeError, match=rf"decoders.{op}: sample 1: "):
        decode(batch, **kw).evaluate()
    if op == "image_random_crop":
        kw["rng"] = ndd.random.RNG(seed=3)
    with pytest.warns(UserWarning, match="skipped 1"):
        out = decode(batch, on_error="skip", **kw).evaluate()
    assert out.batch_size == 2 and out.kept == (0, 2)
    if op == "image_slice":  # the kept samples are sliced as in a clean batch
        clean = decode(ndd.batch([jpegs[0], jpegs[2]]), **kw)
        for k in range(2):
            np.testing.assert_array_equal(np.asarray(out.select(k)), np.asarray(clean.select(k)))
    if op == "image_random_crop":  # the draws of the kept samples are those of a clean batch
        clean = decode(ndd.batch([jpegs[0], jpegs[1], jpegs[2]]), rng=ndd.random.RNG(seed=3))
        for k, i in enumerate(out.kept):
            np.testing.assert_array_equal(np.asarray(out.select(k)), np.asarray(clean.select(i)))


def test_bad_input_type():
    with pytest.raises(ValueError, match="encoded bytes"):
        ndd.decoders.image(ndd.tensor(np.zeros((2, 2), np.uint8))).evaluate()
    with pytest.raises(TypeError):
        ndd.imread(3)
    with pytest.raises(ValueError, match="device"):
        ndd.imread("x.jpg", device="tpu")


def test_gpu_output_and_peek(jpegs):
    g = ndd.decoders.image(ndd.batch(jpegs), device="gpu")
    assert g.device.device_type == "gpu"
    c = ndd.decoders.image(ndd.batch(jpegs))
    for a, b in zip(g.cpu(), c):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    shapes = ndd.peek_image_shape(ndd.batch(jpegs))
    assert [tuple(np.asarray(s)) for s in shapes] == c.shape


def test_imread_single_and_list(tmp_path):
    img = _natural(9, 11, 0)
    p = tmp_path / "a.png"
    cv2.imwrite(str(p), img[..., ::-1].copy())
    t = ndd.imread(str(p))
    assert isinstance(t, ndd.Tensor) and np.array_equal(np.asarray(t), img)
    b = ndd.imread([str(p), str(p)], output_type=ndd.types.GRAY)
    assert isinstance(b, ndd.Batch) and b.shape == [(9, 11, 1)] * 2


@pytest.mark.dali
def test_matches_dali_decoder(jpegs):
    dali = pytest.importorskip("nvidia.dali.experimental.dynamic")
    ours = ndd.decoders.image(ndd.batch(jpegs))
    ref = dali.decoders.image(dali.batch(jpegs), device="cpu")
    for a, b in zip(ours, ref):
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_sample_mode_error_names_the_file(tmp_path, jpegs):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "broken.jpg").write_bytes(jpegs[0][:40].tobytes())
    reader = ndd.readers.File(file_root=str(tmp_path))
    for data, _ in reader.next_epoch():
        with pytest.raises(ndd.DecodeError, match=r"broken\.jpg"):
            ndd.decoders.image(data).evaluate()
