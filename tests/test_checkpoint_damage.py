"""Damaged or mismatched checkpoints never resume silently (issue 20, point 4).

Each case edits a valid state (or restores it into a reader built differently) and expects a
clear error naming the field; the cases that must keep working (a moved data set, a reader
without a seed) are checked too. Interrupted saves leave temporary files that the next save
removes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from headrace._exec import checkpoint as ck_impl
from headrace.checkpoint import Checkpoint
from headrace.random import RNG
from headrace.readers import File

REPO = Path(__file__).resolve().parents[1]
N = 10


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("data")
    paths = []
    for i in range(N):
        p = root / f"f{i}.bin"
        p.write_bytes(bytes([i]) * 3)
        paths.append(str(p))
    return paths


def _reader(files: list[str], **kw: Any) -> File:
    kw.setdefault("labels", list(range(len(files))))
    if "pad_last_batch" not in kw:
        kw.setdefault("last_batch", "partial")  # exact epochs (the default "fill" tops up)
    return File(files=files, enable_checkpointing=True, **kw)


def _state(files: list[str], steps: int = 1, **kw: Any) -> dict[str, Any]:
    r = _reader(files, **kw)
    it = r.next_epoch(batch_size=3)
    for _ in range(steps):
        next(it)
    state = dict(r.get_state())
    it.close()
    return state


def _labels(r: File) -> list[int]:
    return [int(x.item()) for _, lab in r.next_epoch(batch_size=3) for x in lab]


def test_an_intact_state_resumes_exactly(files: list[str]) -> None:
    state = _state(files, random_shuffle=True, seed=5)
    full = _labels(_reader(files, random_shuffle=True, seed=5))
    r = _reader(files, random_shuffle=True)  # no seed: the state's is used
    r.set_state(state)
    assert _labels(r) == full[3:]


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("position", 10, "position 10 is past the end of data epoch 0, which has 10 samples"),
        ("position", 10**6, "past the end"),
        ("position", True, "'position' must be an integer"),
        ("position", 2.0, "'position' must be an integer"),
        ("position", "3", "'position' must be an integer"),
        ("position", -1, "'position' must be an integer"),
        ("position", None, "'position' must be an integer"),
        ("epoch", -1, "'epoch' must be an integer"),
        ("epoch", 2**80, "'epoch' must be an integer"),
        ("epoch", False, "'epoch' must be an integer"),
        ("seed", -5, "'seed' must be an integer in [0, 2**64)"),
        ("seed", 2**64, "'seed'"),
        ("seed", "7", "'seed'"),
        ("skipped", -1, "'skipped'"),
        ("call", True, "'call' must be an integer"),
        ("call_samples", -1, "'call_samples' must be an integer"),
        ("random_shuffle", 1, "'random_shuffle' must be true or false"),
        ("last_batch", "sometimes", "'last_batch'"),
        ("fingerprint", 123, "'fingerprint'"),
        ("dataset_size", 11, "another data set (of another size)"),
        ("fingerprint", "0" * 32, "another data set (other files, or the same files in another"),
        ("shard_id", 1, "shard_id=1, this reader has 0"),
        ("num_shards", 2, "another sharding"),
        ("stick_to_shard", True, "another sharding"),
        ("random_shuffle", True, "another shuffling"),
        ("global_shuffle", True, "shuffle_after_epoch"),
        ("last_batch", "pad", "another last-batch mode"),
        ("kind", "RNG", "the state of 'RNG', not of a reader"),
        ("version", 1, "older headrace, without the data set's fingerprint"),
        ("type", "TFRecord", "the state is of a TFRecord reader, this is a File"),
    ],
)
def test_damaged_fields_are_refused(
    files: list[str], field: str, value: Any, fragment: str
) -> None:
    state = _state(files)
    state[field] = value
    r = _reader(files)
    with pytest.raises(ValueError) as info:
        r.set_state(json.dumps(state))
    assert fragment in str(info.value), str(info.value)
    assert repr(r._name) in str(info.value) or field in ("kind", "version")


@pytest.mark.parametrize("field", ["seed", "epoch", "position", "fingerprint", "last_batch"])
def test_missing_fields_are_refused(files: list[str], field: str) -> None:
    state = _state(files)
    del state[field]
    with pytest.raises(ValueError, match=f"the field '{field}' is missing"):
        _reader(files).set_state(state)


def test_another_data_set_of_the_same_size(files: list[str], tmp_path: Path) -> None:
    others = []
    for i in range(N):
        p = tmp_path / f"other{i}.bin"
        p.write_bytes(b"x")
        others.append(str(p))
    with pytest.raises(ValueError, match="other files, or the same files in another order"):
        _reader(others).set_state(_state(files))


def test_the_same_files_in_another_order(files: list[str]) -> None:
    state = _state(files)
    with pytest.raises(ValueError, match="other files, or the same files in another order"):
        _reader(files[::-1]).set_state(state)
    swapped = files[:]
    swapped[3], swapped[4] = swapped[4], swapped[3]
    with pytest.raises(ValueError, match="fingerprint"):
        _reader(swapped).set_state(state)


@pytest.mark.parametrize(
    ("saved", "restored", "fragment"),
    [
        ({}, {"random_shuffle": True}, "another shuffling"),
        ({"random_shuffle": True, "seed": 1}, {}, "another shuffling"),
        ({"random_shuffle": True, "seed": 1}, {"random_shuffle": True, "seed": 2}, "seed=1"),
        ({"shuffle_after_epoch": True}, {}, "shuffle_after_epoch"),
        ({"num_shards": 2, "shard_id": 1}, {"num_shards": 2, "shard_id": 0}, "another shard"),
        ({"num_shards": 2}, {"num_shards": 3}, "another sharding"),
        ({"pad_last_batch": True}, {}, "another last-batch mode"),
        ({"last_batch": "drop"}, {"last_batch": "fill"}, "another last-batch mode"),
    ],
)
def test_other_reader_settings_are_refused(
    files: list[str], saved: dict[str, Any], restored: dict[str, Any], fragment: str
) -> None:
    state = _state(files, **saved)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        _reader(files, **restored).set_state(state)


def test_a_moved_data_set_still_resumes(files: list[str], tmp_path: Path) -> None:
    moved = shutil.copytree(Path(files[0]).parent, tmp_path / "moved" / "elsewhere")
    state = _state(files, steps=2, random_shuffle=True, seed=3)
    r = _reader([str(moved / Path(f).name) for f in files], random_shuffle=True)
    r.set_state(state)
    assert len(_labels(r)) == N - 6


def test_unshuffled_reader_ignores_a_different_seed(files: list[str]) -> None:
    state = _state(files, seed=1)
    r = _reader(files, seed=2)
    r.set_state(state)
    assert _labels(r) == list(range(3, N))


def test_damage_through_a_checkpoint_file_names_file_and_key(
    files: list[str], tmp_path: Path
) -> None:
    r = _reader(files)
    it = r.next_epoch(batch_size=3)
    next(it)
    ckpt = Checkpoint()
    ckpt.register(r, "reader")
    ckpt.collect()
    path = ckpt.save(str(tmp_path / "c_{seq}.json"))
    it.close()
    payload = json.loads(Path(path).read_text())
    state = json.loads(payload["states"]["reader"]["state"])
    state["position"] = True
    payload["states"]["reader"]["state"] = json.dumps(state)
    Path(path).write_text(json.dumps(payload))
    loaded = Checkpoint()
    loaded.load(str(tmp_path / "c_{seq}.json"))
    with pytest.raises(ValueError, match=r"c_0\.json.*'reader'.*'position' must be an integer"):
        loaded.register(_reader(files), "reader")


@pytest.mark.parametrize(
    ("state", "fragment"),
    [
        ({"position": True}, "'position'"),
        ({"position": -3}, "'position'"),
        ({"seed": "3"}, "'seed'"),
        ({"seed": 2**64}, "'seed'"),
        ({"position": 1.5}, "'position'"),
        ({"kind": "reader"}, "not a random generator's"),
    ],
)
def test_damaged_rng_states_are_refused(state: dict[str, Any], fragment: str) -> None:
    good = dict(RNG(seed=4).get_state())
    with pytest.raises(ValueError, match=fragment):
        RNG(seed=0).set_state({**good, **state})


# --- temporary files of interrupted saves --------------------------------------------------------
def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_next_save_removes_temporaries_of_interrupted_saves(tmp_path: Path) -> None:
    ckpt = Checkpoint()
    ckpt.register(RNG(seed=1), "rng")
    ckpt.collect()
    host, dead, alive = ck_impl._HOST, _dead_pid(), os.getppid()
    stale = [
        f".c_00.json.{host}.{dead}.0badc0de.tmp",
        f".c_07.json.{dead}.12345678.tmp",  # the older name, without the host
        ".c_01.json.otherhost.1.abcdef01.tmp",  # another host, over an hour old
    ]
    kept = [
        f".c_02.json.{host}.{alive}.abcdef02.tmp",  # its writer still runs
        ".c_03.json.otherhost.1.abcdef03.tmp",  # another host, recent
        f".d_00.json.{host}.{dead}.abcdef04.tmp",  # another pattern
        "c_notes.txt",
    ]
    for name in stale + kept:
        (tmp_path / name).write_text("{")
    old = time.time() - 7200
    os.utime(tmp_path / stale[2], (old, old))
    ckpt.save(str(tmp_path / "c_{seq:02d}.json"))
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted(kept + ["c_00.json"])


# A saver on a slow disk (fsync sleeps) that never cleans up, so that kills leave temporaries.
_SAVER = """
import os, sys, time
from headrace._exec import checkpoint as ck_impl
from headrace.checkpoint import Checkpoint
from headrace.random import RNG
real_fsync = os.fsync
ck_impl.os.fsync = lambda fd: (time.sleep(0.005), real_fsync(fd))
ck_impl._remove_stale_temporaries = lambda pattern: None
ckpt = Checkpoint(); ckpt.register(RNG(seed=1), "rng"); ckpt.collect()
print("ready", flush=True)
while True:
    ckpt.save(sys.argv[1])
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_savers_leave_nothing_after_the_next_save(tmp_path: Path) -> None:
    pattern = str(tmp_path / "k_{seq:06d}.json")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    rng = np.random.default_rng(0)
    for _ in range(8):
        p = subprocess.Popen(
            [sys.executable, "-c", _SAVER, pattern], stdout=subprocess.PIPE, env=env, text=True
        )
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        time.sleep(float(rng.uniform(0.0, 0.05)))
        p.send_signal(signal.SIGKILL)
        p.wait()
    left = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert left  # the kills did interrupt saves
    # every file that made it is complete, and the next save removes the temporaries
    ckpt = Checkpoint()
    ckpt.register(RNG(seed=1), "rng")
    ckpt.collect()
    ckpt.save(pattern)
    names = [p.name for p in tmp_path.iterdir()]
    assert not [n for n in names if n.endswith(".tmp")], names
    for n in names:
        json.loads((tmp_path / n).read_text())
    Checkpoint().load(pattern)
