"""Cases where headrace differed from the reference in example-style programs: IoU ties in
box_encoder, float32 placement in paste, exact 16-bit audio, float64 video timestamps."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import headrace as ndd


def labels_of(batch: ndd.Batch) -> list[list[int]]:
    return [np.asarray(t.torch()).ravel().tolist() for t in batch.tensors]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_box_encoder_ties_go_to_the_later_anchor_and_box(device: str) -> None:
    anchors = [0.0, 0.25, 0.5, 0.75, 0.5, 0.25, 1.0, 0.75, 0.0, 0.0, 0.125, 0.125]
    box = np.array([[0.25, 0.25, 0.75, 0.75]], np.float32)  # IoU 1/3 with anchors 0 and 1
    _, lab = ndd.box_encoder(ndd.batch([box]), ndd.batch([np.array([7], np.int32)]),
                             anchors=anchors, criteria=0.5, device=device)  # fmt: skip
    assert labels_of(lab) == [[0, 7, 0]]
    two = np.array([[0.0, 0.25, 0.5, 0.75], [0.0, 0.25, 0.5, 0.75]], np.float32)  # one anchor
    _, lab = ndd.box_encoder(ndd.batch([two]), ndd.batch([np.array([3, 9], np.int32)]),
                             anchors=anchors, criteria=0.5, device=device)  # fmt: skip
    assert labels_of(lab)[0][0] == 9  # the later of two equal boxes


def test_paste_places_the_image_with_float32_arithmetic() -> None:
    img = np.full((281, 500, 3), 200, np.uint8)
    out = np.asarray(ndd.paste(ndd.batch([img]), ratio=1.5, paste_x=0.3, paste_y=0.7,
                               fill_value=(0, 0, 0)).select(0))  # fmt: skip
    rows, cols = np.nonzero(out[..., 0] == 200)
    # float32: 0.7 * 140 = 98 (float64 0.7 * 140 = 97.99999999999999)
    assert out.shape == (421, 750, 3) and rows.min() == 98 and cols.min() == 75


def test_16_bit_audio_decodes_exactly_as_int16() -> None:
    sf = pytest.importorskip("soundfile")
    rng = np.random.default_rng(0)
    pcm = rng.integers(-32768, 32767, (4000, 2), dtype=np.int16)
    buf = io.BytesIO()
    sf.write(buf, pcm, 16000, format="WAV", subtype="PCM_16")
    data = ndd.batch([np.frombuffer(buf.getvalue(), np.uint8)])
    audio, _ = ndd.decoders.audio(data, dtype=ndd.int16, downmix=False)
    np.testing.assert_array_equal(np.asarray(audio.select(0)), pcm)
    wide, _ = ndd.decoders.audio(data, dtype=ndd.int32, downmix=False)
    np.testing.assert_array_equal(np.asarray(wide.select(0)), pcm.astype(np.int32) << 16)


@pytest.mark.dali
def test_box_encoder_ties_match_the_reference() -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    rng = np.random.default_rng(1)
    grid = np.linspace(0, 1, 5, dtype=np.float32)
    anchors = np.array([[x, y, x + 0.25, y + 0.25] for x in grid[:4] for y in grid[:4]],
                       np.float32).ravel().tolist()  # fmt: skip
    corners = [rng.choice(grid, (3, 4)) for _ in range(4)]
    boxes = [
        np.ascontiguousarray(np.concatenate([np.minimum(c[:, :2], c[:, 2:]),
                                             np.maximum(c[:, :2], c[:, 2:])], 1))
        for c in corners
    ]  # fmt: skip
    labels = [np.arange(1, 4, dtype=np.int32) for _ in boxes]
    mine = ndd.box_encoder(ndd.batch(boxes), ndd.batch(labels), anchors=anchors, criteria=0.3)
    ref = dndd.box_encoder(dndd.batch(boxes), dndd.batch(labels), anchors=anchors, criteria=0.3)
    assert labels_of(mine[1]) == [np.asarray(t).ravel().tolist() for t in ref[1].tensors]


CUTS = [(0.10003, 0.20007), (0.10007, 0.20003), (0.0, 1.99996), (0.5, None), (None, 0.3),
        (0.0, 5.0), (1.9, 0.5)]  # fmt: skip


def _nemo_files(tmp_path: Any) -> tuple[np.ndarray, str]:
    import json

    sf = pytest.importorskip("soundfile")
    sig = (np.arange(32000) % 30000).astype(np.int16)
    sf.write(str(tmp_path / "a.wav"), sig, 16000, "PCM_16")
    with open(tmp_path / "m.json", "w") as f:
        for off, dur in CUTS:
            entry: dict[str, Any] = {"audio_filepath": str(tmp_path / "a.wav"), "text": "x"}
            if off is not None:
                entry["offset"] = off
            if dur is not None:
                entry["duration"] = dur
            f.write(json.dumps(entry) + "\n")
    return sig, str(tmp_path / "m.json")


def test_nemo_manifest_offset_and_duration_cut_the_audio(tmp_path: Any) -> None:
    sig, manifest = _nemo_files(tmp_path)
    r = ndd.readers.NemoAsr(manifest_filepaths=[manifest], dtype=ndd.int16)
    ((audio, _, _),) = list(r.next_epoch(batch_size=len(CUTS)))
    for (off, dur), t in zip(CUTS, audio.tensors):
        start = int(np.floor((off or 0.0) * 16000))
        stop = None if dur is None else start + int(np.floor(dur * 16000))
        np.testing.assert_array_equal(np.asarray(t), sig[start:stop])


@pytest.mark.dali
def test_nemo_cuts_match_the_reference(tmp_path: Any) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    _, manifest = _nemo_files(tmp_path)
    got = []
    for lib in (ndd, dndd):
        r = lib.readers.NemoAsr(manifest_filepaths=[manifest], dtype=lib.int16)
        ((audio, _, _),) = list(r.next_epoch(batch_size=len(CUTS)))
        got.append([np.asarray(t).tolist() for t in audio.tensors])
    assert got[0] == got[1]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_cmn_padded_window_fills_the_extra_channel(device: str) -> None:
    """pad_output with a window out of bounds: the extra channel holds the fill value over the
    image too (the reference's output); inside the image it is 0."""
    img = np.full((4, 5, 3), 200, np.uint8)
    kw = dict(fill_values=[1.0], pad_output=True, mean=[128.0], std=[64.0], output_layout="HWC")
    out = ndd.crop_mirror_normalize(ndd.batch([img], device=device), crop=(6, 7),
                                    out_of_bounds_policy="pad", **kw)  # fmt: skip
    a = out.torch().cpu().numpy()[0]
    assert a[0, 0].tolist() == [1.0] * 4 and a[2, 2].tolist() == [1.125, 1.125, 1.125, 1.0]
    inside = ndd.crop_mirror_normalize(ndd.batch([img], device=device), crop=(2, 2), **kw)
    assert inside.torch().cpu().numpy()[0][0, 0].tolist() == [1.125, 1.125, 1.125, 0.0]


def test_crop_d_cuts_the_frames_of_a_sequence() -> None:
    """FHWC has no depth axis: crop_d / crop_pos_z cut the frames, as the reference."""
    clip = np.stack([np.full((6, 8, 3), k, np.uint8) for k in range(8)])
    for depth, pos, frames in ((3, 0.0, [0, 1, 2]), (4, 0.5, [2, 3, 4, 5]), (3, 1.0, [5, 6, 7])):
        out = ndd.crop(ndd.batch([clip], layout="FHWC"), crop_d=depth, crop_h=4, crop_w=4,
                       crop_pos_z=pos)  # fmt: skip
        a = np.asarray(out.select(0))
        assert a.shape == (depth, 4, 4, 3) and a[:, 0, 0, 0].tolist() == frames
    whole = ndd.crop(ndd.batch([clip], layout="FHWC"), crop_h=4, crop_w=4)
    assert np.asarray(whole.select(0)).shape == (8, 4, 4, 3)


def test_pad_extent_zero_means_the_batch_maximum() -> None:
    x = ndd.batch([np.ones((8, 5), np.int16), np.ones((10, 7), np.int16)], layout="HW")
    got = [t.shape for t in ndd.pad(x, shape=[0, 3]).tensors]
    assert got == [(10, 5), (10, 7)]  # H: the batch's largest, as -1; W: never trimmed
    got = [t.shape for t in ndd.pad(x, shape=[0, 3], align=[4, 1]).tensors]
    assert got == [(12, 5), (12, 7)]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_cast_to_bool_rounds_floats_first(device: str) -> None:
    x = ndd.batch([np.array([0.4, -0.4, 0.49, 0.5, -0.5, 1e-30, 0.0, 3.0], np.float32)])
    got = np.asarray(ndd.cast(x, dtype=ndd.bool, device=device).cpu().tensors[0])
    assert got.tolist() == [False, False, False, True, True, False, False, True]
    ints = ndd.batch([np.array([0, 1, -2], np.int32)])
    assert np.asarray(ndd.cast(ints, dtype=ndd.bool).tensors[0]).tolist() == [False, True, True]


def test_warp_fill_value_takes_the_input_type_first() -> None:
    x = ndd.batch([np.full((4, 6, 3), 200, np.uint8)], layout="HWC")
    r = np.asarray(ndd.rotate(x, angle=45.0, fill_value=58.53, dtype=ndd.float32).tensors[0])
    assert r[0, 0].tolist() == [59.0, 59.0, 59.0]  # 58.53 as uint8 first, then float


def test_warp_of_float32_data_to_uint8_rounds_the_float32_result() -> None:
    rng = np.random.default_rng(3)
    x = ndd.batch([(rng.random((13, 14, 3)) * 255).astype(np.float32)], layout="HWC")
    as_float = np.asarray(ndd.rotate(x, angle=33.0, fill_value=0.0).tensors[0])
    as_u8 = np.asarray(ndd.rotate(x, angle=33.0, fill_value=0.0, dtype=ndd.uint8).tensors[0])
    want = np.clip(np.floor(as_float + 0.5), 0, 255)  # (non-negative: halves up = away from 0)
    assert np.abs(as_u8.astype(np.int32) - want).max() == 0
