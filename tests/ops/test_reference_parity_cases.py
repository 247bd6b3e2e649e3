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


def _both(fn: Any) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``fn(module)`` with headrace and with the reference, each batch's samples as numpy."""
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    return [[np.asarray(t) for t in fn(m).tensors] for m in (ndd, dndd)]  # type: ignore[return-value]


@pytest.mark.dali
@pytest.mark.parametrize("channels", [1, 2, 3, 5])
@pytest.mark.parametrize("policy", [None, "pad", "trim_to_shape"])
def test_cmn_pad_output_pads_to_a_power_of_two_channels(channels: int, policy: Any) -> None:
    """pad_output: up to a power of two channels (1, 2, 4, 8); they hold ``fill_values`` with
    ``out_of_bounds_policy="pad"`` (also inside the image), else 0 — as the reference. (Not
    tested: one mean/std for all channels with per-channel fills and a window out of bounds,
    where the reference writes 0 into channels 1 and up inside the image, an apparent bug.)"""
    rng = np.random.default_rng(channels)
    imgs = [rng.integers(0, 256, (5, 6, channels), dtype=np.uint8) for _ in range(2)]
    padded = 1 << (channels - 1).bit_length()
    fills = [7.0] if channels < 3 else [float(v) for v in range(10, 10 + padded)]
    kw: dict[str, Any] = dict(pad_output=True, fill_values=fills, output_layout="HWC")
    if policy is not None:
        kw["out_of_bounds_policy"] = policy
    for crop in ((3, 4), (7, 8)) if policy == "pad" else ((3, 4),):
        got, ref = _both(lambda m, c=crop: m.crop_mirror_normalize(
            m.batch(imgs, layout="HWC"), crop=c, mean=[100.0] * channels,
            std=[50.0] * channels, **kw))  # fmt: skip
        for g, r in zip(got, ref):
            assert g.shape == r.shape == (*crop, padded)
            np.testing.assert_allclose(g, r, atol=1e-5)


def _filled(m: Any, fv: float, device: str) -> dict[str, Any]:
    """Fills of a 2x3 uint8 image (int8 for crop_mirror_normalize) by ``fv``, per operator."""
    kw = {"device": device} if m is ndd else {}  # (the reference runs on its CPU here)
    x = m.batch([np.full((2, 3, 3), 100, np.uint8)], layout="HWC", **kw)
    oob = dict(fill_values=fv, out_of_bounds_policy="pad")
    return {
        "crop": m.crop(x, crop=(6, 6), **oob),
        "cmn": m.crop_mirror_normalize(x, crop=(6, 6), dtype=m.int8, output_layout="HWC", **oob),
        "slice": m.slice(x, [0, 0], [3, 3], axis_names="HW", **oob),
        "pad": m.pad(x, fill_value=fv, shape=[3, 4], axis_names="HW"),
        "erase": m.erase(x, anchor=[0, 0], shape=[1, 1], axis_names="HW", fill_value=fv),
        "erase HC": m.erase(x, anchor=[1, 0], shape=[1, 2], axis_names="HC",
                            fill_value=[fv, 2.0, 3.0]),  # (per-channel fills: their channels)
    }  # fmt: skip


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("fv", [300.0, -5.0, 171.5, 255.7, -0.7])
def test_fill_values_are_converted_by_a_plain_cast(device: str, fv: float) -> None:
    """Integer outputs take fill values truncated and wrapped (300 -> 44 as uint8), as the
    reference, in crop, crop_mirror_normalize, slice, pad and erase."""
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    ref = _filled(dndd, fv, "cpu")
    for name, out in _filled(ndd, fv, device).items():
        want = np.asarray(ref[name].tensors[0])
        np.testing.assert_array_equal(out.cpu().torch().numpy()[0], want, err_msg=name)


def test_crop_values_name_height_width_and_depth_or_frames() -> None:
    """``crop`` with two values is (H, W), with three (D, H, W); D is the frames of a sequence
    without a depth axis, and a volume keeps its depth with two values (as the reference)."""
    v = [np.arange(2 * 4 * 5, dtype=np.uint8).reshape(2, 4, 5, 1)]
    vol = ndd.crop(ndd.batch(v, layout="DHWC"), crop=(2, 3))
    assert vol.tensors[0].shape == (2, 2, 3, 1)
    seq = ndd.crop(ndd.batch(v, layout="FHWC"), crop=(1, 2, 3), crop_pos_z=1.0)
    a = np.asarray(seq.tensors[0])
    assert a.shape == (1, 2, 3, 1) and a[0, 0, 0, 0] == v[0][1, 1, 1, 0]
    cmn = ndd.crop_mirror_normalize(ndd.batch(v, layout="FHWC"), crop=(1, 2, 3),
                                    output_layout="FHWC")  # fmt: skip
    assert cmn.tensors[0].shape == (1, 2, 3, 1)


def test_coin_flip_takes_the_reference_types_only() -> None:
    for dt, want in ((ndd.bool, np.bool_), (ndd.uint8, np.uint8), (ndd.int32, np.int32)):
        assert np.asarray(ndd.random.coin_flip(batch_size=2, dtype=dt).tensors[0]).dtype == want
    for dt in (ndd.float32, ndd.int64, ndd.int8):
        with pytest.raises(RuntimeError, match="Supported types are: bool, uint8, int32"):
            ndd.random.coin_flip(batch_size=2, dtype=dt)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_one_hot_reads_one_element_samples_as_scalars(device: str) -> None:
    """Without ``axis``, a batch whose every sample holds one element is read as scalars: each
    output is (num_classes,), its layout ``axis_name`` (the reference's legacy rule). An explicit
    ``axis`` keeps the dims; ``axis`` must lie in [-1, ndim]."""

    def shapes(b: ndd.Batch) -> list[tuple[int, ...]]:
        return [tuple(t.shape) for t in b.tensors]

    x = ndd.batch([np.array([2], np.int32), np.array([0], np.int32)], device=device)
    out = ndd.one_hot(x, num_classes=4)
    assert shapes(out) == [(4,), (4,)]
    assert out.cpu().torch().tolist() == [[0, 0, 1, 0], [1, 0, 0, 0]]
    assert shapes(ndd.one_hot(x, num_classes=4, axis=-1)) == [(1, 4), (1, 4)]
    assert shapes(ndd.one_hot(x, num_classes=4, axis=0)) == [(4, 1), (4, 1)]
    x11 = ndd.batch([np.array([[2]], np.int32)], layout="AB", device=device)
    out = ndd.one_hot(x11, num_classes=3, axis_name="X")
    assert shapes(out) == [(3,)] and out.layout == "X"
    mixed = ndd.batch([np.array([2], np.int32), np.array([0, 1, 2], np.int32)], layout="A",
                      device=device)  # fmt: skip
    out = ndd.one_hot(mixed, num_classes=3, axis_name="X")
    assert shapes(out) == [(1, 3), (3, 3)] and out.layout == "AX"
    with pytest.raises(RuntimeError, match=r"one_hot: axis 2 is out of range \[-1, 1\]"):
        ndd.one_hot(x, num_classes=3, axis=2).evaluate()
    with pytest.raises(RuntimeError, match=r"one_hot: axis -2 is out of range"):
        ndd.one_hot(x, num_classes=3, axis=-2).evaluate()
    plain = ndd.batch([np.array([0, 1], np.int32)], device=device)  # no layout for axis_name
    with pytest.raises(RuntimeError, match="one_hot: axis_name needs an input layout"):
        ndd.one_hot(plain, num_classes=3, axis_name="X").evaluate()


@pytest.mark.dali
def test_one_hot_shapes_and_layouts_match_the_reference() -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    one, three = np.array([[1]], np.int32), np.array([[0, 2, 1]], np.int32)
    for samples, kw in (([one, one], {}), ([one, three], {}), ([one], {"axis": 1}),
                        ([one], {"axis_name": "X"}), ([three, one], {"axis": 0, "axis_name": "X"}),
                        ([one], {"axis": -1, "axis_name": "X"})):  # fmt: skip
        got, ref = (m.one_hot(m.batch(samples, layout="AB"), num_classes=3, **kw)
                    for m in (ndd, dndd))  # fmt: skip
        assert got.layout == ref.layout, kw
        for g, r in zip(got.tensors, ref.tensors):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(r), err_msg=str(kw))


_GRID = (np.arange(4)[:, None] * 10 + np.arange(7)[None, :]).astype(np.uint8)[..., None]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_nearest_warps_read_floor_of_the_float32_source_point(device: str) -> None:
    """Nearest neighbour reads pixel (floor(sx), floor(sy)) of the float32 source point (pixel
    corners at integers), as the reference: a point exactly on a pixel edge reads the pixel to
    its right / below (OpenCV and torch round those ties otherwise)."""
    x = ndd.batch([_GRID], layout="HWC", device=device)
    nn = ndd.types.INTERP_NN

    def warp(op: Any, **kw: Any) -> np.ndarray:
        out = op(x, interp_type=nn, fill_value=99.0, **kw)
        return np.asarray(out.tensors[0].cpu())[..., 0]

    g = _GRID[..., 0]
    want = np.full((4, 7), 99, np.uint8)
    want[:, :6] = g[:, 1:]  # source x = j + 0.5 + 0.5: pixel j + 1; j = 6 reads outside
    np.testing.assert_array_equal(warp(ndd.warp_affine, matrix=[[1, 0, 0.5], [0, 1, 0]]), want)
    want = np.full((4, 7), 99, np.uint8)
    want[:3] = g[1:]  # source (j, i + 1)
    np.testing.assert_array_equal(warp(ndd.warp_affine, matrix=[[1, 0, -0.5], [0, 1, 0.5]]), want)
    want = np.full((6, 8), 99, np.uint8)
    want[1:5, 1:] = g[::-1, ::-1]  # 180 degrees onto 6x8: source (7 - j, 4 - i) exactly
    np.testing.assert_array_equal(warp(ndd.rotate, angle=180.0, size=[6, 8]), want)
    # float32 sin(pi) = -8.7e-8 moves some tie points by one ulp: the reference's torn results
    torn = [[99, 99, 99, 99, 99, 99], [36, 35, 34, 33, 32, 31], [26, 15, 14, 13, 12, 11],
            [16, 5, 4, 3, 2, 1], [6, 99, 99, 99, 99, 99]]  # fmt: skip
    np.testing.assert_array_equal(warp(ndd.rotate, angle=180.0, size=[5, 6]), torn)
    torn = [[6, 16, 26, 36, 99], [5, 15, 25, 35, 99], [4, 14, 24, 34, 99], [3, 13, 23, 33, 99],
            [2, 12, 22, 32, 99], [99, 10, 20, 30, 99]]  # fmt: skip
    np.testing.assert_array_equal(warp(ndd.rotate, angle=90.0, size=[6, 5]), torn)


@pytest.mark.dali
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_nearest_warps_equal_the_reference(device: str) -> None:
    """Random angles, sizes and matrices, uint8 and float32, with and without fill_value."""
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    dtypes = pytest.importorskip("nvidia.dali.types")
    rng = np.random.default_rng(11)
    for i in range(40):
        h, w, c = (int(v) for v in rng.integers(1, [24, 24, 5]))
        img = rng.integers(0, 250, (h, w, c)).astype(np.uint8 if i % 2 else np.float32)
        kw: dict[str, Any] = {"size": [float(v) for v in rng.integers(1, 30, 2)]}
        if i % 3:
            kw["fill_value"] = 17.0
        if i % 4 < 2:
            op = "rotate"
            kw["angle"] = float(rng.choice([90.0, 180.0, -90.0, rng.uniform(-400, 400)]))
        else:
            op = "warp_affine"
            mat = rng.integers(-4, 5, 6) / 2 if i % 8 == 2 else rng.uniform(-2, 2, 6)
            kw["matrix"] = mat.reshape(2, 3).astype(np.float32)
        got = getattr(ndd, op)(ndd.batch([img], layout="HWC", device=device),
                               interp_type=ndd.types.INTERP_NN, **kw)  # fmt: skip
        ref = getattr(dndd, op)(dndd.batch([img], layout="HWC"),
                                interp_type=dtypes.INTERP_NN, **kw)  # fmt: skip
        np.testing.assert_array_equal(
            np.asarray(got.tensors[0].cpu()), np.asarray(ref.tensors[0]), err_msg=f"{op} {kw}"
        )


def test_reshape_layout_must_name_every_output_dimension() -> None:
    x = ndd.batch([np.arange(12, dtype=np.float32).reshape(3, 4)], layout="HW")
    with pytest.raises(RuntimeError, match="layout 'HW' has 2 letters for 1-D output samples"):
        ndd.reshape(x, shape=[12], layout="HW").evaluate()
    assert ndd.reshape(x, shape=[12], layout="X").layout == "X"


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_integer_powers_with_negative_exponents_are_zero(device: str) -> None:
    a = ndd.as_tensor(np.int32([0, 1, -1, 2, 3]), device=device)
    b = ndd.as_tensor(np.int32([-1, -1, -1, -1, 2]), device=device)
    assert (a**b).cpu().torch().tolist() == [0, 0, 0, 0, 9]  # (the reference's rule)
    big = ndd.as_tensor(np.int64([3, 7, 2]), device=device) ** ndd.as_tensor(
        np.int64([-1, 40, 70]), device=device
    )
    assert big.cpu().torch().tolist() == [0, 7**40 % 2**64 - 2**64, 0]  # (wrapped, as numpy)


def test_integer_division_by_zero_raises() -> None:
    a = ndd.as_tensor(np.int32([7, -7, 3]))
    for expr in (lambda: a // ndd.as_tensor(np.int32([0, 2, 1])), lambda: a % 0):
        with pytest.raises(ValueError, match="Integer division by zero"):
            np.asarray(expr())
    f = ndd.as_tensor(np.float32([1.0, -1.0]))
    assert np.asarray(f // 0.0).tolist() == [np.inf, -np.inf]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_to_decibels_of_silence_is_the_cutoff(device: str) -> None:
    x = ndd.batch([np.zeros((2, 3), np.float32), np.float32([[0, 0, 5]])], device=device)
    got = [t.cpu().torch().numpy() for t in ndd.to_decibels(x, cutoff_db=-40).tensors]
    np.testing.assert_allclose(got[0], np.full((2, 3), -40.0), rtol=1e-6)
    np.testing.assert_allclose(got[1], [[-40.0, -40.0, 0.0]], rtol=1e-6)


def test_speech_argument_leniencies_of_the_reference() -> None:
    """nonsilent_region takes a window that does not divide the reset interval (the reference
    does for integer input; headrace for any), and mfcc clamps n_mfcc to the bands there are."""
    sig = np.zeros(1300, np.int16)
    sig[402:897] = 10000
    x = ndd.batch([sig])
    got = [int(t.tensors[0].item()) for t in ndd.nonsilent_region(x, window_length=100)]
    never = ndd.nonsilent_region(x, window_length=100, reset_interval=-1)
    assert got == [int(t.tensors[0].item()) for t in never] and got[1] > 0
    mel = ndd.batch([np.random.default_rng(0).random((4, 3)).astype(np.float32)])
    assert ndd.mfcc(mel, n_mfcc=6).tensors[0].shape == (4, 3)


def test_python_integers_infer_int32_then_uint32() -> None:
    assert ndd.tensor([5, 2**31 - 1]).dtype == ndd.int32
    assert ndd.tensor([3_000_000_000]).dtype == ndd.uint32
    for v in ([2**32], 2**63, [2**64 - 1], [-(2**31) - 1], [-1, 3_000_000_000]):
        with pytest.raises(OverflowError, match=r"out of range for u?int32"):
            ndd.tensor(v)


def test_batch_samples_take_the_first_samples_type() -> None:
    """Python numbers by a plain conversion, arrays rounded and saturated (the reference)."""
    cases = [
        ([[1], [2.7]], [[1], [2]], ndd.int32),
        ([np.array([1]), np.array([-2.7])], [[1], [-3]], ndd.int64),
        ([np.array([1], np.uint8), np.array([300.0, -5.0])], [[1], [255, 0]], ndd.uint8),
        ([[], [1]], [[], [1.0]], ndd.float32),
    ]
    for samples, values, dtype in cases:
        b = ndd.batch(samples)
        assert b.dtype == dtype and [np.asarray(t).tolist() for t in b.tensors] == values


def test_transform_matrices_have_the_references_layout() -> None:
    one = ndd.transforms.rotation(angle=30.0)
    many = ndd.transforms.translation(offset=ndd.batch([np.float32([1, 2]), np.float32([3, 4])]))
    both = ndd.transforms.combine(many, ndd.transforms.scale(scale=[2, 2], batch_size=2))
    assert (one.layout, many.layout, both.layout) == ("**", "**", "**")
    img = ndd.batch([np.zeros((8, 8, 3), np.uint8)], layout="HWC")  # (still a warp matrix)
    m = ndd.transforms.rotation(angle=ndd.batch([np.float32(10)]), center=[4, 4])
    assert ndd.warp_affine(img, m).tensors[0].shape == (8, 8, 3)


def test_batch_of_float32_and_bfloat16_samples_converts_values_not_bits() -> None:
    torch = pytest.importorskip("torch")
    b = ndd.batch([np.float32([1.0]), ndd.tensor(torch.tensor([1.5], dtype=torch.bfloat16))])
    assert b.dtype == ndd.float32 and [np.asarray(t).tolist() for t in b.tensors] == [[1.0], [1.5]]
