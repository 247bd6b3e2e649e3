"""ndd.reductions: closed forms, the reference's integer rules, and DALI differentials.

Measured against DALI 2.4 (CPU): integer results are exact; float32 results differ by at most
a few float32 ulps (the reference sums float32 in a tree, headrace in float64, rounded once).
"""

from __future__ import annotations

import numpy as np
import pytest
from tests._helpers.contract import host
from tests._helpers.dali_oracle import dali_ndd, max_diff

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError

R = ndd.reductions
RNG = np.random.default_rng(5)
INT_TYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"]
KINDS = ["sum", "min", "max", "mean", "mean_square", "rms"]
X = np.array([[1, 2, 250], [3, 4, 255]], np.uint8)


def _data(dt: str, shape: tuple[int, ...]) -> np.ndarray:
    """Data of a test case: a function of the type and shape alone, so it does not depend on
    which tests ran before in the same worker process."""
    rng = np.random.default_rng([sum(map(ord, dt)), *shape])
    if dt == "float32":
        return (rng.standard_normal(shape) * 50).astype(np.float32)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dt)


def _both(fn, *ins, **kw):
    """The CPU and fake-GPU results (they must agree: exactly for integers)."""
    cpu = host(fn(*ins, **kw))
    gpu = host(fn(*[i.gpu() for i in ins], **kw))
    return cpu, gpu


def test_default_types_and_layouts():
    x = ndd.tensor(X, layout="HW")
    assert R.sum(x).dtype == ndd.uint64
    assert R.sum(ndd.tensor(X.astype(np.int16))).dtype == ndd.int64
    assert R.min(x).dtype == ndd.uint8 and R.max(x).dtype == ndd.uint8
    for fn in (R.mean, R.mean_square, R.rms):
        assert fn(x).dtype == ndd.float32
    assert R.std_dev(x, 1.0).dtype == ndd.float32
    assert R.sum(x, axes=0).layout == "W" and R.sum(x, axes=0, keep_dims=True).layout == "HW"
    assert R.sum(x).layout is None and R.sum(x).shape == ()
    assert R.sum(x, axes=[]).shape == (2, 3)


def test_integer_rules_match_the_reference_exactly():
    x = ndd.tensor(X)
    # same-type sums wrap; integer means truncate toward zero after a float32 scale
    assert np.asarray(R.sum(x, dtype=ndd.uint8)).item() == 515 % 256
    assert np.asarray(R.mean(x, axes=0, dtype=ndd.uint8)).tolist() == [2, 3, 124]
    assert np.asarray(R.mean(ndd.tensor(np.full(41, 1, np.int32)), dtype=ndd.int32)).item() == 0
    assert np.asarray(R.mean(ndd.tensor(np.array([-1, -2], np.int32)), dtype=ndd.int32)) == -1
    assert np.asarray(R.rms(ndd.tensor(np.array([20, 20], np.uint8)), dtype=ndd.uint8)) == 4
    assert np.asarray(R.rms(ndd.tensor(np.array([10, 10, 3], np.int8)), dtype=ndd.int8)) == 0
    big = ndd.tensor(np.array([2**40 + 1, 2**40 + 3], np.int64))
    assert np.asarray(R.mean(big, dtype=ndd.int64)).item() == 2**40


def test_empty_reductions_give_the_reference_start_values():
    e = ndd.tensor(np.zeros((0, 3), np.float32))
    assert np.asarray(R.min(e, axes=0)).tolist() == [np.finfo(np.float32).max] * 3
    assert np.asarray(R.max(e, axes=0)).tolist() == [np.finfo(np.float32).min] * 3
    assert np.asarray(R.sum(e, axes=0)).tolist() == [0.0] * 3
    assert np.isnan(np.asarray(R.mean(e, axes=0))).all()
    eu = ndd.tensor(np.zeros((0, 2), np.uint8)).gpu()
    assert host(R.min(eu, axes=0)).tolist() == [255, 255]


def test_std_dev_and_variance_take_the_mean_in_either_shape():
    x = RNG.random((2, 3, 4), dtype=np.float32)
    t = ndd.tensor(x, layout="HWC")
    m = x.mean(axis=1)
    for mean in (m, m[:, None, :], ndd.tensor(m)):
        v = np.asarray(R.variance(t, mean, axes=1))
        np.testing.assert_allclose(v, x.var(axis=1), rtol=1e-5, atol=1e-7)
    s = np.asarray(R.std_dev(t, m, axis_names="W", ddof=1, keep_dims=True))
    np.testing.assert_allclose(s, x.std(axis=1, ddof=1, keepdims=True), rtol=1e-5)
    assert np.isinf(np.asarray(R.variance(t, m, axes=1, ddof=3))).all()  # N - ddof = 0
    b = ndd.batch([x[0], x[1] + 1])
    per = R.variance(b, ndd.batch([x[0].mean(0), x[1].mean(0) + 1]), axes=0)
    np.testing.assert_allclose(host(per)[1], x[1].var(axis=0), rtol=1e-5, atol=1e-7)
    scalar = np.asarray(R.variance(ndd.tensor(x), 0.5, axes=[0, 1]))
    np.testing.assert_allclose(scalar, ((x - 0.5) ** 2).mean(axis=(0, 1)), rtol=1e-5)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda x: R.sum(x, axes=0, axis_names="H"), InvalidArgumentError),
        (lambda x: R.sum(x, axes=2), InvalidArgumentError),
        (lambda x: R.sum(x, axes=[1, -1]), InvalidArgumentError),
        (lambda x: R.sum(x, axis_names="C"), InvalidArgumentError),
        (lambda x: R.mean(x, dtype=ndd.int32), InvalidTypeError),
        (lambda x: R.mean_square(x, dtype=ndd.uint8), InvalidTypeError),
        (lambda x: R.min(ndd.tensor(np.zeros(3))), InvalidTypeError),
        (lambda x: R.variance(x, np.zeros(2, np.float32), axes=0), ShapeError),
    ],
)
def test_bad_calls(call, error):
    with pytest.raises(error, match="reductions"):
        np.asarray(call(ndd.tensor(X, layout="HW")))


def test_axis_names_need_a_layout():
    with pytest.raises(InvalidArgumentError, match="layout"):
        np.asarray(R.sum(ndd.tensor(X), axis_names="H"))


@pytest.mark.parametrize("dt", INT_TYPES + ["float32"])
def test_cpu_equals_gpu(dt):
    b = ndd.batch([_data(dt, (3, 4, 5)), _data(dt, (2, 4, 1))], layout="HWC")
    for kind in KINDS:
        fn = getattr(R, kind)
        for kw in ({}, {"axes": [0, 2]}, {"axis_names": "W", "keep_dims": True}):
            cpu, gpu = _both(fn, b, **kw)
            for c, g in zip(cpu, gpu):
                assert c.dtype == g.dtype and c.shape == g.shape
                if c.dtype.kind == "f":
                    np.testing.assert_allclose(c, g, rtol=1e-6)
                else:
                    np.testing.assert_array_equal(c, g)
    wide = {"sum": "uint64" if dt[0] == "u" else "int64", "mean": dt, "rms": dt}
    if dt != "float32":
        for kind, out in wide.items():
            cpu, gpu = _both(getattr(R, kind), b, axes=1, dtype=ndd.dtype(out))
            assert all(np.array_equal(c, g) for c, g in zip(cpu, gpu)), (kind, out)
    m = R.mean(b, axes=1)
    cpu, gpu = _both(R.std_dev, b, m, axes=1, ddof=1)
    assert max_diff(cpu, gpu) <= 1e-4


# ---------------------------------------------------------------------------- reference


def _dali(op, samples, *extra, layout=None, **kw):
    d = dali_ndd()
    fn = getattr(d.reductions, op)
    b = d.batch(list(samples), layout=layout)
    if "dtype" in kw:
        kw["dtype"] = getattr(d, kw["dtype"])
    outs = fn(b, *[d.batch(list(e)) for e in extra], **kw)
    return [np.asarray(t) for t in outs.tensors]


def _ours(op, samples, *extra, layout=None, **kw):
    if "dtype" in kw:
        kw["dtype"] = ndd.dtype(kw["dtype"])
    b = ndd.batch(list(samples), layout=layout)
    return host(getattr(R, op)(b, *[ndd.batch(list(e)) for e in extra], **kw))


def _compare(op, samples, *extra, **kw):
    ref = _dali(op, samples, *extra, **dict(kw))
    out = _ours(op, samples, *extra, **dict(kw))
    for r, o in zip(ref, out, strict=True):
        assert r.dtype == o.dtype and r.shape == o.shape, (op, kw, r.dtype, o.dtype)
        if r.dtype.kind == "f":
            ulp = np.spacing(np.abs(r).astype(np.float32)).max() if r.size else 0
            assert max_diff(r, o) <= 4 * ulp, (op, kw, max_diff(r, o))
        else:
            assert np.array_equal(r, o), (op, kw)


@pytest.mark.dali
@pytest.mark.parametrize("dt", INT_TYPES + ["float32"])
def test_against_dali(dt):
    samples = [_data(dt, (4, 6, 3)), _data(dt, (5, 2, 3))]
    for kind in KINDS:
        for kw in ({}, {"axes": 1}, {"axis_names": "HC", "keep_dims": True}, {"axes": []}):
            _compare(kind, samples, layout="HWC", **kw)
    if dt != "float32":
        sums = [dt] if dt.endswith("64") else [dt, "float32"]
        outs = {"sum": sums, "mean": [dt], "rms": [dt], "mean_square": ["float32"]}
        for kind, types in outs.items():
            for out in types:
                _compare(kind, samples, axes=[0, 1], dtype=out)
    means = [m.astype(np.float32) for m in _ours("mean", samples, axes=0)]
    for kind in ("std_dev", "variance"):
        _compare(kind, samples, [m for m in means], axes=0)
        _compare(kind, samples, [m for m in means], axes=0, ddof=1, keep_dims=True)


@pytest.mark.dali
def test_large_float_sums_against_dali():
    x = [(RNG.random((300, 400), dtype=np.float32) * 100)]
    for kind in ("sum", "mean", "mean_square", "rms"):
        _compare(kind, x)
        _compare(kind, x, axes=0)


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((64, 401), (1,)), ((64, 401), (0,)), ((3, 50, 40), (1, 2)), ((50, 40, 70), (0, 1)),
     ((20, 30, 3), (0, 1)), ((5, 6, 7), (1,)), ((1000, 3), (1,)), ((4, 5), (0, 1))],
)  # fmt: skip
def test_float32_sums_over_leading_or_trailing_axes(shape, axes):
    """The float64 sums behind mean/std/normalize (OpenCV for blocks of leading or trailing
    axes, NumPy otherwise) equal the sums of the float64 values, with kept dimensions."""
    from headrace.backends.cpu.reductions import reduce_axes

    x = (np.random.default_rng(3).standard_normal(shape) * 30 - 40).astype(np.float32)
    got = reduce_axes(np.add, x, axes, np.float64)
    want = np.add.reduce(x.astype(np.float64), axis=axes, keepdims=True)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    mean = ndd.reductions.mean(ndd.tensor(x), axes=list(axes)).evaluate()
    np.testing.assert_allclose(np.asarray(mean), want.squeeze(axes) / (x.size // want.size),
                               rtol=1e-6)  # fmt: skip


@pytest.mark.parametrize("dt", [np.uint8, np.int8, np.uint16, np.int16])
@pytest.mark.parametrize("axis_names", ["HW", "HWC"])
def test_integer_std_dev_and_variance_from_moments_equal_the_two_pass_sums(dt, axis_names):
    """8- and 16-bit images over H and W (per channel) or everything: the statistics come from
    one integer-sum pass; the float32 results are the two-pass float64 sums' (closed form)."""
    rng = np.random.default_rng(len(axis_names) + np.dtype(dt).itemsize)
    info = np.iinfo(dt)
    xs = [rng.integers(info.min, info.max, (h, w, 3), endpoint=True).astype(dt)
          for h, w in ((37, 53), (120, 90), (1, 400))]  # fmt: skip
    axes = (0, 1) if axis_names == "HW" else (0, 1, 2)
    b = ndd.batch(xs, layout="HWC")
    mean = ndd.reductions.mean(b, axis_names=axis_names, dtype=ndd.float32)
    for ddof in (0, 1):
        sd = ndd.reductions.std_dev(b, mean, axis_names=axis_names, ddof=ddof)
        var = ndd.reductions.variance(b, mean, axis_names=axis_names, ddof=ddof)
        for x, m, s, v in zip(xs, mean.tensors, sd.tensors, var.tensors, strict=True):
            d = x.astype(np.float64) - np.asarray(m, np.float64).reshape(
                (1, 1, 3) if axes == (0, 1) else ()
            )
            want = np.square(d).sum(axis=axes) / (x.size // (3 if axes == (0, 1) else 1) - ddof)
            np.testing.assert_array_equal(np.asarray(v), want.astype(np.float32))
            np.testing.assert_array_equal(np.asarray(s), np.sqrt(want).astype(np.float32))


def test_nearly_constant_integer_images_keep_the_two_pass_precision():
    """E[x^2] - E[x]^2 cancels on nearly constant data: those take the float64 passes."""
    x = np.full((300, 400, 1), 60000, np.uint16)
    x[0, 0, 0], x[5, 5, 0] = 60001, 59999
    m = np.float32(x.mean())
    got = ndd.reductions.variance(ndd.batch([x]), ndd.batch([np.array(m)]), axes=(0, 1, 2))
    want = np.square(x.astype(np.float64) - np.float64(m)).sum() / x.size
    np.testing.assert_array_equal(np.asarray(got.tensors[0]), np.float32(want))
    # a one-element mean with more dimensions than the sample keeps the result's shape
    y = np.arange(12, dtype=np.uint8).reshape(3, 4)
    r = ndd.reductions.variance(ndd.batch([y]), ndd.batch([np.full((1, 1, 1), 5.5, np.float32)]),
                                axes=(0, 1), keep_dims=True)  # fmt: skip
    assert r.tensors[0].shape == (1, 1)
