"""Random generators in a capture-mode loop: one schedule per RNG that captured calls use.

The pipeline computes random calls steps ahead of the body, yet the user's generator must move
exactly as in eager execution (``rng.state`` read in the body equals eager's, a bare ``rng()``
draw in the body is allowed). So the pipeline never touches the user's RNG: tracing learns, for
each generator, how many words one step draws (``period``, bare draws included) and at which
offset of the step each captured call draws; the pipeline gives each captured call a private
copy positioned at ``step start + offset``. In the body, a captured random call advances the
user's RNG by the words the call would have drawn and returns the pipeline's result, which was
computed from the very same words. Every operator call takes a fixed number of words
(:data:`WORDS`), which is what makes the schedule predictable.

Leaving the schedule raises (the reference's rule): a step that draws more or fewer words than
the traced one (a traced random call dropped, a new one added), or a generator re-seeded,
restored or drawn from outside the loop, between steps or between epochs.
"""

from __future__ import annotations

from typing import Any

from headrace._rng import RNG, RNG_MISUSE
from headrace.capture._graph import CaptureError

WORDS = 7
"""Words every random operator call draws from its RNG."""


def desync() -> CaptureError:
    """The error for a generator that left its traced schedule."""
    return CaptureError(RNG_MISUSE)


class ScheduledRNG:
    """The schedule of one user RNG: where each step starts and how far it goes.

    ``start`` is the position at which the current (or next) step begins, ``period`` the words
    one step draws; ``version`` the generator's version when the schedule was made.
    """

    __slots__ = ("period", "rng", "start", "version")

    def __init__(self, rng: RNG, anchor: int) -> None:
        self.rng = rng
        self.period = rng._pos - anchor  # the traced step drew from ``anchor`` to here
        self.start = rng._pos
        self.version = rng._version

    def _in_sync(self, pos: int) -> bool:
        return self.rng._pos == pos and self.rng._version == self.version

    def begin_step(self) -> None:
        """A replayed step starts: the generator must stand where the schedule says."""
        if not self._in_sync(self.start):
            raise desync()

    def consume(self, offset: int, rng: Any) -> bool:
        """A captured call drawing at ``offset`` of the step: True to use the pipeline's result
        (the user's RNG is advanced as the call would have), False to run it eagerly (its site
        ran again this step, or its first run this step already went eager)."""
        expected = self.start + offset
        if self.rng._pos > expected:
            return False
        if rng is not self.rng or not self._in_sync(expected):
            raise desync()
        self.rng.advance(WORDS)
        return True

    def finish_step(self) -> None:
        """A replayed step ends: it must have drawn exactly one period."""
        if not self._in_sync(self.start + self.period):
            raise desync()
        self.start += self.period

    def pipeline_copy(self) -> RNG:
        """A private generator for the pipeline thread (positioned per call by the pipeline)."""
        return RNG(seed=self.rng._seed)
