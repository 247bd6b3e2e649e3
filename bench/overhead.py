"""Per-call overhead of headrace operators on tiny inputs (µs per call), and of the reference
(NVIDIA DALI dynamic mode) on the same calls when it is installed.

Run: ``python bench/overhead.py [--calls 3000]``. Prints a table; nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _time(fn: Callable[[], Any], calls: int) -> float:
    for _ in range(min(200, calls)):
        fn()
    best = math.inf
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t) / calls * 1e6)
    return best


def cases(nd: Any) -> dict[str, Callable[[], Any]]:
    """The measured calls for a module with the dynamic-mode API (headrace or DALI's)."""
    x = nd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    b = nd.batch(np.zeros((8, 4, 4, 3), np.uint8), layout="HWC")
    rng = nd.random.RNG(seed=1)
    out: dict[str, Callable[[], Any]] = {
        "x + 1": lambda: (x + 1).evaluate(),
        "cast": lambda: nd.cast(x, dtype=nd.float32).evaluate(),
        "cast (batch of 8)": lambda: nd.cast(b, dtype=nd.float32).evaluate(),
        "random.uniform (batch of 8)": lambda: nd.random.uniform(batch_size=8, rng=rng).evaluate(),
    }
    if hasattr(nd, "flip"):
        out["flip"] = lambda: nd.flip(x).evaluate()
    if hasattr(nd, "crop_mirror_normalize"):
        out["crop_mirror_normalize"] = lambda: nd.crop_mirror_normalize(x).evaluate()
    return out


def run(nd: Any, calls: int) -> dict[str, dict[str, float]]:
    """µs per call for every case, in eager and sync_cpu modes."""
    res: dict[str, dict[str, float]] = {}
    for mode in ("eager", "sync_cpu"):
        with getattr(nd.EvalMode, mode):
            for name, fn in cases(nd).items():
                res.setdefault(name, {})[mode] = _time(fn, calls)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=3000)
    args = ap.parse_args()
    import headrace as hr

    ours = run(hr, args.calls)
    try:
        import nvidia.dali.experimental.dynamic as ref_mod

        ref = run(ref_mod, max(200, args.calls // 10))
    except ImportError:
        ref = {}
    print(f"{'call':32s} {'mode':9s} {'headrace µs':>12s} {'reference µs':>13s} {'ratio':>7s}")
    for mode in ("eager", "sync_cpu"):
        logs = []
        for name, r in ours.items():
            ref_v = ref.get(name, {}).get(mode)
            ratio = f"{ref_v / r[mode]:6.1f}x" if ref_v else "     -"
            ref_s = f"{ref_v:13.1f}" if ref_v else f"{'-':>13s}"
            print(f"{name:32s} {mode:9s} {r[mode]:12.1f} {ref_s} {ratio}")
            logs.append(math.log(r[mode]))
        print(f"{'geomean':32s} {mode:9s} {math.exp(sum(logs) / len(logs)):12.1f}")


if __name__ == "__main__":
    main()
