"""Capture-mode loops with worker processes: identical results, errors, skipped samples, cleanup."""

from __future__ import annotations

import gc
import glob
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import headrace as ndd
from headrace import sample_data
from headrace._core.errors import BatchSizeMismatchError, InvalidArgumentError
from headrace._exec import shm

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

BS = 4


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_data.image_folder(
        tmp_path_factory.mktemp("cw"), num_images=14, num_classes=2, progress=False
    )


def _pipeline_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("headrace-capture")]


def _no_leftovers() -> None:
    """No worker process, pipeline thread or shared-memory file is left."""
    gc.collect()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (mp.active_children() or _pipeline_threads()):
        time.sleep(0.05)
    assert mp.active_children() == []
    assert _pipeline_threads() == []
    assert glob.glob(os.path.join(shm.shm_dir(), f"headrace-{os.getpid()}-*")) == []


def _train_epochs(folder: Path, epochs: int, **kw: Any) -> tuple[list[Any], Any]:
    """Two epochs of a train-style loop: random crop, flip (own generator) and a draw from the
    thread's default generator; the body also reads an intermediate (the decoded shapes)."""
    reader = ndd.readers.File(file_root=str(folder), random_shuffle=True, seed=3)
    rng = ndd.random.RNG(seed=11)
    out = []
    for _ in range(epochs):
        for jpegs, labels in reader.next_epoch(batch_size=BS, capture=True, **kw):
            images = ndd.decoders.image(jpegs)
            crops = ndd.random_resized_crop(images, size=(24, 32), rng=rng)
            flip = ndd.random.coin_flip(probability=0.5, batch_size=BS, rng=rng)
            norm = ndd.crop_mirror_normalize(
                crops, mirror=flip, mean=[10.0, 20.0, 30.0], std=[50.0, 60.0, 70.0]
            )
            jitter = ndd.random.uniform(range=[0.0, 1.0], batch_size=BS)
            out.append(
                (
                    np.stack([np.asarray(t) for t in norm.tensors]),
                    [tuple(t.shape) for t in images.tensors],
                    [float(np.asarray(t)) for t in jitter.tensors],
                    np.asarray(labels.torch()).ravel().tolist(),
                )
            )
    return out, (rng.state, reader)


def _assert_same(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b) > 0
    for x, y in zip(a, b):
        assert x[0].dtype == y[0].dtype and x[0].tobytes() == y[0].tobytes()
        assert x[1:] == y[1:]


def test_workers_give_bit_identical_steps_and_leave_the_generators_as_one_process(folder):
    ndd.random.set_seed(7)  # the thread's default generator, drawn from by the body
    one, (state1, _) = _train_epochs(folder, 2, num_workers=0)
    ndd.random.set_seed(7)
    two, (state2, reader) = _train_epochs(folder, 2, num_workers=2)
    _assert_same(one, two)
    assert state1 == state2
    stats = ndd.capture.stats(reader)
    assert stats.steps_replayed == len(two) - 1 and stats.calls_replayed > 0
    assert len(mp.active_children()) == 2  # kept for the loop's next epoch
    del reader
    _no_leftovers()


def test_external_source_driver_and_feeder_in_workers():
    def items(n: int) -> list[np.ndarray]:
        return [np.arange(12, dtype=np.float32).reshape(3, 4) + i for i in range(n)]

    def run(workers: int) -> list[Any]:
        src = ndd.ExternalSource(iter(items(12)))
        scale = ndd.ExternalSource(iter([np.float32(i) for i in range(12)]))
        rng = ndd.random.RNG(seed=2)
        out = []
        for b in src.captured(batch_size=BS, num_workers=workers):
            s = scale(batch_size=BS)
            y = ndd.transpose(b * s, perm=[1, 0])
            n = ndd.random.normal(batch_size=BS, rng=rng)
            out.append(([np.asarray(t).copy() for t in y], [float(np.asarray(t)) for t in n]))
        return out

    a, b = run(0), run(2)
    assert len(a) == len(b) == 12
    for x, y in zip(a, b):
        assert all(np.array_equal(p, q) for p, q in zip(x[0], y[0])) and x[1] == y[1]


def _with_corrupt(folder: Path, tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(folder, data)
    (data / "class_01" / "zz_corrupt.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a jpeg")
    return data


def test_an_operator_error_in_a_worker_names_the_file_and_the_worker(folder, tmp_path):
    data = _with_corrupt(folder, tmp_path)
    reader = ndd.readers.File(file_root=str(data))  # sorted: the corrupt file comes last
    seen = 0
    with pytest.raises(ndd.DecodeError, match=r"zz_corrupt\.jpg") as info:
        for jpegs, _ in reader.next_epoch(batch_size=BS, capture=True, num_workers=2):
            ndd.decoders.image(jpegs).evaluate()
            seen += 1
    assert seen == 3  # steps 0-2 are fine; step 3 holds the corrupt file
    assert any("capture worker" in n for n in info.value.__notes__)
    del reader
    _no_leftovers()


def test_skipped_samples_keep_labels_aligned_in_workers(folder, tmp_path):
    data = _with_corrupt(folder, tmp_path)

    def run(workers: int) -> list[Any]:
        reader = ndd.readers.File(file_root=str(data))
        out = []
        for jpegs, labels in reader.next_epoch(batch_size=BS, capture=True, num_workers=workers):
            images = ndd.decoders.image(jpegs, on_error="skip")
            if images.batch_size < BS:
                with pytest.raises(BatchSizeMismatchError, match="zz_corrupt"):
                    list(labels)
            kept = labels.select(images.kept)
            out.append(([np.asarray(t).copy() for t in images.tensors], list(images.kept), kept))
        return out

    a, b = run(0), run(2)
    assert [x[1] for x in a] == [x[1] for x in b]
    assert b[-1][1] == [0, 1, 3]  # the corrupt file is the 15th: step 3, sample 2
    for x, y in zip(a, b):
        assert all(np.array_equal(p, q) for p, q in zip(x[0], y[0]))
        assert np.array_equal(np.asarray(x[2].torch()), np.asarray(y[2].torch()))


@pytest.mark.parametrize("how", ["break", "exception"])
def test_leaving_early_stops_the_workers_and_frees_shared_memory(folder, how):
    reader = ndd.readers.File(file_root=str(folder), random_shuffle=True, seed=1)
    with pytest.raises(ValueError) if how == "exception" else _nothing():
        for step, (jpegs, _) in enumerate(
            reader.next_epoch(batch_size=BS, capture=True, num_workers=2)
        ):
            ndd.resize(ndd.decoders.image(jpegs), size=(16, 16)).evaluate()
            if step == 1:
                if how == "break":
                    break
                raise ValueError("the body failed")
    assert mp.active_children() == []  # stopped at once, not only when collected
    # the loop is kept (no random state was drawn ahead): the next epoch starts workers again
    shapes = [
        ndd.resize(ndd.decoders.image(j), size=(16, 16)).shape
        for j, _ in reader.next_epoch(batch_size=BS, capture=True, num_workers=2)
    ]
    assert len(shapes) == 4 and shapes[0] == [(16, 16, 3)] * BS
    del reader
    _no_leftovers()


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


def test_spawned_workers_get_the_pickled_graph(folder):
    def run(**kw: Any) -> list[bytes]:
        reader = ndd.readers.File(file_root=str(folder), random_shuffle=True, seed=5)
        rng = ndd.random.RNG(seed=1)
        return [
            np.stack(
                [
                    np.asarray(t)
                    for t in ndd.random_resized_crop(
                        ndd.decoders.image(j), size=(8, 8), rng=rng
                    ).tensors
                ]
            ).tobytes()
            for j, _ in reader.next_epoch(batch_size=BS, capture=True, **kw)
        ]

    one = run(num_workers=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the workers are used, not skipped
        assert run(num_workers=2, multiprocessing_context="spawn") == one
    _no_leftovers()  # the loops were dropped: their workers stop


def test_gpu_calls_stay_in_this_process_with_a_warning(folder):
    reader = ndd.readers.File(file_root=str(folder))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        n = 0
        for jpegs, _ in reader.next_epoch(batch_size=BS, capture=True, num_workers=2):
            ndd.cast(ndd.decoders.image(jpegs), dtype=ndd.float32, device="cpu").evaluate()
            ndd.random.coin_flip(batch_size=BS, device="gpu" if _fake_gpu() else "cpu")
            n += 1
    assert n == 4
    if _fake_gpu():
        assert any("computes on a GPU" in str(w.message) for w in caught)
        assert mp.active_children() == []


def _fake_gpu() -> bool:
    return os.environ.get("HEADRACE_FAKE_GPU") == "1"


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_num_workers_is_checked(folder, bad):
    reader = ndd.readers.File(file_root=str(folder))
    with pytest.raises(InvalidArgumentError, match="num_workers"):
        reader.next_epoch(batch_size=BS, capture=True, num_workers=bad)


_CTRL_C = """
import sys, time
import headrace as ndd
reader = ndd.readers.File(file_root=sys.argv[1], random_shuffle=True, seed=1)
try:
    while True:
        for jpegs, _ in reader.next_epoch(batch_size=4, capture=True, num_workers=2):
            ndd.decoders.image(jpegs).evaluate()
            w = reader._capture.pipeline.workers
            if w is not None:
                print("pids", *[p.pid for p in w._procs], w.prefix, flush=True)
            time.sleep(0.05)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_leaves_no_worker_or_shared_memory(folder):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _CTRL_C, str(folder)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line and line[0] == "pids", proc.stderr.read() if proc.stderr else ""
    pids, prefix = [int(p) for p in line[1:-1]], line[-1]
    assert len(pids) == 2
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "interrupted" in out, err
    for pid in pids:
        assert (
            not Path(f"/proc/{pid}").exists()
            or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
        )
    assert glob.glob(os.path.join(shm.shm_dir(), prefix + "-*")) == []
