"""Whole-file reads used by the file reader and ``io.file.read``."""

from __future__ import annotations

import os

import numpy as np
import pytest

from headrace.codecs.readfile import read_file


def test_reads_every_byte_into_a_fresh_writable_array(tmp_path):
    data = np.random.default_rng(0).integers(0, 256, 300_001, dtype=np.uint8)
    path = tmp_path / "f.bin"
    path.write_bytes(data.tobytes())
    out = read_file(str(path))
    assert out.dtype == np.uint8 and out.flags.writeable and out.flags.owndata
    np.testing.assert_array_equal(out, data)


def test_empty_file_gives_an_empty_array(tmp_path):
    path = tmp_path / "empty"
    path.write_bytes(b"")
    assert read_file(str(path)).shape == (0,)


def test_missing_file_and_directory_raise_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_file(str(tmp_path / "nope.jpg"))
    with pytest.raises(OSError):
        read_file(str(tmp_path))


def test_no_descriptor_is_leaked(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    for _ in range(50):
        read_file(str(path))
        with pytest.raises(OSError):
            read_file(str(tmp_path))
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) <= before
