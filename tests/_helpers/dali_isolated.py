"""Run the reference (NVIDIA DALI) in a separate Python process.

DALI and PyAV both ship FFmpeg libraries; a test process that has loaded ``av`` (headrace's video
decoding) must not load DALI as well. ``call("tests._helpers.dali_oracle:dali_run", "flip", x)``
runs the function in one long-lived server process per test process (started on first use,
restarted if it dies), passing arguments and results by pickle; an exception in the server is
raised here as ``IsolatedError`` with its traceback text, and a crash of the server as
``IsolatedCrash``. The server refuses to run once ``av`` is imported in it.

Run as ``python -m tests._helpers.dali_isolated`` it is the server.
"""

from __future__ import annotations

import atexit
import importlib
import os
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pytest

_ROOT = Path(__file__).resolve().parents[2]
_lock = threading.Lock()
_proc: subprocess.Popen[bytes] | None = None


class IsolatedError(RuntimeError):
    """The function raised in the server process."""


class IsolatedCrash(RuntimeError):
    """The server process died (for instance a crash inside the reference)."""


def _send(f: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(struct.pack("<Q", len(data)) + data)
    f.flush()


def _recv(f: BinaryIO) -> Any:
    head = f.read(8)
    if len(head) < 8:
        raise EOFError
    (n,) = struct.unpack("<Q", head)
    data = f.read(n)
    if len(data) < n:
        raise EOFError
    return pickle.loads(data)


def _stop() -> None:
    global _proc
    p, _proc = _proc, None
    if p is not None and p.poll() is None:
        assert p.stdin is not None
        p.stdin.close()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _server() -> subprocess.Popen[bytes]:
    global _proc
    if _proc is None or _proc.poll() is not None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_ROOT), env.get("PYTHONPATH", "")) if p)
        _proc = subprocess.Popen(
            [sys.executable, "-m", "tests._helpers.dali_isolated"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=_ROOT,
            env=env,
        )
        atexit.register(_stop)
    return _proc


def call(func: str, *args: Any, **kw: Any) -> Any:
    """``module:function(*args, **kw)`` run in the reference's server process."""
    with _lock:
        p = _server()
        assert p.stdin is not None and p.stdout is not None
        try:
            _send(p.stdin, (func, args, kw))
            status, value = _recv(p.stdout)
        except (EOFError, BrokenPipeError):
            code = p.wait()
            raise IsolatedCrash(
                f"the reference's process died (exit code {code}) in {func}"
            ) from None
    if status == "skip":
        pytest.skip(value)
    if status == "error":
        raise IsolatedError(value)
    return value


def dali_run(op: str, data: Any, **kw: Any) -> Any:
    """:func:`tests._helpers.dali_oracle.dali_run` in the server process."""
    return call("tests._helpers.dali_oracle:dali_run", op, data, **kw)


def read_all(reader: str, batch_size: int | None = None, **kw: Any) -> list[tuple[np.ndarray, ...]]:
    """Every sample of one epoch of the reference's ``reader`` (a dotted name such as
    ``experimental.readers.Video``) built with ``kw``, as numpy arrays (in the server)."""
    return call("tests._helpers.dali_isolated:_read_all", reader, batch_size, kw)


def _read_all(reader: str, batch_size: int | None, kw: dict[str, Any]) -> list[Any]:
    from tests._helpers.dali_oracle import dali_ndd

    cls: Any = dali_ndd()
    for part in reader.split("."):
        cls = getattr(cls, part)
    r = cls(**kw)
    out: list[tuple[np.ndarray, ...]] = []
    for step in r.next_epoch(batch_size=batch_size) if batch_size else r.next_epoch():
        if batch_size:
            cols = [[np.asarray(t.cpu()) for t in b.tensors] for b in step]
            out += [tuple(c[i] for c in cols) for i in range(len(cols[0]))]
        else:
            out.append(tuple(np.asarray(x.cpu()) for x in step))  # GPU outputs: copied
    return out


def pipeline_video_decode(data: np.ndarray, **kw: Any) -> np.ndarray:
    """The reference's ``fn.decoders.video`` (CPU) of one encoded file, run in a pipeline (its
    dynamic mode does not take string arguments such as ``pad_mode``), in the server."""
    return call("tests._helpers.dali_isolated:_pipeline_video_decode", data, kw)


def _pipeline_video_decode(data: np.ndarray, kw: dict[str, Any]) -> np.ndarray:
    pytest.importorskip("nvidia.dali")
    from nvidia.dali import fn, pipeline_def, types

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe() -> Any:
        x = fn.external_source(source=lambda: [data], batch=True, dtype=types.UINT8)
        return fn.decoders.video(x, device="cpu", **kw)

    p = pipe()
    p.build()
    (out,) = p.run()
    return np.asarray(out[0])


def _serve() -> None:
    # messages go over the original stdout; anything the reference prints goes to stderr
    wire_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    wire_in = sys.stdin.buffer
    while True:
        try:
            func, args, kw = _recv(wire_in)
        except EOFError:
            return
        try:
            mod, name = func.split(":")
            result: tuple[str, Any] = (
                "ok",
                getattr(importlib.import_module(mod), name)(*args, **kw),
            )
            if "av" in sys.modules:
                result = ("error", "PyAV was imported in the reference's process")
        except pytest.skip.Exception as e:
            result = ("skip", str(e))
        except BaseException:  # sent back to the caller
            result = ("error", traceback.format_exc())
        _send(wire_out, result)


if __name__ == "__main__":
    _serve()
