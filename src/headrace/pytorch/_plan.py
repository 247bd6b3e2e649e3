"""The loader's plan of an epoch: which samples each batch holds, without reading them.

With worker processes the parent does not read files: it runs the reader over an *index-only*
view of its data set (``read(i)`` returns ``i``), so the reader's own batching, shuffling,
sharding, last-batch modes and checkpoint state are exactly those of a normal epoch, and each
batch's sample indices (with their sources) go to the worker that reads them. Readers whose
batches depend on reading (``on_error="skip"`` replaces unreadable samples) or whose data set
cannot be read from another process are read in the parent instead, and the samples (encoded
files, not pixels) travel with the task.

Examples
--------
>>> import headrace as ndd
>>> r = ndd.readers.File(files=[__file__] * 5, labels=list(range(5)))
>>> [p[1] for p, _ in epoch_plan(r, 2, "partial", track=False)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

#: Data sets read inside the worker processes (stateless, random access by file).
WORKER_READ = {"_FileDataset", "_NpyDataset"}


class _IndexOnly:
    """A data set's view whose ``read(i)`` returns the index instead of the sample."""

    def __init__(self, dataset: Any, outputs: int) -> None:
        self._dataset = dataset
        self._outputs = outputs
        self.read_errors = dataset.read_errors

    def __len__(self) -> int:
        return len(self._dataset)

    def source(self, index: int) -> Any:
        return self._dataset.source(index)

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        return (np.array([index], np.int64),) * self._outputs


def reads_in_workers(reader: Any) -> bool:
    """Whether the workers can read this reader's samples themselves."""
    ds = getattr(reader, "_dataset", None)
    return (
        ds is not None
        and type(ds).__name__ in WORKER_READ
        and not getattr(reader, "_skip", False)
        and hasattr(reader, "_outputs")
    )


def epoch_plan(
    reader: Any, batch_size: int, mode: str | None, track: bool
) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """One epoch of the reader as ``(payload, state)`` pairs: the payload is
    ``("index", indices, sources, names)`` or ``("samples", columns, sources, names)`` (one
    ``(dtype, layout, arrays)`` per output; ``names``: the keys of a reader that yields a dict,
    else ``None``); the state is the
    reader's state after the batch (``None`` unless ``track``)."""
    extra = {} if mode is None else {"last_batch": mode}
    index_only = reads_in_workers(reader)
    gen = reader.next_epoch(batch_size=batch_size, **extra)
    if index_only:  # the reader binds its data set when the epoch starts: swap it for that
        real = reader._dataset
        reader._dataset = _IndexOnly(real, len(reader._outputs))
        try:
            first = next(gen, None)
        finally:
            reader._dataset = real
        items = gen if first is None else _chain(first, gen)
    else:
        items = gen
    try:
        for outputs in items:
            names = tuple(outputs) if isinstance(outputs, dict) else None
            if names is not None:
                outputs = tuple(outputs.values())
            b = outputs[0]
            sources = list(b._sources) if getattr(b, "_sources", None) is not None else None
            if index_only:
                payload: tuple[Any, ...] = (
                    "index", [int(s[0]) for s in b._samples], sources, names
                )  # fmt: skip
            else:
                columns = [(o.dtype, o.layout, [np.asarray(t) for t in o.tensors]) for o in outputs]
                payload = ("samples", columns, sources, names)
            yield payload, reader._current_state() if track else None
    finally:
        gen.close()


def call_fn(fn: Any, outputs: Any) -> Any:
    """The loader's per-batch function applied to one batch of reader outputs:
    ``fn(*outputs)`` for a tuple, ``fn(outputs)`` for a dict (readers with named outputs, such
    as ``readers.TFRecord``); the outputs themselves when there is no function.

    Examples
    --------
    >>> call_fn(lambda a, b: a + b, (1, 2)), call_fn(lambda d: d["x"], {"x": 3})
    (3, 3)
    """
    if fn is None:
        return outputs
    return fn(outputs) if isinstance(outputs, dict) else fn(*outputs)


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


__all__ = ["WORKER_READ", "call_fn", "epoch_plan", "reads_in_workers"]
