"""Constants written through the reference's own ``nvidia.dali.types`` are provable in capture
mode, as ``headrace.types`` constants are."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
import pytest

import headrace as ndd
import headrace.types

#: Bound to the ``nvidia`` package by the test (not at import: DALI loads only when it runs).
nvidia: Any = None


def _with_reference_constant(b: Any) -> Any:
    return ndd.cast(b, dtype=nvidia.dali.types.DALIDataType.FLOAT)


def _with_our_constant(b: Any) -> Any:
    return ndd.cast(b, dtype=headrace.types.DALIDataType.FLOAT)


def _loop(body: Any) -> list[tuple[bool, Any]]:
    src = ndd.ExternalSource([np.full((2, 2), i, np.uint8) for i in range(4)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "no operators were captured" would fail the test
        return [
            (ndd.capture.is_captured(out), np.asarray(ndd.as_tensor(out)))
            for out in map(body, src.captured(batch_size=2))
        ]


def test_reference_type_constants_are_captured_like_ours() -> None:
    global nvidia
    pytest.importorskip("nvidia.dali.types")
    nvidia = sys.modules["nvidia"]
    theirs, ours = _loop(_with_reference_constant), _loop(_with_our_constant)
    assert [c for c, _ in theirs] == [c for c, _ in ours] == [True] * 4
    for (_, a), (_, b) in zip(theirs, ours, strict=True):
        assert a.dtype == np.float32
        np.testing.assert_array_equal(a, b)
