"""``Loader``: a reader plus a per-batch function, as a PyTorch-style iterable.

A :class:`Loader` plays the role of ``torch.utils.data.DataLoader`` for headrace: each
``for batch in loader`` is one exact epoch of the reader (the last batch may be smaller, unless
the reader was built with an explicit ``last_batch``/``pad_last_batch`` or the loader is given
``last_batch=``), ``len(loader)`` is the number of batches in it, and every output arrives as a
``torch.Tensor`` on the requested device. The per-batch function runs headrace operators; since
operators run on a background executor, the loader asks for the next ``prefetch`` batches before
handing out the current one, so loading overlaps the training step without worker processes.

On many-core machines ``num_workers=N`` runs the per-batch work (reading the batch's files and
``fn``) in N worker processes, each with its own headrace threads, with the results passed
back through shared memory and **identical to the single-process run**, random augmentation
included (see :class:`Loader` and the README section "Worker processes").

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> from headrace.pytorch import Loader
>>> reader = ndd.readers.File(files=[__file__] * 5, labels=[0, 1, 2, 3, 4])
>>> loader = Loader(reader, lambda data, label: label, batch_size=2)
>>> len(loader), [t.flatten().tolist() for t in loader]
(3, [[0, 1], [2, 3], [4]])
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from headrace._core.errors import InvalidArgumentError, InvalidTypeError
from headrace._exec.workers import default_num_workers
from headrace._exec.workers import usable_cpus as _usable_cpus
from headrace.pytorch._plan import call_fn
from headrace.pytorch._transfer import to_torch


def _torch_device(device: Any) -> Any:
    import torch

    name = str(device)
    if name == "gpu" or name.startswith("gpu:"):  # headrace's names (and Device objects)
        name = "cuda" + name[3:]
    dev = torch.device(name)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise InvalidArgumentError(
            f"Loader: device={device!r} was requested but torch sees no CUDA device."
        )
    return dev


def _loader_mode(reader: Any, last_batch: str | None) -> str | None:
    """The last-batch mode a loader asks for: its own, else the reader's explicit one, else
    exact epochs (``"partial"``); ``None`` for readers without last-batch modes."""
    if last_batch is not None:
        from headrace.readers import _sharding as sh

        return sh.check_last_batch(last_batch)
    if not hasattr(reader, "_batches_left"):
        return None
    return reader._last_batch if getattr(reader, "_last_batch_explicit", False) else "partial"


def _epoch_batches(reader: Any, batch_size: int, mode: str | None) -> int:
    """Batches in the reader's next epoch (its current shard, the last-batch mode, what is left
    of it after a restored state)."""
    if hasattr(reader, "_batches_left"):
        return int(reader._batches_left(batch_size, mode))
    from headrace.readers import _sharding as sh

    meta = reader.get_metadata()
    n, k = int(meta["epoch_size"]), int(meta["number_of_shards"])
    size = -(-n // k)
    return sh.num_batches(size, batch_size, mode or "partial")


def _check_count(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise InvalidArgumentError(f"Loader: {name} must be an integer >= {low} (got {value!r}).")


class Loader:
    """Iterate a reader epoch by epoch, apply ``fn`` to each batch, hand out torch tensors.

    Parameters
    ----------
    reader : headrace reader
        Created once (e.g. ``ndd.readers.File(file_root=..., random_shuffle=True)``); each
        iteration of the loader is one ``reader.next_epoch(batch_size)``.
    fn : callable, optional
        Called as ``fn(*reader_outputs)`` for each batch (``fn(outputs)`` for a reader that
        yields a dict of named outputs, such as ``readers.TFRecord``); returns what the loader
        yields (a ``Batch``, or a tuple/list/dict of them). Default: the reader's outputs
        unchanged.
    batch_size : int, optional
        Samples per batch (default: the reader's ``max_batch_size``).
    device : str or torch.device
        Where the yielded tensors live: ``"cpu"``, ``"cuda"``/``"gpu"``, ``"cuda:1"``, ...
        ``None`` leaves each tensor where the pipeline put it.
    prefetch : int, optional
        Batches submitted ahead of the one being consumed (0 = none). Default 1, or 0 for a
        reader built with ``enable_checkpointing=True``: ``fn`` then runs for a batch only when
        it is yielded, so that the generators it draws from stand where the yielded batches
        left them and a checkpoint taken between batches (``Checkpoint`` with the reader and
        the generators registered, or :meth:`state_dict` with the generators' states) resumes
        exactly. The reader's own ``get_state()`` is always that of the last yielded batch.
    last_batch : {"partial", "drop", "pad", "fill"}, optional
        The reader's last-batch mode for every epoch. Default: the mode the reader was built
        with when given explicitly (``last_batch=``/``pad_last_batch=True``), else
        ``"partial"``: exact epochs, the last batch may be smaller (``next_epoch()`` itself
        defaults to the reference's ``"fill"``).
    non_blocking : bool
        Use non-blocking host-to-device copies.
    num_workers : int, optional
        Worker processes running the per-batch work (reading the batch's samples + ``fn``);
        0 runs everything in this process, on headrace's threads. Batch ``i`` goes to worker
        ``i % num_workers`` and batches are yielded in order; their outputs come back through
        shared memory (a ring of reusable slots per worker, freed when the loader is closed or
        collected). Results, random augmentation included, are bit-identical to
        ``num_workers=0``: every batch must make the same random calls (``headrace.random.RNG``
        objects or the default generator); a batch that draws differently, or a numpy/Python/
        torch generator held by ``fn``, raises instead of silently differing. ``fn`` is called
        once more, without computing anything, on each worker's first batch, to count its
        draws. Default ``None``: :func:`default_num_workers` (0 below 8 CPUs, else one per two
        CPUs; ``HEADRACE_NUM_WORKERS`` overrides), falling back to 0 with a warning when ``fn``
        cannot go to workers.
    multiprocessing_context : str or multiprocessing context, optional
        How workers start: ``"fork"`` (default when CUDA is not initialised in this process),
        else ``"forkserver"``/``"spawn"``, which pickle ``fn`` (define it at module level).
    worker_threads : int, optional
        headrace threads in each worker (default: usable CPUs // ``num_workers``, at least 1).

    Examples
    --------
    >>> import headrace as ndd
    >>> from headrace.pytorch import Loader
    >>> reader = ndd.readers.File(files=[__file__] * 3, labels=[5, 6, 7], max_batch_size=2)
    >>> loader = Loader(reader, lambda data, label: label)
    >>> for epoch in range(2):
    ...     print(epoch, [t.shape[0] for t in loader])
    0 [2, 1]
    1 [2, 1]
    """

    def __init__(
        self,
        reader: Any,
        fn: Callable[..., Any] | None = None,
        *,
        batch_size: int | None = None,
        device: Any = "cpu",
        prefetch: int | None = None,
        non_blocking: bool = True,
        last_batch: str | None = None,
        num_workers: int | None = None,
        multiprocessing_context: Any = None,
        worker_threads: int | None = None,
    ) -> None:
        if not hasattr(reader, "next_epoch"):
            raise InvalidTypeError(
                f"Loader needs a headrace reader (with next_epoch), got {type(reader).__name__}."
            )
        if fn is not None and not callable(fn):
            raise InvalidTypeError(f"Loader: fn must be callable, got {type(fn).__name__}.")
        bs = batch_size if batch_size is not None else getattr(reader, "_max_batch_size", None)
        if bs is None or isinstance(bs, bool) or not isinstance(bs, int) or bs < 1:
            raise InvalidArgumentError(
                "Loader: give a positive batch_size (or construct the reader with max_batch_size)."
            )
        if prefetch is None:  # (see the docstring: exact checkpoints of the generators too)
            prefetch = 0 if getattr(reader, "_checkpointing", False) else 1
        if isinstance(prefetch, bool) or not isinstance(prefetch, int) or prefetch < 0:
            raise InvalidArgumentError(
                f"Loader: prefetch must be an integer >= 0 (got {prefetch!r})."
            )
        self.reader = reader
        self.fn = fn
        self.batch_size = bs
        self.device = None if device is None else _torch_device(device)
        self.prefetch = prefetch
        self.non_blocking = non_blocking
        self.last_batch = _loader_mode(reader, last_batch)
        self.epoch = 0  # epochs completed
        self._state: Any = None
        self._pool: Any = None
        self.num_workers = self._resolve_workers(num_workers, multiprocessing_context)
        if worker_threads is not None:
            _check_count("worker_threads", worker_threads, 1)
        self.worker_threads = worker_threads or max(1, _usable_cpus() // max(self.num_workers, 1))

    def _resolve_workers(self, num_workers: int | None, context: Any) -> int:
        from headrace._exec.workers import resolve_context
        from headrace.pytorch import _transfer

        auto = num_workers is None
        n = default_num_workers() if auto else num_workers
        _check_count("num_workers", n, 0)
        self.multiprocessing_context = None
        if n == 0:
            return 0
        try:
            kind = _transfer.stateful_foreign_rng(self.fn)
            if kind is not None:
                raise InvalidArgumentError(
                    f"Loader: the per-batch function holds a {kind}; its draws depend on its "
                    "history, so worker processes cannot reproduce them. Use a "
                    "headrace.random.RNG (counter-based) or num_workers=0."
                )
            ctx = resolve_context(context)
            if ctx.get_start_method() != "fork":
                _transfer.pickle_function(self.fn, ctx.get_start_method())
        except (InvalidArgumentError, TypeError) as e:
            if not auto:
                raise
            warnings.warn(
                f"{e} Running in this process (num_workers=0).", RuntimeWarning, stacklevel=3
            )
            return 0
        self.multiprocessing_context = ctx
        return int(n)

    def __len__(self) -> int:
        """Batches in the next epoch (fewer when resuming from a mid-epoch state)."""
        return _epoch_batches(self.reader, self.batch_size, self.last_batch)

    def __iter__(self) -> Iterator[Any]:
        """One epoch: yields the per-batch function's outputs as torch tensors."""
        if self.num_workers:
            return self._iter_workers()
        return self._iter_here()

    def _iter_workers(self) -> Iterator[Any]:
        from headrace.pytorch._workers import WorkerPool

        if self._pool is None:
            self._pool = WorkerPool(
                self.reader, self.fn, self.num_workers, self.worker_threads,
                self.multiprocessing_context,
            )  # fmt: skip
        track = bool(getattr(self.reader, "_checkpointing", False))
        epoch = self._pool.epoch(self.batch_size, self.last_batch, track, self.prefetch)
        for result, state in epoch:
            yield self._deliver(result, state)
        self._epoch_done()

    def close(self) -> None:
        """Stop the worker processes and free their shared memory (they start again on the
        next iteration). Also done when the loader is garbage-collected.

        Examples
        --------
        >>> import headrace as ndd
        >>> from headrace.pytorch import Loader
        >>> reader = ndd.readers.File(files=[__file__] * 2, labels=[1, 2])
        >>> with Loader(reader, batch_size=1, num_workers=1) as loader:
        ...     [t.tolist() for _, t in loader]
        [[[1]], [[2]]]
        """
        if self._pool is not None:
            self._pool.close()

    def __enter__(self) -> Loader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _iter_here(self) -> Iterator[Any]:
        pending: collections.deque[tuple[Any, Any]] = collections.deque()
        track = bool(getattr(self.reader, "_checkpointing", False))
        extra = {} if self.last_batch is None else {"last_batch": self.last_batch}
        for outputs in self.reader.next_epoch(batch_size=self.batch_size, **extra):
            result = call_fn(self.fn, outputs)
            state = self.reader._current_state() if track else None
            pending.append((result, state))
            if len(pending) > self.prefetch:
                yield self._deliver(*pending.popleft())
        while pending:
            yield self._deliver(*pending.popleft())
        self._epoch_done()

    def _deliver(self, result: Any, state: Any) -> Any:
        out = to_torch(result, self.device, self.non_blocking)
        self._state = state
        if state is not None:  # the reader's get_state() (a Checkpoint's) is where we stand
            self.reader._delivered_state = state
        return out

    def _epoch_done(self) -> None:
        self.epoch += 1
        self.reader._delivered_state = None  # (all delivered: the reader's own state again)

    # --- checkpointing (needs a reader built with enable_checkpointing=True) ----------------
    def state_dict(self) -> dict[str, Any]:
        """The reader's state after the last batch this loader yielded (prefetch excluded).

        Examples
        --------
        >>> import headrace as ndd
        >>> from headrace.pytorch import Loader
        >>> r = ndd.readers.File(files=[__file__] * 4, labels=[0, 1, 2, 3],
        ...                      enable_checkpointing=True)
        >>> loader = Loader(r, lambda d, lab: lab, batch_size=1, prefetch=2)
        >>> first = next(iter(loader))
        >>> loader.state_dict()["position"]
        1
        """
        if self._state is None:
            if not getattr(self.reader, "_checkpointing", False):
                raise RuntimeError(
                    "Loader.state_dict() needs a reader built with enable_checkpointing=True."
                )
            return dict(self.reader._current_state())
        return dict(self._state)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Resume from :meth:`state_dict` (call before the first iteration)."""
        self.reader._delivered_state = None
        self.reader.set_state(dict(state))

    def __repr__(self) -> str:
        return (
            f"Loader({self.reader!r}, batch_size={self.batch_size}, device={self.device}, "
            f"prefetch={self.prefetch}, num_workers={self.num_workers})"
        )


__all__ = ["Loader", "default_num_workers"]
