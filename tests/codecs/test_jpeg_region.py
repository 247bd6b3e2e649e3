"""Window-only JPEG decoding (nvImageCodec's CPU backend): the same pixels as decoding the whole
image and cropping, for every kind of JPEG, and a fall back to the full decode where needed."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading

import cv2
import numpy as np
import pytest
from PIL import Image

from headrace._core.errors import DecodeError
from headrace.codecs import decode
from headrace.codecs import image as image_codec
from headrace.codecs.jpeg_region import decode_region, region_decoding

pytestmark = pytest.mark.skipif(
    not region_decoding(), reason="nvImageCodec (pip install headrace[jpeg-roi]) is not installed"
)


def _image(h: int, w: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return cv2.GaussianBlur(rng.integers(0, 256, (h, w, 3), np.uint8), (7, 7), 2)


def _jpeg(img: np.ndarray, **kw: object) -> np.ndarray:
    out = io.BytesIO()
    Image.fromarray(img).save(out, "JPEG", **kw)
    return np.frombuffer(out.getvalue(), np.uint8)


KINDS = {
    "420": lambda im: _jpeg(im, quality=90, subsampling=2),
    "422": lambda im: _jpeg(im, quality=80, subsampling=1),
    "444": lambda im: _jpeg(im, quality=95, subsampling=0),
    "gray": lambda im: _jpeg(im[..., 1], quality=90),
    "progressive": lambda im: _jpeg(im, quality=85, progressive=True),
    "restart markers": lambda im: cv2.imencode(
        ".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, 90, cv2.IMWRITE_JPEG_RST_INTERVAL, 3]
    )[1],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("output_type", ["RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA"])
def test_window_equals_full_decode_then_crop(kind: str, output_type: str) -> None:
    rng = np.random.default_rng(len(kind) + len(output_type))
    data = KINDS[kind](_image(75, 93, seed=3))  # sizes that are not multiples of the MCU
    full = decode(data, output_type=output_type)
    h, w = full.shape[:2]
    windows = [(0, 0, h, w), (h - 1, w - 1, 1, 1), (0, 0, 16, 16)]
    for _ in range(8):
        y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
        windows.append((y, x, int(rng.integers(1, h - y + 1)), int(rng.integers(1, w - x + 1))))
    for y, x, ch, cw in windows:
        out = decode(data, output_type=output_type, roi=(y, x, ch, cw))
        np.testing.assert_array_equal(out, full[y : y + ch, x : x + cw], err_msg=str((y, x)))


def test_only_the_window_is_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    data = KINDS["420"](_image(64, 80, seed=1))
    expected = decode(data)[10:40, 20:60]

    def no_full_decode(*args: object) -> None:
        raise AssertionError("decoded the whole image")

    monkeypatch.setattr(image_codec, "_decode_raw", no_full_decode)
    np.testing.assert_array_equal(decode(data, roi=(10, 20, 30, 40)), expected)


def test_truncated_and_corrupt_files_still_raise() -> None:
    data = KINDS["420"](_image(64, 80, seed=2))
    truncated = data[: len(data) * 2 // 3]
    assert decode_region(truncated, (0, 0, 8, 8), False) is None  # no end-of-image marker
    with pytest.raises(DecodeError, match="cannot decode"):
        decode(truncated, roi=(0, 0, 8, 8))
    garbage = data.copy()
    garbage[2:40] = 0x55  # the header is gone
    with pytest.raises(DecodeError):
        decode(garbage, roi=(0, 0, 8, 8))


def test_windows_outside_the_image_are_refused_as_before() -> None:
    data = KINDS["444"](_image(32, 48, seed=4))
    assert decode(data, roi=(0, 0, 32, 48)).shape == (32, 48, 3)
    with pytest.raises(Exception, match="does not fit"):
        decode(data, roi=(1, 0, 32, 48))


def test_threads_decode_windows_concurrently() -> None:
    datas = [KINDS["420"](_image(48, 64, seed=s)) for s in range(8)]
    expected = [decode(d)[5:37, 7:50] for d in datas]
    errors: list[str] = []

    def work(k: int) -> None:
        for _ in range(20):
            for i in range(k, len(datas), 4):
                if not np.array_equal(decode(datas[i], roi=(5, 7, 32, 43)), expected[i]):
                    errors.append(f"sample {i}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_can_be_turned_off() -> None:
    code = "from headrace.codecs.jpeg_region import region_decoding; print(region_decoding())"
    env = {**os.environ, "HEADRACE_JPEG_ROI": "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def _decode_in_child(data: np.ndarray, expected: np.ndarray, queue: object) -> None:
    results = [np.array_equal(decode(data, roi=(4, 6, 30, 40)), expected)]
    box: list[bool] = []
    t = threading.Thread(target=lambda: box.append(
        np.array_equal(decode(data, roi=(4, 6, 30, 40)), expected)))  # fmt: skip
    t.start()
    t.join()
    queue.put(results + box)  # type: ignore[attr-defined]


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_forked_workers_decode_windows() -> None:
    import multiprocessing as mp

    data = KINDS["420"](_image(48, 64, seed=5))
    expected = decode(data)[4:34, 6:46]
    assert np.array_equal(decode(data, roi=(4, 6, 30, 40)), expected)  # the parent's decoder
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_decode_in_child, args=(data, expected, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    try:
        assert [queue.get(timeout=60) for _ in procs] == [[True, True]] * 2
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert [p.exitcode for p in procs] == [0, 0]


def test_unparsable_streams_leave_no_codec_log() -> None:
    """nvImageCodec imported by headrace logs nothing of its own (headrace falls back and raises
    its error), and the process's environment is left as it was."""
    code = """
import os, numpy as np, cv2
from headrace.codecs import decode
jpg = cv2.imencode(".jpg", np.full((32, 48, 3), 9, np.uint8))[1]
bad = jpg.copy(); bad[2:30] = 0x55
try:
    decode(bad, roi=(0, 0, 8, 8))
except Exception as e:
    print(type(e).__name__)
print("PYNVIMGCODEC_VERBOSITY" in os.environ)
"""
    env = {k: v for k, v in os.environ.items() if k != "PYNVIMGCODEC_VERBOSITY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["DecodeError", "False"], out
    assert "nvimgcodec" not in out.stderr.lower() and "jpeg_parser" not in out.stderr, out.stderr
