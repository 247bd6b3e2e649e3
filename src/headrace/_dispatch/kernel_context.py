"""What a kernel receives besides its inputs, and how its errors name the sample."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from headrace._core.device import Device
from headrace._exec.context import EvalContext

#: Batches with fewer elements than this run sample by sample on the calling thread.
PARALLEL_MIN_ELEMENTS = 1 << 16


def big_enough(samples: Sequence[Any]) -> bool:
    """Whether ``samples`` are worth spreading over the worker threads (CPU batches)."""
    return len(samples) > 1 and sum(math.prod(s.shape) for s in samples) >= PARALLEL_MIN_ELEMENTS


class KernelContext:
    """The op name, device, batch size, pool, randomness, backend module and CUDA stream of one
    call. ``stream`` is the torch CUDA stream the kernel runs on (torch's current stream while
    the kernel runs, also in pool threads); None on the CPU and without CUDA."""

    __slots__ = ("ctx", "device", "module", "n", "name", "rng_words", "sources", "stream")

    def __init__(
        self,
        name: str,
        ctx: EvalContext,
        dev: Device,
        n: int,
        rng_words: Any,
        module: ModuleType | None = None,
        stream: Any = None,
    ) -> None:
        self.name = name
        self.ctx = ctx
        self.device = dev
        self.n = n
        self.rng_words = rng_words
        self.module = module  # the backend module holding this op's kernels
        self.sources: Sequence[str | None] | None = None
        self.stream = stream

    def generator(self) -> np.random.Generator:
        """A numpy Generator determined by this call's RNG draw (same draw → same values)."""
        from headrace._rng import call_generator

        return call_generator(self.rng_words)

    def source(self, i: int) -> str | None:
        """Where sample ``i`` came from (a path), when known."""
        s = self.sources
        return s[i] if s is not None and i < len(s) else None

    def worth_parallel(self, samples: Sequence[Any]) -> bool:
        """Whether this call's ``samples`` go to the worker threads (a big enough CPU batch)."""
        return self.device.device_type == "cpu" and big_enough(samples)

    def map_samples(self, fn: Callable[[Any], Any], samples: Sequence[Any]) -> list[Any]:
        """``[fn(s) for s in samples]``, on the worker threads when :meth:`worth_parallel`
        (each thread one contiguous run of samples)."""
        return self.map(lambda i: fn(samples[i]), self.worth_parallel(samples), chunked=True)

    def map(
        self, fn: Callable[[int], Any], parallel: bool = True, chunked: bool = False
    ) -> list[Any]:
        """``[fn(i) for i in range(n)]`` on the worker pool; errors name the sample.

        ``chunked=True`` gives each thread one contiguous run of samples (for light kernels).
        """

        def one(i: int) -> Any:
            try:
                return fn(i)
            except Exception as e:
                raise annotate(e, self.name, i, self.source(i)) from None

        if not parallel or self.n <= 1:
            return [one(i) for i in range(self.n)]
        stream = self.stream
        if stream is None:
            return self.ctx.parallel_map(one, range(self.n), chunked)  # type: ignore[arg-type]
        import torch

        def on_stream(i: int) -> Any:  # pool threads have their own current stream
            with torch.cuda.stream(stream):
                return one(i)

        return self.ctx.parallel_map(on_stream, range(self.n), chunked)  # type: ignore[arg-type]


def annotate(e: BaseException, op: str, i: int, source: str | None) -> BaseException:
    """Prefix ``e``'s message with the operator, the sample index and its source (once)."""
    if getattr(e, "_headrace_annotated", False):
        return e
    where = f"sample {i}" + (f" ({source!r})" if source else "")
    msg = str(e.args[0]) if e.args else type(e).__name__
    prefix = f"{op}: " if not msg.startswith(f"{op}:") else ""
    rest = msg[len(op) + 2 :] if not prefix else msg
    if rest.startswith(f"sample {i}:") or rest.startswith(f"sample {i} ("):
        e.args = (f"{op}: {rest}",) + tuple(e.args[1:])  # (the kernel named the sample)
    else:
        e.args = (f"{op}: {where}: {rest}",) + tuple(e.args[1:])
    if hasattr(e, "sample_index"):
        e.sample_index = i  # type: ignore[attr-defined]
        if source is not None:
            e.source = source  # type: ignore[attr-defined]
    try:
        e._headrace_annotated = True  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return e
