"""The banded-matrix resampler: equal to the exact numpy resampler (DALI's coefficients)."""

from __future__ import annotations

import numpy as np
import pytest

from headrace._core.saturate import saturate
from headrace.backends.cpu import _band_resample as B
from headrace.backends.cpu import resize as R
from headrace.backends.shared.common import axis_weights
from headrace.ops._resize_params import AxisFilter

U8 = np.dtype(np.uint8)


def _image(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = 127 + 60 * (np.sin(xx / 9.0) * np.cos(yy / 6.0))[..., None]
    return np.clip(base + rng.normal(0, 25, (h, w, c)), 0, 255).astype(np.uint8)


def _aa(kind: str, base: float, in_len: float, out_len: int) -> AxisFilter:
    """DALI's antialiased filter: support grows with the downscale factor."""
    return AxisFilter(kind, base * max(abs(in_len) / out_len, 1.0))


def _exact(x, out, lo, hi, filters, dtype=U8):
    return saturate(R._generic(x, "HWC", out, lo, hi, filters), dtype)


CASES = [
    # eval: shorter side 256, the long axis a fractional (sub-pixel) ROI
    ((375, 500), (256, 341), (0.0, 0.25), (375.0, 499.75), "triangular", 2.0),
    ((375, 500), (224, 224), (0.0, 0.0), (375.0, 500.0), "triangular", 2.0),
    ((120, 90), (300, 200), (0.0, 0.0), (120.0, 90.0), "triangular", 2.0),  # upscale
    ((217, 283), (100, 133), (0.0, 0.0), (217.0, 283.0), "cubic", 4.0),
    ((217, 283), (100, 133), (0.0, 0.0), (217.0, 283.0), "lanczos3", 6.0),
    ((217, 283), (100, 133), (0.0, 0.0), (217.0, 283.0), "gaussian", 3.0),
    ((217, 283), (90, 70), (150.7, 10.5), (10.25, 200.3), "triangular", 2.0),  # mirrored y
    ((60, 80), (40, 50), (-7.5, -3.0), (70.0, 95.5), "triangular", 2.0),  # ROI past the edges
    ((50, 40), (1, 1), (0.0, 0.0), (50.0, 40.0), "triangular", 2.0),
    ((9, 700), (5, 601), (0.0, 0.0), (9.0, 700.0), "cubic", 4.0),  # a block wider than the rows
]


@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize(("shape", "out", "lo", "hi", "kind", "base"), CASES)
def test_band_equals_the_exact_resampler(shape, out, lo, hi, kind, base, channels):
    x = _image(*shape, channels, seed=sum(shape))
    f = tuple(_aa(kind, base, hi[d] - lo[d], out[d]) for d in range(2))
    got = B.band_resize(x, out, lo, hi, f, U8)
    ref = _exact(x, out, lo, hi, f)
    assert got.shape == ref.shape == (*out, channels) and got.dtype == U8
    diff = np.abs(got.astype(int) - ref)
    assert diff.max() <= 1 and diff.mean() < 1e-3  # float summation order only


def test_float_output_and_float_input():
    x = _image(75, 100)
    f = (_aa("triangular", 2.0, 75, 30), _aa("triangular", 2.0, 100, 40))
    args = ((30, 40), (0.0, 0.0), (75.0, 100.0), f)
    ref = R._generic(x, "HWC", *args)
    got = B.band_resize(x, *args, np.dtype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref, atol=1e-3)
    got_f = B.band_resize(x.astype(np.float32), *args, np.dtype(np.float32))
    np.testing.assert_allclose(got_f, ref, atol=1e-3)
    # (kind, support) pairs are accepted as filters too
    pairs = tuple((a.kind, a.support) for a in f)
    assert np.array_equal(B.band_resize(x, *args[:3], pairs, U8), B.band_resize(x, *args, U8))


def test_wide_images_are_cut_into_column_chunks_with_the_same_result(monkeypatch):
    x = _image(64, 90)
    f = (_aa("triangular", 2.0, 64, 20), _aa("triangular", 2.0, 90, 33))
    args = ((20, 33), (0.0, 0.0), (64.0, 90.0), f, U8)
    whole = B.band_resize(x, *args)
    monkeypatch.setattr(B, "_SGEMM_SINGLE", 64)  # forces a chunk of a few columns
    assert np.array_equal(B.band_resize(x, *args), whole)


def test_axis_band_is_the_clamped_coefficient_matrix():
    flt = AxisFilter("triangular", 2.0 * 50 / 21)
    band = B.axis_band(50, 21, -2.5, 52.0, flt.kind, flt.support)
    nb, rows_per_block, width = band.weights.shape
    assert rows_per_block == B.BLOCK and nb * B.BLOCK >= 21 and band.rows.shape == (nb, width)
    assert band.rows.min() >= 0 and band.rows.max() < 50
    dense = np.zeros((nb * B.BLOCK, 50))
    for i in range(nb):
        dense[i * B.BLOCK : (i + 1) * B.BLOCK, band.rows[i]] += band.weights[i]
    idx, coeffs = axis_weights(50, 21, -2.5, 52.0, flt)
    ref = np.zeros((21, 50))
    for j in range(21):
        for k in range(coeffs.shape[1]):
            ref[j, min(max(idx[j] + k, 0), 49)] += coeffs[j, k]
    np.testing.assert_allclose(dense[:21], ref, atol=1e-6)
    assert not dense[21:].any()  # the padding rows of the last block weigh nothing
    assert not band.weights.flags.writeable  # shared through the cache


def test_resize_takes_the_band_path_for_uint8_sequences():
    frames = np.stack([_image(40, 60, seed=s) for s in range(3)])
    f = (_aa("cubic", 4.0, 40, 16), _aa("cubic", 4.0, 60, 25))
    kw = {"out_size": (16, 25), "roi_lo": (0.0, 0.0), "roi_hi": (40.0, 60.0), "filters": f}
    seq = R.resize(frames, "FHWC", **kw)
    assert seq.shape == (3, 16, 25, 3)
    for i in range(3):
        assert np.array_equal(seq[i], R.resize(frames[i], "HWC", **kw))
        assert (
            np.abs(seq[i].astype(int) - _exact(frames[i], (16, 25), (0, 0), (40, 60), f)).max() <= 1
        )


def test_band_ok_refuses_what_it_does_not_handle():
    lin = AxisFilter("triangular", 3.0)
    nn = AxisFilter("nn", 1.0)
    assert B.band_ok(np.zeros((4, 4, 3), np.uint8), (lin, lin))
    assert not B.band_ok(np.zeros((4, 4, 3), np.float32), (lin, lin))  # float: exact numpy path
    assert not B.band_ok(np.zeros((4, 4, 5), np.uint8), (lin, lin))
    assert not B.band_ok(np.zeros((4, 4), np.uint8), (lin, lin))
    assert not B.band_ok(np.zeros((4, 4, 3), np.uint8), (nn, lin))


@pytest.mark.parametrize("channels", [1, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int16, np.int64])
@pytest.mark.parametrize(
    ("out", "lo", "hi"),
    [((20, 30), (0, 0), (37, 53)), ((80, 100), (0, 0), (37, 53)),
     ((15, 17), (5.5, 40.2), (30.25, 3.0)), ((10, 10), (-4.0, -6.0), (45.0, 60.0))],
)  # fmt: skip
def test_nearest_neighbour_remap_equals_the_generic_gather(channels, dtype, out, lo, hi):
    nn = AxisFilter("nn", 1.0)
    x = (np.random.default_rng(channels).random((37, 53, channels)) * 200).astype(dtype)
    want = R._generic(x, "HWC", out, lo, hi, (nn, nn))
    got = R.resize(x, "HWC", out_size=out, roi_lo=lo, roi_hi=hi, filters=(nn, nn))
    assert got.dtype == x.dtype and np.array_equal(got, want)


@pytest.mark.parametrize(("shape", "out", "lo", "hi", "kind", "base"), CASES)
def test_uint8_output_is_the_saturated_float_output(shape, out, lo, hi, kind, base):
    """Convex bands round without clamping: the same bytes as saturating the float result."""
    x = _image(*shape, 3, seed=sum(shape) + 1)
    x[::7] = 255  # saturated rows and columns: outputs at the top of the range
    x[:, ::5] = 0
    f = tuple(_aa(kind, base, hi[d] - lo[d], out[d]) for d in range(2))
    as_float = B.band_resize(x, out, lo, hi, f, np.dtype(np.float32))
    assert np.array_equal(B.band_resize(x, out, lo, hi, f, U8), saturate(as_float, U8))


def test_convex_bands():
    assert B.axis_band(300, 120, 0.0, 300.0, "triangular", 2.5).convex  # antialiased
    assert B.axis_band(100, 250, 0.0, 100.0, "triangular", 1.0).convex  # upscaled
    assert B.axis_band(300, 120, 0.0, 300.0, "gaussian", 2.5).convex
    assert not B.axis_band(300, 120, 0.0, 300.0, "cubic", 10.0).convex  # negative lobes


def test_strided_sources_give_the_contiguous_result():
    """Crop windows and flipped views (what the crop decoders and flips hand over) are read
    in place, with the result of their contiguous copies."""
    x = _image(90, 120, 3, seed=3)
    f = (_aa("triangular", 2.0, 60, 25), _aa("triangular", 2.0, 70, 31))
    args = ((25, 31), (0.0, 0.0), (60.0, 70.0), f, U8)
    for view in (x[10:70, 20:90], x[10:70, 20:90][::-1], x[10:70, 20:90][:, ::-1]):
        assert not view.flags.c_contiguous
        got = B.band_resize(view, *args)
        assert np.array_equal(got, B.band_resize(np.ascontiguousarray(view), *args))


@pytest.mark.parametrize("kind", ["triangular", "gaussian"])
def test_convex_kinds_have_non_negative_rows_summing_to_one(kind):
    rng = np.random.default_rng(4)
    for _ in range(200):
        in_len, out_len = int(rng.integers(2, 600)), int(rng.integers(1, 400))
        lo = float(rng.uniform(-10, in_len / 2))
        hi = float(rng.uniform(lo + 1, in_len + 10)) if rng.random() < 0.8 else lo - 5.0
        band = B.axis_band(in_len, out_len, lo, hi, kind, float(rng.uniform(1, 8)))
        w = band.weights.reshape(-1, band.weights.shape[-1])[:out_len]
        sums = w.astype(np.float64).sum(1)
        assert band.convex and w.min() >= 0 and np.all((np.abs(sums - 1) < 1e-5) | (sums == 0))


def _same_window(part: np.ndarray, want: np.ndarray) -> None:
    """A window equals the crop of the whole resize within float32 rounding: BLAS may sum a
    column's products in another order in a call of another shape (OpenBLAS's AMD EPYC kernels
    do), so float32 values agree to ~1e-5 of 255 and uint8 ones by 1 level at rare values."""
    assert part.shape == want.shape and part.dtype == want.dtype
    diff = np.abs(part.astype(np.float64) - want)
    if part.dtype == U8:
        assert diff.max(initial=0) <= 1 and np.count_nonzero(diff) <= max(1, diff.size // 200)
    else:
        np.testing.assert_allclose(part, want, rtol=0, atol=1e-3)


@pytest.mark.parametrize("kind", ["triangular", "cubic", "lanczos3", "gaussian"])
@pytest.mark.parametrize("dtype", [U8, np.dtype(np.float32)])
def test_a_window_of_the_output_equals_the_crop_of_the_whole(kind: str, dtype) -> None:
    """``window``: only some output rows and columns, each with its own coefficients, so the
    values are those of the whole resize at any offset (block boundaries too), up to BLAS's
    summation order (see :func:`_same_window`)."""
    rng = np.random.default_rng(len(kind))
    x = _image(77, 103, seed=5)
    out = (41, 58)
    filters = (_aa(kind, 2.0, 77, out[0]), _aa(kind, 2.0, 103, out[1]))
    full = B.band_resize(x, out, (0.0, 0.0), (77.0, 103.0), filters, dtype)
    windows = [(0, 0, 41, 58), (40, 57, 1, 1), (8, 16, 8, 8), (7, 9, 17, 33)]
    for _ in range(10):
        y, x0 = int(rng.integers(0, out[0])), int(rng.integers(0, out[1]))
        windows.append((y, x0, int(rng.integers(1, out[0] - y + 1)),
                        int(rng.integers(1, out[1] - x0 + 1))))  # fmt: skip
    for y, x0, h, w in windows:
        part = B.band_resize(x, out, (0.0, 0.0), (77.0, 103.0), filters, dtype, (y, x0, h, w))
        _same_window(part, full[y : y + h, x0 : x0 + w])
    # the kernel entry point: the same through the band path and through its fallbacks
    nn = (AxisFilter("nn", 1.0),) * 2
    for f in (filters, nn):
        whole = R.resize(x, "HWC", out_size=out, roi_lo=(0, 0), roi_hi=(77, 103), filters=f)
        part = R.resize(x, "HWC", out_size=out, roi_lo=(0, 0), roi_hi=(77, 103), filters=f,
                        window=(3, 5, 20, 30))  # fmt: skip
        _same_window(part, whole[3:23, 5:35])
        assert part.flags.c_contiguous


@pytest.mark.parametrize("kind", ["triangular", "lanczos3"])
def test_a_window_reads_only_the_source_columns_it_needs(kind: str) -> None:
    """The first pass of a window resamples only the source columns the kept output columns
    read (left, right, mirrored regions, regions reaching past the image): the crop of the
    whole, up to BLAS's summation order (see :func:`_same_window`)."""
    rng = np.random.default_rng(9)
    x = _image(90, 160, seed=2)
    out = (50, 70)
    for lo_x, hi_x in ((0.0, 160.0), (160.0, 0.0), (-6.5, 150.0), (20.0, 170.0)):
        filters = (_aa(kind, 2.0, 90, out[0]), _aa(kind, 2.0, hi_x - lo_x, out[1]))
        for dtype in (U8, np.dtype(np.float32)):
            full = B.band_resize(x, out, (0.0, lo_x), (90.0, hi_x), filters, dtype)
            for _ in range(6):
                y, x0 = int(rng.integers(0, out[0])), int(rng.integers(0, out[1]))
                h, w = int(rng.integers(1, out[0] - y + 1)), int(rng.integers(1, out[1] - x0 + 1))
                part = B.band_resize(x, out, (0.0, lo_x), (90.0, hi_x), filters, dtype,
                                     (y, x0, h, w))  # fmt: skip
                _same_window(part, full[y : y + h, x0 : x0 + w])


def test_explicit_sizes_take_the_short_road_to_the_same_window() -> None:
    """``resize_window`` with whole-number sizes and no ROI answers without DALI's float32
    steps; the answer equals theirs (the same window given as an explicit whole-input ROI takes
    them)."""
    from headrace.ops._resize_params import resize_window

    rng = np.random.default_rng(8)
    for _ in range(3000):
        in_size = tuple(int(v) for v in rng.integers(1, 5000, 2))
        req = tuple(float(v) for v in rng.integers(1, 2000, 2))
        mode = ("default", "stretch")[int(rng.integers(0, 2))]
        fast = resize_window(in_size, req, mode=mode)
        slow = resize_window(in_size, req, mode=mode, roi_start=(0, 0), roi_end=in_size)
        assert fast == slow, (in_size, req, mode)
