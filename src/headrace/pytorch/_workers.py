"""Worker processes of :class:`headrace.pytorch.Loader` (``num_workers > 0``).

The parent plans each epoch (:mod:`._plan`) and hands batch ``i`` to worker ``i % N`` with the
shared-memory slot to fill (:mod:`headrace._exec.shm`); the worker reads the batch's samples, runs
the per-batch function on its own headrace thread pool with its random generators placed where the
single process would have them (:mod:`._rng_schedule`), writes the output tensors into the slot
and sends back a small message (slot name, dtypes, shapes, the result's structure). The parent
takes results strictly in order, copies them out of the slot (which is then free again) and
yields them. Messages travel over one pipe per worker; there are no helper threads.

Shutdown: an epoch left early (``break``, an exception, ``KeyboardInterrupt``), :meth:`close`,
garbage collection of the loader or interpreter exit stop the workers (a polite request, then
``terminate``, then ``kill``) and delete the loader's slot files. Workers ignore ``SIGINT`` (the
parent decides), die with the parent (``PR_SET_PDEATHSIG`` on Linux, and a parent-pid check),
and are daemonic.
"""

from __future__ import annotations

import collections
import gc
import os
import weakref
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from headrace._exec import shm as _shm
from headrace._exec.workers import error_payload, rebuild_error, stop_workers, worker_setup
from headrace._rng import RNG, get_default_rng
from headrace.pytorch import _transfer
from headrace.pytorch._plan import call_fn, epoch_plan, reads_in_workers
from headrace.pytorch._rng_schedule import DEFAULT, Schedule, ScheduleError

SLOTS_PER_WORKER = 2
"""Batches in flight per worker (each in its own shared-memory slot)."""


def _columns_from_index(dataset: Any, outputs: Any, indices: list[int]) -> list[Any]:
    samples = [dataset.read(i) for i in indices]
    return [(dt, layout, [s[j] for s in samples]) for j, (dt, layout) in enumerate(outputs)]


def _wrap(columns: list[Any], sources: list[Any] | None) -> tuple[Any, ...]:
    from headrace._core.batch import Batch, Step
    from headrace._core.device import CPU

    step = Step()
    out = []
    for dt, layout, arrays in columns:
        b = Batch._wrap(list(arrays), dt, layout, CPU)
        if sources is not None:
            b._sources = list(sources)
        b._step = step
        out.append(b)
    return tuple(out)


def worker_main(
    conn: Any,
    index: int,
    prefix: str,
    threads: int,
    parent_pid: int,
    init: Any,
) -> None:
    """Entry point of worker ``index`` (runs in the child process)."""
    worker_setup(threads)

    kind, payload = init
    if kind == "pickled":
        (fn, dataset, outputs), rngs = _transfer.unpickle_function(payload)
        keyed: dict[Any, RNG] = dict(rngs)
    else:  # forked: the objects are here, at the parent's addresses
        fn, dataset, outputs = payload
        keyed = {id(o): o for o in gc.get_objects() if type(o) is RNG}
        keyed.pop(id(get_default_rng()), None)
    sched = Schedule(keyed)
    writer = _shm.SlotWriter(prefix, index)
    probed = False
    cpu = None
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
                _, states, default_state = msg
                sched.anchor(states, default_state)
                continue
            _, step, slot, (how, data, sources, names) = msg
            try:
                if cpu is None:
                    import torch

                    cpu = torch.device("cpu")
                columns = _columns_from_index(dataset, outputs, data) if how == "index" else data
                batches = _wrap(columns, sources)
                named = batches if names is None else dict(zip(names, batches))
                call: Callable[[], Any] = partial(call_fn, fn, named)
                new_periods = None
                if not probed:
                    sched.probe(call)
                    probed = True
                    new_periods = {k: d for k, d in sched.period.items() if d}
                with sched.step(step):
                    result = call()
                spec, tensors = _transfer.split_outputs(_transfer.to_torch(result, cpu, False))
                meta = writer.write(slot, tensors)
                conn.send(("ok", step, meta, spec, new_periods))
            except Exception as e:
                conn.send(("error", step, error_payload(e)))
    except (BrokenPipeError, EOFError, KeyboardInterrupt):  # the parent is gone or stopping
        return
    finally:
        writer.close()


# --- the parent's side -------------------------------------------------------------------------
class WorkerPool:
    """``num_workers`` processes running ``fn`` on the batches of ``reader``."""

    def __init__(self, reader: Any, fn: Any, num_workers: int, threads: int, context: Any) -> None:
        self.reader, self.fn = reader, fn
        self.num_workers, self.threads = num_workers, threads
        self.context = context
        self.prefix = _shm.new_prefix()
        self._procs: list[Any] = []
        self._conns: list[Any] = []
        self._slots = _shm.SlotReader()
        self._parent_rngs: dict[Any, RNG] = {}
        self.period: dict[Any, int] = {}
        self._finalizer = weakref.finalize(
            self, stop_workers, self._procs, self._conns, self._slots, self.prefix
        )

    @property
    def started(self) -> bool:
        return bool(self._procs)

    def _init_payload(self) -> Any:
        method = self.context.get_start_method()
        dataset = self.reader._dataset if reads_in_workers(self.reader) else None
        outputs = getattr(self.reader, "_outputs", None)
        if method == "fork":
            self._parent_rngs = {id(o): o for o in gc.get_objects() if type(o) is RNG}
            return "forked", (self.fn, dataset, outputs)
        data, rngs = _transfer.pickle_function((self.fn, dataset, outputs), method)
        self._parent_rngs = dict(enumerate(rngs))
        return "pickled", data

    def start(self) -> None:
        init = self._init_payload()
        try:
            for i in range(self.num_workers):
                parent_end, child_end = self.context.Pipe(duplex=True)
                p = self.context.Process(
                    target=worker_main,
                    args=(child_end, i, self.prefix, self.threads, os.getpid(), init),
                    name=f"headrace-loader-worker-{i}",
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

    # --- one epoch --------------------------------------------------------------------------
    def _rng_states(self) -> dict[Any, Any]:
        return {k: dict(self._parent_rngs[k].get_state()) for k in self.period if k != DEFAULT}

    def _receive(self, w: int, step: int, slot: int) -> Any:
        conn, proc = self._conns[w], self._procs[w]
        while not conn.poll(0.1):
            if not proc.is_alive():
                break
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            code = proc.exitcode
            raise RuntimeError(
                f"Loader: worker {w} (pid {proc.pid}) exited unexpectedly (exit code {code}) "
                f"while producing batch {step} of the epoch."
            ) from None
        if msg[0] == "error":
            raise rebuild_error(
                msg[2], f"(raised in Loader worker {w}, pid {proc.pid}, batch {step} of the epoch)"
            )
        _, _step, meta, spec, periods = msg
        if periods is not None:
            self._merge_periods(periods)
        tensors = self._slots.read(meta, (w, slot))
        return _transfer.join_outputs(spec, tensors)

    def _merge_periods(self, periods: dict[Any, int]) -> None:
        for key, d in periods.items():
            if self.period.setdefault(key, d) != d:
                raise ScheduleError(
                    "Loader: the workers' batches drew different numbers of random words "
                    f"({self.period[key]} and {d} per batch) from one generator; every batch must "
                    "make the same random calls with num_workers > 0."
                )

    def _mirror(self, anchors: dict[Any, int], called: int) -> None:
        """Move the parent's generators to where one process would have left them."""
        for key, d in self.period.items():
            r = get_default_rng() if key == DEFAULT else self._parent_rngs.get(key)
            if r is not None and d:
                with r._lock:
                    r._pos = anchors[key] + called * d

    def epoch(
        self, batch_size: int, mode: str | None, track: bool, prefetch: int
    ) -> Iterator[tuple[Any, Any]]:
        """``(result, reader state)`` of each batch of one epoch, in order."""
        if not self.started:
            self.start()
        n = self.num_workers
        default = get_default_rng()
        states = self._rng_states()
        for c in self._conns:
            c.send(("epoch", states, dict(default.get_state())))
        anchors: dict[Any, int] = {k: r._pos for k, r in self._parent_rngs.items()}
        anchors[DEFAULT] = default._pos
        free = [collections.deque(range(SLOTS_PER_WORKER)) for _ in range(n)]
        inflight: collections.deque[tuple[int, int, int, Any]] = collections.deque()
        plan = epoch_plan(self.reader, batch_size, mode, track)
        submitted, exhausted, finished = 0, False, False
        try:
            while True:
                while not exhausted and free[submitted % n]:
                    item = next(plan, None)
                    if item is None:
                        exhausted = True
                        break
                    payload, state = item
                    w = submitted % n
                    slot = free[w].popleft()
                    self._conns[w].send(("task", submitted, slot, payload))
                    inflight.append((submitted, w, slot, state))
                    submitted += 1
                if not inflight:
                    break
                step, w, slot, state = inflight.popleft()
                result = self._receive(w, step, slot)
                free[w].append(slot)
                called = step + 1 + prefetch
                self._mirror(anchors, min(called, submitted) if exhausted else called)
                yield result, state
            finished = True
            self._parent_rngs = {k: r for k, r in self._parent_rngs.items() if self.period.get(k)}
        finally:
            plan.close()
            if not finished:  # left early: the workers hold stale batches; start afresh
                self.close()
                self._finalizer = weakref.finalize(
                    self, stop_workers, self._procs, self._conns, self._slots, self.prefix
                )


__all__ = ["SLOTS_PER_WORKER", "WorkerPool"]
