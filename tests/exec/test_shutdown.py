"""A program that leaves headrace's background threads busy in OpenCV/torch calls exits cleanly
(they used to abort the process at finalization: "terminate called without an active
exception", exit status 134)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import numpy as np, cv2
    from headrace._exec.producer import Producer

    img = np.random.default_rng(0).random((1200, 1200, 3)).astype(np.float32)

    def produce(emit):
        while emit(cv2.GaussianBlur(img, (31, 31), 5)):
            pass

    producers = [Producer(produce, depth=1000, name=f"busy-{i}") for i in range(2)]
    for p in producers:
        p.get()  # both threads are running OpenCV calls when the program ends
    print("done")
    """
)


def test_exit_with_busy_producer_threads_is_clean() -> None:
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                           timeout=120)  # fmt: skip
        assert r.returncode == 0, (r.returncode, r.stderr[-500:])
        assert r.stdout.strip() == "done"
        assert "terminate called" not in r.stderr
