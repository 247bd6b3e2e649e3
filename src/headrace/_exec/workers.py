"""What every pool of headrace worker processes shares: start method, a worker's set-up, errors
sent back to the parent, and shutdown.

Used by :class:`headrace.pytorch.Loader` (``num_workers > 0``) and by capture-mode loops run in
worker processes (``next_epoch(..., capture=True, num_workers=N)``).

* :func:`resolve_context`: ``"fork"`` unless this process has initialised CUDA (fork is then
  unsafe), else ``"forkserver"``, else ``"spawn"``; or the method the user chose.
* :func:`worker_setup`: what a worker does first — ignore ``SIGINT`` (the parent decides), die
  with the parent, start from fresh headrace thread pools on the host device.
* :func:`error_payload` / :func:`rebuild_error`: a worker's exception, re-raised in the parent
  with its type and message (headrace's errors are often of a per-call subclass that pickle
  cannot name, so the nearest importable class is sent) and the worker's traceback as cause.
* :func:`stop_workers`: a polite request, then ``terminate``, then ``kill``; the pool's
  shared-memory files are deleted.

Examples
--------
>>> try:
...     raise ValueError("sample 3 (a.jpg): bad")
... except ValueError as e:
...     payload = error_payload(e)
>>> err = rebuild_error(payload, "(raised in worker 0)")
>>> type(err).__name__, str(err), err.__notes__
('ValueError', 'sample 3 (a.jpg): bad', ['(raised in worker 0)'])
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import os
import pickle
import signal
import sys
import traceback
from typing import Any

from headrace._core.errors import InvalidArgumentError
from headrace._exec import shm

JOIN_S = 2.0
"""How long each stage of :func:`stop_workers` waits for a worker to end."""


WORKERS_FROM_CPUS = 8
"""From this many usable CPUs on, ``num_workers=None`` starts worker processes."""


def usable_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def default_num_workers() -> int:
    """The worker count ``num_workers=None`` gives: ``HEADRACE_NUM_WORKERS`` when set, else 0
    below :data:`WORKERS_FROM_CPUS` usable CPUs, else one worker per two CPUs.

    Used by :class:`headrace.pytorch.Loader` and capture-mode loops. Chosen by measurement
    (issue 12; ``headrace bench --scaling`` prints the same table on your machine): up to ~6
    cores one process's threads scale as well as processes do, and workers only add start-up
    time and memory; on 16 cores threads alone stop near 1.3k img/s (the GIL) while 8
    processes x 2 threads reached 2.9k img/s on the eval pipeline.

    Examples
    --------
    >>> default_num_workers() >= 0
    True
    """
    env = os.environ.get("HEADRACE_NUM_WORKERS")
    if env:
        try:
            return max(0, int(env))
        except ValueError:
            raise InvalidArgumentError(
                f"HEADRACE_NUM_WORKERS must be an integer (got {env!r})."
            ) from None
    cpus = usable_cpus()
    return 0 if cpus < WORKERS_FROM_CPUS else cpus // 2


# --- start method -------------------------------------------------------------------------------
def cuda_initialized() -> bool:
    """Whether this process has initialised CUDA through torch (fork is then unsafe)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:  # pragma: no cover - broken torch
        return False


def resolve_context(context: Any, owner: str = "Loader") -> Any:
    """The multiprocessing context: the one given (name or context), else ``"fork"`` when
    available and CUDA is not initialised here, else ``"forkserver"``, else ``"spawn"``.
    ``owner`` names the API in errors."""
    if context is not None and not isinstance(context, str):
        if not hasattr(context, "Process") or not hasattr(context, "get_start_method"):
            raise InvalidArgumentError(
                f"{owner}: multiprocessing_context must be a start-method name ('fork', "
                f"'forkserver', 'spawn') or a multiprocessing context (got {context!r})."
            )
        return context
    methods = mp.get_all_start_methods()
    if context is not None:
        if context not in methods:
            raise InvalidArgumentError(
                f"{owner}: multiprocessing_context={context!r} is not available here "
                f"(choose from {methods})."
            )
        return mp.get_context(context)
    if "fork" in methods and not cuda_initialized():
        return mp.get_context("fork")
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


# --- the worker's side ---------------------------------------------------------------------------
def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:  # pragma: no cover - no prctl
            pass


def _fresh_exec_state(threads: int) -> None:
    """A forked child inherits the parent's thread-pool objects but not their threads: start
    from fresh headrace contexts, with ``threads`` threads, and single-threaded torch. The
    worker's current device is the CPU (not the GPU that would be the default where one
    exists): every worker would otherwise open a CUDA context of its own (~0.5 GB of GPU memory
    each) for a pipeline that runs on the host; an operator given ``device="gpu"`` still runs
    there."""
    from headrace._core import device as _device
    from headrace._exec import context as _context

    _context._local.__dict__.clear()
    _device._stack()[:] = [_device.CPU]
    _device._prev_cuda()[:] = [None]
    _context.set_num_threads(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def worker_setup(threads: int) -> None:
    """First thing in a worker process: ignore ``SIGINT``, die with the parent (Linux), fresh
    headrace thread pools of ``threads`` threads on the host device."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    _fresh_exec_state(threads)


# --- errors ------------------------------------------------------------------------------------
class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (its ``__cause__``)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _importable(cls: type) -> type:
    for c in cls.__mro__:
        try:
            mod = importlib.import_module(c.__module__)
            obj: Any = mod
            for part in c.__qualname__.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            continue
        if obj is c:
            return c
    return RuntimeError  # pragma: no cover - object is importable


def error_payload(e: BaseException) -> tuple[str, str, str, dict[str, Any], str]:
    """What the parent needs to re-raise ``e``: class, message, attributes, traceback."""
    cls = _importable(type(e))
    attrs = {}
    for k, v in getattr(e, "__dict__", {}).items():
        try:
            pickle.dumps(v)
        except Exception:
            continue
        attrs[k] = v
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return cls.__module__, cls.__qualname__, str(e), attrs, tb


def rebuild_error(payload: tuple[str, str, str, dict[str, Any], str], note: str) -> BaseException:
    """The exception described by :func:`error_payload`, with ``note`` added and the worker's
    traceback as its cause."""
    module, qualname, message, attrs, tb = payload
    cls: Any = importlib.import_module(module)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    exc = cls.__new__(cls)
    exc.args = (message,)
    try:
        exc.__dict__.update(attrs)
    except AttributeError:  # pragma: no cover - no __dict__
        pass
    exc.add_note(note)
    exc.__cause__ = RemoteTraceback(f"\n\nin the worker process:\n{tb}")
    return exc  # type: ignore[no-any-return]


# --- shutdown ----------------------------------------------------------------------------------
def stop_workers(procs: list[Any], conns: list[Any], reader: shm.SlotReader, prefix: str) -> None:
    """Stop the workers and delete the slot files of ``prefix`` (also a finalizer: it must not
    hold the pool)."""
    for c in conns:
        try:
            c.send(None)
        except Exception:
            pass
    for p in procs:
        p.join(JOIN_S)
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(JOIN_S)
        if p.is_alive():  # pragma: no cover - ignored SIGTERM
            p.kill()
            p.join(JOIN_S)
        try:
            p.close()
        except ValueError:  # pragma: no cover - still running
            pass
    for c in conns:
        c.close()
    procs.clear()
    conns.clear()
    reader.close()
    shm.remove_all(prefix)


__all__ = [
    "WORKERS_FROM_CPUS",
    "RemoteTraceback",
    "default_num_workers",
    "usable_cpus",
    "cuda_initialized",
    "error_payload",
    "rebuild_error",
    "resolve_context",
    "stop_workers",
    "worker_setup",
]
