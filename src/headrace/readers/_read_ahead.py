"""Reading the next batches of a reader's stream along with the current one.

Some datasets read a large group of samples much faster per sample than a small one (their
per-call cost is paid once per group: ``readers.TFRecord`` walks all records of a group with a
fixed number of numpy calls). Such a dataset has ``read_groups(groups)``: the samples of several
batches read together, or ``None`` when one of them needs the sample-by-sample path, which
alone reports problems. :class:`ReadAhead` is the producer's ``read(group)`` for it: when it
has nothing read ahead, it asks for the group together with the batches that follow it in the
stream (found on a copy of the producer's cursor, which itself does not move) and keeps those
for the next calls; the dataset may return fewer groups than asked (e.g. to bound the memory
the read takes). A call whose group is not the one read ahead (the stream changed course,
e.g. after a skipped sample) drops what was read ahead and reads its group alone, so the
samples, their order, the errors and the reader's position are those of reading one batch at a
time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

READ_AHEAD_SAMPLES = 512  # a group is read with the following batches up to this many samples

Upcoming = Callable[[int], list[list[int]]]
"""``upcoming(n)``: the next groups of the stream (after the current one), about ``n`` samples."""


class ReadAhead:
    """``read(group)`` through the dataset's ``read_groups``, reading the next batches along
    (up to ``samples`` samples in all, and never past the ``total`` the producer will read).

    Examples
    --------
    >>> calls = []
    >>> def read_groups(groups):
    ...     calls.append(len(groups))
    ...     return [[i * 10 for i in g] for g in groups]
    >>> stream = [[4, 5], [6, 7], [8, 9]]
    >>> read = ReadAhead(read_groups, lambda g, skip: [None] * len(g), False,
    ...                  lambda n: stream[1:], samples=6)
    >>> read([4, 5]), read([6, 7]), read([8, 9]), calls
    ([40, 50], [60, 70], [80, 90], [3])
    """

    def __init__(
        self,
        read_groups: Callable[[list[list[int]]], list[list[Any]] | None],
        read_batch: Callable[..., list[Any]],
        skip: bool,
        upcoming: Upcoming,
        samples: int = READ_AHEAD_SAMPLES,
        total: int | None = None,
    ) -> None:
        self._read_groups = read_groups
        self._read_batch = read_batch
        self._skip = skip
        self._upcoming = upcoming
        self._samples = samples
        self._ahead: deque[tuple[list[int], list[Any]]] = deque()
        self._pause = 0  # groups to read alone after a failed attempt (a problem ahead) ...
        self._failures = 0  # ... more after each of several in a row (data the dataset's
        # read_groups never takes costs one attempt in ~64 batches)
        self._left = total  # samples the producer will still ask for (None: unknown)

    def __call__(self, group: list[int]) -> list[Any]:
        if self._left is not None:
            self._left -= len(group)
        ahead = self._ahead
        if ahead:
            expected, rows = ahead.popleft()
            if expected == group:
                return rows
            ahead.clear()  # the stream changed course (e.g. a skipped sample): read alone a while
            self._back_off(self._samples // max(len(group), 1))
        wanted = self._samples - len(group)
        if self._left is not None:
            wanted = min(wanted, self._left)
        if self._pause:
            self._pause -= 1
        elif wanted > 0:
            groups = [group, *self._upcoming(wanted)]
            got = self._read_groups(groups) if len(groups) > 1 else None
            if got is not None:
                self._failures = 0
                ahead.extend(zip(groups[1:], got[1:]))
                return got[0]
            self._back_off(len(groups) - 1)  # (the first is read alone now)
        return self._read_batch(group, skip=self._skip)

    def _back_off(self, groups: int) -> None:
        """Read the next ``groups`` groups alone, twice as many after each failure in a row
        (up to 8 times)."""
        self._pause = groups << min(self._failures, 3)
        self._failures += 1


__all__ = ["READ_AHEAD_SAMPLES", "ReadAhead", "Upcoming"]
