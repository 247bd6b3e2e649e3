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
