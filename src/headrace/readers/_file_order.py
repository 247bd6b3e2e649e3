"""``shuffle_after_epoch`` for container readers: shuffle the order of the files, not the samples.

A container reader (tar shards, RecordIO files) keeps its samples grouped by file. With
``shuffle_after_epoch`` every data epoch visits the files in a fresh order seeded by
``(shuffle_after_epoch_seed, epoch)`` (the same on every rank, so the global order is one
permutation), while the samples inside a file stay in their stored order, so reads remain
sequential. Sharding then cuts that global order as usual.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from headrace._core.errors import InvalidArgumentError, InvalidTypeError
from headrace.readers._base import EpochPlan

_MASK64 = (1 << 64) - 1
DEFAULT_FILE_ORDER_SEED = 0x5EED_0F11  # without shuffle_after_epoch_seed: the same every run


@dataclass(frozen=True)
class FileOrderPlan(EpochPlan):
    """An :class:`EpochPlan` whose global shuffle permutes whole files.

    ``file_starts`` holds the first sample index of each file (samples are stored file by file).

    Examples
    --------
    >>> plan = FileOrderPlan(size=5, num_shards=1, shard_id=0, stick_to_shard=False,
    ...                      random_shuffle=False, global_shuffle=True, seed=0,
    ...                      file_starts=(0, 2, 3), file_seed=1)
    >>> order = plan.order(0, pad=False).tolist()
    >>> sorted(order), {tuple(order[i:i + 2]) for i in range(4)} >= {(0, 1), (3, 4)}
    ([0, 1, 2, 3, 4], True)
    """

    file_starts: tuple[int, ...] = (0,)
    file_seed: int = DEFAULT_FILE_ORDER_SEED

    def _permutation(self, n: int, epoch: int, stream: int) -> np.ndarray:
        if stream != 0:
            return super()._permutation(n, epoch, stream)
        key = (self.file_seed & _MASK64) | (epoch << 64)
        files = np.random.Generator(np.random.Philox(key=key)).permutation(len(self.file_starts))
        bounds = list(self.file_starts) + [n]
        return np.concatenate(
            [np.arange(bounds[f], bounds[f + 1], dtype=np.int64) for f in files.tolist()]
        )


def check_file_shuffle(
    reader: str, shuffle_after_epoch: Any, seed: Any, stick_to_shard: bool
) -> tuple[bool, int]:
    """Validate ``shuffle_after_epoch`` / ``shuffle_after_epoch_seed``; return both, resolved."""
    on = bool(shuffle_after_epoch)
    if on and stick_to_shard:
        raise InvalidArgumentError(
            f"readers.{reader}: shuffle_after_epoch cannot be combined with stick_to_shard."
        )
    if seed is None:
        return on, DEFAULT_FILE_ORDER_SEED
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InvalidTypeError(
            f"readers.{reader}: shuffle_after_epoch_seed must be an integer "
            f"(got {type(seed).__name__})."
        )
    return on, int(seed) & _MASK64


def file_order_plan(base: EpochPlan, file_starts: list[int], file_seed: int) -> FileOrderPlan:
    """``base`` with its global shuffle replaced by the whole-file shuffle."""
    kw = {f.name: getattr(base, f.name) for f in fields(EpochPlan)}
    return FileOrderPlan(**kw, file_starts=tuple(file_starts), file_seed=file_seed)


__all__ = ["DEFAULT_FILE_ORDER_SEED", "FileOrderPlan", "check_file_shuffle", "file_order_plan"]
