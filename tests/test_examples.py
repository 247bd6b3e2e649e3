"""Every example runs on a small generated data set and prints what it promises."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("headrace-cache")


def run(cache: Path, script: str, *args: str) -> str:
    env = dict(os.environ, HEADRACE_CACHE=str(cache), PYTHONWARNINGS="ignore")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def line_of(script: str, text: str) -> int:
    lines = (EXAMPLES / script).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_classification(cache: Path) -> None:
    out = run(cache, "classification.py", "--limit", "16", "--epochs", "2", "--batch-size", "8",
              "--size", "64", "--threads", "2")  # fmt: skip
    epochs = re.findall(
        r"epoch (\d)/2: (\d+) batches, (\d+) images, first loss ([\d.]+), mean loss ([\d.]+), "
        r"val accuracy ([\d.]+)",
        out,
    )
    assert [e[:3] for e in epochs] == [("1", "2", "16"), ("2", "2", "16")], out
    assert abs(float(epochs[0][3]) - math.log(8)) < 0.8  # untrained: about ln(classes)
    assert all(0.0 <= float(e[5]) <= 1.0 for e in epochs)


def test_debugging_points_at_the_failing_line(cache: Path) -> None:
    out = run(cache, "debugging.py", "--limit", "16")
    crop = line_of("debugging.py", "images = ndd.crop(")
    consume = line_of("debugging.py", "images.torch()")
    assert f"eager:    ShapeError raised at line {consume} (.torch()); headrace names the call " \
           f"at debugging.py:{crop}" in out  # fmt: skip
    assert f"sync_cpu: ShapeError raised at line {crop}: crop:" in out
    assert "fixed:    batch of shape (8, 96, 96, 3)" in out


def test_migrated_pipeline_is_deterministic(cache: Path) -> None:
    args = ("--limit", "16", "--batch-size", "8", "--epochs", "2")
    first, second = (
        run(cache, "migrated_pipeline.py", *args),
        run(cache, "migrated_pipeline.py", *args),
    )
    pattern = (
        r"epoch (\d): (\d+) images, last batch \(8, 3, 224, 224\) torch.float32, checksum (\S+),"
    )
    a, b = re.findall(pattern, first), re.findall(pattern, second)
    assert [x[:2] for x in a] == [("1", "16"), ("2", "16")], first
    assert a == b  # seeds make every run identical
    assert a[0][2] != a[1][2]  # ... while each epoch draws new angles, flips and order


def test_reference_program_runs_unchanged(cache: Path) -> None:
    out = run(cache, "reference_program.py")
    assert "imread: (24, 32, 3) HWC" in out and "label 0" in out
    assert out.count("batches of [4, 4, 4] (every batch full)") == 2
    assert out.count("batches of [4, 4, 2] (one pass over the data)") == 2
    assert "ndd.pytorch.Loader reachable" in out


def test_capture_loop_matches_eager(cache: Path) -> None:
    out = run(cache, "capture_loop.py", "--limit", "48", "--batch-size", "8", "--step-ms", "5")
    assert "captured batches identical to eager: True" in out
    assert re.search(r"eager:    6 batches", out) and re.search(r"captured: 6 batches", out)
    assert "capture-mode loop: captured" in out and "calls: 20 replayed, 0 eager" in out


def test_reader_accepts_the_older_compile_spelling(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    import headrace as ndd

    (tmp_path / "a").mkdir()
    for i in range(4):
        cv2.imwrite(str(tmp_path / "a" / f"{i}.jpg"), np.full((8, 8, 3), i, np.uint8))
    r = ndd.readers.File(file_root=str(tmp_path))
    shapes = [ndd.decoders.image(j).shape for j, _ in r.next_epoch(batch_size=2, compile=True)]
    assert shapes == [[(8, 8, 3)] * 2] * 2
    assert r._capture is not None


def test_record_formats(cache: Path) -> None:
    out = run(cache, "record_formats.py", "--images", "20", "--shards", "3")
    assert "wrote 20 images: 3 tar shards with index files, 1 RecordIO file" in out
    assert "webdataset rank 0: 10 samples" in out and "webdataset rank 1: 10 samples" in out
    assert "both containers agree on 20/20 (image, label) pairs" in out


def test_lmdb_datasets(cache: Path) -> None:
    pytest.importorskip("lmdb")
    pytest.importorskip("google.protobuf")
    pytest.importorskip("lz4")
    out = run(cache, "lmdb_datasets.py")
    for shard in (0, 1):
        assert f"Caffe shard {shard}: centre shape (20, 30, 3), all white: True" in out
    assert "Caffe labels over both shards: [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4]" in out
    assert "Caffe2 multi-hot labels: [[1, 0, 1, 0, 0], [0, 1, 0, 1, 0], [0, 0, 1, 0, 1]]" in out
    assert "Caffe2 boxes cut out: [(20, 30, 3), (20, 30, 3), (20, 30, 3)]" in out
    assert re.search(r"inflate: \(3, 40, 60, 3\) FHWC, 43200 bytes from \d+, identical: True", out)


def test_tfrecord_reading(cache: Path) -> None:
    pytest.importorskip("google.protobuf")
    pytest.importorskip("google_crc32c")
    out = run(cache, "tfrecord_reading.py", "--files", "3", "--per-file", "4", "--batch-size", "4")
    assert "first batch: image (32, 32, 3), boxes (1, 4)" in out
    assert "epoch: 12 records of 12, each once: True" in out
    assert "indexes built and cached next to the data: 3 of 3" in out
    assert out.count("cover all once: True") == 2, out


def test_numpy_volumes(cache: Path) -> None:
    out = run(cache, "numpy_volumes.py", "--scans", "4", "--size", "32")
    assert "roi patches: 4 of shape (16, 16, 16), equal to the slices: True" in out
    assert "padded roi: shape (32, 20, 24)" in out
    assert "decoders.numpy: 4 volumes decoded from bytes, equal to np.load: True" in out


def test_speech_features(cache: Path) -> None:
    out = run(cache, "speech_features.py", "--count", "3")
    assert "log-mel: layout ft, shapes [(64, 104), (64, 104), (64, 104)]" in out, out
    assert "mfcc: shapes [(13, 104), (13, 104), (13, 104)]" in out
    mean, std = map(float, re.findall(r"band mean\| ([\d.e+-]+), max \|band std - 1\| ([\d.e+-]+)",
                                      out)[0])  # fmt: skip
    assert mean < 1e-4 and std < 1e-3


def test_detection_ssd_pipeline(cache: Path) -> None:
    args = ("--images", "16", "--batch-size", "8", "--epochs", "2", "--threads", "2")
    first, second = run(cache, "detection.py", *args), run(cache, "detection.py", *args)
    assert "SSD input pipeline: 8732 anchors, batch 8" in first
    pattern = (
        r"epoch (\d)/2: (\d+) batches, (\d+) images, images \(8, 3, 300, 300\) torch.float32, "
        r"boxes \(8, 8732, 4\), labels \(8, 8732\) torch.int32, ([\d.]+) matched anchors per "
        r"image, decoded boxes inside the image: (\w+), checksum (\w+)"
    )
    a, b = re.findall(pattern, first), re.findall(pattern, second)
    assert [x[:3] for x in a] == [("1", "2", "16"), ("2", "2", "16")], first
    assert all(float(x[3]) >= 1 and x[4] == "True" for x in a)  # every image has an object
    assert a == b  # the seed makes runs identical ...
    assert a[0][5] != a[1][5]  # ... while each epoch draws new windows and flips


def test_video_clips(cache: Path) -> None:
    if importlib.util.find_spec("av") is None:  # looked up only: the example imports it
        pytest.skip("PyAV (av) is not installed")
    out = run(cache, "video_clips.py", "--per-class", "2", "--frames", "34")
    # 2 files a class of 34 and 38 frames; clips of 15 frames every 16: starts 0 and 16 each
    assert "clips: 8 in batches, each (C, F, H, W) = (3, 8, 64, 85), float32 in [0, 1]" in out, out
    assert "uniform sampling: 4 clips, frame numbers of the first [0, 7, 13, 20, 26, 33]" in out
    assert "decoders.video: shapes [(3, 96, 128, 3), (3, 96, 128, 3)], layout FHWC" in out
