"""GPU hand-off cost: an op on the context's stream whose result is consumed by torch on
another stream through an event, against the same loop with a device-wide synchronisation
before every hand-off (what a stream-unaware hand-off must do). Needs CUDA.

    python bench/streams.py [--batch 64] [--size 224] [--iters 200]

Prints img/s for both loops and their ratio (event hand-off / device sync).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    import torch

    import headrace as ndd

    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--iters", type=int, default=200)
    a = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench/streams.py needs a CUDA device")
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, (a.batch, a.size, a.size, 3), dtype=np.uint8)
    x = ndd.as_batch(torch.from_numpy(data).cuda(), layout="HWC")
    consumer = torch.cuda.Stream()

    def loop(device_sync: bool) -> float:
        acc = torch.zeros((), device="cuda")
        for _ in range(5):  # warm-up
            ndd.flip(x, horizontal=1).torch()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.cuda.stream(consumer):
            for _ in range(a.iters):
                y = ndd.flip(x, horizontal=1, vertical=1)
                if device_sync:
                    y.evaluate()
                    torch.cuda.synchronize()
                acc += y.torch().float().mean()  # the "training step" on the consumer stream
        torch.cuda.synchronize()
        return a.iters * a.batch / (time.perf_counter() - t0)

    ev = loop(device_sync=False)
    sync = loop(device_sync=True)
    print(f"event hand-off: {ev:.0f} img/s; device sync: {sync:.0f} img/s; ratio {ev / sync:.2f}")


if __name__ == "__main__":
    main()
