"""experimental.readers.Video: sequences, padding modes, uniform sampling, file_list ranges;
differential tests against the reference (run in a separate process: DALI and PyAV both bundle
FFmpeg)."""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.videos import frame, has_av, write_video

import headrace as ndd
from headrace._core.errors import DecodeError, InvalidArgumentError

# PyAV is looked up, not imported, at collection: a test process loads it (and its FFmpeg)
# only when it runs a video test (see tests/_helpers/dali_isolated.py)
pytestmark = pytest.mark.skipif(not has_av(), reason="PyAV (av) is not installed")

Video = ndd.experimental.readers.Video


@pytest.fixture(scope="module")
def vids(tmp_path_factory):
    """Lossless FFV1 files (exact frames) and MJPEG ones (the reference's CPU decoder reads
    MJPEG, VP8 and VP9)."""
    d = tmp_path_factory.mktemp("xvid")
    for n in (7, 10, 12):
        write_video(d / f"f{n}.mkv", n=n)
        write_video(d / f"m{n}.avi", n=n, codec="mjpeg", pix_fmt="yuvj444p", fmt="avi")
    return d


def _all(r, **kw):
    return [tuple(np.asarray(x) for x in s) for s in r.next_epoch(**kw)]


def _nums(r):
    return [n.tolist() for _, n in _all(r)]


@pytest.mark.parametrize(
    ("n", "kw", "want"),
    [
        (7, {"sequence_length": 4, "step": 3, "stride": 2, "pad_mode": "none"}, []),
        (7, {"sequence_length": 4, "step": 3, "stride": 2, "pad_mode": "edge"}, [[0, 2, 4, 6]]),
        (7, {"sequence_length": 4, "step": 4, "pad_mode": "constant"},
         [[0, 1, 2, 3], [4, 5, 6, -1]]),
        (7, {"sequence_length": 5, "step": 5, "pad_mode": "reflect"},
         [[0, 1, 2, 3, 4], [5, 6, 5, 4, 3]]),
        (7, {"sequence_length": 5, "step": 5, "pad_mode": "symmetric"},
         [[0, 1, 2, 3, 4], [5, 6, 6, 5, 4]]),
        (10, {"sequence_length": 3, "stride": 2, "pad_mode": "constant"},  # step: 3 * 2
         [[0, 2, 4], [6, 8, -1]]),
        (12, {"sequence_length": 2, "step": 5, "stride": 3}, [[0, 3], [5, 8]]),
        (7, {"sequence_length": 10, "uniform_sample": True}, [[0, 1, 1, 2, 3, 3, 4, 5, 5, 6]]),
    ],
)  # fmt: skip
def test_sequences_exact(vids, n, kw, want):
    if not want:
        with pytest.raises(InvalidArgumentError, match="pad_mode"):
            Video(filenames=[vids / f"f{n}.mkv"], enable_frame_num="sequence", **kw)
        return
    r = Video(filenames=[vids / f"f{n}.mkv"], enable_frame_num="sequence", fill_value=9, **kw)
    got = _all(r)
    assert [x.tolist() for _, x in got] == want
    for (v, _), w in zip(got, want):
        exp = np.stack([frame(k) if k >= 0 else np.full((48, 64, 3), 9, np.uint8) for k in w])
        np.testing.assert_array_equal(v, exp)


def test_outputs_labels_timestamps_gpu(vids):
    r = Video(filenames=[vids / "f10.mkv", vids / "f7.mkv"], labels=[4, 5], sequence_length=4,
              step=4, pad_mode="constant", enable_frame_num=True, enable_timestamps=True,
              fill_value=[1, 2, 3])  # fmt: skip
    got = _all(r)
    assert [(int(lab[0]), int(f[0])) for _, lab, f, _ in got] == [
        (4, 0), (4, 4), (4, 8), (5, 0), (5, 4)
    ]  # fmt: skip
    v, _, _, ts = got[2]
    np.testing.assert_allclose(ts, [8 / 25, 9 / 25, -1, -1], atol=1e-6)
    assert (v[2:] == np.array([1, 2, 3], np.uint8)).all()
    r = Video(filenames=[vids / "f7.mkv"], sequence_length=3, device="gpu")
    (b,) = next(iter(r.next_epoch(batch_size=2)))
    assert b.device.device_type == "gpu" and b.layout == "FHWC"


def test_file_list_frames_and_seconds(vids, tmp_path):
    lst = tmp_path / "l.txt"
    lst.write_text(f"{vids / 'f12.mkv'} 3 2 9\n{vids / 'f12.mkv'} 4 -5 -1\n")
    r = Video(file_list=lst, file_list_format="frames", sequence_length=3, pad_mode="constant",
              enable_frame_num="sequence")  # fmt: skip
    assert [(int(lab[0]), n.tolist()) for _, lab, n in _all(r)] == [
        (3, [2, 3, 4]), (3, [5, 6, 7]), (3, [8, -1, -1]), (4, [7, 8, 9]), (4, [10, -1, -1])
    ]  # fmt: skip
    lst.write_text(f"{vids / 'f12.mkv'} 3 0.1 0.3\n{vids / 'f12.mkv'} 4 0.08 0.2\n")
    r = Video(file_list=lst, sequence_length=1, enable_frame_num=True)
    assert [(int(lab[0]), int(n[0])) for _, lab, n in _all(r)] == [
        (3, 2), (3, 3), (3, 4), (3, 5), (3, 6), (4, 1), (4, 2), (4, 3), (4, 4)
    ]  # fmt: skip


def test_errors(vids, tmp_path):
    bad = tmp_path / "bad.avi"
    bad.write_bytes(b"garbage" * 100)
    with pytest.raises(DecodeError, match=r"bad\.avi"):
        Video(filenames=[bad], sequence_length=2)
    with pytest.raises(InvalidArgumentError, match="pad_mode must be"):
        Video(filenames=[vids / "f7.mkv"], sequence_length=2, pad_mode="wrap")
    with pytest.raises(InvalidArgumentError, match="fill_value"):
        Video(filenames=[vids / "f7.mkv"], sequence_length=2, fill_value=300)
    with pytest.raises(InvalidArgumentError, match="file_list_format"):
        Video(filenames=[vids / "f7.mkv"], sequence_length=2, file_list_format="seconds")
    with pytest.raises(InvalidArgumentError, match="sequence_length is required"):
        Video(filenames=[vids / "f7.mkv"])


# --- against the reference ----------------------------------------------------------------------
CASES = [
    {"sequence_length": 4, "step": 3, "stride": 2, "pad_mode": "constant", "fill_value": [9]},
    {"sequence_length": 4, "step": 4, "pad_mode": "edge"},
    {"sequence_length": 5, "step": 5, "pad_mode": "reflect"},
    {"sequence_length": 3, "stride": 2, "pad_mode": "symmetric"},
    {"sequence_length": 3, "step": 2},
    {"sequence_length": 5, "uniform_sample": True},
]


@pytest.mark.dali
@pytest.mark.parametrize("kw", CASES)
def test_equals_reference(vids, kw):
    from tests._helpers.dali_isolated import read_all

    files = [str(vids / f"m{n}.avi") for n in (7, 10, 12)]
    args = dict(filenames=files, labels=[1, 2, 3], enable_frame_num="sequence",
                enable_timestamps=True, **kw)  # fmt: skip
    ref = read_all("experimental.readers.Video", **args)
    ours = _all(Video(**args))
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert [x.shape for x in o] == [x.shape for x in r]
        assert o[0].dtype == r[0].dtype == np.uint8
        assert np.abs(o[0].astype(int) - r[0]).max() <= 2  # MJPEG: two FFmpeg builds
        for a, b in zip(o[1:], r[1:]):
            np.testing.assert_allclose(a, b, atol=1e-6)


@pytest.mark.dali
def test_file_list_equals_reference(vids, tmp_path):
    from tests._helpers.dali_isolated import read_all

    lst = tmp_path / "l.txt"
    m = vids / "m12.avi"
    lst.write_text(f"{m} 3 0.1 0.3\n{m} 4 0.05 0.23\n{m} 5 0.08 0.2\n{m} 6 0.13 0.17\n")
    args = {"file_list": str(lst), "sequence_length": 2, "enable_frame_num": "sequence",
            "pad_mode": "edge"}  # fmt: skip
    ref = read_all("experimental.readers.Video", **args)
    ours = _all(Video(**args))
    assert [[x.tolist() for x in o[1:]] for o in ours] == [[x.tolist() for x in r[1:]] for r in ref]
    lst.write_text(f"{m} 3 2 9\n{m} 4 -5 -1\n")
    args.update(file_list_format="frames", pad_mode="constant", sequence_length=3)
    ref = read_all("experimental.readers.Video", **args)
    ours = _all(Video(**args))
    assert [[x.tolist() for x in o[1:]] for o in ours] == [[x.tolist() for x in r[1:]] for r in ref]
