"""headrace.pytorch.Loader with worker processes: identical results, resume, errors, cleanup."""

from __future__ import annotations

import glob
import multiprocessing as mp
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import headrace as ndd  # noqa: E402
from headrace import pipelines, sample_data  # noqa: E402
from headrace._exec import shm as _shm  # noqa: E402
from headrace.pytorch import Loader  # noqa: E402
from headrace.pytorch._rng_schedule import ScheduleError  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_data.image_folder(
        tmp_path_factory.mktemp("wcache"), num_images=14, num_classes=2, progress=False
    )


def _no_leftovers(before_threads: int | None = None) -> None:
    assert mp.active_children() == []
    assert glob.glob(os.path.join(_shm.shm_dir(), f"headrace-{os.getpid()}-*")) == []
    if before_threads is not None:
        deadline = time.monotonic() + 5
        while threading.active_count() > before_threads and time.monotonic() < deadline:
            time.sleep(0.05)
        assert threading.active_count() <= before_threads


def _reader(folder: Path, **kw: Any) -> Any:
    return ndd.readers.File(file_root=str(folder), random_shuffle=True, seed=3, **kw)


def _train_default_rng(jpegs: Any, labels: Any) -> Any:
    """The train pipeline drawing from the thread's default generator (no rng=)."""
    images, labels = pipelines.train_pipeline(jpegs, labels, size=40)
    flips = ndd.random.coin_flip(batch_size=jpegs.batch_size, probability=0.3)
    return images, labels, flips


def _run(loader: Loader, epochs: int = 2) -> list[Any]:
    out = []
    for _ in range(epochs):
        out += list(loader)
    loader.close()
    return out


def _same(a: list[Any], b: list[Any]) -> None:
    assert len(a) == len(b)
    flat_a = [t for x in a for t in (x if isinstance(x, (tuple, list)) else (x,))]
    flat_b = [t for x in b for t in (x if isinstance(x, (tuple, list)) else (x,))]
    for x, y in zip(flat_a, flat_b, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert torch.equal(x, y)  # bit for bit


# --- identical to one process ---------------------------------------------------------------------
@pytest.mark.parametrize("pipeline", ["eval", "train"])
def test_workers_equal_single_process(folder: Path, pipeline: str) -> None:
    def make(n: int) -> Loader:
        fn = pipelines.get(pipeline)
        kw: dict[str, Any] = {"rng": ndd.random.RNG(11)} if pipeline == "train" else {}
        return Loader(_reader(folder), partial(fn, size=40, **kw), batch_size=3, num_workers=n)

    one = _run(make(0))
    many = _run(make(2))
    _same(one, many)
    assert not torch.equal(one[0][0], one[5][0])  # the epochs and batches differ
    _no_leftovers()


def _current_device_types(jpegs: Any, labels: Any) -> Any:
    """Each sample: whether the worker's current device (headrace's and torch's CUDA state) is
    the host's."""
    on_cpu = ndd.Device.current().device_type == "cpu"
    cuda_up = bool(torch.cuda.is_initialized())
    return ndd.batch([np.array([on_cpu, cuda_up])] * jpegs.batch_size), labels


def test_workers_run_on_the_host_without_opening_cuda(folder: Path) -> None:
    """In a worker the current device is the CPU, also where a GPU is the default (this suite
    runs with a fake GPU): 16 workers must not open 16 CUDA contexts for a host pipeline."""
    assert ndd.Device.current().device_type == "gpu"  # the parent's default (fake GPU)
    loader = Loader(_reader(folder), _current_device_types, batch_size=5, num_workers=2)
    flags = torch.cat([b[0] for b in _run(loader, 1)])
    assert flags.shape[1] == 2 and flags[:, 0].all() and not flags[:, 1].any()
    _no_leftovers()


def test_default_generator_and_uneven_workers(folder: Path) -> None:
    def run(n: int) -> tuple[list[Any], Any]:
        ndd.random.set_seed(5)
        loader = Loader(_reader(folder), _train_default_rng, batch_size=4, num_workers=n)
        return _run(loader), ndd.random.get_default_rng().get_state()

    (one, s1), (many, s3) = run(0), run(3)
    _same(one, many)
    assert s1 == s3  # the parent's generator ends where one process leaves it
    _no_leftovers()


def test_spawn_pickles_the_function_and_its_generator(folder: Path) -> None:
    def make(n: int, ctx: str | None) -> Loader:
        fn = partial(pipelines.train_pipeline, size=32, rng=ndd.random.RNG(2))
        return Loader(_reader(folder), fn, batch_size=7, num_workers=n,
                      multiprocessing_context=ctx)  # fmt: skip

    _same(_run(make(0, None), 1), _run(make(1, "spawn"), 1))
    with pytest.raises(TypeError, match="module level"):
        Loader(_reader(folder), lambda d, lab: lab, batch_size=2, num_workers=1,
               multiprocessing_context="spawn")  # fmt: skip
    _no_leftovers()


# --- resume ---------------------------------------------------------------------------------------
def test_resume_with_workers(folder: Path) -> None:
    def first_part(n: int) -> tuple[list[Any], Any, Any]:
        rng = ndd.random.RNG(9)
        reader = _reader(folder, enable_checkpointing=True)
        loader = Loader(reader, partial(pipelines.train_pipeline, size=32, rng=rng),
                        batch_size=3, num_workers=n)  # fmt: skip
        it = iter(loader)
        head = [next(it) for _ in range(2)]
        state, rng_state = loader.state_dict(), rng.get_state()
        del it
        loader.close()
        return head, state, rng_state

    def rest(n: int, state: Any, rng_state: Any) -> list[Any]:
        rng = ndd.random.RNG(state=rng_state)
        loader = Loader(_reader(folder), partial(pipelines.train_pipeline, size=32, rng=rng),
                        batch_size=3, num_workers=n)  # fmt: skip
        loader.load_state_dict(state)
        return _run(loader, 2)

    h0, st0, r0 = first_part(0)
    h2, st2, r2 = first_part(2)
    _same(h0, h2)
    assert st0 == st2 and r0 == r2
    _same(rest(0, st0, r0), rest(2, st2, r2))
    _no_leftovers()


# --- errors ---------------------------------------------------------------------------------------
def test_worker_error_names_the_file(folder: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(folder, data)
    bad = data / "class_01" / "zz_corrupt.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0" + b"not a jpeg" * 20)
    threads = threading.active_count()
    reader = ndd.readers.File(file_root=str(data))
    loader = Loader(reader, partial(pipelines.eval_pipeline, size=32), batch_size=4, num_workers=2)
    with pytest.raises(ndd.DecodeError, match=r"zz_corrupt\.jpg") as info:
        list(loader)
    assert "worker" in "\n".join(getattr(info.value, "__notes__", []))
    _no_leftovers(threads)


def test_stateful_foreign_generator_is_refused(folder: Path) -> None:
    g = np.random.default_rng(0)
    with pytest.raises(ValueError, match="numpy"):
        Loader(_reader(folder), lambda d, lab: lab + int(g.integers(3)), batch_size=2,
               num_workers=2)  # fmt: skip


def test_changing_random_calls_raise(folder: Path) -> None:
    rng = ndd.random.RNG(0)
    calls = iter(range(100))

    def fn(jpegs: Any, labels: Any) -> Any:
        k = next(calls)
        for _ in range(1 + (k >= 2)):  # the worker's later batches draw more
            ndd.random.uniform(batch_size=labels.batch_size, rng=rng)
        return labels

    with pytest.raises(ScheduleError, match="same random calls"):
        list(Loader(_reader(folder), fn, batch_size=2, num_workers=1))
    _no_leftovers()


# --- no leftovers ---------------------------------------------------------------------------------
def test_break_leaves_no_process_thread_or_shared_memory(folder: Path) -> None:
    threads = threading.active_count()
    loader = Loader(_reader(folder), partial(pipelines.eval_pipeline, size=32), batch_size=2,
                    num_workers=2)  # fmt: skip
    for _ in loader:
        assert len(mp.active_children()) == 2
        assert glob.glob(os.path.join(_shm.shm_dir(), loader._pool.prefix + "-*"))
        break
    _no_leftovers(threads)
    assert len(list(loader)) == 7  # starts afresh with the next epoch
    del loader
    _no_leftovers(threads)


_SCRIPT = """
import os, sys, time
from functools import partial
import headrace as ndd
from headrace import pipelines
from headrace.pytorch import Loader
reader = ndd.readers.File(file_root=sys.argv[1], random_shuffle=True, seed=0)
loader = Loader(reader, partial(pipelines.eval_pipeline, size=32), batch_size=2, num_workers=2)
try:
    while True:
        for batch in loader:
            print("pids", *[p.pid for p in loader._pool._procs], loader._pool.prefix, flush=True)
            time.sleep(0.05)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_ctrl_c_leaves_no_process_or_shared_memory(folder: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_SCRIPT), str(folder)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    assert line and line[0] == "pids", proc.stderr.read() if proc.stderr else ""
    pids, prefix = [int(p) for p in line[1:-1]], line[-1]
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "interrupted" in out, err
    for pid in pids:
        assert (
            not Path(f"/proc/{pid}").exists()
            or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()
        )
    assert glob.glob(os.path.join(_shm.shm_dir(), prefix + "-*")) == []


# --- the bench command ----------------------------------------------------------------------------
def test_bench_with_workers_and_result_line(folder: Path, capsys: pytest.CaptureFixture) -> None:
    from headrace.cli import main

    common = [str(folder), "--limit", "8", "--batch-size", "4", "--epochs", "1", "--no-progress"]
    assert main(["bench", *common, "--workers", "1", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 threads in each of 1 worker processes" in out and "headrace" in out
    assert main(["bench", *common, "--workers", "2", "--threads", "1", "--result-line"]) == 0
    lines = capsys.readouterr().out.splitlines()
    result = next(ln.split() for ln in lines if ln.startswith("RESULT"))
    assert result[:3] == ["RESULT", "headrace-w2x1", "eval"]
    assert float(result[3]) > 0 and float(result[4]) > 0
    for pipeline in ("eval", "train"):  # the ceiling row: the libraries on a bare pool
        args = ["--threads", "2", "--ceiling-only", "--result-line", "--pipeline", pipeline]
        assert main(["bench", *common, *args]) == 0
        lines = capsys.readouterr().out.splitlines()
        result = next(ln.split() for ln in lines if ln.startswith("RESULT"))
        assert result[:3] == ["RESULT", "ceiling-t2", pipeline] and float(result[3]) > 0
    _no_leftovers()


def _decode_named(batch: dict[str, Any]) -> tuple[Any, Any]:
    """A per-batch function for a reader with named outputs (module level: picklable)."""
    return ndd.resize(ndd.decoders.image(batch["img"]), size=(8, 8)), batch["label"]


@pytest.mark.parametrize("workers", [0, 2])
def test_readers_with_named_outputs_pass_their_dict(tmp_path: Path, workers: int) -> None:
    """readers.TFRecord yields a dict of name -> Batch: the function gets that dict (it used to
    be unpacked as keys), in the parent and in the workers alike; without a function the loader
    yields the dict."""
    pytest.importorskip("google.protobuf")
    import cv2

    import headrace.tfrecord as tfrec
    from tests._helpers.tfrecord_data import write_tfrecord

    path = tmp_path / "named.tfrecord"
    images = [np.full((12, 10, 3), 20 * r, np.uint8) for r in range(10)]
    write_tfrecord(path, [
        {"img": cv2.imencode(".png", im)[1].tobytes(), "label": r} for r, im in enumerate(images)
    ])  # fmt: skip
    features = {
        "img": tfrec.FixedLenFeature((), tfrec.string, ""),
        "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    }
    reader = ndd.readers.TFRecord(path=path, features=features, random_shuffle=True, seed=2)
    got = []
    with Loader(reader, _decode_named, batch_size=4, num_workers=workers) as loader:
        for imgs, labels in loader:
            assert imgs.shape[1:] == (8, 8, 3)
            for im, lab in zip(imgs, labels.flatten().tolist()):
                assert int(im[0, 0, 0]) == 20 * lab  # each image with its own label
                got.append(lab)
    assert sorted(got) == list(range(10))
    labels_only = {"label": features["label"]}
    plain = ndd.readers.TFRecord(path=path, features=labels_only, random_shuffle=True, seed=2)
    with Loader(plain, batch_size=4, num_workers=workers) as loader:
        first = next(iter(loader))
    assert set(first) == {"label"} and first["label"].flatten().tolist() == got[:4]


def _labels_and_noise(rng: Any, data: Any, labels: Any) -> tuple[Any, Any]:
    return labels, ndd.random.uniform(batch_size=data.batch_size, rng=rng)


@pytest.mark.parametrize("workers", [0, 2])
def test_checkpoint_between_batches_resumes_reader_and_generators(
    folder: Path, workers: int
) -> None:
    """The guide's way: reader and generator registered in a Checkpoint, collected between
    two batches of a Loader. The resumed run yields the same labels and random values (the
    Loader used to read, and draw, one batch ahead of what it had yielded)."""
    files = sorted(glob.glob(str(folder / "*" / "*.jpg")))[:14]

    def make(payload: str | None = None) -> tuple[Any, Loader]:
        labels = list(range(len(files)))
        reader = ndd.readers.File(
            files=files, labels=labels, random_shuffle=True, seed=1, enable_checkpointing=True
        )
        rng = ndd.random.RNG(seed=7)
        ck = ndd.checkpoint.Checkpoint()
        if payload is not None:
            ck.deserialize(payload)
        ck.register(reader, "reader")
        ck.register(rng, "rng")
        return ck, Loader(reader, partial(_labels_and_noise, rng), batch_size=4,
                          num_workers=workers)  # fmt: skip

    def run(loader: Loader, epochs: int) -> list[tuple[list[int], list[float]]]:
        return [(lab.flatten().tolist(), u.tolist()) for _ in range(epochs) for lab, u in loader]

    _, whole = make()
    expected = run(whole, 2)
    ck, first = make()
    it = iter(first)
    got = [(lab.flatten().tolist(), u.tolist()) for lab, u in (next(it), next(it))]
    ck.collect()
    payload = ck.serialize()
    del it
    first.close()
    _, resumed = make(payload)
    got += run(resumed, 2)
    resumed.close()
    assert got == expected
