"""``ndd.checkpoint``: save where an input pipeline is, and resume it exactly.

Only readers and random generators (:class:`~headrace.random.RNG`) hold state; decoders and
augmentations are pure functions of their inputs and their generator's draws. A
:class:`Checkpoint` gathers the states of the objects registered with it (anything with
``get_state`` / ``set_state``) and writes them as versioned JSON::

    {"version": 2, "states": {"<key>": {"state": "<the object's state>", "type": "File"}}}

``state`` is the string form of the object's state (for our readers and RNGs: compact JSON);
``type`` is the qualified name of the object's class (``null`` when unknown).

Restoring: build fresh objects, :meth:`Checkpoint.load` (or ``deserialize``), then
``register`` each object; its saved state is applied at registration. A restored reader's first
``next_epoch()`` yields the rest of the interrupted epoch.

A state never resumes silently on the wrong data or at a wrong place: every field is checked for
its type and range (a position inside its epoch), and a reader's state carries a fingerprint of
its data set (the samples' sources in order, their common directory left out, so a moved data
set still matches) and its shuffling, sharding and last-batch settings; a reader built on other
files, on the same files in another order, or with other settings refuses it with a
``ValueError`` naming the field. A save also removes the temporary files that interrupted
(killed) saves to the same pattern left behind.

Examples
--------
>>> import headrace as ndd
>>> rng = ndd.random.RNG(seed=3)
>>> ckpt = ndd.checkpoint.Checkpoint()
>>> ckpt.register(rng, "rng")
'rng'
>>> ckpt.collect(); payload = ckpt.serialize()
>>> expected = [rng() for _ in range(3)]
>>> again = ndd.checkpoint.Checkpoint(); again.deserialize(payload)
>>> fresh = ndd.random.RNG(seed=99)
>>> _ = again.register(fresh, "rng")  # the saved state is applied here
>>> [fresh() for _ in range(3)] == expected
True
"""

from __future__ import annotations

# The reference's checkpoint module exposes these typing names too; programs may import them.
from typing import Any, NamedTuple  # noqa: F401

from headrace._exec.checkpoint import FORMAT_VERSION, Checkpoint
from headrace._exec.context import EvalContext


def current() -> Checkpoint:
    """The checkpoint of the current :class:`~headrace.EvalContext` (shared; ``clear()`` it
    between unrelated runs).

    Examples
    --------
    >>> import headrace as ndd
    >>> ndd.checkpoint.current() is ndd.EvalContext.current().checkpoint
    True
    """
    return EvalContext.current().checkpoint


__all__ = ["FORMAT_VERSION", "Checkpoint", "current"]
