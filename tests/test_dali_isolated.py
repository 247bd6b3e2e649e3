"""The reference's server process: calls, errors, crashes and restarts (no DALI needed)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests._helpers import dali_isolated as iso


def test_call_round_trip_error_and_crash():
    pid = iso.call("os:getpid")
    assert pid != os.getpid()
    a = np.arange(12, dtype=np.uint16).reshape(3, 4)
    np.testing.assert_array_equal(iso.call("numpy:ascontiguousarray", a), a)
    with pytest.raises(iso.IsolatedError, match="ZeroDivisionError"):
        iso.call("operator:truediv", 1, 0)
    assert iso.call("os:getpid") == pid  # an exception leaves the server running
    with pytest.raises(iso.IsolatedCrash, match="exit code 3"):
        iso.call("os:_exit", 3)
    assert iso.call("os:getpid") != pid  # a crash is followed by a fresh server
