"""Private names of the reference that its users' code and tests reach: ``ndd._shape`` and
``ndd._exceptions``."""

from __future__ import annotations

import numpy as np
import pytest

import headrace as ndd


def test_shape_gives_int64_shapes_and_broadcasts_a_tensor():
    b = ndd.batch([np.zeros((2, 3)), np.zeros((4, 1))])
    out = ndd._shape(b)
    assert out.dtype is ndd.int64
    assert [s.tolist() for s in np.asarray(ndd.as_tensor(out))] == [[2, 3], [4, 1]]
    t = ndd.tensor(np.zeros((5, 6, 3), np.uint8))
    assert ndd._shape(t, dtype=ndd.int32).dtype is ndd.int32
    assert ndd._shape(t, batch_size=3).batch_size == 3


@pytest.mark.parametrize("mode", ["deferred", "eager"])
def test_displaced_errors_are_the_exceptions_module_types(mode):
    with ndd.EvalMode.sync_cpu, pytest.raises(Exception) as direct:
        ndd.crop(ndd.zeros(shape=(10, 10, 3)), crop=(20, 20)).evaluate()
    with (
        getattr(ndd.EvalMode, mode),
        pytest.raises(ndd._exceptions.DisplacedEvaluationError) as displaced,
    ):
        ndd.crop(ndd.zeros(shape=(10, 10, 3)), crop=(20, 20)).evaluate()
    cause = displaced.value.__cause__
    assert type(cause) is type(direct.value) and str(cause) == str(direct.value)


def test_compiled_batch_tells_values_from_the_loop_graph():
    from headrace._compile import CompiledBatch

    src = ndd.ExternalSource([np.full((2, 2), i, np.float32) for i in range(3)])
    seen = []
    for b in src.compiled(batch_size=2):
        out = ndd.cast(b, dtype=ndd.uint8)
        seen.append((isinstance(out, CompiledBatch), isinstance(out + 1, CompiledBatch)))
    assert seen == [(True, False)] * 3  # arithmetic is never captured
    assert not isinstance(ndd.batch([[1]]), CompiledBatch)
    assert ndd._compile.CompiledBatch is CompiledBatch
    with pytest.raises(TypeError, match="isinstance"):
        CompiledBatch()


class _PseudoInvocation:
    """What the reference's pending-work hook runs: anything with ``run(ctx)``."""

    def __init__(self, value, counter=None):
        self.value, self.runs, self.counter = value, 0, counter

    def run(self, ctx):
        self.runs += 1
        if self.counter is not None:
            self.counter.runs += 1
        ctx.cache_results(self, self.value)
        return self.value


def test_added_invocations_run_when_the_context_is_left():
    with ndd.EvalContext() as ctx:
        inv = _PseudoInvocation(4321)
        ctx._add_invocation(inv, weak=False)
        assert inv.runs == 0
    assert inv.runs == 1 and ctx.cached_results(inv) == 4321


def test_weakly_added_invocations_are_dropped_with_their_last_reference():
    counter = _PseudoInvocation(0)
    with ndd.EvalContext() as ctx:
        ctx._add_invocation(_PseudoInvocation(1, counter), weak=True)  # nobody keeps it
    assert counter.runs == 0


def test_evaluate_all_skips_invocations_with_cached_results():
    with ndd.EvalContext() as ctx:
        inv = _PseudoInvocation(42)
        assert ctx.cached_results(inv) is None
        ctx.cache_results(inv, 123)
        ctx._add_invocation(inv)
        ctx.evaluate_all()
        assert inv.runs == 0 and ctx.cached_results(inv) == 123
        ctx._cached_results = {}
        ctx._add_invocation(inv)
        ctx.evaluate_all()
        ctx.evaluate_all()  # (once run, it is no longer pending)
        assert inv.runs == 1 and ctx.cached_results(inv) == 42


def test_readers_keep_their_constructor_arguments(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(20, dtype=np.int16))
    reader = ndd.readers.Numpy(
        files=[str(tmp_path / "a.npy")],
        roi_start=ndd.tensor(0),
        roi_shape=ndd.tensor([10]),
        random_shuffle=True,
        seed=7,
    )
    args = reader._init_args
    assert args["roi_start"] == 0 and type(args["roi_start"]) is int  # 0-D tensors: scalars
    assert args["random_shuffle"] is True and args["seed"] == 7
    assert "file_root" not in args  # only what was given
    assert reader._tensor_arg_names == {"roi_start", "roi_shape"}
    assert set(reader._raw_tensor_args) == {"roi_shape"} and "roi_shape" not in args
    (sample,) = next(iter(reader.next_epoch(batch_size=1)))
    assert np.asarray(ndd.as_tensor(sample)).ravel().tolist() == list(range(10))


def test_process_params_is_called_with_each_calls_raw_arguments_while_replaced():
    from headrace._ops import Operator

    calls = []
    orig = Operator.__dict__["_process_params"]

    def spy(cls, backend, op_device, batch_size, *raw_args, **raw_kwargs):
        calls.append((backend, raw_args, raw_kwargs))
        return orig.__func__(cls, backend, op_device, batch_size, *raw_args, **raw_kwargs)

    image = ndd.tensor(np.zeros((8, 10, 3), np.uint8), layout="HWC")
    matrix = ndd.tensor(np.array([[1, 0, 1], [0, 1, 0]], np.float32))
    Operator._process_params = classmethod(spy)
    try:
        ndd.warp_affine(image, matrix=matrix)
        ndd._ops.WarpAffine()(image, matrix=matrix)
    finally:
        Operator._process_params = orig
    assert len(calls) == 2
    for backend, raw_args, raw_kwargs in calls:
        assert backend == "cpu" and raw_kwargs["matrix"] is matrix
        assert raw_args[0] is image and not any(a is matrix for a in raw_args)
    ndd.warp_affine(image, matrix=matrix)  # restored: no longer called
    assert len(calls) == 2


def test_added_invocations_without_weak_references_still_run():
    class Slotted:
        __slots__ = ("runs",)

        def __init__(self):
            self.runs = 0

        def run(self, ctx):
            self.runs += 1
            ctx.cache_results(self, None)

    inv = Slotted()
    with ndd.EvalContext() as ctx:
        ctx._add_invocation(inv)  # (weak by default: kept strongly when it cannot be)
    assert inv.runs == 1


def test_rows_of_one_array_refuses_views_with_other_strides():
    from headrace.backends.shared.common import rows_of_one_array

    a = np.empty((8, 3, 3), np.float32)  # (an array of its own, as a whole-batch kernel makes)
    a[...] = np.arange(8 * 9).reshape(8, 3, 3)
    assert rows_of_one_array(list(a)) is a
    assert rows_of_one_array([a[i].T for i in range(8)]) is None


def test_a_reader_constructed_again_keeps_the_new_arguments(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(4, dtype=np.int16))
    reader = ndd.readers.Numpy(files=[str(tmp_path / "a.npy")])
    reader.__init__(files=[str(tmp_path / "a.npy")], random_shuffle=True, seed=3)
    assert reader._init_args["random_shuffle"] is True and reader._init_args["seed"] == 3
