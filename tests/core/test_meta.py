"""Pending results answer ``dtype``, ``ndim`` and ``layout`` without being computed, where the
operator's schema predicts them; the prediction equals the result."""

from __future__ import annotations

import numpy as np
import pytest

import headrace as ndd
from headrace._core import meta
from headrace._core.meta import Meta
from headrace.ops.geometry import FLIP


def _pending(x) -> bool:
    return x._invocation_result._invocation._results is None


def _meta_then_result(x) -> tuple[tuple, tuple]:
    assert _pending(x)
    before = (x.dtype, x.ndim, x.layout)
    assert _pending(x), "reading the metadata computed the result"
    x.evaluate()
    assert not _pending(x)
    return before, (x.dtype, x.ndim, x.layout)


_MATS = np.stack([np.float32([[1, 0, 0], [0, 1, 0]])] * 2)
CASES = [
    ("flip", lambda t: ndd.flip(t, horizontal=1)),
    ("crop to float", lambda t: ndd.crop(t, crop=(2, 2), dtype=ndd.float32)),
    ("cast", lambda t: ndd.cast(t, dtype=ndd.int16)),
    ("resize", lambda t: ndd.resize(t, resize_x=2, resize_y=2)),
    ("hsv", lambda t: ndd.hsv(t, hue=10.0, dtype=ndd.float32)),
    ("brightness_contrast", lambda t: ndd.brightness_contrast(t, brightness=1.2)),
    ("crop_mirror_normalize", lambda t: ndd.crop_mirror_normalize(t, crop=(2, 2))),
    ("cmn to HWC", lambda t: ndd.crop_mirror_normalize(t, crop=(2, 2), output_layout="HWC")),
    ("gaussian_blur", lambda t: ndd.gaussian_blur(t, sigma=1.0)),
    ("expand_dims", lambda t: ndd.expand_dims(t, axes=[0], new_axis_names="F")),
    ("stack", lambda t: ndd.stack(t, t, axis=1, axis_name="S")),
    ("per_frame warp", lambda t: ndd.warp_affine(t, ndd.per_frame(ndd.tensor(_MATS)))),
]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[c[0] for c in CASES])
def test_deferred_metadata_is_known_before_the_result(name, call):
    with ndd.EvalMode.deferred:
        image = ndd.zeros(shape=(4, 6, 3), dtype=ndd.uint8, layout="HWC")
        batch = ndd.as_batch([image, ndd.zeros(shape=(5, 3, 3), dtype=ndd.uint8, layout="HWC")])
        for x in (call(image), call(batch)):
            before, after = _meta_then_result(x)
            assert before == after


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: ndd.random.uniform(), (ndd.float32, 0, None)),
        (lambda: ndd.random.coin_flip(shape=[4]), (ndd.int32, 1, None)),
        (lambda: ndd.random.normal(batch_size=3, shape=(2, 2)), (ndd.float32, 2, None)),
        (lambda: ndd.zeros(shape=(2, 3), layout="AB"), (ndd.int32, 2, "AB")),
    ],
)
def test_generators_know_their_metadata(call, expected):
    with ndd.EvalMode.deferred:
        x = call()
        before, after = _meta_then_result(x)
    assert before == after == expected


def test_random_bbox_crop_outputs_know_their_metadata():
    with ndd.EvalMode.deferred:
        outs = ndd.random_bbox_crop(ndd.zeros(shape=(1, 4), dtype=ndd.float32))
        before = [(x.dtype, x.ndim, x.layout) for x in outs]
        assert all(_pending(x) for x in outs)
        after = [(x.evaluate().dtype, x.ndim, x.layout) for x in outs]
    assert before == after


@pytest.mark.parametrize("index", [(1,), (slice(None), 1, slice(None)), (0, 1, 2), (Ellipsis, 0)])
def test_batch_slices_know_their_metadata(index):
    with ndd.EvalMode.deferred:
        b = ndd.as_batch(
            [
                ndd.zeros(shape=(2, 3, 4), dtype=ndd.int8),
                ndd.zeros(shape=(3, 2, 5), dtype=ndd.int8),
            ],
            layout="XYZ",
        ).evaluate()
        before, after = _meta_then_result(b.slice[index])
    assert before == after


def test_without_a_rule_the_metadata_waits_for_the_result():
    with ndd.EvalMode.deferred:
        x = ndd.transpose(ndd.zeros(shape=(2, 3)), perm=[1, 0])  # (no rule)
        assert _pending(x)
        assert x.ndim == 2 and not _pending(x)


def test_a_wrong_prediction_is_caught_when_the_result_arrives(monkeypatch):
    monkeypatch.setattr(meta, "CHECK", True)
    monkeypatch.setattr(FLIP, "meta", lambda ins, vals, lazy: [Meta(ndd.int8, 1, None)])
    with ndd.EvalMode.deferred:
        x = ndd.flip(ndd.zeros(shape=(2, 2, 3), layout="HWC"), horizontal=1)
        assert x.dtype is ndd.int8  # the (wrong) prediction
        with pytest.raises(AssertionError, match="predicted metadata"):
            x.evaluate()


def test_metadata_of_concrete_values():
    t = ndd.tensor(np.zeros((2, 3), np.int16), layout="AB")
    assert meta.of(t) == Meta(ndd.int16, 2, "AB")
    assert meta.of(ndd.batch([np.zeros(3)])) == Meta(ndd.float64, 1, None)
    assert t._invocation_result._invocation._results is not None  # not pending


def test_an_input_of_unknown_metadata_means_no_prediction():
    """A random generator's shape-like input still pending without metadata is not taken for
    an absent input (which would predict a scalar)."""
    with ndd.EvalMode.deferred:
        like = ndd.transpose(ndd.zeros(shape=(2, 3)), perm=[1, 0])  # (no rule: unknown)
        x = ndd.random.uniform(like)
        assert x.ndim == 2
