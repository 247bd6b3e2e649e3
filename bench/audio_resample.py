"""``audio_resample`` speed and accuracy: headrace, the reference (NVIDIA DALI dynamic mode) and
``soxr`` on synthetic signals.

For each rate pair, length (seconds), signal (``sine``: 440 Hz + 3 kHz; ``chirp``: 100 Hz up to
0.45 of the input rate; ``noise``: white) and reference ``quality`` (0, 50, 100), prints the
median time of one call (one signal, one thread each) and the SNR in dB of each result against the
reference's output (``10 log10(sum ref^2 / sum (y - ref)^2)`` over the whole signal), with the
speed ratios ``ref / headrace`` and ``ref / soxr`` (> 1: faster than the reference). soxr runs at
the quality that maps to the reference's (0: ``LQ``, 50: ``HQ``, 100: ``VHQ``). Columns of a
missing library are left empty. The first call of a rate pair (which builds headrace's filter
bank) is not timed; ``--cold`` prints it.

    python bench/audio_resample.py                      # 1 s and 60 s, all pairs, 3 qualities
    python bench/audio_resample.py --seconds 60 --quality 50 --reps 5
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

PAIRS = ((44100, 16000), (48000, 16000), (16000, 44100), (8000, 16000))
SOXR_QUALITY = {0: "LQ", 50: "HQ", 100: "VHQ"}


def make_signal(kind: str, rate: int, seconds: float, seed: int = 0) -> np.ndarray:
    """A float32 test signal of ``seconds`` at ``rate``: ``sine``, ``chirp`` or ``noise``."""
    n = round(seconds * rate)
    t = np.arange(n) / rate
    if kind == "sine":
        x = 0.5 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 3000 * t)
    elif kind == "chirp":
        f1 = 0.45 * rate
        x = 0.7 * np.sin(2 * np.pi * (100 * t + (f1 - 100) * t * t / (2 * max(seconds, 1e-9))))
    else:
        x = 0.3 * np.random.default_rng(seed).standard_normal(n)
    return x.astype(np.float32)


def snr_db(y: np.ndarray, ref: np.ndarray) -> float:
    """SNR of ``y`` against ``ref`` in dB (``y`` cut or zero-padded to ``ref``'s length)."""
    y = y.astype(np.float64)
    if y.shape != ref.shape:
        y = np.concatenate([y, np.zeros(max(0, ref.size - y.size))])[: ref.size]
    err = float(np.sum((y - ref) ** 2))
    power = float(np.sum(ref.astype(np.float64) ** 2))
    return float("inf") if err == 0 else float(10 * np.log10(power / err))


def timed(fn: Callable[[], np.ndarray], reps: int) -> tuple[float, np.ndarray]:
    """Median seconds of ``reps`` calls and the last result."""
    times, y = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        y = fn()
        times.append(time.perf_counter() - t0)
    assert y is not None
    return statistics.median(times), y


def runners(a: int, b: int, quality: int) -> dict[str, Callable[[np.ndarray], np.ndarray] | None]:
    """One resampling function per library (``None`` where it is not installed)."""
    out: dict[str, Callable[[np.ndarray], np.ndarray] | None] = {}
    kw: dict[str, Any] = {"in_rate": float(a), "out_rate": float(b), "quality": float(quality)}
    for name, module in (("ref", "nvidia.dali.experimental.dynamic"), ("ours", "headrace")):
        try:
            ndd = importlib.import_module(module)
        except ImportError:
            out[name] = None
            continue
        ndd.set_num_threads(1)
        out[name] = lambda x, ndd=ndd: np.asarray(ndd.audio_resample(ndd.as_tensor(x), **kw))
    try:
        soxr = importlib.import_module("soxr")
        q = SOXR_QUALITY[quality]
        out["soxr"] = lambda x: soxr.resample(x, a, b, quality=q)
    except ImportError:
        out["soxr"] = None
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, nargs="+", default=[1.0, 60.0])
    p.add_argument("--quality", type=int, nargs="+", default=[0, 50, 100], choices=[0, 50, 100])
    p.add_argument("--signals", nargs="+", default=["sine", "chirp", "noise"])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--cold", action="store_true", help="also print each first call's time")
    args = p.parse_args()
    head = (
        f"{'rates':>13} {'sec':>4} {'signal':>6} {'q':>3} | {'ref ms':>8} {'ours ms':>8} "
        f"{'ratio':>6} {'SNR dB':>7} | {'soxr ms':>8} {'ratio':>6} {'SNR dB':>7}"
    )
    print(head)
    print("-" * len(head))
    summary: dict[tuple[float, int], list[tuple[float, float]]] = {}
    for a, b in PAIRS:
        for q in args.quality:
            run = runners(a, b, q)
            for sec in args.seconds:
                for kind in args.signals:
                    x = make_signal(kind, a, sec)
                    got: dict[str, tuple[float, np.ndarray] | None] = {}
                    for name, fn in run.items():
                        if fn is None:
                            got[name] = None
                            continue
                        t0 = time.perf_counter()
                        fn(x)  # warm-up: headrace builds and caches the pair's filter bank
                        if args.cold:
                            print(f"  first call {name}: {1e3 * (time.perf_counter() - t0):.1f} ms")
                        got[name] = timed(lambda fn=fn, x=x: fn(x), args.reps)
                    print(row(a, b, sec, kind, q, got, summary))
    print("\nmedian ratio ref/headrace and ref/soxr (> 1: faster than the reference), by length:")
    for (sec, q), rs in sorted(summary.items()):
        ours = statistics.median(r[0] for r in rs)
        sx = [r[1] for r in rs if r[1] == r[1]]
        line = f"  {sec:>5g} s  q={q:<3}  headrace {ours:5.2f}x"
        print(line + (f"  soxr {statistics.median(sx):5.2f}x" if sx else ""))


def row(
    a: int,
    b: int,
    sec: float,
    kind: str,
    q: int,
    got: dict[str, tuple[float, np.ndarray] | None],
    summary: dict[tuple[float, int], list[tuple[float, float]]],
) -> str:
    """One table line; adds the speed ratios to ``summary``."""
    ref, ours, sx = got.get("ref"), got.get("ours"), got.get("soxr")

    def cols(r: tuple[float, np.ndarray] | None) -> tuple[str, str, str, float]:
        if r is None:
            return f"{'':>8}", f"{'':>6}", f"{'':>7}", float("nan")
        if ref is None:
            return f"{1e3 * r[0]:8.2f}", f"{'':>6}", f"{'':>7}", float("nan")
        ratio = ref[0] / r[0]
        return f"{1e3 * r[0]:8.2f}", f"{ratio:5.2f}x", f"{snr_db(r[1], ref[1]):7.1f}", ratio

    o_ms, o_ratio, o_snr, o_r = cols(ours)
    s_ms, s_ratio, s_snr, s_r = cols(sx)
    summary.setdefault((sec, q), []).append((o_r, s_r))
    ref_ms = f"{1e3 * ref[0]:8.2f}" if ref else f"{'':>8}"
    return (
        f"{a:>6}>{b:<6} {sec:>4g} {kind:>6} {q:>3} | {ref_ms} {o_ms} {o_ratio} {o_snr} | "
        f"{s_ms} {s_ratio} {s_snr}"
    )


if __name__ == "__main__":
    main()
