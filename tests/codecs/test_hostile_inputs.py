"""Decompression bombs, pathological headers and a fixed-seed fuzz run (issue 20, point 2).

Every hostile file raises a ``DecodeError`` naming the file, through ``decoders.image``,
``decoders.image_random_crop`` and ``peek_image_shape``, without allocating its pixels.
"""

from __future__ import annotations

import io
import json
import os
import resource
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

import headrace as ndd
from headrace import codecs
from headrace.codecs import limits

ROOT = Path(__file__).resolve().parents[2]
SMALL = np.full((6, 8, 3), 90, np.uint8)


def _cv(ext: str) -> bytearray:
    return bytearray(cv2.imencode(ext, SMALL)[1].tobytes())


def _png_declaring(width: int, height: int) -> bytes:
    b = _cv(".png")
    struct.pack_into(">II", b, 16, width, height)
    struct.pack_into(">I", b, 29, zlib.crc32(bytes(b[12:29])))  # a valid CRC: libpng believes it
    return bytes(b)


def _jpeg_declaring(width: int, height: int) -> bytes:
    b = _cv(".jpg")
    i = b.find(b"\xff\xc0")
    struct.pack_into(">HH", b, i + 5, height, width)
    return bytes(b)


def _bmp_declaring(width: int, height: int) -> bytes:
    b = _cv(".bmp")
    struct.pack_into("<ii", b, 18, width, height)
    return bytes(b)


def _tiff_declaring(width: int, height: int) -> bytes:
    b = _cv(".tif")
    e = "<" if b[:2] == b"II" else ">"
    (ifd,) = struct.unpack_from(e + "I", b, 4)
    (count,) = struct.unpack_from(e + "H", b, ifd)
    for k in range(count):
        entry = ifd + 2 + 12 * k
        tag, typ = struct.unpack_from(e + "HH", b, entry)
        if tag in (256, 257):
            struct.pack_into(
                e + ("H" if typ == 3 else "I"), b, entry + 8, width if tag == 256 else height
            )
    return bytes(b)


def _webp_declaring(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.fromarray(SMALL).save(out, format="WEBP", lossless=True)
    b = bytearray(out.getvalue())
    assert b[12:16] == b"VP8L"
    bits = (width - 1) | ((height - 1) << 14)
    struct.pack_into("<I", b, 21, bits | (struct.unpack_from("<I", b, 21)[0] & ~0x0FFFFFFF))
    return bytes(b)


def _gif_declaring(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.fromarray(SMALL).save(out, format="GIF")
    b = bytearray(out.getvalue())
    struct.pack_into("<HH", b, 6, width, height)
    return bytes(b)


BOMBS = {
    "jpg": _jpeg_declaring(65535, 65535),
    "png": _png_declaring(32767, 32767),
    "png2": _png_declaring(0x7FFFFFFF, 0x7FFFFFFF),
    "bmp": _bmp_declaring(60000, -60000),
    "tif": _tiff_declaring(60000, 60000),
    "webp": _webp_declaring(16384, 16384),
    "gif": _gif_declaring(65535, 65535),
}


@pytest.fixture(scope="module")
def bomb_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("bombs")
    paths = []
    for name, data in BOMBS.items():
        p = root / f"bomb_{name}.{name.rstrip('2')}"
        p.write_bytes(data)
        paths.append(str(p))
    return paths


def _read(path: str) -> ndd.Batch:
    return ndd.io.file.read(ndd.batch([np.frombuffer(path.encode(), np.uint8)]))


@pytest.mark.parametrize("op", ["image", "image_crop", "image_random_crop", "peek_image_shape"])
def test_bombs_are_refused_by_header_naming_the_file(bomb_files: list[str], op: str) -> None:
    fn = {
        "image": ndd.decoders.image,
        "image_crop": lambda b: ndd.decoders.image_crop(b, crop=(2, 2)),
        "image_random_crop": lambda b: ndd.decoders.image_random_crop(b, rng=ndd.random.RNG(1)),
        "peek_image_shape": ndd.peek_image_shape,
    }[op]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    for path in bomb_files:
        with pytest.raises(ndd.DecodeError) as info:
            fn(_read(path)).evaluate()
        msg = str(info.value)
        assert os.path.basename(path) in msg, msg
        assert "limit" in msg or "Pillow" in msg, msg
    assert time.monotonic() - t0 < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 200 * 1024  # KiB: no alloc


def test_message_gives_the_declared_size_and_the_knobs() -> None:
    with pytest.raises(
        ndd.DecodeError,
        match=r"png header declares 32767 x 32767 = 1,073,676,289 "
        r"pixels, more than the limit of 178,956,970 .*set_max_image_pixels",
    ):
        codecs.decode(BOMBS["png"])


def test_limit_is_settable_and_removable() -> None:
    png = cv2.imencode(".png", np.zeros((40, 30, 3), np.uint8))[1]
    assert codecs.max_image_pixels() == codecs.DEFAULT_MAX_IMAGE_PIXELS == 178_956_970
    old = codecs.set_max_image_pixels(1199)
    try:
        for fn in (codecs.decode, codecs.peek_shape):
            with pytest.raises(ndd.DecodeError, match="1,200 pixels, more than the limit of 1,199"):
                fn(png)
        codecs.set_max_image_pixels(1200)
        assert codecs.decode(png).shape == (40, 30, 3)
        codecs.set_max_image_pixels(None)
        assert codecs.max_image_pixels() is None
        with pytest.raises(ValueError, match="set_max_image_pixels"):
            codecs.set_max_image_pixels(-1)
        with pytest.raises(ValueError, match="set_max_image_pixels"):
            codecs.set_max_image_pixels("lots")
    finally:
        codecs.set_max_image_pixels(old)


@pytest.mark.parametrize(
    ("raw", "want"),
    [("1000", 1000), ("1_000", 1000), ("0", None), ("none", None), (None, 178_956_970)],
)
def test_limit_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, raw: str | None, want: int | None
) -> None:
    if raw is None:
        monkeypatch.delenv(limits.ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(limits.ENV_VAR, raw)
    assert limits._from_env() == want
    monkeypatch.setenv(limits.ENV_VAR, "many")
    with pytest.raises(ValueError, match=limits.ENV_VAR):
        limits._from_env()


def test_png_chunk_longer_than_the_file_is_refused_at_once() -> None:
    b = _cv(".png")
    struct.pack_into(">I", b, 33, 0x7FFFFFF0)  # the first chunk after IHDR (IDAT) claims 2 GiB
    t0 = time.monotonic()
    with pytest.raises(ndd.DecodeError, match=r"chunk 'IDAT' at byte 33 declares 2147483632 bytes"):
        codecs.decode(bytes(b))
    assert time.monotonic() - t0 < 0.5
    assert codecs.peek_shape(bytes(b)) == (6, 8, 3)  # the header itself is fine


def test_large_images_under_the_limit_still_decode() -> None:
    img = np.zeros((1500, 2000, 3), np.uint8)
    for ext in (".png", ".jpg", ".bmp", ".webp", ".tif"):
        assert codecs.decode(cv2.imencode(ext, img)[1]).shape == (1500, 2000, 3), ext


def test_fuzz_fixed_seed_subset(tmp_path: Path) -> None:
    """400 mutated JPEG/PNG/BMP/TIFF/WebP files (bench/fuzz_decoders.py; the full run is 4000):
    every outcome is a decode or a DecodeError naming the file; no crash, hang or blow-up."""
    report_path = tmp_path / "fuzz.json"
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "fuzz_decoders.py"),
            "--cases",
            "400",
            "--seed",
            "20",
            "--json",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    report = json.loads(report_path.read_text())
    assert out.returncode == 0, (report["counts"], report["failures"][:5])
    assert set(report["counts"]) <= {"ok", "rejected"}
    assert report["counts"]["rejected"] > 300 and report["counts"]["ok"] > 300
