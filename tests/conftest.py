"""Test configuration: fake-GPU mode on, a ``device`` fixture running tests on CPU and GPU."""

from __future__ import annotations

import os

os.environ.setdefault("HEADRACE_FAKE_GPU", "1")
# GPU results are compared with the CPU's exactly across the suite: decode on the host
# there; tests/decoders/test_gpu_decode.py runs every GPU decoder backend itself.
os.environ.setdefault("HEADRACE_GPU_DECODER", "host")

import numpy as np
import pytest
from hypothesis import settings

from headrace._core import meta as _meta

# Every predicted output metadata (dtype, ndim, layout of a pending result) must equal the
# result's: a prediction that differs raises where the result is computed.
_meta.CHECK = True

# Timing deadlines make property tests flaky on a loaded 2-core machine.
settings.register_profile("headrace", deadline=None)
settings.load_profile("headrace")


@pytest.fixture(params=["cpu", "gpu"])
def device(request: pytest.FixtureRequest) -> str:
    """Run the test on the CPU and on the (fake) GPU."""
    if request.param == "gpu":
        pytest.importorskip("torch")
    return str(request.param)


def to_numpy(x: object) -> np.ndarray:
    """A numpy copy of a Tensor on any device."""
    import headrace as ndd

    assert isinstance(x, ndd.Tensor)
    return np.asarray(x.cpu())
