"""readers.Video: sequences, step/stride, padding, labels, frame numbers, timestamps, errors."""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.videos import frame, has_av, write_video

import headrace as ndd
from headrace._core.errors import DecodeError, InvalidArgumentError

# PyAV is looked up, not imported, at collection: a test process loads it (and its FFmpeg)
# only when it runs a video test (see tests/_helpers/dali_isolated.py)
pytestmark = pytest.mark.skipif(not has_av(), reason="PyAV (av) is not installed")


@pytest.fixture(scope="module")
def vids(tmp_path_factory):
    d = tmp_path_factory.mktemp("vid")
    write_video(d / "a.mkv", n=32)
    write_video(d / "b.mkv", n=10)
    return d


def _all(r, **kw):
    return [tuple(np.asarray(x) for x in s) for s in r.next_epoch(**kw)]


def _firsts(v):
    return [int(k) for k in v[:, 0, 0, 1]]  # green codes the frame number


def test_sequences_step_stride(vids):
    r = ndd.readers.Video(filenames=[vids / "a.mkv", vids / "b.mkv"], sequence_length=4,
                          step=5, stride=3, enable_frame_num=True)  # fmt: skip
    got = _all(r)
    # span 10: a.mkv starts 0, 5, ..., 20 (20+9 = 29 < 32); b.mkv starts 0 only
    assert [(_firsts(v)[0], int(n[0])) for v, n in got] == [
        (0, 0), (5, 5), (10, 10), (15, 15), (20, 20), (0, 0)
    ]  # fmt: skip
    v = got[1][0]
    assert v.shape == (4, 48, 64, 3) and v.dtype == np.uint8
    np.testing.assert_array_equal(v, np.stack([frame(k) for k in (5, 8, 11, 14)]))


def test_default_step_and_padding(vids):
    r = ndd.readers.Video(filenames=[vids / "b.mkv"], sequence_length=4, labels=[3],
                          pad_sequences=True, enable_frame_num="sequence",
                          enable_timestamps=True)  # fmt: skip
    got = _all(r)
    assert len(got) == 3  # starts 0, 4, 8
    v, lab, nums, ts = got[2]
    assert int(lab[0]) == 3 and lab.dtype == np.int32
    assert nums.tolist() == [8, 9, -1, -1]
    np.testing.assert_allclose(ts, [8 / 25, 9 / 25, -1, -1], atol=1e-6)
    assert (v[2:] == 0).all()
    np.testing.assert_array_equal(v[:2], np.stack([frame(8), frame(9)]))
    r = ndd.readers.Video(filenames=[vids / "b.mkv"], sequence_length=4)
    assert len(_all(r)) == 2  # without padding, the sequence at 8 is dropped


def test_file_root_file_list_dtype(vids, tmp_path):
    (tmp_path / "cat").mkdir()
    (tmp_path / "dog").mkdir()
    write_video(tmp_path / "cat" / "x.mkv", n=6)
    write_video(tmp_path / "dog" / "y.mkv", n=6)
    r = ndd.readers.Video(file_root=tmp_path, sequence_length=6, dtype=ndd.float32,
                          normalized=True)  # fmt: skip
    got = _all(r)
    assert [int(lab[0]) for _, lab in got] == [0, 1]
    np.testing.assert_allclose(got[0][0][3], frame(3) / np.float32(255), rtol=1e-6)
    lst = tmp_path / "list.txt"
    lst.write_text(f"{vids / 'a.mkv'} 5 10 20\n{vids / 'a.mkv'} 6 0.4 0.6\n")
    r = ndd.readers.Video(file_list=lst, sequence_length=5, file_list_frame_num=True)
    got = _all(r)
    assert [(_firsts(v)[0], int(lab[0])) for v, lab in got] == [(10, 5), (15, 5)]
    r = ndd.readers.Video(file_list=lst, sequence_length=5)  # seconds: 10-20 s is past the end
    got = _all(r)
    assert [(_firsts(v)[0], int(lab[0])) for v, lab in got] == [(10, 6)]  # 0.4-0.6 s: [10, 15)


def test_batches_gpu_and_state(vids):
    r = ndd.readers.Video(filenames=[vids / "a.mkv"], sequence_length=2, step=8, device="gpu")
    (b,) = next(iter(r.next_epoch(batch_size=2)))
    assert b.device.device_type == "gpu" and b.layout == "FHWC"
    r = ndd.readers.Video(filenames=[vids / "a.mkv"], sequence_length=2, step=8,
                          random_shuffle=True, seed=3)  # fmt: skip
    first = [_firsts(v)[0] for (v,) in _all(r)]
    assert sorted(first) == [0, 8, 16, 24]


def test_errors(vids, tmp_path):
    bad = tmp_path / "bad.mkv"
    bad.write_bytes(b"garbage" * 100)
    with pytest.raises(DecodeError, match=r"bad\.mkv"):
        ndd.readers.Video(filenames=[bad], sequence_length=2)
    with pytest.raises(FileNotFoundError, match=r"nope\.mkv"):
        ndd.readers.Video(filenames=[tmp_path / "nope.mkv"], sequence_length=2)
    with pytest.raises(InvalidArgumentError, match="sequence_length is required"):
        ndd.readers.Video(filenames=[vids / "a.mkv"])
    with pytest.raises(InvalidArgumentError, match="pad_sequences"):
        ndd.readers.Video(filenames=[vids / "b.mkv"], sequence_length=11)
    with pytest.raises(InvalidArgumentError, match="labels"):
        ndd.readers.Video(filenames=[vids / "b.mkv"], labels=[1, 2], sequence_length=2)


@pytest.mark.dali
@pytest.mark.parametrize(
    "kw",
    [
        {"sequence_length": 4, "step": 5, "stride": 2},
        {"sequence_length": 5, "pad_sequences": True},
    ],
)
def test_equals_reference_on_cuda(tmp_path, kw):
    """The reference's readers.Video decodes on the GPU only (NVDEC): compared where CUDA is."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("the reference's readers.Video needs a CUDA GPU")
    from tests._helpers.dali_isolated import read_all

    files = []
    for n in (23, 30):
        files.append(str(tmp_path / f"v{n}.mp4"))
        write_video(files[-1], n=n, codec="libx264", pix_fmt="yuv420p", fmt="mp4", h=64, w=96)
    args = dict(filenames=files, labels=[3, 4], enable_frame_num=True, enable_timestamps=True,
                **kw)  # fmt: skip
    ref = read_all("readers.Video", batch_size=1, device="gpu", **args)
    ours = [tuple(np.asarray(x) for x in s) for s in ndd.readers.Video(**args).next_epoch()]
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert [x.shape for x in o] == [x.shape for x in r]
        assert np.abs(o[0].astype(int) - r[0]).mean() < 3  # two H.264 decoders
        for a, b in zip(o[1:], r[1:]):
            np.testing.assert_allclose(a, b, atol=1e-4)


def test_damaged_files_are_named(tmp_path):
    """A truncated file and one with a zeroed run of bytes: the errors name the file (and the
    clip); skip_vfr_check reads what is left, on_error="skip" drops the clips that fail."""
    data = write_video(n=40, codec="libx264", pix_fmt="yuv420p", g="10")
    cut, hole = tmp_path / "cut.mkv", tmp_path / "hole.mkv"
    data[: len(data) * 2 // 3].tofile(cut)
    holed = data.copy()
    holed[len(data) // 2 : len(data) // 2 + 400] = 0
    holed.tofile(hole)
    kw = {"sequence_length": 4, "step": 4, "enable_frame_num": True}
    for f in (cut, hole):
        with pytest.raises(DecodeError, match=rf"{f.name}.*variable frame rate"):
            ndd.readers.Video(filenames=[f], **kw)
    r = ndd.readers.Video(filenames=[cut], skip_vfr_check=True, **kw)
    assert [int(n[0]) for _, n in _all(r)] == [0, 4, 8, 12]
    r = ndd.readers.Video(filenames=[hole], skip_vfr_check=True, **kw)
    with pytest.raises(DecodeError, match=r"sample \d+ \('.*hole\.mkv'\): cannot decode"):
        _all(r)
    r = ndd.readers.Video(filenames=[hole], skip_vfr_check=True, on_error="skip", **kw)
    kept = [int(n[0]) for _, n in _all(r)]
    assert 0 < len(kept) < len(r._dataset) and kept == sorted(kept)
    with pytest.raises(DecodeError, match=r"hole\.mkv"):
        _all(ndd.experimental.readers.Video(filenames=[hole], **kw))
