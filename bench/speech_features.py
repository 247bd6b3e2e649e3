"""Speech-features throughput (signals/s): headrace against the reference, same script.

Synthesises ``--num`` signals of ``--seconds`` seconds at 16 kHz (harmonics, noise) and runs
``preemphasis_filter → spectrogram (25 ms / 10 ms, nfft 512) → mel_filter_bank (64) →
to_decibels → normalize`` on batches of ``--batch-size`` with headrace and with the reference
(NVIDIA DALI dynamic mode, when installed), both with ``set_num_threads(--threads)``. The same
function runs on both modules. Repetitions are interleaved; medians are reported with the
ratio headrace / reference. ``--mfcc`` appends ``mfcc(n_mfcc=13)``.

    python bench/speech_features.py                 # 256 signals of 4 s, batch 32, 2 threads
    python bench/speech_features.py --seconds 10 --reps 5
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

SR = 16000


def make_signals(num: int, seconds: float, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    n = int(seconds * SR)
    t = np.arange(n) / SR
    out = []
    for _ in range(num):
        f0 = rng.uniform(90, 250)
        x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 5)) * 0.2
        out.append((x + rng.normal(0, 0.02, n)).astype(np.float32))
    return out


def pipeline(ndd: Any, batch: Any, mfcc: bool) -> Any:
    """The same calls for both modules."""
    x = ndd.preemphasis_filter(batch)
    x = ndd.spectrogram(x, nfft=512, window_length=400, window_step=160)
    x = ndd.mel_filter_bank(x, nfilter=64, sample_rate=SR)
    x = ndd.to_decibels(x, cutoff_db=-80)
    x = ndd.normalize(x, axes=[1])
    return ndd.mfcc(x, n_mfcc=13) if mfcc else x


def epoch_fn(module: str, signals: list[np.ndarray], threads: int, bs: int,
             mfcc: bool) -> Callable[[], int]:  # fmt: skip
    ndd = importlib.import_module(module)
    ndd.set_num_threads(threads)
    batches = [ndd.batch(signals[i : i + bs]) for i in range(0, len(signals), bs)]

    def run() -> int:
        n = 0
        for b in batches:
            out = pipeline(ndd, b, mfcc)
            out.evaluate()
            n += out.batch_size
        return n

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num", type=int, default=256)
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--mfcc", action="store_true")
    args = p.parse_args()
    modules = ["headrace"]
    try:
        importlib.import_module("nvidia.dali.experimental.dynamic")
        modules.append("nvidia.dali.experimental.dynamic")
    except ImportError:
        print("reference (nvidia-dali) not installed: headrace only")
    signals = make_signals(args.num, args.seconds)
    print(f"{args.num} signals of {args.seconds} s at {SR} Hz, batch {args.batch_size}, "
          f"{args.threads} threads, median of {args.reps}")  # fmt: skip
    fns = {m: epoch_fn(m, signals, args.threads, args.batch_size, args.mfcc) for m in modules}
    times: dict[str, list[float]] = {m: [] for m in modules}
    for fn in fns.values():
        fn()  # warm-up: thread pools, plans
    for _ in range(args.reps):
        for m, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[m].append(time.perf_counter() - t)
    rates = {m: args.num / statistics.median(ts) for m, ts in times.items()}
    line = f"headrace {rates['headrace']:>8,.0f} signals/s"
    if len(modules) > 1:
        ref = rates[modules[1]]
        line += f" | reference {ref:>8,.0f} signals/s | ratio {rates['headrace'] / ref:.2f}x"
    print(line)


if __name__ == "__main__":
    main()
