"""ndd.checkpoint: registration rules, (de)serialization, files, and exact resume of pipelines."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

import headrace as ndd
from headrace import checkpoint as ck
from headrace._exec import checkpoint as ck_impl
from headrace.checkpoint import Checkpoint
from headrace.random import RNG
from headrace.readers import File

REPO = Path(__file__).resolve().parents[1]
CLASSES = ("bird", "cat", "dog")
PER_CLASS = 7  # 21 images


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small JPEGs of varied sizes and content in one folder per class."""
    base = tmp_path_factory.mktemp("images")
    gen = np.random.default_rng(0)
    for c, cls in enumerate(CLASSES):
        (base / cls).mkdir()
        for i in range(PER_CLASS):
            h, w = int(gen.integers(16, 40)), int(gen.integers(16, 40))
            img = gen.integers(0, 256, (h, w, 3), dtype=np.uint8)
            img[:, : w // 2] //= c + 2  # not symmetric, so a flip changes the pixels
            ok, enc = cv2.imencode(".jpg", img)
            assert ok
            (base / cls / f"{i}.jpg").write_bytes(enc.tobytes())
    return base


def rng_draws(rng: RNG, n: int = 4) -> list[int]:
    return [rng() for _ in range(n)]


def raises(exc: type[BaseException], *fragments: str) -> Any:
    """pytest.raises matching every fragment, in order, case-insensitively."""
    return pytest.raises(exc, match="(?is)" + ".*".join(re.escape(f) for f in fragments))


# --- registration --------------------------------------------------------------------------
def test_named_and_anonymous_registration() -> None:
    ckpt = Checkpoint()
    a, b, c = RNG(seed=1), RNG(seed=2), RNG(seed=3)
    assert ckpt.register(a) == "__op_0"
    assert ckpt.register(b, "aug") == "aug"
    assert ckpt.register(a) == "__op_0" and ckpt.register(b) == "aug"  # known ops keep keys
    assert ckpt.register(c) == "__op_2"
    assert ckpt.names == ("__op_0", "aug", "__op_2") and len(ckpt) == 3
    assert "aug" in ckpt and "nope" not in ckpt
    assert ckpt.get_state("aug") is None  # nothing collected yet


def test_name_rules() -> None:
    ckpt = Checkpoint()
    rng = RNG(seed=1)
    with raises(ValueError, "empty"):
        ckpt.register(rng, "")
    with raises(ValueError, "__op_"):
        ckpt.register(rng, "__op_7")
    with raises(TypeError, "str"):
        ckpt.register(rng, 3)  # type: ignore[arg-type]
    with raises(TypeError, "get_state"):
        ckpt.register(object(), "x")
    ckpt.register(rng, "first")
    with raises(RuntimeError, "'second'", "already registered", "'first'"):
        ckpt.register(rng, "second")
    assert ckpt.names == ("first",)


def test_replace_named_op(root: Path) -> None:
    ckpt = Checkpoint()
    old, new = RNG(seed=1), RNG(seed=2)
    ckpt.register(old, "key")
    with raises(TypeError, "Cannot replace operator 'key'", "'RNG'", "'File'"):
        ckpt.register(File(file_root=str(root)), "key")
    assert ckpt.register(new, "key") == "key" and len(ckpt) == 1
    ckpt.collect()
    assert ckpt.get_state("key") == new.get_state()
    with raises(RuntimeError, "completed"):
        ckpt.register(old)  # no longer registered: a new registration


def test_no_new_registrations_after_collect() -> None:
    ckpt = Checkpoint()
    rng = RNG(seed=1)
    ckpt.register(rng, "rng")
    ckpt.collect()
    with raises(RuntimeError, "completed"):
        ckpt.register(RNG(seed=2))
    with raises(RuntimeError, "completed"):
        ckpt.register(RNG(seed=2), "other")
    assert ckpt.register(rng, "rng") == "rng" and ckpt.register(rng) == "rng"
    ckpt.register(RNG(seed=3), "rng")  # re-binding a known name is allowed
    ckpt.clear()
    assert len(ckpt) == 0 and not ckpt.is_complete and not ckpt.is_loaded
    assert ckpt.register(RNG(seed=2)) == "__op_0"


def test_registration_after_load_must_match_keys() -> None:
    src = Checkpoint()
    src.register(RNG(seed=1))
    src.register(RNG(seed=2), "named")
    src.collect()
    payload = src.serialize()
    dst = Checkpoint()
    dst.deserialize(payload)
    with raises(KeyError, "'other'"):
        dst.register(RNG(seed=5), "other")
    dst.register(RNG(seed=5))  # __op_0
    dst.register(RNG(seed=6), "named")
    with raises(KeyError, "Loaded checkpoint has no state", "'__op_2'"):
        dst.register(RNG(seed=7))
    assert dst.names == ("__op_0", "named")


def test_type_checks_on_apply(root: Path) -> None:
    ckpt = Checkpoint()
    ckpt.set_state("x", "irrelevant", op_type=File)
    with raises(TypeError, "Type mismatch for operator 'x'", "'File'", "'RNG'"):
        ckpt.register(RNG(seed=1), "x")
    src = Checkpoint()
    src.register(RNG(seed=1), "x")
    src.collect()
    loaded = Checkpoint()
    loaded.deserialize(src.serialize())
    with raises(TypeError, "Type mismatch for operator 'x'", "'RNG'", "'File'"):
        loaded.register(File(file_root=str(root)), "x")
    untyped = Checkpoint()  # no type recorded: no check, the object's own validation applies
    untyped.set_state("x", RNG(seed=4).get_state())
    rng = RNG(seed=9)
    untyped.register(rng, "x")
    assert rng_draws(rng) == rng_draws(RNG(seed=4))


def test_set_state_rules() -> None:
    ckpt = Checkpoint()
    ckpt.set_state("a", "s", op_type=RNG)
    ckpt.set_state("b", "s", op_type="File")
    ckpt.set_state("c", "s")
    assert [ckpt._states[k].type_name for k in "abc"] == ["RNG", "File", None]
    with raises(TypeError, "op_type"):
        ckpt.set_state("d", "s", op_type=42)
    with raises(KeyError, "'zzz'"):
        ckpt.get_state("zzz")
    done = Checkpoint()
    done.register(RNG(seed=1), "rng")
    done.collect()
    with raises(KeyError, "'unknown'"):
        done.set_state("unknown", "...")
    later = RNG(seed=8)
    done.set_state("rng", later.get_state())  # known key: pending until restore
    assert done.get_state("rng") == later.get_state()


# --- readers opt in ------------------------------------------------------------------------
def test_registration_enables_reader_checkpointing_before_first_epoch(root: Path) -> None:
    reader = File(file_root=str(root))
    ckpt = Checkpoint()
    ckpt.register(reader, "reader")
    it = reader.next_epoch(batch_size=4)
    next(it)
    ckpt.collect()
    assert (ckpt.get_state("reader")["epoch"], ckpt.get_state("reader")["position"]) == (0, 4)
    assert ckpt._states["reader"].type_name == "File"


def test_iterated_reader_without_checkpointing_is_refused(root: Path) -> None:
    reader = File(file_root=str(root))
    next(reader.next_epoch(batch_size=4))
    ckpt = Checkpoint()
    with raises(RuntimeError, "enable_checkpointing=True"):
        ckpt.register(reader, "reader")
    with raises(RuntimeError, "enable_checkpointing=True"):
        ckpt.register(reader)
    assert len(ckpt) == 0
    running = File(file_root=str(root), enable_checkpointing=True)
    next(running.next_epoch(batch_size=4))
    assert ckpt.register(running) == "__op_0"


def test_loaded_state_needs_a_fresh_reader(root: Path) -> None:
    src = File(file_root=str(root), enable_checkpointing=True)
    next(src.next_epoch(batch_size=4))
    ckpt = Checkpoint()
    ckpt.register(src, "reader")
    ckpt.collect()
    payload = ckpt.serialize()
    again = Checkpoint()
    again.deserialize(payload)
    with raises(RuntimeError, "after iteration has begun"):
        again.register(src, "reader")


def test_capture_and_checkpointing_are_exclusive(root: Path) -> None:
    reader = File(file_root=str(root))
    Checkpoint().register(reader)
    with raises(NotImplementedError, "Checkpointing is not supported in capture mode"):
        reader.next_epoch(batch_size=2, capture=True)
    with raises(NotImplementedError, "not supported in compiled mode (compile=True)"):
        reader.next_epoch(batch_size=2, compile=True)
    for spelling, mode in (({"capture": True}, "capture mode"), ({"compile": True}, "compiled")):
        used = File(file_root=str(root))
        next(used.next_epoch(batch_size=2, **spelling))
        with raises(NotImplementedError, f"used in {mode}", "cannot be combined"):
            Checkpoint().register(used)


# --- collect and restore -------------------------------------------------------------------
def test_collect_records_states_and_types(root: Path) -> None:
    reader = File(file_root=str(root), enable_checkpointing=True)
    next(reader.next_epoch(batch_size=5))
    rng = RNG(seed=11)
    rng_draws(rng, 3)
    ckpt = Checkpoint()
    ckpt.register(rng, "rng")
    ckpt.register(reader, "reader")
    ckpt.collect()
    assert ckpt.is_complete and not ckpt.is_loaded
    assert ckpt._states["rng"].type_name == "RNG" and ckpt._states["reader"].type_name == "File"
    assert ckpt.get_state("rng") == rng.get_state() and ckpt.get_state("rng")["position"] == 3
    assert ckpt.get_state("reader") == reader.get_state()


def test_stray_and_missing_states() -> None:
    ckpt = Checkpoint()
    ckpt.set_state("ghost", "...")
    with raises(RuntimeError, "no corresponding registered ops", "ghost"):
        ckpt.collect()
    with raises(RuntimeError, "no corresponding registered ops", "ghost"):
        ckpt.restore()
    partial = Checkpoint()
    a, b = RNG(seed=1), RNG(seed=2)
    partial.register(a, "a")
    partial.register(b, "b")
    partial.restore()  # no states at all: nothing to do
    partial.set_state("a", RNG(seed=5).get_state())
    with raises(RuntimeError, "incomplete", "'b'"):
        partial.restore()


def test_restore_applies_pending_states_to_registered_ops() -> None:
    a, b = RNG(seed=1), RNG(seed=2)
    src = Checkpoint()
    src.register(a, "a")
    src.register(b)
    rng_draws(a, 5)
    src.collect()
    payload = src.serialize()
    expect_a, expect_b = rng_draws(a), rng_draws(b)
    fa, fb = RNG(seed=100), RNG(seed=200)
    dst = Checkpoint()
    dst.register(fa, "a")  # registered first, loaded later: restore() applies
    dst.register(fb)
    dst.deserialize(payload)
    assert dst.is_loaded and not dst.is_complete and dst._dirty == {"a", "__op_1"}
    dst.restore()
    assert not dst._dirty
    assert rng_draws(fa) == expect_a and rng_draws(fb) == expect_b
    dst.restore()  # already applied: nothing happens
    assert rng_draws(fa) != expect_a


# --- serialize / deserialize ---------------------------------------------------------------
def test_serialize_format() -> None:
    ckpt = Checkpoint()
    with raises(RuntimeError, "empty"):
        ckpt.serialize()
    rng = RNG(seed=7)
    rng_draws(rng, 2)
    ckpt.register(rng, "rng")
    ckpt.collect()
    payload = json.loads(ckpt.serialize())
    assert payload["version"] == 2 and list(payload["states"]) == ["rng"]
    entry = payload["states"]["rng"]
    assert entry["type"] == "RNG" and isinstance(entry["state"], str)
    assert json.loads(entry["state"]) == {"version": 1, "kind": "RNG", "seed": 7, "position": 2}


def test_deserialize_accepts_object_states_and_null_types() -> None:
    state = {"version": 1, "kind": "RNG", "seed": 3, "position": 5}
    data = {"version": 2, "states": {"r": {"state": state, "type": None}, "s": {"state": "x"}}}
    ckpt = Checkpoint()
    ckpt.deserialize(json.dumps(data).encode())
    assert ckpt._states["r"].type_name is None and ckpt._states["s"].state == "x"
    assert json.loads(ckpt._states["r"].state) == state
    ckpt.set_state("s", RNG(seed=0).get_state())
    rng = RNG(seed=99)
    ckpt.register(rng, "r")
    ref = RNG(seed=3)
    ref.advance(5)
    assert rng_draws(rng) == rng_draws(ref)


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ("[1, 2]", "Invalid checkpoint payload."),
        ('{"version": 2}', "Invalid checkpoint payload."),
        ('{"version": 2, "states": [1]}', "Invalid checkpoint payload"),
        ('{"version": 2, "states": {', "Invalid checkpoint payload"),
        ('{"version": 1, "states": {}}', "version"),
        ('{"states": {}}', "version"),
        ('{"version": 2, "states": {"r": "legacy string"}}', "Invalid checkpoint entry for 'r'"),
        ('{"version": 2, "states": {"r": {"type": "RNG"}}}', "Invalid checkpoint entry for 'r'"),
        ('{"version": 2, "states": {"r": {"state": 5}}}', "Invalid checkpoint entry for 'r'"),
        ('{"version": 2, "states": {"r": {"state": "x", "type": 42}}}', "Invalid `type`"),
    ],
)
def test_deserialize_validation(payload: str, fragment: str) -> None:
    ckpt = Checkpoint()
    ckpt.set_state("kept", "s")
    with raises(ValueError, fragment):
        ckpt.deserialize(payload)
    assert list(ckpt._states) == ["kept"] and not ckpt.is_loaded  # unchanged


def test_flags_follow_the_last_operation() -> None:
    ckpt = Checkpoint()
    ckpt.register(RNG(seed=1), "r")
    ckpt.collect()
    payload = ckpt.serialize()
    assert (ckpt.is_complete, ckpt.is_loaded) == (True, False)
    ckpt.deserialize(payload)
    assert (ckpt.is_complete, ckpt.is_loaded) == (False, True)
    ckpt.collect()
    assert (ckpt.is_complete, ckpt.is_loaded) == (True, False)


def test_current_is_bound_to_the_eval_context() -> None:
    assert ck.current() is ndd.EvalContext.current().checkpoint
    assert ck.current() is ck.current()
    with ndd.EvalContext(num_threads=1) as ctx:
        assert ck.current() is ctx.checkpoint
        assert isinstance(ctx.checkpoint, Checkpoint)
    assert ck.current() is not ctx.checkpoint


# --- files ---------------------------------------------------------------------------------
def collected(seed: int = 1, draws: int = 0) -> tuple[Checkpoint, RNG]:
    rng = RNG(seed=seed)
    rng_draws(rng, draws)
    ckpt = Checkpoint()
    ckpt.register(rng, "rng")
    ckpt.collect()
    return ckpt, rng


@pytest.mark.parametrize(
    "pattern",
    [
        "ckpt.json",
        "ckpt_{seq}_{seq}.json",
        "ckpt_{step}.json",
        "ckpt_{}.json",
        "ckpt_{seq!r}.json",
        "ckpt_{seq:x}.json",
        "ckpt_{seq:>6}.json",
        "ckpt_{seq:,}.json",
        "ckpt_{seq.json",
    ],
)
def test_pattern_needs_exactly_one_plain_seq_field(tmp_path: Path, pattern: str) -> None:
    ckpt, _ = collected()
    with raises(ValueError, "seq"):
        ckpt.save(str(tmp_path / pattern))
    with raises(ValueError, "seq"):
        ckpt.load(str(tmp_path / pattern))
    assert not list(tmp_path.iterdir())


def test_save_numbers_files_and_never_overwrites(tmp_path: Path) -> None:
    ckpt, rng = collected(draws=3)
    pattern = str(tmp_path / "run" / "nested" / "ckpt_{seq:04d}.json")
    assert ckpt.save(pattern) == str(tmp_path / "run" / "nested" / "ckpt_0000.json")
    assert ckpt.save(Path(pattern)).endswith("ckpt_0001.json")
    (tmp_path / "run" / "nested" / "ckpt_0002.json").write_text("someone else's")
    assert ckpt.save(pattern).endswith("ckpt_0003.json")
    assert (tmp_path / "run" / "nested" / "ckpt_0002.json").read_text() == "someone else's"
    other = Checkpoint()  # a fresh checkpoint starts one past the highest file on disk
    other.set_state("rng", rng.get_state(), op_type=RNG)
    (tmp_path / "run" / "nested" / "ckpt_0041.json").write_text("{}")
    assert other.save(pattern).endswith("ckpt_0042.json")
    assert sorted(p.name for p in (tmp_path / "run" / "nested").iterdir()) == [
        "ckpt_0000.json", "ckpt_0001.json", "ckpt_0002.json", "ckpt_0003.json",
        "ckpt_0041.json", "ckpt_0042.json",
    ]  # fmt: skip


def test_load_picks_the_highest_number(tmp_path: Path) -> None:
    pattern = str(tmp_path / "c{seq}.json")
    for draws in range(11):  # c0 ... c10: numeric, not lexical, order
        ckpt, _ = collected(draws=draws)
        ckpt.save(pattern)
    (tmp_path / "c10.json.bak").write_text("not a match")
    (tmp_path / "cx.json").write_text("not a match")
    loaded = Checkpoint()
    assert loaded.load(pattern) == str(tmp_path / "c10.json")
    rng = RNG(seed=1)
    loaded.register(rng, "rng")
    assert rng.get_state()["position"] == 10
    ckpt, _ = collected()
    assert loaded.save(pattern).endswith("c11.json")  # counting goes on after load
    with raises(FileNotFoundError, "nothing_{seq}"):
        Checkpoint().load(str(tmp_path / "nothing_{seq}"))


def test_seq_in_a_directory_name(tmp_path: Path) -> None:
    ckpt, _ = collected(draws=4)
    pattern = str(tmp_path / "step_{seq:03d}" / "data.json")
    paths = [ckpt.save(pattern) for _ in range(2)]
    assert paths == [
        str(tmp_path / "step_000" / "data.json"),
        str(tmp_path / "step_001" / "data.json"),
    ]
    assert Checkpoint().load(pattern) == paths[1]


def test_truncated_or_edited_files_name_the_file(tmp_path: Path) -> None:
    ckpt, _ = collected(draws=2)
    pattern = str(tmp_path / "c_{seq}.json")
    good = ckpt.save(pattern)
    text = Path(good).read_text()
    bad = tmp_path / "c_1.json"
    bad.write_text(text[: len(text) // 2])
    with raises(ValueError, str(bad), "Invalid checkpoint payload", "older checkpoint"):
        Checkpoint().load(pattern)
    bad.write_text(text.replace('"version": 2', '"version": 3'))
    with raises(ValueError, str(bad), "version"):
        Checkpoint().load(pattern)
    bad.write_bytes(b"\xff\xfe garbage")
    with raises(ValueError, str(bad)):
        Checkpoint().load(pattern)
    payload = json.loads(text)  # valid JSON, but the state itself was edited
    payload["states"]["rng"]["state"] = '{"version": 1, "seed": "many"}'
    bad.write_text(json.dumps(payload))
    loaded = Checkpoint()
    loaded.load(pattern)
    with raises(ValueError, str(bad), "'rng'", "seed"):
        loaded.register(RNG(seed=0), "rng")


def test_save_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ckpt, rng = collected(draws=5)
    pattern = str(tmp_path / "c_{seq:02d}.json")
    first = ckpt.save(pattern)

    # A crash while writing: the data never gets its final name, and nothing is left behind.
    def crash(*args: Any) -> None:
        raise OSError("disk unplugged")

    monkeypatch.setattr(ck_impl.os, "fsync", crash)
    with pytest.raises(OSError, match="disk unplugged"):
        ckpt.save(pattern)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c_00.json"]
    # A process killed mid-write leaves its temporary file: load must not pick it.
    (tmp_path / ".c_01.json.123.abcd.tmp").write_text('{"version": 2, "sta')
    (tmp_path / "c_01.json.tmp").write_text('{"version": 2, "sta')
    loaded = Checkpoint()
    assert loaded.load(pattern) == first
    fresh = RNG(seed=0)
    loaded.register(fresh, "rng")
    assert rng_draws(fresh) == rng_draws(rng)
    # Without hard links the file is moved into place with os.replace, still never clobbering.
    monkeypatch.setattr(ck_impl.os, "link", crash)
    assert ckpt.save(pattern).endswith("c_01.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".c_01.json.123.abcd.tmp", "c_00.json", "c_01.json", "c_01.json.tmp",
    ]  # fmt: skip


# --- exact resume --------------------------------------------------------------------------
EPOCHS = 3
# (label, epoch, batches received); -1: right after the epoch's last batch, before its
# generator is exhausted; "end": after the epoch's loop finished.
POINTS = [("start", 0, 0), ("mid0", 0, 2), ("last0", 0, -1), ("end0", 0, "end"), ("mid1", 1, 1)]

Batches = list[list[Any]]
Hook = Callable[[int, int | str], None]


def run_epochs(
    reader: File,
    batch_size: int | None,
    process: Callable[[Any], Any],
    epochs: int,
    hook: Hook | None = None,
) -> Batches:
    """``epochs`` calls of ``next_epoch``, processed; ``hook(epoch, batches received)`` runs
    after ``next_epoch`` (0), after every batch, and after the loop (``"end"``)."""
    out: Batches = []
    for e in range(epochs):
        it = reader.next_epoch(batch_size=batch_size)
        got: list[Any] = []
        if hook:
            hook(e, 0)
        for item in it:
            got.append(process(item))
            if hook:
                hook(e, len(got))
        if hook:
            hook(e, "end")
        out.append(got)
    return out


def points(lengths: list[int]) -> list[tuple[str, int, int | str]]:
    """POINTS with -1 resolved to the epoch's number of batches."""
    return [(lab, e, lengths[e] if b == -1 else b) for lab, e, b in POINTS]


def saver(tmp: Path, ckpt: Checkpoint, lengths: list[int]) -> Hook:
    """A run hook that collects and saves the checkpoint at every point of POINTS."""
    wanted = {(e, b): label for label, e, b in points(lengths)}

    def hook(epoch: int, received: int | str) -> None:
        label = wanted.get((epoch, received))
        if label is not None:
            ckpt.collect()
            ckpt.save(str(tmp / label / "ckpt_{seq:03d}.json"))

    return hook


def expected_after(ref: Batches, epoch: int, received: int | str) -> Batches:
    """What a reader restored at this point yields, epoch by epoch, to the end of the run."""
    if received == "end" or received == len(ref[epoch]):
        return ref[epoch + 1 :]  # the whole epoch was received: the next one follows
    return [ref[epoch][int(received) :]] + ref[epoch + 1 :]


def epoch_lengths(root: Path, kw: dict[str, Any], batch_size: int | None) -> list[int]:
    """Batches per epoch (they do not depend on the shuffling seed)."""
    return [len(e) for e in run_epochs(File(file_root=str(root), **kw), batch_size, len, EPOCHS)]


def sample_record(data: Any, label: Any) -> tuple[bytes, int]:
    return bytes(np.asarray(data)), int(np.asarray(label)[0])


def reader_records(item: tuple[Any, ...]) -> list[tuple[bytes, int]]:
    data, labels = item
    if isinstance(data, ndd.Tensor):  # sample mode
        return [sample_record(data, labels)]
    return [sample_record(d, lab) for d, lab in zip(data, labels)]


READER_CONFIGS = [
    pytest.param(
        {"random_shuffle": True, "num_shards": 2, "shard_id": 1, "pad_last_batch": True,
         "enable_checkpointing": True, "prefetch_queue_depth": 3}, 4, id="shuffle-shard-pad",
    ),
    pytest.param({"shuffle_after_epoch": True, "num_shards": 3, "shard_id": 2}, 3, id="global"),
    pytest.param(
        {"random_shuffle": True, "num_shards": 2, "shard_id": 0, "stick_to_shard": True},
        None, id="samples-sticky",
    ),
    pytest.param({}, 5, id="plain-fill"),  # the default: last batches topped up
    pytest.param({"last_batch": "partial"}, 5, id="plain-partial"),
    pytest.param({"last_batch": "drop", "random_shuffle": True}, 3, id="shuffle-drop"),
    pytest.param(
        {"last_batch": "fill", "num_shards": 3, "shard_id": 1, "random_shuffle": True}, 2,
        id="shuffle-shard-fill",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("kw", "batch_size"), READER_CONFIGS)
def test_reader_resumes_exactly(
    root: Path, tmp_path: Path, kw: dict[str, Any], batch_size: int | None
) -> None:
    fresh_kw = {k: v for k, v in kw.items() if k != "enable_checkpointing"}
    lengths = epoch_lengths(root, fresh_kw, batch_size)
    reader = File(file_root=str(root), **kw)
    ckpt = Checkpoint()
    ckpt.register(reader, "files")  # enables checkpointing when not asked for
    ref = run_epochs(reader, batch_size, reader_records, EPOCHS, saver(tmp_path, ckpt, lengths))
    assert [len(e) for e in ref] == lengths
    if kw.get("random_shuffle") or kw.get("shuffle_after_epoch"):
        assert ref[0] != ref[1] != ref[2]
    for label, epoch, received in points(lengths):
        expected = expected_after(ref, epoch, received)
        restored = File(file_root=str(root), **fresh_kw)  # its own random seed: overwritten
        loaded = Checkpoint()
        loaded.load(str(tmp_path / label / "ckpt_{seq:03d}.json"))
        loaded.register(restored, "files")
        got = run_epochs(restored, batch_size, reader_records, len(expected))
        assert got == expected, label


def augment(crop_rng: RNG, flip_rng: RNG) -> Callable[[Any], list[tuple[Any, ...]]]:
    """Decode a random crop of every image and flip it horizontally on a coin toss."""

    def process(item: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        data, labels = item
        images = ndd.decoders.image_random_crop(data, rng=crop_rng)
        flips = ndd.random.coin_flip(batch_size=data.batch_size, rng=flip_rng)
        out = []
        for d, lab, img, flip in zip(data, labels, images, flips):
            px = np.asarray(img)
            if int(flip.item()):
                px = px[:, ::-1]
            out.append((*sample_record(d, lab), px.shape, px.tobytes()))
        return out

    return process


def test_augmentation_pipeline_resumes_exactly(root: Path, tmp_path: Path) -> None:
    kw = {"random_shuffle": True, "num_shards": 2, "shard_id": 1, "pad_last_batch": True}
    reader = File(file_root=str(root), enable_checkpointing=True, **kw)
    crop_rng, flip_rng = RNG(seed=1234), RNG(seed=99)
    ckpt = Checkpoint()
    ckpt.register(reader, "reader")
    ckpt.register(crop_rng)
    ckpt.register(flip_rng)
    lengths = epoch_lengths(root, kw, 4)
    ref = run_epochs(reader, 4, augment(crop_rng, flip_rng), EPOCHS, saver(tmp_path, ckpt, lengths))
    crops = {rec[2] for batch in ref[0] for rec in batch}
    samples = [rec for batch in ref[0] for rec in batch]
    assert len(crops) > 3 and len(samples) == 12  # random crops differ; shard padded to 11 -> 12
    for label, epoch, received in points(lengths):
        expected = expected_after(ref, epoch, received)
        restored = File(file_root=str(root), **kw)
        rngs = RNG(), RNG()  # random seeds: the checkpoint overwrites them
        loaded = Checkpoint()
        assert loaded.load(str(tmp_path / label / "ckpt_{seq:03d}.json")).endswith("000.json")
        loaded.register(restored, "reader")
        loaded.register(rngs[0])
        loaded.register(rngs[1])
        got = run_epochs(restored, 4, augment(*rngs), len(expected))
        assert got == expected, label


def test_resume_example_runs(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HEADRACE_CACHE": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "resume_training.py"), "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "killed" in proc.stdout
    m = re.search(r"resumed batches match the uninterrupted run: (\d+)/(\d+)", proc.stdout)
    assert m is not None and m.group(1) == m.group(2) and int(m.group(1)) > 0, proc.stdout


# --- the reference -------------------------------------------------------------------------
def _outcome(fn: Callable[[], Any]) -> Any:
    """The value, or the builtin class of the exception (ours derive from the same ones)."""
    try:
        value = fn()
    except Exception as e:
        for base in (FileNotFoundError, KeyError, TypeError, ValueError, RuntimeError):
            if isinstance(e, base):
                return base.__name__
        raise
    return os.path.basename(value) if isinstance(value, str) and os.sep in value else value


def _scenario_registration(m: Any, root: Path, tmp: Path) -> list[Any]:
    ck, rngs = m.checkpoint.Checkpoint(), [m.random.RNG(seed=i) for i in range(4)]
    out = [_outcome(lambda: ck.register(rngs[0])), _outcome(lambda: ck.register(rngs[1], "x"))]
    out += [_outcome(lambda: ck.register(rngs[2])), _outcome(lambda: ck.register(rngs[0]))]
    out += [_outcome(lambda n=n: ck.register(rngs[3], n)) for n in ("", "__op_9", "y", "z")]
    out.append(_outcome(lambda: ck.register(m.readers.File(file_root=str(root)), "y")))
    out.append(_outcome(lambda: ck.register(m.random.RNG(seed=5), "y")))
    out.append(_outcome(lambda: ck.set_state("a", "s", op_type=42)))
    out.append(_outcome(lambda: ck.serialize()))
    ck.collect()
    out += [_outcome(lambda: ck.register(m.random.RNG())), _outcome(lambda: ck.register(rngs[1]))]
    out.append(_outcome(lambda: ck.register(m.random.RNG(), "new")))
    out.append(_outcome(lambda: ck.set_state("unknown", "s")))
    return out + [ck.names, len(ck), ck.is_complete, ck.is_loaded]


def _scenario_states(m: Any, root: Path, tmp: Path) -> list[Any]:
    ck, a, b = m.checkpoint.Checkpoint(), m.random.RNG(seed=1), m.random.RNG(seed=2)
    ck.set_state("ghost", "s")
    out = [_outcome(ck.collect), _outcome(ck.restore)]
    ck = m.checkpoint.Checkpoint()
    ck.register(a, "a")
    ck.register(b, "b")
    out.append(_outcome(ck.restore))
    ck.set_state("a", str(m.random.RNG(seed=7).get_state()))
    out.append(_outcome(ck.restore))
    ck.collect()
    payload = ck.serialize()
    for bad in ("[1]", '{"version": 1, "states": {}}', '{"version": 2, "states": {"r": "s"}}'):
        out.append(_outcome(lambda bad=bad: m.checkpoint.Checkpoint().deserialize(bad)))
    loaded = m.checkpoint.Checkpoint()
    loaded.deserialize(payload)
    out.append(_outcome(lambda: loaded.register(m.random.RNG(), "other")))
    out.append(_outcome(lambda: loaded.register(m.readers.File(file_root=str(root)), "a")))
    restored_b = m.random.RNG()
    out.append(_outcome(lambda: loaded.register(restored_b, "b")))
    out.append([restored_b() for _ in range(3)] == [b() for _ in range(3)])
    anon = m.checkpoint.Checkpoint()
    anon.deserialize('{"version": 2, "states": {"__op_0": {"state": "x", "type": "RNG"}}}')
    out.append(_outcome(lambda: anon.register(m.readers.File(file_root=str(root)))))
    return out + [loaded.is_loaded, loaded.is_complete]


def _scenario_files(m: Any, root: Path, tmp: Path) -> list[Any]:
    ck = m.checkpoint.Checkpoint()
    ck.register(m.random.RNG(seed=3), "r")
    ck.collect()
    pattern = str(tmp / "c_{seq:03d}.json")
    out = [_outcome(lambda: m.checkpoint.Checkpoint().load(pattern))]
    out += [_outcome(lambda: ck.save(str(tmp / "plain.json")))]
    out += [_outcome(lambda: ck.save(pattern)) for _ in range(2)]
    (tmp / "c_007.json").write_text(ck.serialize())
    other = m.checkpoint.Checkpoint()
    out += [_outcome(lambda: other.load(pattern)), _outcome(lambda: other.save(pattern))]
    return out


def _labels(batch: Any) -> list[int]:
    return [int(np.asarray(t)[0]) for t in batch[1].tensors]


def _scenario_reader_resume(m: Any, root: Path, tmp: Path) -> list[Any]:
    kw = {"file_root": str(root), "num_shards": 2, "shard_id": 1, "pad_last_batch": True}
    out = []
    unstarted = m.readers.File(**kw)
    used = m.readers.File(**kw)
    it = used.next_epoch(batch_size=4)
    next(it)
    out.append(_outcome(lambda: m.checkpoint.Checkpoint().register(used, "r")))
    # Resumed mid-epoch, the reference's next_epoch() yields a full epoch's worth of batches
    # (running into the next epoch), ours the rest of the interrupted epoch (issue 6): the
    # streams agree on the 6 - stop batches left of the two epochs (3 batches each).
    for stop in (1, 2, 3):  # mid-epoch, mid-epoch, right after the last batch
        reader = m.readers.File(**kw)
        ck = m.checkpoint.Checkpoint()
        ck.register(reader if stop != 2 else unstarted, "r")
        reader = reader if stop != 2 else unstarted
        it = reader.next_epoch(batch_size=4)
        got = [_labels(next(it)) for _ in range(stop)]
        ck.collect()
        payload = ck.serialize()
        fresh = m.readers.File(**kw)
        again = m.checkpoint.Checkpoint()
        again.deserialize(payload)
        again.register(fresh, "r")
        epochs = [[_labels(b) for b in fresh.next_epoch(batch_size=4)] for _ in range(2)]
        stream = [b for e in epochs for b in e][: 6 - stop]
        out.append((got, stream, [len(e) for e in epochs] if stop == 3 else None))
    return out


@pytest.mark.dali
@pytest.mark.parametrize(
    "scenario",
    [_scenario_registration, _scenario_states, _scenario_files, _scenario_reader_resume],
    ids=lambda f: f.__name__.removeprefix("_scenario_"),
)
def test_rules_match_dali(
    root: Path, tmp_path: Path, scenario: Callable[[Any, Path, Path], list[Any]]
) -> None:
    pytest.importorskip("nvidia.dali")
    import nvidia.dali.experimental.dynamic as dali_ndd

    (tmp_path / "ours").mkdir()
    (tmp_path / "dali").mkdir()
    ours = scenario(ndd, root, tmp_path / "ours")
    theirs = scenario(dali_ndd, root, tmp_path / "dali")
    assert ours == theirs
