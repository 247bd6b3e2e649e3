"""Issue 20.3: no thread or file descriptor outlives its loop, reader or owning thread, and
repeated Ctrl-C never hangs."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import headrace as ndd
from headrace.readers import File


def _settle(n0: int, timeout: float = 3.0) -> int:
    end = time.monotonic() + timeout
    while threading.active_count() > n0 and time.monotonic() < end:
        gc.collect()
        time.sleep(0.01)
    return threading.active_count()


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _loop(how: str, capture: bool) -> None:
    r = File(files=[__file__] * 12, labels=list(range(12)))
    try:
        for i, (_, label) in enumerate(r.next_epoch(batch_size=2, capture=capture)):
            ndd.cast(label, dtype=ndd.float32)
            if i == 2:
                if how == "break":
                    break
                raise KeyboardInterrupt if how == "ctrl-c" else ValueError("body")
    except (ValueError, KeyboardInterrupt):
        pass


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.parametrize("capture", [False, True])
@pytest.mark.parametrize("how", ["break", "raise", "ctrl-c"])
def test_loops_leave_no_threads_or_fds(how: str, capture: bool) -> None:
    _loop(how, capture)
    n0, f0 = _settle(threading.active_count()), _fds()
    for _ in range(50):
        _loop(how, capture)
    assert _settle(n0) <= n0, [t.name for t in threading.enumerate()]
    assert _fds() <= f0


def test_short_lived_user_threads_leave_no_pools() -> None:
    n0 = threading.active_count()
    batch = [np.ones((16, 16, 3), np.uint8)] * 8

    def user() -> None:
        ndd.gaussian_blur(ndd.as_batch(batch), window_size=3).evaluate()

    ndd.set_num_threads(3)
    try:
        for _ in range(50):
            t = threading.Thread(target=user)
            t.start()
            t.join()
    finally:
        ndd.set_num_threads(None)
    assert _settle(n0) <= n0, [t.name for t in threading.enumerate()]


_CHILD = textwrap.dedent(
    """
    import signal, sys, threading
    import headrace as ndd
    from headrace.readers import File
    readers = [File(files=[sys.argv[1]] * 40, labels=list(range(40))) for _ in range(2)]
    done = [0]

    def run():
        while done[0] < int(sys.argv[2]):
            capture = done[0] % 2 == 1
            for _, label in readers[capture].next_epoch(batch_size=2, capture=capture):
                ndd.cast(label, dtype=ndd.float32).evaluate()
            done[0] += 1

    print("ready", flush=True)
    while True:
        try:
            run()
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            break
        except KeyboardInterrupt:
            pass
    import time
    def left():
        return sum(t.name.startswith("headrace-") for t in threading.enumerate())
    deadline = time.monotonic() + 10  # the readers' threads end with their loops (a loaded
    while left() and time.monotonic() < deadline:  # machine may take a moment to run them)
        time.sleep(0.05)
    print(left(), flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_repeated_ctrl_c_never_hangs() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, __file__, "30"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        rng = np.random.default_rng(0)
        for _ in range(60):
            time.sleep(float(rng.uniform(0.0, 0.03)))
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # a hang fails here
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    assert out.split() == ["0"], out  # no thread of headrace left
