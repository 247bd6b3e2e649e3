"""Tests of the byte-level image codecs (``headrace.codecs``).

All images are generated here. Expected values come from closed forms (lossless round trips,
BT.601 constants, EXIF transforms written with ``np.rot90``/flips), from OpenCV/Pillow, and,
when it is installed, from the reference decoder (tests marked ``dali``).
"""

from __future__ import annotations

import io
import struct
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np
import pytest
import simplejpeg
from PIL import Image, ImageOps

from headrace._core.errors import DecodeError, InvalidArgumentError, InvalidTypeError
from headrace.codecs import available_codecs, decode, detect_format, peek_shape, probe
from headrace.codecs.headers import as_buffer

OUTPUT_TYPES = ("RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA")


# --------------------------------------------------------------------------- data factories
def _smooth(h: int, w: int, seed: int = 0, c: int = 3) -> np.ndarray:
    """A natural-looking image: upscaled noise, so JPEG keeps its structure."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, (max(h // 8, 2), max(w // 8, 2), c)).astype(np.uint8)
    img = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return img.reshape(h, w, c)


def _noise(h: int, w: int, c: int, seed: int = 1, dtype: type = np.uint8) -> np.ndarray:
    hi = np.iinfo(dtype).max + 1
    return np.random.default_rng(seed).integers(0, hi, (h, w, c)).astype(dtype)


def _cv(ext: str, rgb: np.ndarray, *params: int) -> bytes:
    """Encode an RGB(A)/gray array with OpenCV (which wants BGR(A))."""
    if rgb.ndim == 3 and rgb.shape[2] >= 3:
        rgb = rgb[..., [2, 1, 0, 3][: rgb.shape[2]]]
    ok, buf = cv2.imencode(ext, np.ascontiguousarray(rgb), list(params))
    assert ok
    return buf.tobytes()


def _pil(img: Image.Image, fmt: str, **kw: object) -> bytes:
    out = io.BytesIO()
    img.save(out, fmt, **kw)
    return out.getvalue()


def _with_exif(rgb: np.ndarray, fmt: str, orientation: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = orientation
    extra = {"JPEG": {"quality": 95}, "WEBP": {"lossless": True}}.get(fmt, {})
    return _pil(Image.fromarray(rgb), fmt, exif=exif.tobytes(), **extra)


def _tiff(arr: np.ndarray, orientation: int = 1) -> bytes:
    """Minimal uncompressed little-endian TIFF (gray or RGB, 8 or 16 bit) with an orientation."""
    arr = np.ascontiguousarray(arr if arr.ndim == 3 else arr[..., None])
    h, w, c = arr.shape
    data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    bits = arr.dtype.itemsize * 8
    entries = [
        (256, 4, 1, w),
        (257, 4, 1, h),
        (258, 3, c, 0 if c > 2 else bits),  # patched below for RGB
        (259, 3, 1, 1),
        (262, 3, 1, 1 if c == 1 else 2),
        (273, 4, 1, 0),  # patched below
        (274, 3, 1, orientation),
        (277, 3, 1, c),
        (278, 4, 1, h),
        (279, 4, 1, len(data)),
    ]
    ifd_size = 2 + 12 * len(entries) + 4
    bps_off = 8 + ifd_size
    data_off = bps_off + 2 * c
    out = bytearray(b"II*\x00" + struct.pack("<IH", 8, len(entries)))
    for tag, typ, cnt, val in entries:
        val = {258: bps_off if c > 2 else bits, 273: data_off}.get(tag, val)
        if typ == 3 and cnt == 1:
            out += struct.pack("<HHIHH", tag, typ, cnt, val, 0)
        else:
            out += struct.pack("<HHII", tag, typ, cnt, val)
    out += struct.pack("<I", 0) + struct.pack("<" + "H" * c, *[bits] * c) + data
    return bytes(out)


def _exif_transform(img: np.ndarray, k: int) -> np.ndarray:
    """EXIF orientation written independently of the code under test."""
    return {
        1: lambda a: a,
        2: np.fliplr,
        3: lambda a: np.rot90(a, 2),
        4: np.flipud,
        5: lambda a: np.rot90(np.fliplr(a), 1),
        6: lambda a: np.rot90(a, -1),
        7: lambda a: np.rot90(np.fliplr(a), -1),
        8: lambda a: np.rot90(a, 1),
    }[k](img)


RGB = _smooth(37, 53)
NOISE = _noise(29, 41, 3)
JPEG = _pil(Image.fromarray(RGB), "JPEG", quality=90)


# ------------------------------------------------------------------------------ formats
@pytest.mark.parametrize(
    ("data", "fmt"),
    [
        (JPEG, "jpeg"),
        (_cv(".png", RGB), "png"),
        (_cv(".bmp", RGB), "bmp"),
        (_cv(".tiff", RGB), "tiff"),
        (_cv(".webp", RGB), "webp"),
        (_pil(Image.fromarray(RGB), "GIF"), "gif"),
        (_cv(".ppm", RGB), "pnm"),
        (_cv(".pgm", RGB[..., 0]), "pnm"),
        (_pil(Image.fromarray(RGB), "JPEG2000"), "jpeg2000"),
        (_pil(Image.fromarray(RGB), "JPEG2000", no_jp2=True), "jpeg2000"),
        (b"<!DOCTYPE html>", "unknown"),
        (b"", "unknown"),
    ],
)
def test_detect_format(data: bytes, fmt: str) -> None:
    assert detect_format(data) == fmt
    assert detect_format(memoryview(data)) == fmt
    assert detect_format(np.frombuffer(data, np.uint8)) == fmt


def test_as_buffer_does_not_copy_and_rejects_bad_input() -> None:
    arr = np.frombuffer(JPEG, np.uint8).copy()
    assert np.shares_memory(as_buffer(arr), arr)
    assert as_buffer(bytearray(b"ab")).tolist() == [97, 98]
    with pytest.raises(InvalidTypeError):
        as_buffer(arr.astype(np.int32))
    with pytest.raises(InvalidTypeError):
        decode("not bytes")


@pytest.mark.parametrize(
    "data",
    [
        _cv(".png", NOISE),
        _cv(".bmp", NOISE),
        _cv(".tiff", NOISE),
        _cv(".webp", NOISE, cv2.IMWRITE_WEBP_QUALITY, 101),
        _cv(".ppm", NOISE),
    ],
    ids=["png", "bmp", "tiff", "webp", "ppm"],
)
def test_lossless_formats_round_trip_exactly(data: bytes) -> None:
    np.testing.assert_array_equal(decode(data), NOISE)
    np.testing.assert_array_equal(decode(data, output_type="BGR"), NOISE[..., ::-1])
    np.testing.assert_array_equal(decode(np.frombuffer(data, np.uint8)), NOISE)


@pytest.mark.parametrize("subsampling", [0, 1, 2])
@pytest.mark.parametrize("progressive", [False, True])
def test_jpeg_matches_pillow_libjpeg_turbo(subsampling: int, progressive: bool) -> None:
    # Pillow also decodes with libjpeg-turbo's accurate IDCT and fancy upsampling.
    data = _pil(
        Image.fromarray(RGB), "JPEG", quality=90, subsampling=subsampling, progressive=progressive
    )
    expected = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    np.testing.assert_array_equal(decode(data), expected)
    np.testing.assert_array_equal(decode(data, output_type="BGR"), expected[..., ::-1])
    luma = Image.open(io.BytesIO(data))
    luma.draft("L", luma.size)  # libjpeg's grayscale output: the Y plane, no colour conversion
    np.testing.assert_array_equal(decode(data, output_type="GRAY")[..., 0], np.asarray(luma))


def test_jpeg_gray_is_the_luma_plane_and_fast_idct_differs() -> None:
    np.testing.assert_array_equal(
        decode(JPEG, output_type="GRAY"), simplejpeg.decode_jpeg(JPEG, colorspace="GRAY")
    )
    fast = decode(JPEG, use_fast_idct=True)
    np.testing.assert_array_equal(fast, simplejpeg.decode_jpeg(JPEG, fastdct=True))
    assert not np.array_equal(fast, decode(JPEG))


def test_gif_and_jpeg2000_decode() -> None:
    gif = _pil(Image.fromarray(RGB).quantize(64), "GIF")
    expected = np.asarray(Image.open(io.BytesIO(gif)).convert("RGB"))
    np.testing.assert_array_equal(decode(gif), expected)
    j2k = _pil(Image.fromarray(NOISE), "JPEG2000", irreversible=False)
    np.testing.assert_array_equal(decode(j2k), NOISE)


# ------------------------------------------------------------------------ colour spaces
PRIMARIES = np.array(
    [[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255], [0, 0, 0], [128, 128, 128]]],
    np.uint8,
)


def test_ycbcr_is_bt601_studio_range() -> None:
    ycc = decode(_cv(".png", PRIMARIES), output_type="YCbCr")[0].tolist()
    # ITU-R BT.601 8-bit values of the primaries, white, black and mid gray.
    assert ycc == [[81, 90, 240], [145, 54, 34], [41, 240, 110], [235, 128, 128], [16, 128, 128],
                   [126, 128, 128]]  # fmt: skip
    gray_file = _cv(".png", PRIMARIES[..., 0])
    y = [235, 16, 16, 235, 16, 126]  # 16 + g * 219 / 255
    np.testing.assert_array_equal(decode(gray_file, output_type="YCbCr")[0, :, 0], y)
    assert (decode(gray_file, output_type="YCbCr")[..., 1:] == 128).all()


def test_gray_conversions_per_codec() -> None:
    png = _cv(".png", NOISE)
    np.testing.assert_array_equal(
        decode(png, output_type="GRAY")[..., 0], cv2.imdecode(np.frombuffer(png, np.uint8), 0)
    )
    r, g, b = (NOISE[..., i].astype(np.float64) for i in range(3))
    luma = np.floor(0.299 * r + 0.587 * g + 0.114 * b + 0.5)
    tiff_gray = decode(_cv(".tiff", NOISE), output_type="GRAY")[..., 0]
    assert np.abs(tiff_gray - luma).max() == 0
    gray_png = _cv(".png", NOISE[..., 0])
    np.testing.assert_array_equal(decode(gray_png), np.repeat(NOISE[..., :1], 3, axis=2))
    np.testing.assert_array_equal(decode(gray_png, output_type="GRAY"), NOISE[..., :1])


def test_cmyk_jpeg_uses_adobe_inverted_product() -> None:
    cmyk = _noise(16, 24, 4, seed=5)
    data = _pil(Image.fromarray(cmyk, "CMYK"), "JPEG", quality=95)
    raw = simplejpeg.decode_jpeg(data, colorspace="CMYK").astype(np.uint16)
    expected = (raw[..., :3] * raw[..., 3:]) // 255
    np.testing.assert_array_equal(decode(data), expected)
    assert decode(data, output_type="ANY_DATA").shape == (16, 24, 4)
    assert decode(data, output_type="GRAY").shape == (16, 24, 1)


@pytest.mark.parametrize(
    ("image", "channels"),
    [
        (Image.fromarray(NOISE[..., 0]), 1),
        (Image.fromarray(NOISE[..., :2].copy(), "LA"), 2),
        (Image.fromarray(NOISE), 3),
        (Image.fromarray(NOISE).quantize(16), 3),
        (Image.fromarray(np.dstack([NOISE, NOISE[..., :1]])), 4),
    ],
    ids=["L", "LA", "RGB", "P", "RGBA"],
)
def test_any_data_keeps_the_file_channels(image: Image.Image, channels: int) -> None:
    data = _pil(image, "PNG")
    out = decode(data, output_type="ANY_DATA")
    assert out.shape == (29, 41, channels) == peek_shape(data, output_type="ANY_DATA")
    expected = np.asarray(image.convert("RGB") if image.mode == "P" else image)
    np.testing.assert_array_equal(out, expected.reshape(out.shape))
    assert decode(data).shape == (29, 41, 3)  # alpha dropped, gray replicated


def test_palette_with_transparency_stays_three_channels() -> None:
    data = _pil(Image.fromarray(NOISE).quantize(16), "PNG", transparency=0)
    assert decode(data, output_type="ANY_DATA").shape == (29, 41, 3)


# ------------------------------------------------------------------------------- dtypes
def test_sixteen_bit_png_scales_to_each_dtype() -> None:
    img16 = _noise(9, 11, 3, seed=4, dtype=np.uint16)
    data = _cv(".png", img16)
    np.testing.assert_array_equal(decode(data, dtype=np.uint16), img16)
    expected8 = np.floor(img16 / 257 + 0.5).astype(np.uint8)
    np.testing.assert_array_equal(decode(data), expected8)
    np.testing.assert_allclose(decode(data, dtype=np.float32), img16 / 65535, atol=1e-6)
    png8 = _cv(".png", NOISE)
    np.testing.assert_array_equal(decode(png8, dtype="uint16"), NOISE.astype(np.uint16) * 257)
    out = decode(png8, output_type="YCbCr", dtype=np.float32)
    assert out.dtype == np.float32 and 0.06 < out[..., 0].min() and out.max() < 0.95


def test_bad_arguments_raise_invalid_argument() -> None:
    with pytest.raises(InvalidArgumentError):
        decode(JPEG, output_type="HSV")
    with pytest.raises(InvalidArgumentError):
        decode(JPEG, dtype=np.int64)
    with pytest.raises(InvalidArgumentError):
        decode(JPEG, roi=(0, 0, 38, 10))
    with pytest.raises(InvalidArgumentError):
        decode(JPEG, roi=(-1, 0, 5, 5))
    with pytest.raises(InvalidArgumentError):
        decode(JPEG, roi=(0, 0, 5))


# -------------------------------------------------------------------- orientation, ROI
@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_exif_orientation_all_eight(fmt: str) -> None:
    base = _smooth(20, 36, seed=7)
    for k in range(1, 9):
        data = _with_exif(base, fmt, k)
        raw = decode(data, adjust_orientation=False)
        expected = np.asarray(ImageOps.exif_transpose(Image.open(io.BytesIO(data))))
        np.testing.assert_array_equal(decode(data), expected, err_msg=f"orientation {k}")
        np.testing.assert_array_equal(decode(data), _exif_transform(raw, k))
        assert peek_shape(data) == expected.shape
        assert peek_shape(data, adjust_orientation=False) == raw.shape == (20, 36, 3)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_tiff_orientation_tag(dtype: type) -> None:
    base = _noise(6, 10, 3, seed=9, dtype=dtype)
    for k in range(1, 9):
        data = _tiff(base, k)
        np.testing.assert_array_equal(decode(data, dtype=dtype), _exif_transform(base, k))
        np.testing.assert_array_equal(decode(data, dtype=dtype, adjust_orientation=False), base)
        assert peek_shape(data) == _exif_transform(base, k).shape
        assert probe(data).orientation == k


@pytest.mark.parametrize("output_type", OUTPUT_TYPES)
def test_roi_equals_decode_then_crop(output_type: str) -> None:
    rng = np.random.default_rng(11)
    for k in (1, 6, 7):
        data = _with_exif(_smooth(40, 64, seed=k), "JPEG", k)
        full = decode(data, output_type=output_type)
        h, w = full.shape[:2]
        for _ in range(4):
            y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
            ch, cw = int(rng.integers(1, h - y + 1)), int(rng.integers(1, w - x + 1))
            out = decode(data, output_type=output_type, roi=(y, x, ch, cw))
            np.testing.assert_array_equal(out, full[y : y + ch, x : x + cw])
            assert out.flags.c_contiguous
            base = out.base  # (an ndarray, or the window decoder's own image buffer)
            assert base is None or np.asarray(base).nbytes == out.nbytes  # does not pin the image


# ------------------------------------------------------------------------- peek_shape
@pytest.mark.parametrize(
    "data",
    [JPEG, _cv(".jpg", RGB[..., 0]), _cv(".png", RGB), _cv(".tiff", RGB[..., 0]),
     _cv(".webp", RGB), _cv(".bmp", RGB), _cv(".pgm", RGB[..., 0]),
     _pil(Image.fromarray(RGB), "JPEG2000"), _pil(Image.fromarray(RGB), "GIF")],
    ids=["jpg", "gray-jpg", "png", "gray-tiff", "webp", "bmp", "pgm", "jp2", "gif"],
)  # fmt: skip
def test_peek_shape_agrees_with_decode(data: bytes) -> None:
    for output_type in OUTPUT_TYPES:
        expected = decode(data, output_type=output_type).shape
        assert peek_shape(data, output_type=output_type) == expected


# ------------------------------------------------------------------------------- errors
def _png_with_bad_idat_crc() -> bytes:
    png = bytearray(_cv(".png", NOISE))
    (length,) = struct.unpack(">I", png[33:37])
    png[33 + 8 + length] ^= 0xFF  # first byte of the IDAT CRC; the data stays intact
    return bytes(png)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (JPEG[: len(JPEG) // 2], "libjpeg-turbo"),
        (JPEG[:200], "libjpeg-turbo"),
        (JPEG[:3], "truncated JPEG"),
        (np.random.default_rng(0).integers(0, 256, 1000).astype(np.uint8).tobytes(), "first bytes"),
        (bytes(64), "first bytes 00 00 00 00"),
        (b"", "empty"),
        (b"<!DOCTYPE html><html></html>", "first bytes 3c 21 44 4f"),
        (_png_with_bad_idat_crc(), "png"),
        (_cv(".png", NOISE)[:100], "png"),
        (_cv(".webp", NOISE)[:60], "webp"),
        (_cv(".tiff", NOISE)[:100], "tiff"),
    ],
    ids=["trunc-jpeg", "trunc-jpeg-header", "soi-only", "random", "zeros", "empty", "html",
         "png-bad-crc", "trunc-png", "trunc-webp", "trunc-tiff"],
)  # fmt: skip
def test_bad_streams_raise_decode_error(data: bytes, fragment: str) -> None:
    with pytest.raises(DecodeError, match=r"decoders\.image: cannot decode sample") as info:
        decode(data)
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("data", [b"", bytes(16), JPEG[:3], b"\x89PNG\r\n\x1a\n", b"II*\x00"])
def test_peek_shape_of_bad_headers_raises(data: bytes) -> None:
    with pytest.raises(DecodeError, match=r"^peek_image_shape: "):
        peek_shape(data)


# ----------------------------------------------------------------- threads, registry
def test_concurrent_decodes_match_serial_ones() -> None:
    blobs = [_pil(Image.fromarray(_smooth(48, 64, seed=s)), "JPEG") for s in range(16)]
    blobs += [_cv(".png", _smooth(48, 64, seed=s)) for s in range(16)]
    serial = [decode(b) for b in blobs]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(decode, blobs))
    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(a, b)


def test_available_codecs_reports_installed_versions() -> None:
    codecs = available_codecs()
    assert codecs["simplejpeg"] == simplejpeg.__version__
    assert codecs["opencv"].startswith(cv2.__version__.rsplit(".", 1)[0])
    assert codecs["pillow"] == Image.__version__


# ------------------------------------------------------------ reference decoder (DALI)
def _dali_samples() -> dict[str, bytes]:
    """Streams the reference decodes (it crashes on ANY_DATA of gray JPEGs: kept out)."""
    img16 = _noise(12, 14, 3, seed=3, dtype=np.uint16)
    return {
        "jpg420": JPEG,
        "jpg444": _pil(Image.fromarray(RGB), "JPEG", quality=95, subsampling=0),
        "png": _cv(".png", NOISE),
        "png-gray": _cv(".png", NOISE[..., 0]),
        "png-rgba": _cv(".png", np.dstack([NOISE, NOISE[..., :1]])),
        "png-p": _pil(Image.fromarray(NOISE).quantize(16), "PNG"),
        "png16": _cv(".png", img16),
        "png16-gray": _cv(".png", img16[..., 0]),
        "tiff": _cv(".tiff", NOISE),
        "tiff16": _cv(".tiff", img16),
        "bmp": _cv(".bmp", NOISE),
        "webp": _cv(".webp", RGB),
        "pgm16": _cv(".pgm", img16[..., 0]),
        "jp2": _pil(Image.fromarray(RGB), "JPEG2000"),
        "jpg-exif6": _with_exif(RGB, "JPEG", 6),
        "png-exif7": _with_exif(RGB, "PNG", 7),
        "tiff-exif5": _tiff(NOISE, 5),
    }


def _dali_run(blobs: list[bytes], build) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    dali = pytest.importorskip("nvidia.dali")
    arrays = [np.frombuffer(b, np.uint8) for b in blobs]

    @dali.pipeline_def(batch_size=len(arrays), num_threads=1, device_id=None)
    def pipe():  # type: ignore[no-untyped-def]
        return build(dali.fn.external_source(source=lambda: arrays, batch=True))

    p = pipe()
    p.build()
    (out,) = p.run()
    return [np.array(out[i]) for i in range(len(arrays))]


@pytest.mark.dali
@pytest.mark.parametrize("dtype", ["UINT8", "UINT16", "FLOAT"])
def test_matches_dali_cpu_decoder(dtype: str) -> None:
    types = pytest.importorskip("nvidia.dali.types")
    fn = pytest.importorskip("nvidia.dali.fn")
    np_dtype = {"UINT8": np.uint8, "UINT16": np.uint16, "FLOAT": np.float32}[dtype]
    samples = _dali_samples()
    for output_type in OUTPUT_TYPES:
        ref = _dali_run(
            list(samples.values()),
            lambda x, ot=output_type: fn.decoders.image(
                x, device="cpu", output_type=getattr(types, ot), dtype=getattr(types, dtype)
            ),
        )
        for (name, data), expected in zip(samples.items(), ref, strict=True):
            out = decode(data, output_type=output_type, dtype=np_dtype)
            assert out.shape == expected.shape and out.dtype == expected.dtype, name
            atol = 1e-6 if dtype == "FLOAT" else 0
            np.testing.assert_allclose(out, expected, atol=atol, rtol=0, err_msg=name)


@pytest.mark.dali
def test_peek_shape_matches_dali() -> None:
    types = pytest.importorskip("nvidia.dali.types")
    fn = pytest.importorskip("nvidia.dali.fn")
    samples = _dali_samples()
    for output_type in OUTPUT_TYPES:
        for adjust in (True, False):
            ref = _dali_run(
                list(samples.values()),
                lambda x, ot=output_type, a=adjust: fn.peek_image_shape(
                    x, image_type=getattr(types, ot), adjust_orientation=a
                ),
            )
            for data, expected in zip(samples.values(), ref, strict=True):
                got = peek_shape(data, output_type=output_type, adjust_orientation=adjust)
                assert got == tuple(expected.tolist())


@pytest.mark.dali
def test_roi_matches_dali_image_crop() -> None:
    fn = pytest.importorskip("nvidia.dali.fn")
    samples = [JPEG, _with_exif(RGB, "JPEG", 6), _cv(".png", NOISE)]
    ref = _dali_run(
        samples,
        lambda x: fn.decoders.image_crop(
            x, device="cpu", crop=(12, 20), crop_pos_x=0.25, crop_pos_y=0.75
        ),
    )
    for data, expected in zip(samples, ref, strict=True):
        h, w, _ = peek_shape(data)
        y, x = round(0.75 * (h - 12)), round(0.25 * (w - 20))
        np.testing.assert_array_equal(decode(data, roi=(y, x, 12, 20)), expected)
