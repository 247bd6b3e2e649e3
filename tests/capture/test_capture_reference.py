"""Capture mode as the reference documents it (issue 14, points 7-9).

7. the rules and their error wording; 8. capture faithful to eager (RNG states, calls the
reference leaves eager, break while tracing, empty captures); 9. ``ndd.capture.is_captured`` and
``ndd.capture.stats``. The scenarios take the module as a parameter, so the differential test
at the end runs the same programs on the reference (NVIDIA DALI) and compares the outcomes.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import headrace as ndd

# --- scenarios, written against either module -------------------------------------------------


def _data(n: int = 5) -> list[np.ndarray]:
    return [np.full((3, 4), i, np.float32) for i in range(n)]


def _first(m: Any, x: Any) -> float:
    return float(np.asarray(x.evaluate().tensors[0]).ravel()[0])


def bare_draws(m: Any, capture: bool) -> list[Any]:
    """A random operator and bare ``rng()`` draws; the RNG's state read in the body."""
    src = m.ExternalSource(_data())
    rng = m.random.RNG(seed=3)
    it = src.captured(batch_size=2) if capture else (src(batch_size=2) for _ in range(5))
    out = []
    for b in it:
        m.cast(b, dtype=m.uint8)
        before = str(rng.state)
        u = m.random.uniform(batch_size=2, rng=rng)
        w = rng()
        out.append((before, str(rng.state), _first(m, u), w))
    return out


def drop_random_call(m: Any) -> None:
    src = m.ExternalSource(_data())
    rng = m.random.RNG(seed=3)
    for i, b in enumerate(src.captured(batch_size=2)):
        m.cast(b, dtype=m.uint8)
        if i < 2:
            m.random.uniform(batch_size=2, rng=rng)


def touch_between_epochs(m: Any, touch: bool) -> int:
    src = m.ExternalSource(_data(3), cycle="raise")
    rng = m.random.RNG(seed=3)
    n = 0
    for epoch in range(2):
        if epoch and touch:
            rng()
        for _ in src.captured(batch_size=2):
            m.random.uniform(batch_size=2, rng=rng)
            n += 1
    return n


def drop_invariant(m: Any) -> None:
    for i, b in enumerate(m.ExternalSource(_data()).captured(batch_size=2)):
        m.cast(b, dtype=m.capture.invariant(m.uint8) if i == 0 else m.uint8)


def feeder_in_two_loops(m: Any) -> None:
    feed = m.ExternalSource(_data(10))
    for _ in range(2):
        for b in m.ExternalSource(_data(3)).captured(batch_size=2):
            m.cast(b, dtype=m.uint8)
            m.cast(feed(), dtype=m.uint8)


def break_while_tracing(m: Any) -> int:
    feed = m.ExternalSource(_data(10))
    for b in m.ExternalSource(_data(3)).captured(batch_size=2):
        m.cast(b, dtype=m.uint8)
        m.cast(feed(), dtype=m.uint8)
        break
    n = 0
    for b in m.ExternalSource(_data(3)).captured(batch_size=2):
        m.cast(b, dtype=m.uint8)
        m.cast(feed(), dtype=m.uint8)
        n += 1
    return n


def uncaptured_kinds(m: Any, capture: bool) -> list[Any]:
    """An argument from a local list, an attribute, chained calls at one line, a random
    call whose probability is an attribute changed by the body."""

    class Cfg:
        prob = 0.0

    cfg = Cfg()
    images = [np.arange(24, dtype=np.float32).reshape(2, 4, 3) + i for i in range(5)]
    src = m.ExternalSource(images, layout="HWC")
    flips = [0, 1, 1, 0, 1]
    rng = m.random.RNG(seed=1)
    it = src.captured(batch_size=2) if capture else (src(batch_size=2) for _ in range(5))
    out = []
    for i, b in enumerate(it):
        x = m.flip(b, horizontal=flips[i])
        for _ in range(i % 3 + 1):
            x = m.flip(x, vertical=1)
        c = m.random.coin_flip(probability=cfg.prob, batch_size=2, rng=rng)
        cfg.prob = 1.0
        out.append((_first(m, x), _first(m, c)))
    return out


def ragged_made_dense(m: Any) -> None:
    src = m.ExternalSource([m.batch([np.zeros((2,)), np.zeros((3,))])] * 3)
    for b in src.captured(batch_size=2):
        m.cast(b, dtype=m.uint8).torch()


def outcome(f: Any, *a: Any) -> Any:
    """The result, or ``("error", exception type, message)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*a)
    except Exception as e:
        return ("error", e, str(e))


# --- 7: rules and their wording --------------------------------------------------------------


def test_bare_rng_draws_are_allowed_and_match_eager() -> None:
    cap, eager = bare_draws(ndd, True), bare_draws(ndd, False)
    assert cap == eager and len(cap) == 5


def test_dropping_a_traced_random_call_raises() -> None:
    with pytest.raises(RuntimeError, match="RNG of a captured operator was used unexpectedly"):
        drop_random_call(ndd)


def test_touching_an_rng_between_external_source_epochs_raises() -> None:
    assert touch_between_epochs(ndd, False) == 6
    with pytest.raises(RuntimeError, match="number of random draws per iteration changed"):
        touch_between_epochs(ndd, True)


def test_error_wording() -> None:
    with pytest.raises(RuntimeError, match="must remain marked"):
        drop_invariant(ndd)
    with pytest.raises(RuntimeError, match="already used in a capture-mode loop"):
        feeder_in_two_loops(ndd)
    with pytest.raises(RuntimeError, match="Already bound to a different capture context"):
        feeder_in_two_loops(ndd)
    with pytest.raises(ValueError, match="non-uniform shape"):
        ragged_made_dense(ndd)


def test_get_state_before_first_iteration(image_dir: str) -> None:
    for ckpt in (False, True):
        r = ndd.readers.File(file_root=Path(image_dir), enable_checkpointing=ckpt)
        with pytest.raises(RuntimeError, match="before its first iteration"):
            r.get_state()


# --- 8: faithful to eager --------------------------------------------------------------------


@pytest.fixture
def image_dir(tmp_path: Path) -> str:
    import cv2

    for c in range(2):
        (tmp_path / f"c{c}").mkdir()
        for i in range(6):
            img = np.random.default_rng(i + 10 * c).integers(0, 255, (24 + i, 32, 3), np.uint8)
            cv2.imwrite(str(tmp_path / f"c{c}" / f"{i}.jpg"), img)
    return str(tmp_path)


def _reader_states(root: str, capture: bool) -> list[Any]:
    r = ndd.readers.File(file_root=Path(root), random_shuffle=True, seed=2)
    rng = ndd.random.RNG(seed=9)
    out = []
    for _ in range(2):
        for jpegs, labels in r.next_epoch(batch_size=4, capture=capture):
            img = ndd.decoders.image_random_crop(jpegs, rng=rng)
            s = str(rng.state)
            m = ndd.random.coin_flip(batch_size=4, rng=rng)
            bare = rng()
            img = ndd.flip(ndd.resize(img, size=[8, 8]), horizontal=m)
            out.append((s, str(rng.state), bare, np.asarray(ndd.as_tensor(img)).tobytes()))
            out.append(np.asarray(ndd.as_tensor(labels)).tolist())
    return out


def test_rng_state_in_a_captured_reader_loop_equals_eager(image_dir: str) -> None:
    eager, cap = _reader_states(image_dir, False), _reader_states(image_dir, True)
    assert len(cap) == 12 and cap == eager


def test_touching_an_rng_between_reader_epochs_raises(image_dir: str) -> None:
    r = ndd.readers.File(file_root=image_dir)
    rng = ndd.random.RNG(seed=0)
    for j, _ in r.next_epoch(batch_size=4, capture=True):
        ndd.decoders.image_random_crop(j, rng=rng)
    rng.seed = 5
    with pytest.raises(RuntimeError, match="RNG of a captured operator"):
        for j, _ in r.next_epoch(batch_size=4, capture=True):
            ndd.decoders.image_random_crop(j, rng=rng)


def test_calls_the_reference_leaves_eager_give_eager_results() -> None:
    with pytest.warns(UserWarning, match="no operators were captured"):  # none is provable
        cap = uncaptured_kinds(ndd, True)
    eager = uncaptured_kinds(ndd, False)
    assert cap == eager
    assert [c for _, c in cap] == [0.0, 1.0, 1.0, 1.0, 1.0]


def test_break_while_tracing_releases_the_feeder(image_dir: str) -> None:
    assert break_while_tracing(ndd) == 3
    feed = ndd.ExternalSource(_data(10))
    r = ndd.readers.File(file_root=image_dir)
    for j, _ in r.next_epoch(batch_size=4, capture=True):
        ndd.decoders.image(j)
        ndd.cast(feed(), dtype=ndd.uint8)
        break
    assert feed().shape == (3, 4)  # usable eagerly again
    assert sum(1 for _ in r.next_epoch(batch_size=4)) == 3  # and the reader too


def test_reader_that_captured_nothing_goes_back_to_eager(image_dir: str) -> None:
    r = ndd.readers.File(file_root=image_dir)
    with pytest.warns(UserWarning, match="no operators were captured"):
        n = sum(1 for _ in r.next_epoch(batch_size=4, capture=True))
    assert n == 3 and ndd.capture.stats(r).mode == "eager"
    assert sum(1 for _ in r.next_epoch(batch_size=4)) == 3


# --- 9: what capture did ---------------------------------------------------------------------


def test_is_captured_and_stats() -> None:
    src = ndd.ExternalSource(_data(5))
    flags, eager_flags = [], []
    for i, b in enumerate(src.captured(batch_size=2)):
        dtype = ndd.capture.invariant(ndd.uint8 if i != 2 else ndd.int32)  # marked: recorded
        x = ndd.cast(b, dtype=dtype)  # line A
        flags.append(ndd.capture.is_captured(x))
        y = ndd.cast(np.zeros(3), dtype=ndd.uint8)  # never captured: unknown input
        eager_flags.append(ndd.capture.is_captured(y))
    assert flags == [True, True, False, True, True] and not any(eager_flags)
    s = ndd.capture.stats(src)
    assert (s.mode, s.captured_calls, s.steps_traced, s.steps_replayed) == (
        "captured",
        ["cast"],
        1,
        4,
    )
    assert s.calls_replayed == 3 and s.calls_eager == 6
    by_reason = {c.reason: c for c in s.eager_calls}
    assert by_reason["its arguments differ from the traced call's"].count == 1
    unknown = next(c for c in s.eager_calls if "input comes from" in c.reason)
    assert unknown.count == 5 and unknown.op == "cast"
    assert re.search(r"test_capture_reference\.py:\d+$", unknown.site)
    assert "captured calls: cast" in str(s) and "5 x cast" in str(s)
    with pytest.raises(ValueError, match="never used"):
        ndd.capture.stats(ndd.ExternalSource(_data()))


def test_stats_of_a_torn_down_loop() -> None:
    src = ndd.ExternalSource(_data(5))
    for i, b in enumerate(src.captured(batch_size=2)):
        ndd.cast(b, dtype=ndd.uint8)
        if i == 2:
            break
    assert ndd.capture.stats(src).mode == "torn down"


# --- against the reference -------------------------------------------------------------------


def _builtin(e: BaseException) -> type:
    return next(t for t in type(e).__mro__ if t.__module__ == "builtins")


def _same_outcome(a: Any, b: Any, fragment: str | None = None) -> None:
    """Same result, or errors of the same builtin type (both carrying ``fragment``)."""
    if isinstance(b, tuple) and b[:1] == ("error",):
        assert isinstance(a, tuple) and a[:1] == ("error",), a
        assert isinstance(a[1], _builtin(b[1])), (a, b)
        if fragment is not None:
            assert fragment in a[2] and fragment in b[2], (a[2], b[2])
    else:
        assert a == b


@pytest.mark.dali
def test_same_outcomes_as_the_reference() -> None:
    from tests._helpers.dali_oracle import dali_ndd

    d = dali_ndd()
    cases: list[tuple[Any, tuple[Any, ...], str | None]] = [
        (drop_random_call, (), "The RNG of a captured operator was used unexpectedly"),
        (touch_between_epochs, (False,), None),
        (touch_between_epochs, (True,), "The RNG of a captured operator was used unexpectedly"),
        (drop_invariant, (), "must remain marked"),
        (feeder_in_two_loops, (), "Already bound to a different capture context"),
        (break_while_tracing, (), None),
        (ragged_made_dense, (), None),
    ]
    for f, args, fragment in cases:
        _same_outcome(outcome(f, ndd, *args), outcome(f, d, *args), fragment)
    # bit-exact where no randomness is involved; the coin flips are 0 / 1 by probability
    with pytest.warns(UserWarning, match="no operators were captured"):
        mine = uncaptured_kinds(ndd, True)
    ref = outcome(uncaptured_kinds, d, True)
    assert mine == ref
    # the reference's RNG state read in the body equals its eager one, and so does ours
    assert outcome(bare_draws, d, True) == outcome(bare_draws, d, False)
