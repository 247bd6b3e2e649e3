"""Per-frame arguments (``ndd.per_frame``): an operator on sequences with one argument value
per frame equals the operator run frame by frame, and matches the reference."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import headrace as ndd
from headrace._core.errors import InvalidArgumentError

RNG = np.random.default_rng(7)
SEQS = [RNG.integers(0, 256, (f, 12, 16, 3), dtype=np.uint8) for f in (3, 2)]


def _frame_by_frame(op, seqs, per_frame: dict, **kw) -> list[np.ndarray]:
    """The operator on each frame alone, with that frame's values."""
    out = []
    for i, s in enumerate(seqs):
        frames = []
        for f in range(len(s)):
            vals = {k: v[i][f if len(v[i]) > 1 else 0] for k, v in per_frame.items()}
            frames.append(np.asarray(op(ndd.tensor(s[f], layout="HWC"), **vals, **kw)))
        out.append(np.stack(frames))
    return out


def _sequences(seqs) -> ndd.Batch:
    return ndd.batch(seqs, layout="FHWC")


@pytest.mark.parametrize("mode", [ndd.EvalMode.eager, ndd.EvalMode.deferred, ndd.EvalMode.sync_cpu])
def test_brightness_per_frame_batch_argument(mode) -> None:
    shift = [np.float32([0.0, 0.2, 0.4]), np.float32([0.1])]  # the second: one for all frames
    with mode:
        out = ndd.brightness(_sequences(SEQS), brightness_shift=ndd.per_frame(ndd.batch(shift)))
        got = [np.asarray(t) for t in out.tensors]
    want = _frame_by_frame(ndd.brightness, SEQS, {"brightness_shift": shift})
    assert out.layout == "FHWC"
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and np.array_equal(g, w)


def test_warp_affine_per_frame_matrices_from_one_tensor() -> None:
    mats = np.stack([np.float32([[1, 0, dx], [0, 1, 0]]) for dx in (0.0, 2.0, 5.0)])
    seq = SEQS[0]
    out = ndd.warp_affine(ndd.tensor(seq, layout="FHWC"), matrix=ndd.per_frame(mats))
    want = _frame_by_frame(ndd.warp_affine, [seq], {"matrix": [mats]})[0]
    assert np.array_equal(np.asarray(out), want)
    assert not np.array_equal(want[0], want[2])  # the frames really differ


def test_per_frame_arguments_in_a_chain_of_calls() -> None:
    """A planned call after another (a chain forms in eager mode) still takes its frames."""
    shift = ndd.per_frame(ndd.batch([np.float32([0.0, 0.5, 1.0]), np.float32([0.3, 0.6])]))
    with ndd.EvalMode.eager:
        x = ndd.flip(_sequences(SEQS), horizontal=1)
        got = [np.asarray(t) for t in ndd.brightness(x, brightness_shift=shift).tensors]
    with ndd.EvalMode.sync_cpu:
        x = ndd.flip(_sequences(SEQS), horizontal=1)
        want = [np.asarray(t) for t in ndd.brightness(x, brightness_shift=shift).tensors]
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(g, w)


def test_per_frame_errors_name_the_argument_and_sample() -> None:
    with pytest.raises(InvalidArgumentError, match=r"brightness_shift.*sample 1 has 3 frames"):
        ndd.brightness(
            _sequences(SEQS),
            brightness_shift=ndd.per_frame(ndd.batch([np.float32([0, 0, 0])] * 2)),
        ).evaluate()
    with pytest.raises(InvalidArgumentError, match="not a sequence"):
        ndd.brightness(
            ndd.tensor(SEQS[0][0], layout="HWC"), brightness_shift=ndd.per_frame(np.float32([0.1]))
        ).evaluate()


def _reference_warp(seq: np.ndarray, mats: np.ndarray) -> np.ndarray:
    from tests._helpers.dali_oracle import dali_ndd

    d = dali_ndd()
    x = d.as_tensor(seq, layout="FHWC")
    return np.asarray(d.warp_affine(x, matrix=d.per_frame(d.as_tensor(mats))))


@pytest.mark.dali
def test_warp_affine_per_frame_matches_reference() -> None:
    mats = np.stack([np.float32([[1, 0.1 * k, 1.5 * k], [0, 1, -k]]) for k in range(3)])
    if "av" in sys.modules:
        from tests._helpers import dali_isolated as iso

        want = iso.call("tests.ops.test_per_frame:_reference_warp", SEQS[0], mats)
    else:
        pytest.importorskip("nvidia.dali.experimental.dynamic")
        want = _reference_warp(SEQS[0], mats)
    got = np.asarray(ndd.warp_affine(ndd.tensor(SEQS[0], layout="FHWC"),
                                     matrix=ndd.per_frame(mats)))  # fmt: skip
    assert got.shape == want.shape
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1


def _reference_warp_by_input(data: np.ndarray, layout: str, mats: np.ndarray) -> np.ndarray:
    from tests._helpers.dali_oracle import dali_ndd

    d = dali_ndd()
    x = d.as_tensor(data, layout=layout)
    return np.asarray(d.warp_affine(x, d.per_frame(d.as_tensor(mats))).evaluate())


@pytest.mark.dali
@pytest.mark.parametrize("layout", ["FHWC", "HWC"])
def test_a_per_frame_matrix_input_matches_reference(layout: str) -> None:
    """``mtx`` given as the second input, marked per frame: one matrix per frame of a sequence;
    an image that is not a sequence is warped once per matrix (a sequence comes out)."""
    mats = np.stack([np.float32([[1, 0.1 * k, 1.5 * k], [0, 1, -k]]) for k in range(3)])
    data = SEQS[0] if layout == "FHWC" else SEQS[0][1]
    if "av" in sys.modules:
        from tests._helpers import dali_isolated as iso

        want = iso.call("tests.ops.test_per_frame:_reference_warp_by_input", data, layout, mats)
    else:
        pytest.importorskip("nvidia.dali.experimental.dynamic")
        want = _reference_warp_by_input(data, layout, mats)
    out = ndd.warp_affine(ndd.tensor(data, layout=layout), ndd.per_frame(ndd.tensor(mats)))
    got = np.asarray(out)
    assert out.layout == "FHWC" and got.shape == want.shape == (3, *SEQS[0].shape[1:])
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    if layout == "FHWC":  # the same as the per-frame argument
        by_arg = ndd.warp_affine(ndd.tensor(data, layout=layout), matrix=ndd.per_frame(mats))
        np.testing.assert_array_equal(got, np.asarray(by_arg))


def test_a_per_frame_matrix_input_with_one_frame_serves_every_frame() -> None:
    seq = ndd.tensor(SEQS[0], layout="FHWC")
    m = np.float32([[1, 0, 2], [0, 1, 0]])
    out = ndd.warp_affine(seq, ndd.per_frame(ndd.tensor(m[None])))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ndd.warp_affine(seq, matrix=m)))
    with pytest.raises(Exception, match="per-frame input 'mtx' of sample 0 has 2 frames"):
        ndd.warp_affine(seq, ndd.per_frame(ndd.tensor(np.stack([m, m])))).evaluate()


def _reference_rotate(seq: np.ndarray, angles: np.ndarray) -> np.ndarray:
    from tests._helpers.dali_oracle import dali_ndd

    d = dali_ndd()
    x = d.as_tensor(seq, layout="FHWC")
    return np.asarray(d.rotate(x, angle=d.per_frame(d.as_tensor(angles))).evaluate())


@pytest.mark.dali
@pytest.mark.parametrize("angles", [[10, 45, 0], [0, 0, 90], [30, 30, 30]])
def test_rotate_per_frame_without_size_uses_one_canvas_per_sequence(angles) -> None:
    """Each frame's rotation fits a different box; a sequence gets the box that holds them all
    (the element-wise largest), as the reference gives."""
    angles = np.float32(angles)
    if "av" in sys.modules:
        from tests._helpers import dali_isolated as iso

        want = iso.call("tests.ops.test_per_frame:_reference_rotate", SEQS[0], angles)
    else:
        pytest.importorskip("nvidia.dali.experimental.dynamic")
        want = _reference_rotate(SEQS[0], angles)
    seq = ndd.tensor(SEQS[0], layout="FHWC")
    got = np.asarray(ndd.rotate(seq, angle=ndd.per_frame(angles)))
    assert got.shape == want.shape
    assert np.abs(got.astype(int) - want.astype(int)).max() <= 1


def test_rotate_per_frame_on_the_gpu_equals_the_cpu() -> None:
    seq = ndd.tensor(SEQS[0], layout="FHWC")
    angle = ndd.per_frame(ndd.tensor(np.float32([0, 30, 90])))
    cpu = ndd.rotate(seq, angle=angle, size=[12, 16])
    gpu = ndd.rotate(seq.gpu(), angle=angle, size=[12, 16])
    assert gpu.device.device_type == "gpu" and gpu.layout == "FHWC"
    assert np.abs(np.asarray(gpu.cpu()).astype(int) - np.asarray(cpu).astype(int)).max() <= 1


def test_an_error_in_a_frame_names_its_sequence_and_frame() -> None:
    """A bad per-frame value is reported by the sequence and frame it belongs to."""
    with pytest.raises(Exception, match=r"sample 3 \('sequence 1 frame 0'\)"):
        ndd.warp_affine(
            _sequences(SEQS),
            matrix=ndd.per_frame(
                ndd.batch([np.zeros((3, 2, 3), np.float32), np.zeros((2, 2, 4), np.float32)])
            ),
        ).evaluate()


def test_an_empty_sequence_keeps_its_frame_shape() -> None:
    seqs = ndd.batch([SEQS[1], SEQS[1][:0]], layout="FHWC")
    shift = ndd.per_frame(ndd.batch([np.float32([0.0, 0.5]), np.float32([0.0])]))
    out = ndd.brightness(seqs, brightness_shift=shift)
    assert [tuple(t.shape) for t in out.tensors] == [SEQS[1].shape, (0, *SEQS[1].shape[1:])]
