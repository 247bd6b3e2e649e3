"""Ending headrace's background threads before the interpreter finalizes.

headrace's worker, executor and producer threads are daemon threads. A daemon thread that is
inside a C++ call (OpenCV, torch) while Python finalizes is ended with ``pthread_exit`` as the
call returns and asks for the GIL back; unwinding through a C++ ``catch (...)`` then aborts the
whole process ("terminate called without an active exception", exit status 134) after the
program has finished. So at exit (``atexit``: after the program's own threads were joined,
before finalization) every registered thread is told to stop and waited for, up to
:data:`EXIT_WAIT_S` seconds in all: a thread in the middle of an operator finishes it and ends.

Examples
--------
>>> import threading
>>> stop = threading.Event()
>>> t = threading.Thread(target=stop.wait, daemon=True)
>>> t.start()
>>> register(t, stop.set)
>>> end_all()  # what the interpreter does at exit
>>> t.is_alive()
False
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable

#: The longest :func:`end_all` waits for the registered threads, in seconds.
EXIT_WAIT_S = 5.0

_lock = threading.Lock()
_threads: list[tuple[weakref.ref[threading.Thread], Callable[[], None]]] = []


def register(thread: threading.Thread, stop: Callable[[], None]) -> None:
    """Have :func:`end_all` call ``stop()`` and then wait for ``thread`` (which ``stop`` must
    make end after its current piece of work)."""
    with _lock:
        _threads[:] = [(r, s) for r, s in _threads if (t := r()) is not None and t.is_alive()]
        _threads.append((weakref.ref(thread), stop))


def end_all(timeout: float = EXIT_WAIT_S) -> None:
    """Stop every registered thread still running and wait for them (``timeout`` in all)."""
    with _lock:
        entries, _threads[:] = list(_threads), []
    live = [(t, stop) for r, stop in entries if (t := r()) is not None and t.is_alive()]
    for _, stop in live:
        try:
            stop()
        except Exception:  # a half-torn-down object at exit: nothing left to stop
            pass
    deadline = time.monotonic() + timeout
    for t, _ in live:
        if t is not threading.current_thread():
            t.join(max(0.0, deadline - time.monotonic()))


atexit.register(end_all)

__all__ = ["EXIT_WAIT_S", "end_all", "register"]
