"""``EvalContext``: device, worker thread pool, background executor and stream of a thread's calls.

Examples
--------
>>> import headrace as ndd
>>> ctx = ndd.EvalContext.current()
>>> ctx is ndd.EvalContext.default()
True
>>> ctx.num_threads >= 1
True
"""

from __future__ import annotations

import collections
import functools
import itertools
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from headrace._core import device as _device_module
from headrace._core import handoff as _handoff
from headrace._core.device import CPU, Device
from headrace._core.errors import InvalidArgumentError, InvalidTypeError
from headrace._core.invocation import Invocation
from headrace._exec import streams as _streams
from headrace._exec.checkpoint import Checkpoint
from headrace._exec.shutdown import register

T = TypeVar("T")
R = TypeVar("R")

# --- thread count ----------------------------------------------------------------------------
_num_threads: int | None = None
_num_threads_version = 0


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def get_num_threads() -> int:
    """Worker threads for CPU operators: ``set_num_threads`` value, else ``DALI_NUM_THREADS``,
    else the number of CPUs this process may use.

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.get_num_threads() >= 1
    True
    """
    if _num_threads is not None:
        return _num_threads
    env = os.environ.get("HEADRACE_NUM_THREADS") or os.environ.get("DALI_NUM_THREADS")
    if env:
        try:
            n = int(env)
            if n > 0:
                return n
        except ValueError:
            pass
    return _cpu_count()


def set_num_threads(n: int | None) -> None:
    """Set the number of worker threads for CPU operators (``None`` restores the default).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.set_num_threads(2); ndd.get_num_threads()
    2
    >>> ndd.set_num_threads(None)
    """
    global _num_threads, _num_threads_version
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int):
            raise InvalidTypeError(f"set_num_threads: expected an int (got {type(n).__name__}).")
        if n <= 0:
            raise InvalidArgumentError(f"set_num_threads: the count must be positive (got {n}).")
        if n > 100 * _cpu_count():
            raise InvalidArgumentError(
                f"set_num_threads: {n} threads is more than 100x the CPU count ({_cpu_count()})."
            )
    _num_threads = n
    _num_threads_version += 1


_opencv_done = False


def _single_threaded_opencv() -> None:
    """Make OpenCV's own per-call parallelism single-threaded once headrace parallelises over
    samples: nesting both oversubscribes the cores (measured: light kernels 1.7x faster on 2
    threads). ``HEADRACE_OPENCV_THREADS=keep`` leaves OpenCV alone."""
    global _opencv_done
    if _opencv_done:
        return
    _opencv_done = True
    if os.environ.get("HEADRACE_OPENCV_THREADS") == "keep":
        return
    try:
        import cv2
    except ImportError:  # pragma: no cover - a hard dependency
        return
    cv2.setNumThreads(1)


def _cuda_device_now() -> int:
    """torch's current CUDA device on a machine with CUDA (else -1: nothing to follow)."""
    if not _device_module._real_gpu_count():
        return -1
    import torch

    return int(torch.cuda.current_device())


class ThreadPool:
    """A pool of worker threads for per-sample work; the calling thread works too.

    Parameters
    ----------
    num_threads : int, optional
        Number of threads working on a call, the caller included (default: ``get_num_threads()``).
    device_id : int, optional
        GPU the pool's work is bound to (None on CPU-only machines).

    Examples
    --------
    >>> pool = ThreadPool(2)
    >>> pool.map(lambda x: x * x, [1, 2, 3])
    [1, 4, 9]
    """

    def __init__(self, num_threads: int | None = None, *, device_id: int | None = None) -> None:
        self.num_threads = num_threads if num_threads is not None else get_num_threads()
        self.device_id = device_id
        self._queue: collections.deque[Callable[[], None]] = collections.deque()
        self._cv = threading.Condition(threading.Lock())
        self._threads: list[threading.Thread] = []
        self._stop = [False]  # shared with the workers, which hold no reference to the pool
        # an unreachable pool (e.g. the default pool of a thread that ended) stops its workers
        self._finalizer = weakref.finalize(self, _stop_workers, self._cv, self._stop)

    @property
    def _closed(self) -> bool:
        return self._stop[0]

    def _ensure_threads(self) -> None:
        _single_threaded_opencv()
        want = self.num_threads - 1
        while len(self._threads) < want:
            t = threading.Thread(
                target=_pool_worker,
                args=(self._queue, self._cv, self._stop),
                name=f"headrace-pool-{len(self._threads)}",
                daemon=True,
            )
            t.start()
            self._threads.append(t)
            register(t, functools.partial(_stop_workers, self._cv, self._stop))

    def map(self, fn: Callable[[T], R], items: Sequence[T], chunked: bool = False) -> list[R]:
        """``[fn(x) for x in items]``, spread over the pool; the first error is raised.

        Items are handed out one at a time (balances uneven work), or with ``chunked=True`` in
        one contiguous run per thread (for many short items, where hand-offs would dominate).
        """
        n = len(items)
        workers = min(self.num_threads, n)
        if workers <= 1 or self._closed:
            return [fn(x) for x in items]
        self._ensure_threads()
        out: list[Any] = [None] * n
        counter = itertools.count()
        errors: list[tuple[int, BaseException]] = []
        remaining = [workers]
        done = threading.Event()
        lock = threading.Lock()

        step = -(-n // workers) if chunked else 1

        def work() -> None:
            try:
                while not errors:
                    start = next(counter) * step
                    if start >= n:
                        break
                    for i in range(start, min(start + step, n)):
                        try:
                            out[i] = fn(items[i])
                        except BaseException as e:
                            errors.append((i, e))
                            return
            finally:
                with lock:
                    remaining[0] -= 1
                    if remaining[0] == 0:
                        done.set()

        with self._cv:
            for _ in range(workers - 1):
                self._queue.append(work)
            self._cv.notify(workers - 1)
        work()
        done.wait()
        if errors:
            raise min(errors, key=lambda p: p[0])[1]
        return out

    def close(self) -> None:
        """Stop the worker threads (they end once the work queued before is done)."""
        self._finalizer()


def _stop_workers(cv: threading.Condition, stop: list[bool]) -> None:
    stop[0] = True
    with cv:
        cv.notify_all()


def _pool_worker(queue: collections.deque, cv: threading.Condition, stop: list[bool]) -> None:
    while True:
        with cv:
            while not queue:
                if stop[0]:
                    return
                cv.wait(timeout=5.0)
            job = queue.popleft()
        job()
        del job  # the job's closure may reach the pool: keep nothing of it while idle


class _Executor:
    """One background thread running eager invocations in submission order.

    Waking a thread costs far more than a small operator, and a result consumed right after its
    call is run by the consumer anyway (work stealing). So a single queued call does not wake a
    sleeping executor at once: the executor polls every millisecond while calls keep coming, and
    is woken at once only when a backlog builds up or it is in its long sleep.
    """

    _POLL = 0.001
    _ACTIVE = 1.0
    _CHAIN_WAIT = 0.0005

    def __init__(self) -> None:
        self._queue: collections.deque[Invocation] = collections.deque()
        self._cv = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None
        self._long_sleep = True
        self._last_submit = 0.0
        self._closed = False

    def close(self) -> None:
        """End the thread once the queue is empty (the owning context was dropped)."""
        self._closed = True
        with self._cv:
            self._cv.notify_all()

    def abandon(self) -> None:
        """End the thread after the call it is running, leaving the queued ones unrun (the
        interpreter is exiting: nobody will read their results)."""
        self._queue.clear()
        self.close()

    def submit(self, inv: Invocation) -> None:
        q = self._queue
        q.append(inv)
        self._last_submit = time.monotonic()
        if self._long_sleep or len(q) > 1:
            with self._cv:
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(
                        target=self._loop, name="headrace-executor", daemon=True
                    )
                    self._long_sleep = False
                    self._thread.start()
                    register(self._thread, self.abandon)
                self._cv.notify()

    def _loop(self) -> None:
        q = self._queue
        while True:
            try:
                inv = q.popleft()
            except IndexError:
                idle_for = time.monotonic() - self._last_submit
                with self._cv:
                    if q:
                        continue
                    if self._closed:
                        self._thread = None
                        return
                    if idle_for < self._ACTIVE:
                        self._cv.wait(timeout=self._POLL)
                        continue
                    self._long_sleep = True
                    woke = self._cv.wait(timeout=30.0)
                    self._long_sleep = False
                    if not woke and not q:
                        self._thread = None
                        self._long_sleep = True
                        return
                continue
            if inv.stage is not None and _consumed_next(inv, q, self._CHAIN_WAIT):
                continue  # its consumer, next in line, runs both sample-major (_dispatch.chain)
            inv.try_run()

    def drain(self) -> None:
        """Run everything queued (in the calling thread where not started)."""
        while self._queue:
            try:
                inv = self._queue.popleft()
            except IndexError:
                break
            inv.try_run()


def _consumed_next(inv: Invocation, q: collections.deque[Invocation], wait: float) -> bool:
    """Whether the next queued call is a chain stage reading ``inv``'s output (waiting up to
    ``wait`` seconds for one to be queued: a script queues its next call within ~50 µs)."""
    if not q:
        deadline = time.monotonic() + wait
        while not q and time.monotonic() < deadline:
            time.sleep(wait / 10)
    try:
        nxt = q[0]
    except IndexError:
        return False
    st = nxt.stage
    return st is not None and st.producer() is inv


class EvalContext:
    """Device, thread pool, background executor and CUDA stream used by operator calls.

    Parameters
    ----------
    num_threads : int, optional
        Worker threads for CPU operators (default: follows ``get_num_threads()``).
    device_id : int, optional
        GPU used by the context (default: the current device; None without a GPU).
    cuda_stream : object, optional
        The stream GPU operators of this context run on (a :class:`Stream`, torch stream,
        ``__cuda_stream__`` object or raw handle). Default: the thread's current stream when
        the context is created, else the device's default stream then, else one created on
        first use and kept by the context (streams set later do not move it).
    thread_pool : ThreadPool, optional
        An existing pool to run per-sample work on (shareable between contexts); excludes
        ``num_threads`` and must belong to the same ``device_id``.

    Examples
    --------
    >>> import headrace as ndd
    >>> with ndd.EvalContext(num_threads=1) as ctx:
    ...     ctx.num_threads
    1
    >>> pool = ndd.ThreadPool(2)
    >>> ndd.EvalContext(thread_pool=pool).thread_pool is pool
    True
    """

    def __init__(
        self,
        *,
        num_threads: int | None = None,
        device_id: int | None = None,
        cuda_stream: Any = None,
        thread_pool: ThreadPool | None = None,
    ) -> None:
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads <= 0):
            raise InvalidArgumentError(
                f"EvalContext: num_threads must be a positive int (got {num_threads!r})."
            )
        self._num_threads = num_threads
        given_device = device_id
        if device_id is None and Device.gpu_count():
            device_id = Device.default_device_id("gpu")
        self._device_id = device_id
        if thread_pool is not None:
            if num_threads is not None:
                raise InvalidArgumentError(
                    "`thread_pool` and `num_threads` cannot be specified together."
                )
            if not isinstance(thread_pool, ThreadPool):
                raise InvalidTypeError(
                    f"EvalContext: thread_pool must be a ThreadPool (got "
                    f"{type(thread_pool).__name__})."
                )
            if thread_pool.device_id is not None and thread_pool.device_id != device_id:
                shown = given_device if given_device is not None else f"<Current> ({device_id})"
                raise InvalidArgumentError(
                    f"Device ID clash: device_id == {shown} "
                    f"but thread_pool.device_id == {thread_pool.device_id}"
                )
            self._num_threads = thread_pool.num_threads
        if cuda_stream is not None:
            cuda_stream = _streams.stream(stream=cuda_stream, device_id=device_id)
        self._cuda_stream: _streams.Stream | None = cuda_stream
        # a context made while the thread has a current stream (set_current_stream), else while
        # the device has a default one (set_default_stream), keeps it: fixed now, as the
        # reference does, so that setting either later does not move this context's work
        self._inherited_stream = (
            _streams.thread_current_stream(device_id) or _streams.get_default_stream(device_id)
            if device_id is not None
            else None
        )
        self._lazy_stream: _streams.Stream | None = None
        self._is_default = False
        self._pool: ThreadPool | None = thread_pool
        self._pool_version = -1
        self._executor = _Executor()
        # a dropped context (e.g. the default one of a thread that ended) ends its executor
        weakref.finalize(self, self._executor.close)
        self._pending_deferred: list[Any] = []
        self._pending_invocations: list[Any] = []  # (see _add_invocation)
        self._cached_results: dict[Any, Any] = {}
        self._active_thread: int | None = None
        self._enter_count = 0
        self._checkpoint: Checkpoint | None = None
        self._prev_device: list[Device] = []

    # --- properties --------------------------------------------------------------------
    @property
    def device_id(self) -> int | None:
        """The GPU of this context, or None on CPU-only machines."""
        return self._device_id

    @property
    def num_threads(self) -> int:
        """Threads used for per-sample CPU work."""
        return self._num_threads if self._num_threads is not None else get_num_threads()

    @property
    def cuda_stream(self) -> Any:
        """The stream of this context: explicit, else the thread's current one, else the
        device's default one, else a lazily created one (stable across reads)."""
        s = self._cuda_stream
        if s is not None:
            return s
        if self._is_default:
            return _streams.default_context_stream(self._device_id)
        s = self._inherited_stream
        if s is not None:
            return s
        s = self._lazy_stream
        if s is None:
            s = self._lazy_stream = _streams.Stream(device_id=self._device_id)
        return s

    def _torch_stream(self) -> Any:
        """:attr:`cuda_stream` as a torch CUDA stream; None without CUDA (fake-GPU mode)."""
        if self._device_id is None:
            return None
        return self.cuda_stream.torch_stream()

    @property
    def device(self) -> Device:
        """The GPU device of this context, or the CPU."""
        return Device("gpu", self._device_id) if self._device_id is not None else CPU

    @property
    def checkpoint(self) -> Checkpoint:
        """The :class:`~headrace.checkpoint.Checkpoint` bound to this context (created lazily)."""
        if self._checkpoint is None:
            self._checkpoint = Checkpoint()
        return self._checkpoint

    @property
    def thread_pool(self) -> ThreadPool:
        """The worker pool (rebuilt when ``set_num_threads`` changes the count)."""
        pool = self._pool
        if pool is None or (
            self._num_threads is None and self._pool_version != _num_threads_version
        ):
            if pool is not None:
                pool.close()
            pool = self._pool = ThreadPool(self.num_threads, device_id=self._device_id)
            self._pool_version = _num_threads_version
        return pool

    def parallel_map(
        self, fn: Callable[[T], R], items: Sequence[T], chunked: bool = False
    ) -> list[R]:
        """Apply ``fn`` to every item on the worker pool (see :meth:`ThreadPool.map`)."""
        if len(items) <= 1:
            return [fn(x) for x in items]
        return self.thread_pool.map(fn, items, chunked)

    # --- execution ---------------------------------------------------------------------
    def idle(self) -> bool:
        """True when no eager call of this context is queued."""
        return not self._executor._queue

    def submit(self, inv: Invocation) -> None:
        """Queue an eager invocation on the background executor."""
        self._executor.submit(inv)

    def defer(self, result: Any) -> None:
        """Remember a deferred result so leaving the context evaluates it."""
        if self._enter_count:
            self._pending_deferred.append(weakref.ref(result))

    def evaluate_all(self) -> None:
        """Evaluate every pending call of this context."""
        pending, self._pending_deferred = self._pending_deferred, []
        for ref in pending:
            r = ref()
            if r is not None:
                r.evaluate()
        added, self._pending_invocations = self._pending_invocations, []
        for ref in added:
            inv = ref() if isinstance(ref, weakref.ref) else ref
            if inv is not None and self.cached_results(inv) is None:
                inv.run(self)
        self._executor.drain()

    def cache_results(self, invocation: Any, results: Any) -> None:
        """Keep ``results`` as the outcome of ``invocation`` in this context (read back by
        :meth:`cached_results`; :meth:`evaluate_all` skips an invocation that has them).

        Examples
        --------
        >>> ctx = EvalContext(num_threads=1)
        >>> key = object()
        >>> ctx.cached_results(key) is None
        True
        >>> ctx.cache_results(key, 42); ctx.cached_results(key)
        42
        """
        self._cached_results[id(invocation)] = (invocation, results)

    def cached_results(self, invocation: Any) -> Any:
        """What :meth:`cache_results` kept for ``invocation`` in this context, else None."""
        kept = self._cached_results.get(id(invocation))
        return kept[1] if kept is not None and kept[0] is invocation else None

    def _add_invocation(self, invocation: Any, weak: bool = True) -> None:
        """Have :meth:`evaluate_all` (and leaving the context) call ``invocation.run(self)``
        unless its results are cached (the reference's hook for pending work; ``weak``: only
        while something else keeps the invocation alive, where it can be referred to weakly)."""
        if weak:
            try:
                invocation = weakref.ref(invocation)
            except TypeError:  # (no weak references to it: kept until run)
                pass
        self._pending_invocations.append(invocation)

    # --- context management --------------------------------------------------------------
    def __enter__(self) -> EvalContext:
        me = threading.get_ident()
        if self._active_thread not in (None, me):
            raise RuntimeError(
                "This EvalContext is already active in another thread. Create one EvalContext "
                "per thread."
            )
        self._active_thread = me
        self._enter_count += 1
        _ctx_stack().append(self)
        dev = self.device
        dev.__enter__()
        self._prev_device.append(dev)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.evaluate_all()
        finally:
            self._prev_device.pop().__exit__(None, None, None)
            _ctx_stack().pop()
            self._enter_count -= 1
            if self._enter_count == 0:
                self._active_thread = None

    @staticmethod
    def current() -> EvalContext:
        """The innermost context entered in this thread, else :meth:`default`."""
        s = getattr(_local, "stack", None)
        if s:
            return s[-1]
        if not getattr(_dev_local, "stack", None):  # no device entered: cached default
            key = _cuda_device_now()  # (torch.cuda.set_device moves it: DALI follows)
            d = getattr(_local, "plain_default", None)
            if d is not None and d[0] == key:
                return d[1]  # type: ignore[no-any-return]
            ctx = EvalContext.default()
            _local.plain_default = (key, ctx)
            return ctx
        return EvalContext.default()

    @staticmethod
    def get() -> EvalContext:
        """The reference's older spelling of :meth:`current`."""
        return EvalContext.current()

    @staticmethod
    def default() -> EvalContext:
        """This thread's default context for the current device."""
        return EvalContext.default_for(Device.current().device_id)

    @staticmethod
    def default_for(device_id: int | None) -> EvalContext:
        """This thread's default context for a device (``None``: the CPU)."""
        d = getattr(_local, "defaults", None)
        if d is None:
            d = _local.defaults = {}
        key = device_id
        ctx = d.get(key)
        if ctx is None:
            ctx = d[key] = EvalContext(device_id=key)
            ctx._is_default = True
        return ctx


_local = threading.local()
_dev_local = _device_module._local


def _current_torch_stream(device_index: int) -> Any:
    """The torch stream of the calling thread's current context (for :mod:`.handoff`)."""
    ctx = EvalContext.current()
    if ctx._device_id != device_index:
        return None
    return ctx._torch_stream()


_handoff.fallback_stream = _current_torch_stream


def calling_context() -> EvalContext:
    """The context of the operator call this thread is running (the executor thread runs the
    calls of several contexts), else :meth:`EvalContext.current`: whose pool a kernel splits
    its work over."""
    ctx = getattr(_local, "calling", None)
    return ctx if ctx is not None else EvalContext.current()


class RunningCall:
    """Makes ``ctx`` the :func:`calling_context` of this thread while a call runs."""

    __slots__ = ("ctx", "prev")

    def __init__(self, ctx: EvalContext) -> None:
        self.ctx = ctx

    def __enter__(self) -> None:
        self.prev = getattr(_local, "calling", None)
        _local.calling = self.ctx

    def __exit__(self, *exc: object) -> None:
        _local.calling = self.prev


def _ctx_stack() -> list[EvalContext]:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s
