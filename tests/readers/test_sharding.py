"""Shard arithmetic and epoch plans (property-based)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headrace.readers import _sharding as sh
from headrace.readers._base import EpochPlan

sizes = st.integers(min_value=1, max_value=500)


@st.composite
def n_and_k(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(sizes)
    return n, draw(st.integers(min_value=1, max_value=n))


@given(n_and_k())
def test_shards_are_contiguous_disjoint_and_cover(nk: tuple[int, int]) -> None:
    n, k = nk
    bounds = [sh.shard_bounds(n, k, s) for s in range(k)]
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    for (_, hi), (lo, _) in itertools.pairwise(bounds):
        assert hi == lo
    lens = [hi - lo for lo, hi in bounds]
    assert max(lens) - min(lens) <= 1 and min(lens) >= 1
    assert max(lens) == sh.padded_shard_size(n, k)


@given(n_and_k())
def test_padded_epoch_size(nk: tuple[int, int]) -> None:
    n, k = nk
    padded = sh.epoch_size_padded(n, k, True)
    assert padded % k == 0 and n <= padded < n + k
    assert sh.epoch_size_padded(n, k, False) == n


@given(st.integers(1, 20), st.integers(0, 19), st.integers(0, 100))
def test_shard_rotation_visits_every_shard(k: int, s: int, start: int) -> None:
    s %= k
    seen = {sh.shard_for_epoch(s, e, k, False) for e in range(start, start + k)}
    assert seen == set(range(k))
    assert {sh.shard_for_epoch(s, e, k, True) for e in range(start, start + k)} == {s}


@given(st.integers(0, 1000), st.integers(1, 64))
def test_num_batches(n: int, b: int) -> None:
    assert sh.num_batches(n, b, "partial") * b >= n > (sh.num_batches(n, b, "partial") - 1) * b
    assert sh.num_batches(n, b, "drop") * b <= n < (sh.num_batches(n, b, "drop") + 1) * b


@settings(max_examples=60)
@given(
    n_and_k(),
    st.booleans(),
    st.booleans(),
    st.integers(0, 2**64 - 1),
    st.integers(0, 50),
)
def test_epoch_plan_partitions_each_epoch(
    nk: tuple[int, int], local: bool, global_: bool, seed: int, epoch: int
) -> None:
    n, k = nk
    orders = [
        EpochPlan(n, k, s, False, local, global_, seed).order(epoch, pad=False) for s in range(k)
    ]
    merged = np.concatenate(orders)
    assert sorted(merged.tolist()) == list(range(n))  # disjoint and covering in every epoch
    padded = [
        EpochPlan(n, k, s, False, local, global_, seed).order(epoch, pad=True) for s in range(k)
    ]
    for o, p in zip(orders, padded):
        assert len(p) == sh.padded_shard_size(n, k)
        assert p[: len(o)].tolist() == o.tolist() and set(p[len(o) :].tolist()) <= {o[-1]}


@given(st.integers(10, 300), st.integers(0, 2**63))
def test_shuffle_is_a_fresh_reproducible_permutation(n: int, seed: int) -> None:
    plan = EpochPlan(n, 1, 0, False, True, False, seed)
    e0, e1 = plan.order(0, False), plan.order(1, False)
    assert sorted(e0.tolist()) == list(range(n))
    assert e0.tolist() != e1.tolist()
    assert plan.order(0, False).tolist() == e0.tolist()
    other = EpochPlan(n, 1, 0, False, True, False, seed ^ 1).order(0, False)
    assert other.tolist() != e0.tolist()


def test_resolve_shards_errors() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        sh.resolve_shards(0, 0)
    with pytest.raises(ValueError, match=r"The shard_id=3 is invalid. Must be in range \[0..2\]"):
        sh.resolve_shards(3, 3)
    with pytest.raises(ValueError, match="shard_id"):
        sh.resolve_shards(-1, 3)
    with pytest.raises(ValueError, match="integer"):
        sh.resolve_shards(1.5, 3)


def test_resolve_auto_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert sh.resolve_shards("auto", "auto") == (0, 1)
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert sh.resolve_shards("auto", "auto") == (2, 4)
    assert sh.resolve_shards(1, "auto") == (1, 4)
    monkeypatch.setenv("RANK", "5")
    with pytest.raises(ValueError, match="shard_id=5"):
        sh.resolve_shards("auto", "auto")


def test_check_last_batch() -> None:
    assert sh.check_last_batch("fill") == "fill"
    with pytest.raises(ValueError, match="last_batch"):
        sh.check_last_batch("keep")
