"""Pure shard arithmetic shared by every reader.

A dataset of ``n`` samples is split into ``num_shards`` contiguous shards. Shard ``s`` holds the
samples ``[floor(s*n/k), floor((s+1)*n/k))``, so shard sizes differ by at most one. With padding
every shard is topped up (by repeating its last sample) to ``ceil(n/k)`` samples, so that every
rank sees the same number of samples and therefore the same number of batches.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from headrace._core.errors import InvalidArgumentError

LAST_BATCH_MODES = ("partial", "drop", "pad", "fill")


def shard_bounds(n: int, num_shards: int, shard_id: int) -> tuple[int, int]:
    """First and one-past-last sample index of shard ``shard_id``.

    Examples
    --------
    >>> [shard_bounds(9, 2, s) for s in range(2)]
    [(0, 4), (4, 9)]
    """
    return shard_id * n // num_shards, (shard_id + 1) * n // num_shards


def padded_shard_size(n: int, num_shards: int) -> int:
    """Size every shard is padded to: ``ceil(n / num_shards)``.

    Examples
    --------
    >>> padded_shard_size(9, 4)
    3
    """
    return -(-n // num_shards)


def epoch_size_padded(n: int, num_shards: int, pad: bool) -> int:
    """Dataset size counting the padding samples (``n`` when not padding).

    Examples
    --------
    >>> epoch_size_padded(9, 4, True), epoch_size_padded(9, 4, False)
    (12, 9)
    """
    return num_shards * padded_shard_size(n, num_shards) if pad else n


def shard_for_epoch(shard_id: int, epoch: int, num_shards: int, stick_to_shard: bool) -> int:
    """The shard read in ``epoch``: it advances by one per epoch unless ``stick_to_shard``.

    Examples
    --------
    >>> [shard_for_epoch(1, e, 3, False) for e in range(4)]
    [1, 2, 0, 1]
    """
    return shard_id if stick_to_shard else (shard_id + epoch) % num_shards


def num_batches(n: int, batch_size: int, last_batch: str) -> int:
    """Number of batches one pass over ``n`` samples gives (``"fill"`` counts like ``"pad"``).

    Examples
    --------
    >>> num_batches(10, 4, "partial"), num_batches(10, 4, "drop")
    (3, 2)
    """
    return n // batch_size if last_batch == "drop" else -(-n // batch_size)


def check_last_batch(last_batch: Any) -> str:
    """Validate a ``last_batch`` mode name."""
    if last_batch not in LAST_BATCH_MODES:
        raise InvalidArgumentError(
            f"last_batch must be one of {', '.join(map(repr, LAST_BATCH_MODES))} "
            f"(got {last_batch!r})."
        )
    return last_batch


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise InvalidArgumentError(
            f"Environment variable {name}={value!r} is not an integer."
        ) from None


def _distributed_rank_world() -> tuple[int, int] | None:
    dist = sys.modules.get("torch.distributed")  # never import torch just to ask
    if dist is None:
        return None
    try:
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank()), int(dist.get_world_size())
    except Exception:  # a half-configured torch must not break reading
        return None
    return None


def resolve_shards(shard_id: Any, num_shards: Any) -> tuple[int, int]:
    """Resolve ``"auto"`` values and validate ``(shard_id, num_shards)``.

    ``"auto"`` takes the rank / world size from ``torch.distributed`` when it is initialised,
    else from the ``RANK`` / ``WORLD_SIZE`` environment variables, else ``0`` / ``1``.

    Examples
    --------
    >>> resolve_shards(1, 3)
    (1, 3)
    """
    if shard_id == "auto" or num_shards == "auto":
        found = _distributed_rank_world()
        rank, world = found if found else (_env_int("RANK"), _env_int("WORLD_SIZE"))
        if shard_id == "auto":
            shard_id = 0 if rank is None else rank
        if num_shards == "auto":
            num_shards = 1 if world is None else world
    for name, v in (("shard_id", shard_id), ("num_shards", num_shards)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidArgumentError(
                f"{name} must be an integer or 'auto' (got {type(v).__name__} {v!r})."
            )
    if num_shards < 1:
        raise InvalidArgumentError(
            f"The number of shards must be at least 1 (got num_shards={num_shards})."
        )
    if not 0 <= shard_id < num_shards:
        raise InvalidArgumentError(
            f"The shard_id={shard_id} is invalid. Must be in range [0..{num_shards - 1}]."
        )
    return shard_id, num_shards
