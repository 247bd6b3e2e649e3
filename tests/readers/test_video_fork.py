"""A process that decoded video on worker threads can still fork (DataLoader workers,
``Loader(num_workers=...)``): the child must not hang freeing the threads' frame converters."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from tests._helpers.videos import has_av

pytestmark = pytest.mark.skipif(not has_av(), reason="PyAV (av) is not installed")


def test_fork_after_threaded_video_decoding_does_not_hang() -> None:
    script = textwrap.dedent(
        """
        import multiprocessing as mp
        from concurrent.futures import ThreadPoolExecutor

        import headrace as ndd
        from tests._helpers.videos import write_video

        data = write_video(n=12, codec="mjpeg", pix_fmt="yuvj420p", fmt="avi")

        def decode(_):
            from headrace.backends.shared.video import _rgb
            import av, io
            with av.open(io.BytesIO(data.tobytes())) as c:  # this thread's converter is made
                return [_rgb(f).shape for f in c.decode(video=0)][0]

        with ThreadPoolExecutor(4) as pool:  # threads alive at the fork hold converters
            shapes = list(pool.map(decode, range(8)))
            ctx = mp.get_context("fork")
            p = ctx.Process(target=print, args=("child ok",))
            p.start()
            p.join(30)
            if p.exitcode is None:
                p.kill()
            assert p.exitcode == 0, p.exitcode
        print("parent ok", shapes[0])
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "child ok" in out.stdout and "parent ok" in out.stdout
