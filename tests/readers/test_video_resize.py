"""readers.VideoResize: readers.Video followed by resize, on CPU and (fake) GPU."""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.videos import has_av, write_video

import headrace as ndd
from headrace._core.errors import InvalidArgumentError

# PyAV is looked up, not imported, at collection: a test process loads it (and its FFmpeg)
# only when it runs a video test (see tests/_helpers/dali_isolated.py)
pytestmark = pytest.mark.skipif(not has_av(), reason="PyAV (av) is not installed")


@pytest.fixture(scope="module")
def vid(tmp_path_factory):
    p = tmp_path_factory.mktemp("rvid") / "a.mkv"
    write_video(p, n=12)
    return p


def _all(r, **kw):
    return [tuple(np.asarray(x) for x in s) for s in r.next_epoch(**kw)]


@pytest.mark.parametrize(
    "rkw",
    [
        {"resize_x": 40, "resize_y": 20},
        {"resize_shorter": 24},
        {"size": [30, 30], "mode": "not_larger", "interp_type": ndd.types.INTERP_CUBIC},
        {"resize_x": 100, "antialias": False, "interp_type": ndd.types.INTERP_NN},
    ],
)
def test_equals_video_then_resize(vid, rkw):
    kw = {"filenames": [vid], "labels": [2], "sequence_length": 3, "step": 4,
          "enable_frame_num": True}  # fmt: skip
    got = _all(ndd.readers.VideoResize(**kw, **rkw))
    plain = _all(ndd.readers.Video(**kw))
    assert len(got) == len(plain) == 3
    for g, p in zip(got, plain):
        want = np.asarray(ndd.resize(ndd.as_tensor(p[0], layout="FHWC"), **rkw))
        assert g[0].shape == want.shape and g[0].dtype == np.uint8
        np.testing.assert_array_equal(g[0], want)
        assert [x.tolist() for x in g[1:]] == [x.tolist() for x in p[1:]]


def test_shapes_float_and_gpu(vid):
    r = ndd.readers.VideoResize(filenames=[vid], sequence_length=4, resize_shorter=24,
                                dtype=ndd.float32, normalized=True)  # fmt: skip
    (v,) = _all(r)[0]
    assert v.shape == (4, 24, 32, 3) and v.dtype == np.float32 and v.max() <= 1.0
    r = ndd.readers.VideoResize(filenames=[vid], sequence_length=4, resize_x=32, resize_y=24,
                                device="gpu")  # fmt: skip
    (b,) = next(iter(r.next_epoch(batch_size=2)))
    assert b.device.device_type == "gpu" and b.layout == "FHWC"
    cpu = ndd.readers.VideoResize(filenames=[vid], sequence_length=4, resize_x=32, resize_y=24)
    (c,) = next(iter(cpu.next_epoch(batch_size=2)))
    for x, y in zip(b.cpu().tensors, c.tensors):
        assert x.shape == (4, 24, 32, 3)
        assert np.abs(np.asarray(x).astype(int) - np.asarray(y)).max() <= 1


def test_bad_resize_arguments(vid):
    with pytest.raises(InvalidArgumentError, match="one way"):
        ndd.readers.VideoResize(filenames=[vid], sequence_length=2, resize_x=5, size=[4, 4])
    with pytest.raises(InvalidArgumentError, match="mode"):
        ndd.readers.VideoResize(filenames=[vid], sequence_length=2, mode="bigger", size=[4, 4])


@pytest.mark.dali
def test_equals_reference_on_cuda(vid, tmp_path):
    """The reference's VideoResize runs on the GPU only (NVDEC): compared where CUDA is."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("the reference's readers.VideoResize needs a CUDA GPU")
    from tests._helpers.dali_isolated import read_all

    h264 = tmp_path / "a.mp4"
    write_video(h264, n=24, codec="libx264", pix_fmt="yuv420p", fmt="mp4", h=64, w=96)
    kw = {"filenames": [str(h264)], "sequence_length": 4, "resize_x": 48, "resize_y": 32}
    ref = read_all("readers.VideoResize", batch_size=1, device="gpu", **kw)
    ours = _all(ndd.readers.VideoResize(**kw))
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert o[0].shape == r[0].shape
        assert np.abs(o[0].astype(int) - r[0]).mean() < 3  # two H.264 decoders, two resizers
