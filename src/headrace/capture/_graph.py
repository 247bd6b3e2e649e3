"""The recorded graph of a capture-mode loop: its nodes, the references between them, one step.

A value seen in the loop body is known by a *ref*, a tuple naming where it came from:

- ``("src", i)``: output ``i`` of the driving source (the reader or ``ExternalSource``),
- ``("feed", fid, i)``: output ``i`` of feeder ``fid`` (an ``ExternalSource`` read in the body),
- ``("node", nid, i)``: output ``i`` of recorded call ``nid``.
"""

from __future__ import annotations

from typing import Any

from headrace._core.device import Device
from headrace._core.device import device as _to_device

Ref = tuple[Any, ...]


class CaptureError(RuntimeError):
    """A rule of capture mode was broken."""


def as_outputs(out: Any) -> tuple[Any, ...]:
    """The outputs of a call or source item as a tuple (a single output becomes a 1-tuple)."""
    return out if isinstance(out, tuple) else (out,)


def placement(device: Any) -> Device | None:
    """The device a call asked for (``"mixed"`` means the GPU), or None when it did not."""
    if device is None:
        return None
    return _to_device("gpu" if device == "mixed" else device)


class Node:
    """One recorded operator call.

    ``inputs`` and ``refs`` hold the refs of its tensor inputs and tensor arguments, ``const``
    its other argument values (``invariant`` names those marked ``ndd.capture.invariant``),
    ``explicit_bs`` the ``batch_size=`` it was called with, ``rng`` its generator (random ops)
    and ``rng_offset`` where in a step's draws from that generator the call draws.
    """

    __slots__ = (
        "const",
        "device",
        "explicit_bs",
        "inputs",
        "invariant",
        "key",
        "nargs",
        "nid",
        "out_refs",
        "refs",
        "rng",
        "rng_offset",
        "schema",
    )

    def __init__(
        self,
        nid: int,
        schema: Any,
        key: Any,
        inputs: list[Ref | None],
        const: dict[str, Any],
        refs: dict[str, Ref | None],
        device: Device | None,
        explicit_bs: int | None,
        rng: Any,
        invariant: frozenset[str] = frozenset(),
    ) -> None:
        self.nid = nid
        self.schema = schema
        self.key = key
        self.inputs = inputs
        self.const = const
        self.refs = refs
        self.device = device
        self.explicit_bs = explicit_bs
        self.rng = rng
        self.rng_offset = 0
        self.invariant = invariant
        self.nargs = len(const) + len(refs)
        self.out_refs = tuple(("node", nid, i) for i in range(schema.num_outputs))

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """Pickled for worker processes without its call-site key (which holds code objects):
        workers run nodes, they never look calls up."""
        state = {k: getattr(self, k) for k in self.__slots__}
        state["key"] = None
        return None, state


class Step:
    """What the pipeline computed for one step: the source's item, the feeders' items and the
    result (or raised exception) of every node, by node id."""

    __slots__ = ("feeds", "results", "source")

    def __init__(self, source: Any, feeds: list[Any], results: list[Any]) -> None:
        self.source = source
        self.feeds = feeds
        self.results = results
