"""Random generators in loader worker processes: each batch draws what one process would.

headrace's :class:`~headrace.random.RNG` is counter-based: a generator is a seed and a position,
and every random operator call takes a fixed number of words. So if the per-batch function
draws ``D`` words from a generator per batch, batch ``i`` of an epoch draws words
``[a + i*D, a + (i+1)*D)``, where ``a`` is the generator's position when the epoch began, and a
worker producing batch ``i`` only has to move its copy of the generator to ``a + i*D`` first.

The generators that matter are those that live across batches: the ones the function reaches
(its closure, ``functools.partial`` arguments, globals...), known to the worker as ``keys``
shared with the parent (the object's ``id`` in the parent, the same in a forked child, or its
index in the pickled function), and the thread-local default generator (key ``"default"``).
``D`` is learned by calling the function once without computing anything (deferred evaluation)
on a worker's first batch; every later batch is checked to draw exactly ``D`` words again, and a
generator created inside the function and reused by later batches is refused, so results never
silently differ from the single-process run.

Examples
--------
>>> from headrace._rng import RNG
>>> r = RNG(seed=1)
>>> sched = Schedule({id(r): r})
>>> sched.anchor({}, default_state=None)
>>> sched.probe(lambda: r.draw(7))
>>> sched.period[id(r)], sched.period["default"]
(7, 0)
>>> with sched.step(3):
...     _ = r.draw(7)
>>> r.get_state()["position"]  # batch 3 drew words 21-27, as one process would
28
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from headrace._rng import RNG, get_default_rng, set_draw_observer

DEFAULT = "default"

DRAWS_CHANGED = (
    "Loader worker: batch {step} drew {got} words from a random generator, but the batches "
    "before drew {want} per batch. With num_workers > 0 every batch must make the same random "
    "calls (the same number of draws per generator), so that a worker can place each batch's "
    "draws where one process would; use num_workers=0 for a function whose random calls vary."
)
REUSED_FRESH = (
    "Loader worker: the per-batch function keeps a random generator that it created while "
    "running (e.g. lazily, on its first call) and draws from it in later batches; worker "
    "processes cannot reproduce its draws. Create the headrace.random.RNG before building the "
    "Loader and pass it to the function (closure, functools.partial or argument)."
)


class ScheduleError(RuntimeError):
    """The function's random draws cannot be reproduced in worker processes."""


class Schedule:
    """One worker's view of the generators of the per-batch function.

    ``rngs`` maps each key to the worker's copy of a generator that existed before the first
    batch. ``period`` maps keys to words drawn per batch, learned by :meth:`probe` / the first
    :meth:`step`.
    """

    def __init__(self, rngs: dict[Any, RNG]) -> None:
        self.rngs = rngs
        self._key_of = {id(r): k for k, r in rngs.items()}
        self.period: dict[Any, int] = {}
        self.anchors: dict[Any, int] = {}
        self._fresh: list[RNG] = []  # generators made by the previous batch (kept alive)

    def anchor(self, states: dict[Any, Any], default_state: Any) -> None:
        """Start of an epoch: the parent's generator states (``key -> RNG state``)."""
        if default_state is not None:
            get_default_rng().set_state(default_state)
        for key, st in states.items():
            r = self.rngs.get(key)
            if r is not None:
                r.set_state(st)
        self.anchors = {k: r._pos for k, r in self.rngs.items()}
        self.anchors[DEFAULT] = get_default_rng()._pos

    def _rng(self, key: Any) -> RNG:
        return get_default_rng() if key == DEFAULT else self.rngs[key]

    def position_for(self, key: Any, step: int) -> int:
        """Where the generator stands before batch ``step`` of the epoch."""
        return self.anchors[key] + step * self.period[key]

    def _place(self, step: int) -> None:
        for key in self.period:
            r = self._rng(key)
            with r._lock:
                r._pos = self.position_for(key, step)

    def _classify(self, drawn: dict[int, RNG]) -> tuple[dict[Any, RNG], list[RNG]]:
        default = get_default_rng()
        known: dict[Any, RNG] = {}
        fresh = []
        for r in drawn.values():
            if r is default:
                known[DEFAULT] = r
            elif id(r) in self._key_of:
                known[self._key_of[id(r)]] = r
            else:
                fresh.append(r)
        return known, fresh

    @contextlib.contextmanager
    def _observe(self) -> Iterator[dict[int, RNG]]:
        drawn: dict[int, RNG] = {}
        set_draw_observer(lambda r: drawn.setdefault(id(r), r))
        try:
            yield drawn
        finally:
            set_draw_observer(None)

    def _positions(self) -> dict[Any, int]:
        return {key: self._rng(key)._pos for key in (DEFAULT, *self.rngs)}

    def probe(self, call: Any) -> None:
        """Learn the words drawn per batch by ``call()``, run under deferred evaluation (the
        operators are called, nothing is computed); every generator is put back after."""
        from headrace._core.eval_mode import EvalMode

        before = self._positions()
        with self._observe(), EvalMode.deferred:
            call()
        for key, pos in before.items():
            r = self._rng(key)
            self.period[key] = r._pos - pos
            with r._lock:
                r._pos = pos

    @contextlib.contextmanager
    def step(self, step: int) -> Iterator[None]:
        """Run batch ``step`` of the epoch: place the generators where one process would have
        them, then check that the batch drew what the probe did."""
        self._place(step)
        before = self._positions()
        with self._observe() as drawn:
            yield
        _, fresh = self._classify(drawn)
        previous = {id(r) for r in self._fresh}
        if any(id(r) in previous for r in fresh):
            raise ScheduleError(REUSED_FRESH)
        self._fresh = fresh
        for key, pos in before.items():
            got, want = self._rng(key)._pos - pos, self.period.get(key, 0)
            if got != want:
                raise ScheduleError(DRAWS_CHANGED.format(step=step, got=got, want=want))


__all__ = ["DEFAULT", "Schedule", "ScheduleError"]
