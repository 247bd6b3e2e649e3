"""The plan cache: plans are remembered across calls by input shape and argument values, and
a sample's own (per-sample) values are part of its key."""

from __future__ import annotations

import numpy as np

import headrace as ndd
from headrace._dispatch import planned


def test_plans_are_reused_only_for_equal_arguments() -> None:
    planned._PLAN_CACHE.clear()
    imgs = [np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)] * 3
    b = ndd.batch(imgs, layout="HWC")
    first = ndd.crop(b, crop=(2, 2), crop_pos_x=0.0).evaluate()
    cached = len(planned._PLAN_CACHE)
    again = ndd.crop(b, crop=(2, 2), crop_pos_x=0.0).evaluate()
    assert len(planned._PLAN_CACHE) == cached  # the same plan, found again
    other = ndd.crop(b, crop=(2, 2), crop_pos_x=1.0).evaluate()
    assert len(planned._PLAN_CACHE) > cached  # another argument value: another plan
    a, b2, c = (np.asarray(x.select(0)) for x in (first, again, other))
    assert np.array_equal(a, b2) and np.array_equal(a, imgs[0][1:3, 0:2])
    assert np.array_equal(c, imgs[0][1:3, 4:6])


def test_per_sample_values_key_each_sample_s_plan() -> None:
    """Samples of one shape with different per-sample arguments (scalars and arrays) get their
    own plans, and equal ones share them."""
    planned._PLAN_CACHE.clear()
    img = np.arange(6 * 8 * 3, dtype=np.uint8).reshape(6, 8, 3)
    b = ndd.batch([img] * 4, layout="HWC")
    xs = ndd.batch([np.float32(v) for v in (0.0, 1.0, 0.0, 0.5)])
    windows = ndd.batch([np.int32([2, 3]), np.int32([4, 4]), np.int32([2, 3]),
                         np.int32([2, 3])])  # fmt: skip
    out = ndd.crop(b, crop_pos_x=xs, crop=(2, 2))
    got = [np.asarray(t) for t in out.evaluate().tensors]
    starts = [0, 6, 0, 3]
    for g, x0 in zip(got, starts):
        assert np.array_equal(g, img[2:4, x0 : x0 + 2])
    sliced = ndd.slice(b, windows, np.int32([2, 2]), axes=[0, 1])
    got = [np.asarray(t) for t in sliced.evaluate().tensors]
    for g, (y0, x0) in zip(got, [(2, 3), (4, 4), (2, 3), (2, 3)]):
        assert np.array_equal(g, img[y0 : y0 + 2, x0 : x0 + 2])
