"""Capture-mode loops in worker processes: the recorded calls of step ``k`` run in worker
``k % N``, each with its own thread pool, so that a loop scales past one process's GIL.

The parent's producer thread (:mod:`._pipeline`) still pulls the driving source's items and the
feeders' items, in order; it sends each step's items to a worker and takes the results back in
order. A worker runs exactly what the thread pipeline runs (:func:`._steps.compute_step`,
its random calls positioned by the same schedule), so results are bit-identical to one process.
Each step's items and results travel through shared-memory slots (:mod:`headrace._exec.shm`):
the arrays, then a small pickle of the rest; the pipe only carries a slot's name and layout, so
no side ever waits on a full pipe and pixel data is never pickled. An operator's exception
is re-raised in the body at the call that would have raised it, with its type and message (which
name the sample and its file) and a note naming the worker; a sample dropped by a decoder's
``on_error="skip"`` is known to the parent's step as in one process.

Workers start with the loop's first replayed epoch and live as long as the loop (across its
epochs); a loop left early, closed or collected stops them and deletes their shared memory.
Only loops whose traced step computed on the host go to workers (a worker computes on the
host; GPU data would cross processes); the others run in the producer thread.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import warnings
import weakref
from typing import Any

import numpy as np

from headrace._core.batch import Batch
from headrace._core.batch import Step as SampleStep
from headrace._core.errors import InvalidArgumentError
from headrace._exec import shm
from headrace._exec.producer import Channel
from headrace._exec.workers import (
    default_num_workers,
    error_payload,
    rebuild_error,
    resolve_context,
    stop_workers,
    usable_cpus,
    worker_setup,
)
from headrace._rng import RNG
from headrace.capture._graph import Node, Step
from headrace.capture._stats import mark_captured
from headrace.capture._steps import compute_step, pull_feeds

SLOTS_PER_WORKER = 2
"""Steps in flight per worker (each in its own shared-memory slot)."""

_INLINE_BYTES = 512
"""Arrays smaller than this travel in the pickle itself."""

_POLL_S = 0.05


# --- results on the wire ------------------------------------------------------------------------
class _Dumper(pickle.Pickler):
    """Pickles a step's results; arrays go to ``arrays`` (the slot), exceptions as payloads."""

    def __init__(self, buf: io.BytesIO, arrays: list[Any]) -> None:
        super().__init__(buf, protocol=pickle.HIGHEST_PROTOCOL)
        self.arrays = arrays

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is np.ndarray and obj.nbytes >= _INLINE_BYTES and not obj.dtype.hasobject:
            self.arrays.append(obj)
            return ("a", len(self.arrays) - 1)
        if isinstance(obj, BaseException):
            return ("e", error_payload(obj))
        return None


class _Loader(pickle.Unpickler):
    def __init__(self, buf: io.BytesIO, arrays: list[Any], note: str) -> None:
        super().__init__(buf)
        self.arrays, self.note = arrays, note

    def persistent_load(self, pid: Any) -> Any:
        if pid[0] == "a":
            return self.arrays[pid[1]]
        return rebuild_error(pid[1], self.note)


class _GraphDumper(pickle.Pickler):
    """Pickles the recorded graph for ``spawn``/``forkserver`` workers: a generator becomes its
    seed (workers draw from copies placed by the schedule; a lock does not pickle)."""

    def __init__(self, buf: io.BytesIO) -> None:
        super().__init__(buf, protocol=pickle.HIGHEST_PROTOCOL)
        self.keys: dict[int, int] = {}

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is RNG:
            key = self.keys.setdefault(id(obj), len(self.keys))
            return ("rng", key, obj._seed)
        return None


class _GraphLoader(pickle.Unpickler):
    def __init__(self, buf: io.BytesIO) -> None:
        super().__init__(buf)
        self.rngs: dict[int, RNG] = {}

    def persistent_load(self, pid: Any) -> Any:
        _, key, seed = pid
        r = self.rngs.get(key)
        if r is None:
            r = self.rngs[key] = RNG(seed=seed)
        return r


def dump_graph(nodes: list[Node], rngs: list[RNG]) -> bytes:
    """The recorded ``nodes`` and the schedules' generators, for a spawned worker."""
    buf = io.BytesIO()
    _GraphDumper(buf).dump((nodes, rngs))
    return buf.getvalue()


def load_graph(data: bytes) -> tuple[list[Node], list[RNG]]:
    """What :func:`dump_graph` wrote (one generator object per original generator)."""
    return _GraphLoader(io.BytesIO(data)).load()  # type: ignore[no-any-return]


def pack(obj: Any, writer: shm.SlotWriter, slot: int) -> Any:
    """Write ``obj`` into ``slot``: its arrays, then its pickle (so that the message on the pipe
    stays small and a send never waits for the other side); the metadata to :func:`unpack` it."""
    arrays: list[Any] = []
    buf = io.BytesIO()
    _Dumper(buf, arrays).dump(obj)
    arrays.append(np.frombuffer(buf.getbuffer(), np.uint8))
    return writer.write(slot, arrays)


def unpack(meta: Any, reader: shm.SlotReader, key: Any, note: str) -> Any:
    """The object :func:`pack` wrote (copied out: the slot is free again); exceptions in it are
    rebuilt with ``note``."""
    arrays = reader.read(meta, key)
    data = arrays.pop()
    return _Loader(io.BytesIO(data.tobytes()), arrays, note).load()


def _kept_of(results: list[Any]) -> list[tuple[int, int, tuple[int, ...]]]:
    """``(node, output, kept)`` of every output batch a skipping decoder made."""
    found = []
    for i, res in enumerate(results):
        outs = res if type(res) is tuple else (res,)
        for j, o in enumerate(outs):
            if isinstance(o, Batch) and o._kept is not None:
                found.append((i, j, o._kept))
    return found


# --- the worker process ------------------------------------------------------------------------
def _with_fresh_step(src: Any) -> None:
    """Give the step's source batches one sample step, as a reader's batches have."""
    step = SampleStep()
    for b in src if isinstance(src, tuple) else (src,):
        if isinstance(b, Batch):
            b._step = step


def _source_step(src: Any) -> SampleStep | None:
    for b in src if isinstance(src, tuple) else (src,):
        if isinstance(b, Batch) and b._step is not None:
            return b._step
    return None


def worker_main(
    conn: Any, index: int, prefix: str, threads: int, parent_pid: int, init: Any
) -> None:
    """Entry point of capture worker ``index`` (runs in the child process)."""
    worker_setup(threads)
    kind, payload = init
    nodes, rngs = load_graph(payload) if kind == "pickled" else payload
    writer, inputs = shm.SlotWriter(prefix, index), shm.SlotReader()
    plan: list[tuple[int, RNG, int, int]] = []
    try:
        while True:
            while not conn.poll(1.0):
                if os.getppid() != parent_pid:
                    return
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg is None:
                return
            if msg[0] == "epoch":
                plan = [
                    (id(r), RNG(seed=r._seed), start, period)
                    for r, (start, period) in zip(rngs, msg[1])
                ]
                continue
            _, k, slot, batch_size, in_meta = msg
            try:
                src, feeds = unpack(in_meta, inputs, slot, "(sent to the capture worker)")
                _with_fresh_step(src)
                positions = {key: (c, start + k * period) for key, c, start, period in plan}
                results = compute_step(nodes, batch_size, src, feeds, positions)
                step = _source_step(src)
                drops = list(step.drops) if step is not None else []
                meta = pack(results, writer, slot)
                conn.send(("ok", k, meta, _kept_of(results), drops))
            except Exception as e:  # not an operator's error (those are results)
                conn.send(("error", k, error_payload(e)))
    except (BrokenPipeError, EOFError, KeyboardInterrupt):  # the parent is gone or stopping
        return
    finally:
        writer.close()
        inputs.close()


# --- the parent's side -------------------------------------------------------------------------
class WorkersStopped(Exception):
    """The consumer stopped the pipeline while a step was awaited."""


class CaptureWorkers:
    """``num_workers`` processes computing the recorded ``nodes`` of a capture-mode loop."""

    def __init__(self, nodes: list[Node], rngs: list[RNG], num_workers: int, context: Any) -> None:
        self.nodes, self.rngs = nodes, rngs
        self.num_workers = num_workers
        self.threads = max(1, usable_cpus() // num_workers)
        self.context = context
        self.prefix = shm.new_prefix()
        self._procs: list[Any] = []
        self._conns: list[Any] = []
        self._slots = shm.SlotReader()
        # each step's source and feeder items, in slots of the parent's (one writer per worker)
        self._inputs = [shm.SlotWriter(f"{self.prefix}-in", w) for w in range(num_workers)]
        self._finalizer = weakref.finalize(
            self, stop_workers, self._procs, self._conns, self._slots, self.prefix
        )

    def _init_payload(self) -> Any:
        if self.context.get_start_method() == "fork":
            return "forked", (self.nodes, self.rngs)
        return "pickled", dump_graph(self.nodes, self.rngs)

    def start(self) -> None:
        """Start the workers, unless running. Call it from the loop's thread, not a producer
        thread: a worker dies with the thread that started it (``PR_SET_PDEATHSIG``)."""
        if self._procs:
            return
        init = self._init_payload()
        try:
            for i in range(self.num_workers):
                parent_end, child_end = self.context.Pipe(duplex=True)
                p = self.context.Process(
                    target=worker_main,
                    args=(child_end, i, self.prefix, self.threads, os.getpid(), init),
                    name=f"headrace-capture-worker-{i}",
                    daemon=True,
                )
                p.start()
                child_end.close()
                self._procs.append(p)
                self._conns.append(parent_end)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the workers and release the shared memory (idempotent)."""
        self._finalizer()
        for w in self._inputs:
            w.close()

    def _restartable(self) -> None:
        """After a left epoch: workers stopped, a later epoch starts new ones."""
        self.close()
        self._finalizer = weakref.finalize(
            self, stop_workers, self._procs, self._conns, self._slots, self.prefix
        )

    def _receive(self, w: int, k: int, slot: int, emit: Channel) -> tuple[list[Any], list[Any]]:
        """Step ``k``'s results from worker ``w`` and the samples its decoders dropped."""
        conn, proc = self._conns[w], self._procs[w]
        while not conn.poll(_POLL_S):
            if emit.stopped:
                raise WorkersStopped
            if not proc.is_alive():
                break
        note = f"(raised in capture worker {w}, pid {proc.pid}, step {k} of the epoch)"
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            raise RuntimeError(
                f"capture mode: worker {w} (pid {proc.pid}) exited unexpectedly (exit code "
                f"{proc.exitcode}) while computing step {k} of the epoch."
            ) from None
        if msg[0] == "error":
            raise rebuild_error(msg[2], note)
        _, _k, meta, kept, drops = msg
        results: list[Any] = unpack(meta, self._slots, (w, slot), note)
        for i, j, rows in kept:
            res = results[i]
            (res[j] if type(res) is tuple else res)._kept = rows
        for res in results:
            if not isinstance(res, BaseException):
                mark_captured(res)
        return results, drops

    def run_epoch(
        self,
        source: Any,
        feeders: list[Any],
        starts: list[tuple[int, int]],
        batch_size: int,
        emit: Channel,
    ) -> None:
        """Compute the steps of ``source`` in the workers and emit them in order.

        ``starts``: ``(start, period)`` of each generator's schedule for this epoch's first step.
        """
        for c in self._conns:
            c.send(("epoch", starts))
        n = self.num_workers
        free = [collections.deque(range(SLOTS_PER_WORKER)) for _ in range(n)]
        inflight: collections.deque[tuple[int, int, int, Any, list[Any]]] = collections.deque()
        submitted, exhausted, finished = 0, False, False
        failure: BaseException | None = None
        try:
            while True:
                while not exhausted and free[submitted % n] and not emit.stopped:
                    try:
                        src = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    except BaseException as e:  # raised after the steps before it
                        failure, exhausted = e, True
                        break
                    mark_captured(src)
                    feeds = pull_feeds(feeders, batch_size)
                    w = submitted % n
                    slot = free[w].popleft()
                    in_meta = pack((src, feeds), self._inputs[w], slot)
                    self._conns[w].send(("step", submitted, slot, batch_size, in_meta))
                    inflight.append((submitted, w, slot, src, feeds))
                    submitted += 1
                if not inflight:
                    break
                k, w, slot, src, feeds = inflight.popleft()
                results, drops = self._receive(w, k, slot, emit)
                free[w].append(slot)
                step = _source_step(src)
                if step is not None:
                    for d in drops:
                        step.record(*d)
                if not emit(Step(src, feeds, results)):
                    return
            if failure is not None:
                raise failure
            finished = True
        except WorkersStopped:
            return
        finally:
            if not finished:  # the workers hold stale steps: stop them
                self._restartable()


class WorkerRequest:
    """The worker processes a capture-mode loop's epochs ask for: ``num_workers`` (None: the
    default, :func:`~headrace._exec.workers.default_num_workers`) and the start method."""

    def __init__(self, num_workers: int | None, context: Any) -> None:
        if num_workers is not None and (
            isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0
        ):
            raise InvalidArgumentError(
                f"capture mode: num_workers must be None or an integer >= 0 (got {num_workers!r})."
            )
        self.num_workers, self.context = num_workers, context
        self._warned = False

    def resolve(self, nodes: list[Node], rngs: list[RNG], on_gpu: bool) -> tuple[int, Any]:
        """``(workers, multiprocessing context)`` for the recorded graph (``on_gpu``: its traced
        step put values on a GPU); ``(0, None)`` runs it in this process (asked for, or the
        graph cannot run in workers: warned when asked)."""
        auto = self.num_workers is None
        n = default_num_workers() if auto else self.num_workers
        if not n:
            return 0, None
        context = resolve_context(self.context, "capture mode")
        why = "the loop computes on a GPU" if on_gpu else None
        if why is None and context.get_start_method() != "fork":
            why = (
                None
                if picklable_graph(nodes, rngs)
                else (
                    "its recorded calls cannot be pickled for "
                    f"{context.get_start_method()!r} workers"
                )
            )
        if why is None:
            return n, context
        if not auto and not self._warned:
            self._warned = True
            warnings.warn(
                f"capture mode: num_workers={n} is not used: {why}; the loop's steps are "
                "computed in this process.",
                RuntimeWarning,
                stacklevel=2,
            )
        return 0, None


def picklable_graph(nodes: list[Node], rngs: list[RNG]) -> bool:
    """Whether the recorded graph can be sent to ``spawn``/``forkserver`` workers."""
    try:
        dump_graph(nodes, rngs)
    except Exception:
        return False
    return True


__all__ = [
    "SLOTS_PER_WORKER",
    "CaptureWorkers",
    "WorkerRequest",
    "picklable_graph",
    "worker_main",
]
