"""GPU image decoding (``device="gpu"``): each backend of ``HEADRACE_GPU_DECODER`` against the
CPU decoder, the ROI variants, the per-sample CPU fallback, ``on_error`` and the host path's one
upload buffer.

Without CUDA the GPU kernels run on CPU tensors (fake-GPU mode): the host backend, and
nvImageCodec through its CPU backend when it is installed. With CUDA every installed backend
decodes on the device; JPEG pixels may then differ from libjpeg-turbo's by IDCT rounding.
"""

from __future__ import annotations

import io
import warnings

import cv2
import numpy as np
import pytest
from PIL import Image

import headrace as ndd
from headrace._core.errors import BackendUnavailableError
from headrace.backends.torch import gpu_decode
from headrace.backends.torch.gpu_decode_backends import raw_window
from headrace.codecs import convert

torch = pytest.importorskip("torch")
CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
#: Mean and max |GPU - CPU| per backend on JPEGs. nvImageCodec differs from libjpeg-turbo by IDCT
#: rounding (measured on an H200: max 3 levels); torchvision's nvJPEG also upsamples chroma by
#: replication instead of libjpeg's interpolation, which moves pixels at colour edges by up to
#: ~90 levels (measured: mean 1.3, worst image 2.5, max 92 on the sample images).
TOLERANCE = {"nvimgcodec": (1.0, 12), "torchvision": (4.0, 255), "host": (0.0, 0)}


def _natural(h: int, w: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    img = np.stack([x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x * y) % 256], -1)
    img = cv2.GaussianBlur(img.astype(np.float32), (5, 5), 1.5) + rng.normal(0, 6, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def _pil_bytes(img: np.ndarray | Image.Image, fmt: str, **kw: object) -> np.ndarray:
    out = io.BytesIO()
    (img if isinstance(img, Image.Image) else Image.fromarray(img)).save(out, fmt, **kw)
    return np.frombuffer(out.getvalue(), np.uint8)


def _jpeg(img: np.ndarray, subsampling: int = 2, orientation: int = 1) -> np.ndarray:
    kw: dict[str, object] = {"quality": 92, "subsampling": subsampling}
    if orientation != 1:
        exif = Image.Exif()
        exif[0x0112] = orientation
        kw["exif"] = exif.tobytes()
    return _pil_bytes(img, "JPEG", **kw)


@pytest.fixture(scope="module")
def jpegs() -> list[np.ndarray]:
    """Colour JPEGs (4:2:0, 4:4:4, 4:2:2) of different sizes and a gray one."""
    out = [_jpeg(_natural(48 + 9 * i, 64 + 7 * i, i), subsampling=i % 3) for i in range(5)]
    out.append(_pil_bytes(_natural(40, 52, 7)[..., 0], "JPEG", quality=90))
    return out


@pytest.fixture(scope="module")
def mixed(jpegs: list[np.ndarray]) -> list[np.ndarray]:
    """JPEGs with a PNG and a CMYK JPEG among them (those fall back to the host)."""
    png = _pil_bytes(_natural(33, 45, 11), "PNG")
    cmyk = _pil_bytes(Image.fromarray(_natural(30, 38, 12)).convert("CMYK"), "JPEG")
    return [jpegs[0], png, jpegs[1], cmyk, jpegs[5]]


def _available(backend: str) -> bool:
    if backend == "host":
        return True
    return gpu_decode._AVAILABLE[backend]() is not None


@pytest.fixture(params=gpu_decode.BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each decoder backend installed here (torchvision only where CUDA runs it)."""
    name = str(request.param)
    if not _available(name):
        pytest.skip(f"{name} is not installed")
    if name == "torchvision" and not CUDA:
        pytest.skip("torchvision's decode_jpeg is the CUDA path; its CPU decoder is not ours")
    monkeypatch.setenv("HEADRACE_GPU_DECODER", name)
    return name


def _tolerance(backend: str) -> tuple[float, float] | None:
    """``None``: pixels equal the CPU's exactly (the host path, and nvImageCodec's CPU backend,
    which is libjpeg-turbo as the CPU decoder); else the mean and max tolerance."""
    return None if backend == "host" or not CUDA else TOLERANCE[backend]


def _compare(
    gpu: ndd.Batch, cpu: ndd.Batch, tol: tuple[float, float] | None, what: str = ""
) -> None:
    assert gpu.device.device_type == "gpu"
    assert gpu.layout == "HWC" and gpu.dtype == cpu.dtype
    assert gpu.shape == cpu.shape, what
    scale = 255.0 if cpu.dtype == ndd.float32 else (257.0 if cpu.dtype == ndd.uint16 else 1.0)
    for i, (g, c) in enumerate(zip(gpu.cpu(), cpu)):
        a, b = np.asarray(g), np.asarray(c)
        if tol is None:
            assert np.array_equal(a, b), f"{what} sample {i}"
            continue
        d = np.abs(a.astype(np.float64) - b.astype(np.float64)) / scale
        assert d.mean() <= tol[0] and d.max() <= tol[1], (what, i, d.mean(), d.max())


# --- every backend, on CUDA or (fake GPU) on the CPU ------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"output_type": ndd.types.BGR},
        {"output_type": ndd.types.GRAY},
        {"dtype": ndd.float32},
        {"dtype": ndd.uint16, "output_type": ndd.types.BGR},
    ],
    ids=["rgb", "bgr", "gray", "float32", "uint16-bgr"],
)
def test_image_matches_cpu(backend: str, jpegs: list[np.ndarray], kw: dict) -> None:
    g = ndd.decoders.image(ndd.batch(jpegs), device="gpu", **kw)
    c = ndd.decoders.image(ndd.batch(jpegs), **kw)
    _compare(g, c, _tolerance(backend), str(kw))


def test_crop_variants_match_cpu(backend: str, jpegs: list[np.ndarray]) -> None:
    tol = _tolerance(backend)
    data = ndd.batch(jpegs)
    kw = {"crop": (21, 30), "crop_pos_x": 0.25, "crop_pos_y": 0.9}
    g = ndd.decoders.image_crop(data, device="gpu", **kw)
    _compare(g, ndd.decoders.image_crop(data, **kw), tol, "crop")
    # the same generator state gives the same windows on both devices
    g = ndd.decoders.image_random_crop(data, device="gpu", rng=ndd.random.RNG(seed=5))
    c = ndd.decoders.image_random_crop(data, rng=ndd.random.RNG(seed=5))
    _compare(g, c, tol, "random crop")
    kw = {"rel_start": [0.1, 0.2], "rel_shape": [0.5, 0.6]}
    g = ndd.decoders.image_slice(data, device="gpu", **kw)
    _compare(g, ndd.decoders.image_slice(data, **kw), tol, "slice")


def test_windows_cut_from_whole_images_when_regions_are_refused(
    jpegs: list[np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library build that decodes no region (nvJPEG < 13.2 with fancy upsampling) still
    gives the CPU's windows: whole images are decoded and cut, then remembered for next time."""
    from headrace.backends.torch import gpu_decode_backends as B

    if not _available("nvimgcodec"):
        pytest.skip("nvimgcodec is not installed")
    monkeypatch.setenv("HEADRACE_GPU_DECODER", "nvimgcodec")
    monkeypatch.setattr(B, "_NO_REGIONS", set())
    data = ndd.batch(jpegs)
    kw = {"crop": (21, 30), "crop_pos_x": 0.25, "crop_pos_y": 0.9}
    regions = ndd.decoders.image_crop(data, device="gpu", **kw).evaluate()
    B._NO_REGIONS.update(B._decoders)  # as if this build had refused every region
    cut = ndd.decoders.image_crop(data, device="gpu", **kw).evaluate()
    assert B._NO_REGIONS
    _compare(cut, ndd.decoders.image_crop(data, **kw), _tolerance("nvimgcodec"), "cut")
    if not CUDA:  # the CPU backend decodes regions exactly: the two routes agree bit for bit
        for a, b in zip(regions.cpu(), cut.cpu()):
            assert np.array_equal(np.asarray(a), np.asarray(b))


def test_crop_equals_decode_then_crop(backend: str, jpegs: list[np.ndarray]) -> None:
    """A decoded window is the window of the decoded image (region decoding is not a resize)."""
    data = ndd.batch(jpegs)
    full = ndd.decoders.image(data, device="gpu")
    crop = ndd.decoders.image_crop(data, crop=(16, 24), crop_pos_x=1.0, crop_pos_y=0.0)
    gcrop = ndd.decoders.image_crop(data, crop=(16, 24), crop_pos_x=1.0, crop_pos_y=0.0,
                                    device="gpu")  # fmt: skip
    for f, c, g in zip(full.cpu(), crop, gcrop.cpu()):
        f, c, g = np.asarray(f), np.asarray(c), np.asarray(g)
        w = f.shape[1]
        assert g.shape == c.shape == (16, 24, 3)
        # nvJPEG decodes a region from the MCU rows it needs: allow its rounding
        assert np.abs(g.astype(int) - f[:16, w - 24 :].astype(int)).max() <= 12


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_and_windows(backend: str, orientation: int) -> None:
    img = _natural(40, 64, orientation)
    data = ndd.batch([_jpeg(img, subsampling=0, orientation=orientation)] * 2)
    tol = _tolerance(backend)
    for adjust in (True, False):
        g = ndd.decoders.image(data, device="gpu", adjust_orientation=adjust)
        _compare(g, ndd.decoders.image(data, adjust_orientation=adjust), tol, f"{adjust}")
    kw = {"crop": (16, 20), "crop_pos_x": 0.2, "crop_pos_y": 0.7}
    g = ndd.decoders.image_crop(data, device="gpu", **kw)
    _compare(g, ndd.decoders.image_crop(data, **kw), tol, "crop")


def test_fallback_formats_equal_cpu(backend: str, mixed: list[np.ndarray]) -> None:
    """PNG and CMYK JPEG go to the host decoder: exactly the CPU's pixels, in batch order."""
    data = ndd.batch(mixed)
    g = ndd.decoders.image(data, device="gpu")
    c = ndd.decoders.image(data)
    assert g.shape == c.shape
    for i in (1, 3):
        assert np.array_equal(np.asarray(g.cpu().tensors[i]), np.asarray(c.tensors[i]))
    _compare(g, c, _tolerance(backend))
    for ot in (ndd.types.YCbCr, ndd.types.ANY_DATA):  # host-only colour spaces
        g = ndd.decoders.image(data, device="gpu", output_type=ot)
        _compare(g, ndd.decoders.image(data, output_type=ot), None, str(ot))


def test_corrupt_sample_raises_or_is_skipped(backend: str, jpegs: list[np.ndarray]) -> None:
    bad = np.frombuffer(b"\xff\xd8\xff\xe0not really a jpeg", np.uint8)
    data = ndd.batch([jpegs[0], bad, jpegs[2]])
    with pytest.raises(ndd.DecodeError, match=r"decoders\.image: sample 1"):
        ndd.decoders.image(data, device="gpu").evaluate()
    before = ndd.decoders.skipped_count()
    with pytest.warns(UserWarning, match="skipped 1"):
        out = ndd.decoders.image(data, device="gpu", on_error="skip").evaluate()
    assert out.batch_size == 2 and out.kept == (0, 2)
    assert ndd.decoders.skipped_count() == before + 1
    _compare(out, ndd.decoders.image(ndd.batch([jpegs[0], jpegs[2]])), _tolerance(backend))


def test_truncated_jpeg_is_an_error_or_decoded(backend: str, jpegs: list[np.ndarray]) -> None:
    """A truncated JPEG raises like on the CPU on the host path; GPU decoders may fill the
    missing rows instead (nvJPEG does), but never crash or hang."""
    cut = jpegs[1][: len(jpegs[1]) // 2]
    data = ndd.batch([jpegs[0], cut])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = ndd.decoders.image(data, device="gpu").evaluate()
        except ndd.DecodeError as e:
            assert "sample 1" in str(e)
        else:
            peeked = tuple(np.asarray(ndd.peek_image_shape(ndd.as_tensor(cut))).tolist())
            assert out.shape[1] == peeked


def test_empty_batch_and_mixed_device_name(backend: str, jpegs: list[np.ndarray]) -> None:
    e = ndd.decoders.image(ndd.batch([], dtype=ndd.uint8), device="gpu")
    assert e.batch_size == 0 and e.device.device_type == "gpu"
    m = ndd.decoders.image(ndd.batch(jpegs[:2]), device="mixed")  # the reference's name
    assert (
        m.device.device_type == "gpu" and m.shape == ndd.decoders.image(ndd.batch(jpegs[:2])).shape
    )
    t = ndd.decoders.image_crop(ndd.as_tensor(jpegs[0]), crop=(8, 8), device="mixed")
    assert isinstance(t, ndd.Tensor) and t.shape == (8, 8, 3)


# --- the host path ---------------------------------------------------------------------------
@pytest.mark.parametrize("backend_name", ["host", "auto"])
def test_host_path_one_buffer_equals_cpu(
    monkeypatch: pytest.MonkeyPatch, jpegs: list[np.ndarray], mixed: list[np.ndarray],
    backend_name: str,
) -> None:  # fmt: skip
    """All samples are views of one buffer (pinned and uploaded once on CUDA), equal to the CPU
    decoder's output exactly; equal shapes also give the dense batch."""
    monkeypatch.setenv("HEADRACE_GPU_DECODER", backend_name)
    if backend_name == "auto" and CUDA:
        pytest.skip("auto picks a GPU decoder on CUDA")
    for data, kw in (
        (mixed, {}),
        (jpegs, {"dtype": ndd.float32, "output_type": ndd.types.YCbCr}),
        (jpegs, {"crop": (10, 14)}),
    ):
        fn = ndd.decoders.image_crop if "crop" in kw else ndd.decoders.image
        g = fn(ndd.batch(data), device="gpu", **kw).evaluate()
        c = fn(ndd.batch(data), **kw)
        _compare(g, c, None, str(kw))
        storages = {s.untyped_storage().data_ptr() for s in g._samples}
        assert len(storages) == 1
        assert (g._dense is not None) == ("crop" in kw)
        if "crop" in kw:
            assert tuple(g._dense.shape) == (len(data), 10, 14, 3)


def test_backend_choice(monkeypatch: pytest.MonkeyPatch, jpegs: list[np.ndarray]) -> None:
    cpu = torch.device("cpu")
    monkeypatch.delenv("HEADRACE_GPU_DECODER", raising=False)
    assert gpu_decode.backend_for(cpu) == "host"
    if CUDA:
        want = next((b for b in ("nvimgcodec", "torchvision") if _available(b)), "host")
        assert gpu_decode.backend_for(torch.device("cuda")) == want
    monkeypatch.setenv("HEADRACE_GPU_DECODER", "nvjpeg")
    with pytest.raises(ValueError, match="HEADRACE_GPU_DECODER must be one of"):
        ndd.decoders.image(ndd.batch(jpegs), device="gpu").evaluate()
    for name in ("nvimgcodec", "torchvision"):
        if not _available(name):
            monkeypatch.setenv("HEADRACE_GPU_DECODER", name)
            with pytest.raises(BackendUnavailableError, match=name):
                gpu_decode.backend_for(cpu)


# --- pure helpers ------------------------------------------------------------------------------
@pytest.mark.parametrize("k", range(1, 9))
def test_raw_window_and_orient(k: int) -> None:
    raw = np.arange(5 * 7 * 2).reshape(5, 7, 2)
    oriented = convert.orient(raw, k)
    assert np.array_equal(gpu_decode.orient(torch.from_numpy(raw), k).numpy(), oriented)
    oh, ow = oriented.shape[:2]
    for roi in ((0, 0, oh, ow), (1, 2, 2, 3), (oh - 1, ow - 2, 1, 2), (0, 1, oh, 1)):
        y, x, h, w = roi
        ry, rx, rh, rw = raw_window(roi, k, (oh, ow))
        got = convert.orient(raw[ry : ry + rh, rx : rx + rw], k)
        assert np.array_equal(got, oriented[y : y + h, x : x + w]), (k, roi)


# --- CUDA only ---------------------------------------------------------------------------------
@needs_cuda
def test_cuda_output_lands_on_the_device(backend: str, jpegs: list[np.ndarray]) -> None:
    g = ndd.decoders.image(ndd.batch(jpegs), device="gpu").evaluate()
    t = g.torch(pad=True)
    assert t.is_cuda and t.dtype == torch.uint8 and t.shape[0] == len(jpegs)
    for s in g._samples:
        assert s.is_cuda and s.is_contiguous()


@needs_cuda
def test_cuda_host_path_pinned_single_upload(
    monkeypatch: pytest.MonkeyPatch, jpegs: list[np.ndarray]
) -> None:
    monkeypatch.setenv("HEADRACE_GPU_DECODER", "host")
    g = ndd.decoders.image(ndd.batch(jpegs), device="gpu").evaluate()
    assert all(s.is_cuda for s in g._samples)
    assert len({s.untyped_storage().data_ptr() for s in g._samples}) == 1
    _compare(g, ndd.decoders.image(ndd.batch(jpegs)), None)


@needs_cuda
def test_cuda_decode_on_a_side_stream(backend: str, jpegs: list[np.ndarray]) -> None:
    """A decode issued while another torch stream is current hands the consumer the same
    pixels (the call runs on its context's stream; the hand-off waits for it)."""
    ref = ndd.decoders.image(ndd.batch(jpegs), device="gpu").evaluate()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s), ndd.EvalMode.sync_full:
        g = ndd.decoders.image(ndd.batch(jpegs), device="gpu")
        out = g.torch(pad=True)
    s.synchronize()
    assert torch.equal(out, ref.torch(pad=True))
    for a, b in zip(g.cpu(), ref.cpu()):
        assert np.array_equal(np.asarray(a), np.asarray(b))
