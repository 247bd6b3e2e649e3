"""decoders.video: frame exactness on lossless files, frame selection, padding, errors."""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.videos import frame, has_av, pyav_frames, write_video

import headrace as ndd
from headrace._core.errors import InvalidArgumentError

# PyAV is looked up, not imported, at collection: a test process loads it (and its FFmpeg)
# only when it runs a video test (see tests/_helpers/dali_isolated.py)
pytestmark = pytest.mark.skipif(not has_av(), reason="PyAV (av) is not installed")

N = 32


@pytest.fixture(scope="module")
def raw() -> np.ndarray:
    return write_video(n=N)


def _dec(data: np.ndarray, **kw) -> np.ndarray:
    return np.asarray(ndd.decoders.video(ndd.as_tensor(data), **kw))


@pytest.mark.parametrize("build_index", [True, False])
def test_all_frames_exact(raw, build_index):
    out = _dec(raw, build_index=build_index)
    assert out.shape == (N, 48, 64, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.stack([frame(k) for k in range(N)]))


@pytest.mark.parametrize(
    ("kw", "want"),
    [
        ({"start_frame": 5, "sequence_length": 4, "stride": 3}, [5, 8, 11, 14]),
        ({"start_frame": 2, "end_frame": 11, "stride": 4}, [2, 6, 10]),
        ({"start_frame": 29}, [29, 30, 31]),
        ({"stride": 10}, [0, 10, 20, 30]),
        ({"frames": [31, 0, 7, 7]}, [31, 0, 7, 7]),
    ],
)
@pytest.mark.parametrize("build_index", [True, False])
def test_selection(raw, kw, want, build_index):
    out = _dec(raw, build_index=build_index, **kw)
    np.testing.assert_array_equal(out, np.stack([frame(k) for k in want]))


@pytest.mark.parametrize(
    ("mode", "want"),
    [
        ("none", [28, 30]),
        # frame numbers 32, 34, 36 past the end (32 frames) mirrored or repeated
        ("edge", [28, 30, 31, 31, 31]),
        ("repeat", [28, 30, 31, 31, 31]),
        ("symmetric", [28, 30, 31, 29, 27]),
        ("reflect_1001", [28, 30, 31, 29, 27]),
        ("reflect", [28, 30, 30, 28, 26]),
    ],
)
def test_pad_modes(raw, mode, want):
    out = _dec(raw, start_frame=28, sequence_length=5, stride=2, pad_mode=mode)
    np.testing.assert_array_equal(out, np.stack([frame(k) for k in want]))


def test_constant_padding(raw):
    out = _dec(raw, start_frame=30, sequence_length=4, fill_value=[1, 2, 3])
    np.testing.assert_array_equal(out[:2], np.stack([frame(30), frame(31)]))
    assert (out[2:] == np.array([1, 2, 3], np.uint8)).all()
    out = _dec(raw, frames=[40, 1], fill_value=9)
    assert (out[0] == 9).all()
    np.testing.assert_array_equal(out[1], frame(1))


def test_lossy_codec_matches_pyav():
    data = write_video(n=20, codec="mpeg4", pix_fmt="yuv420p", fmt="mp4")
    ref = pyav_frames(data)
    np.testing.assert_array_equal(_dec(data), np.stack(ref))
    np.testing.assert_array_equal(
        _dec(data, start_frame=13, sequence_length=3, stride=2), np.stack(ref[13:18:2])
    )


def test_batch_per_sample_and_gpu(raw):
    b = ndd.as_batch([raw, raw])
    out = ndd.decoders.video(b, start_frame=ndd.as_batch([np.int32(1), np.int32(20)]),
                             sequence_length=2)  # fmt: skip
    assert out.layout == "FHWC"
    np.testing.assert_array_equal(np.asarray(out.tensors[1]), np.stack([frame(20), frame(21)]))
    g = ndd.decoders.video(ndd.as_tensor(raw), frames=[3], device="gpu")
    assert g.device.device_type == "gpu"
    np.testing.assert_array_equal(np.asarray(g.cpu())[0], frame(3))


def test_errors_name_the_sample(raw):
    bad = ndd.as_batch([raw, np.frombuffer(b"not a video at all" * 10, np.uint8)])
    with pytest.raises(ndd.DecodeError, match="sample 1"):
        ndd.decoders.video(bad)
    with pytest.raises(InvalidArgumentError, match="frames cannot be combined"):
        _dec(raw, frames=[1], stride=2)
    with pytest.raises(InvalidArgumentError, match="sequence_length and end_frame"):
        _dec(raw, sequence_length=2, end_frame=4)
    with pytest.raises(ndd.DecodeError, match="beyond"):
        _dec(raw, frames=[99], pad_mode="none")


@pytest.mark.dali
def test_mjpeg_equals_reference():
    from tests._helpers.dali_oracle import dali_run, max_diff

    data = write_video(n=20, codec="mjpeg", pix_fmt="yuvj444p", fmt="avi")
    kw = {"start_frame": 3, "sequence_length": 5, "stride": 2}
    ref = dali_run("decoders.video", data, **kw)
    assert max_diff(_dec(data, **kw), ref) == 0


@pytest.mark.dali
@pytest.mark.parametrize("mode", ["constant", "edge", "symmetric", "reflect", "none"])
def test_padding_equals_reference(mode):
    from tests._helpers.dali_isolated import pipeline_video_decode

    data = write_video(n=12, codec="mjpeg", pix_fmt="yuvj444p", fmt="avi")
    kw = {"start_frame": 8, "sequence_length": 5, "stride": 2, "pad_mode": mode}
    ref = pipeline_video_decode(data, **kw)
    ours = _dec(data, **kw)
    assert ours.shape == ref.shape
    assert np.abs(ours.astype(int) - ref).max() <= 2  # MJPEG: two FFmpeg builds
