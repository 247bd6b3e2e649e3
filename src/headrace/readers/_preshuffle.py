"""The reference's one-time shuffle of a file list before it is split into shards.

With ``random_shuffle=True`` the reference's file-list readers (``File``, ``Numpy``, ``COCO``,
``NemoAsr``) shuffle their list once, with the same fixed seed on every rank, and only then cut
it into shards, so that every shard holds a random part of the data set (contiguous shards of a
sorted list would each hold only a few classes). The shuffle is C++'s ``std::shuffle`` of
GCC's library driven by ``std::mt19937`` seeded with 524287; :func:`preshuffle_order` computes
the same permutation (Mersenne Twister words from numpy's ``MT19937`` with the standard
seeding; GCC's shuffle takes two positions per draw while the squared length fits the
generator's range, and its integer distribution is Lemire's multiply-and-reject).

Examples
--------
>>> preshuffle_order(11)
[10, 0, 2, 4, 7, 1, 6, 5, 3, 9, 8]
"""

from __future__ import annotations

import functools

import numpy as np

#: The reference's data-loader seed.
SEED = 524287
_RANGE = 2**32  # the generator's outputs: 32-bit words
_MASK = _RANGE - 1


class _Words:
    """32-bit Mersenne Twister outputs (``std::mt19937(seed)``), drawn in blocks."""

    def __init__(self, seed: int) -> None:
        self._gen = np.random.MT19937()
        self._gen._legacy_seeding(seed)  # (init_genrand: the standard seeding)
        self._block: list[int] = []
        self._at = 0

    def __call__(self) -> int:
        if self._at == len(self._block):
            self._block = self._gen.random_raw(4096).tolist()
            self._at = 0
        self._at += 1
        return self._block[self._at - 1]

    def below(self, n: int) -> int:
        """A uniform integer in ``0 .. n - 1`` (GCC's ``uniform_int_distribution`` for a 32-bit
        generator: Lemire's multiply, rejecting the biased low products)."""
        product = self() * n
        low = product & _MASK
        if low < n:
            threshold = (_RANGE - n) % n
            while low < threshold:
                product = self() * n
                low = product & _MASK
        return product >> 32


@functools.lru_cache(maxsize=2)  # (1.28M entries: ~50 MB)
def _order(n: int, seed: int) -> tuple[int, ...]:
    order = list(range(n))
    if n < 2:
        return tuple(order)
    words = _Words(seed)
    if (_RANGE - 1) // n >= n:  # two positions per draw
        i = 1
        if n % 2 == 0:
            j = words.below(2)
            order[1], order[j] = order[j], order[1]
            i = 2
        while i != n:
            span = i + 1
            x = words.below(span * (span + 1))
            first, second = divmod(x, span + 1)
            order[i], order[first] = order[first], order[i]
            order[i + 1], order[second] = order[second], order[i + 1]
            i += 2
    else:
        for i in range(1, n):
            j = words.below(i + 1)
            order[i], order[j] = order[j], order[i]
    return tuple(order)


def preshuffle_order(n: int, seed: int = SEED) -> list[int]:
    """The order the reference gives a list of ``n`` entries before sharding it (see the
    module's description): entry ``k`` of the shuffled list is original entry ``order[k]``."""
    return list(_order(n, seed))


def preshuffled(items: list, shuffle: bool) -> list:
    """``items`` in the reference's pre-sharding order when ``shuffle`` (``random_shuffle``),
    else as they are.

    Examples
    --------
    >>> preshuffled(list("abc"), True), preshuffled(list("abc"), False)
    (['b', 'a', 'c'], ['a', 'b', 'c'])
    """
    if not shuffle:
        return items
    return [items[k] for k in _order(len(items), SEED)]


__all__ = ["SEED", "preshuffle_order", "preshuffled"]
