"""The ``headrace`` command: bench, preview, info, error messages and Ctrl-C."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from headrace import sample_data
from headrace.cli import build_parser, main

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_data.image_folder(
        tmp_path_factory.mktemp("cache"), num_images=12, num_classes=3, progress=False
    )


def _table_rate(out: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)", out, re.M)
    assert m, out
    rate, ms, cores, peak = (float(g) for g in m.groups())
    assert rate > 0 and ms > 0 and cores >= 0 and peak > 50
    return rate


def test_parser_defaults() -> None:
    a = build_parser().parse_args(["bench"])
    assert (a.dir, a.pipeline, a.batch_size, a.threads, a.epochs, a.device, a.compare, a.limit) == (
        None, "eval", 64, None, 3, "cpu", False, None,
    )  # fmt: skip
    p = build_parser().parse_args(["preview"])
    assert (p.pipeline, p.out) == ("train", "preview.png")


def test_bench_eval(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["bench", str(folder), "--limit", "8", "--batch-size", "4", "--epochs", "2",
               "--threads", "2", "--no-progress"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert "eval pipeline, 8 images in 3 classes" in out and "2 threads" in out
    _table_rate(out, "headrace")
    assert "median of epochs 2-2" in out


def test_bench_progress_bar_per_epoch(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", str(folder), "--limit", "4", "--batch-size", "2", "--epochs", "2"]) == 0
    err = capsys.readouterr().err
    assert "headrace epoch 1/2" in err and "headrace epoch 2/2" in err and "2/2" in err


def test_bench_train(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["bench", str(folder), "--pipeline", "train", "--limit", "6", "--batch-size", "3",
               "--epochs", "1", "--no-progress"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0 and "train pipeline, 6 images" in out and "(1 epoch;" in out
    _table_rate(out, "headrace")


def test_bench_compare(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["bench", str(folder), "--limit", "8", "--batch-size", "4", "--epochs", "1",
               "--threads", "2", "--compare", "--no-progress"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    ours, theirs = _table_rate(out, "headrace"), _table_rate(out, "DataLoader+Pillow")
    m = re.search(r"headrace is ([\d.]+)x the DataLoader", out)
    assert m  # the ratio of the unrounded rates: within the table's rounding (0.05 img/s)
    lo, hi = (ours - 0.05) / (theirs + 0.05), (ours + 0.05) / max(theirs - 0.05, 1e-9)
    assert lo * 0.99 <= float(m.group(1)) <= hi * 1.01


def test_bench_fake_gpu(folder: Path, capsys: pytest.CaptureFixture[str],
                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from headrace._core.device import Device

    if Device.gpu_count() < 1:
        pytest.skip("no GPU and no fake GPU")
    rc = main(["bench", str(folder), "--device", "gpu", "--limit", "4", "--batch-size", "2",
               "--epochs", "1", "--no-progress"])  # fmt: skip
    assert rc == 0 and "device gpu" in capsys.readouterr().out


def test_bench_gpu_without_gpu(folder: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from headrace._core.device import Device

    monkeypatch.setattr(Device, "gpu_count", staticmethod(lambda: 0))
    assert main(["bench", str(folder), "--device", "gpu"]) == 2
    assert "no CUDA device" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "folder not found"),
        (lambda p: p, "no class sub-folders"),
        (lambda p: (p / "cat").mkdir(exist_ok=True) or p, "no images in the sub-folders"),
        (lambda p: (p / "f.txt").write_text("x") and p / "f.txt", "not a folder"),
    ],
)
def test_bad_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str], make, message) -> None:  # type: ignore[no-untyped-def]
    for cmd in ("bench", "preview"):
        assert main([cmd, str(make(tmp_path))]) == 2
        err = capsys.readouterr().err
        assert f"headrace {cmd}: error: {message}" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--batch-size", "0"],
        ["bench", "--epochs", "x"],
        ["bench", "--pipeline", "test"],
        ["bench", "--device", "tpu"],
        ["preview", "--num", "-1"],
        ["frobnicate"],
        [],
    ],
)
def test_bad_options(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_preview(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "grid.png"
    assert main(["preview", str(folder), "--out", str(out), "--num", "5"]) == 0
    assert f"wrote {out}: 5 train-pipeline samples" in capsys.readouterr().out
    grid = cv2.imread(str(out))
    assert grid.shape == (2 + 2 * (224 + 22 + 2), 2 + 3 * (224 + 2), 3)  # 3 columns, 2 rows
    assert grid[2:226, 2:226].std() > 10  # a real image, not the background
    assert (grid[-30:, -200:] == 24).all()  # the sixth cell is empty


def test_preview_eval_is_deterministic(folder: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    for path in (a, b):
        assert main(["preview", str(folder), "--pipeline", "eval", "--num", "4",
                     "--out", str(path)]) == 0  # fmt: skip
    assert (cv2.imread(str(a)) == cv2.imread(str(b))).all()


def test_preview_bad_out(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preview", str(folder), "--out", str(tmp_path / "no" / "x.png")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["preview", str(folder), "--out", str(tmp_path / "x.unknown")]) == 2
    assert "cannot write" in capsys.readouterr().err


@pytest.fixture(scope="module")
def audio_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Generated WAVs plus a FLAC and an OGG file (the preview reads what soundfile reads)."""
    import soundfile as sf

    root = sample_data.audio_folder(tmp_path_factory.mktemp("audio"), num_files=4, seconds=0.5)
    sr = sample_data.AUDIO_SAMPLE_RATE
    sf.write(root / "tone" / "extra.flac", sample_data.synthetic_audio(7, "tone", 0.5), sr)
    sf.write(root / "chirp" / "extra.ogg", sample_data.synthetic_audio(8, "chirp", 0.8), 22050)
    return root


def _speech_grid_ok(out: Path, rows: int, columns: int, filled: int) -> None:
    grid = cv2.imread(str(out))
    h, w = 128 + 22 + 2, 224 + 2  # speech tiles are 224 x 128
    assert grid.shape == (2 + rows * h, 2 + columns * w, 3)
    for k in range(filled):
        y, x = 2 + (k // columns) * h, 2 + (k % columns) * w
        tile = grid[y : y + 128, x : x + 224]
        assert tile.std() > 10 and (tile != 24).any()  # coloured, not the background
    if filled < rows * columns:
        assert (grid[-30:, -200:] == 24).all()  # the empty cell


def test_preview_speech(
    audio_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "speech.png"
    assert main(["preview", str(audio_dir), "--pipeline", "speech", "--out", str(out),
                 "--num", "5"]) == 0  # fmt: skip
    assert f"wrote {out}: 5 log-mel spectrograms" in capsys.readouterr().out
    _speech_grid_ok(out, rows=2, columns=3, filled=5)
    # Deterministic; all six files (WAV, FLAC, OGG) fit in a 3 x 2 grid as a JPEG too.
    again = tmp_path / "again.png"
    assert main(["preview", str(audio_dir), "--pipeline", "speech", "--out", str(again),
                 "--num", "5"]) == 0  # fmt: skip
    assert (cv2.imread(str(out)) == cv2.imread(str(again))).all()
    jpg = tmp_path / "all.jpg"
    assert main(["preview", str(audio_dir), "--pipeline", "speech", "--out", str(jpg)]) == 0
    assert "wrote" in capsys.readouterr().out and cv2.imread(str(jpg)).shape[:2] == (306, 680)


def test_preview_speech_low_frequencies_at_the_bottom(tmp_path: Path) -> None:
    import numpy as np
    import soundfile as sf

    (tmp_path / "a").mkdir()
    t = np.arange(8000) / 16000
    sf.write(tmp_path / "a" / "low.wav", 0.5 * np.sin(2 * np.pi * 300 * t), 16000)
    out = tmp_path / "low.png"
    # A flat folder of audio files works too (one class: the folder's name).
    assert main(["preview", str(tmp_path / "a"), "--pipeline", "speech", "--out", str(out)]) == 0
    tile = cv2.imread(str(out), cv2.IMREAD_GRAYSCALE)[2:130, 2:226].astype(float)
    brightest_row = int(tile.mean(axis=1).argmax())
    assert brightest_row > 96  # a 300 Hz tone sits in the bottom quarter


def test_preview_speech_sample_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setenv("HEADRACE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "default.png"
    assert main(["preview", "--pipeline", "speech", "--out", str(out), "--num", "4"]) == 0
    assert str(tmp_path / "cache" / "audio-v1") in capsys.readouterr().out
    wavs = sorted((tmp_path / "cache").glob("audio-v1-*/*/*.wav"))
    assert len(wavs) == 8 and {p.parent.name for p in wavs} == set(sample_data.AUDIO_CLASSES)
    before = [p.read_bytes() for p in wavs]
    assert main(["preview", "--pipeline", "speech", "--out", str(out), "--num", "4"]) == 0
    assert [p.read_bytes() for p in wavs] == before  # reused, not regenerated
    _speech_grid_ok(out, rows=2, columns=2, filled=4)


def test_preview_speech_corrupt_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.wav").write_bytes(b"RIFF\x00\x00 not really a wave file")
    assert main(["preview", str(tmp_path), "--pipeline", "speech",
                 "--out", str(tmp_path / "x.png")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "bad.wav" in err and "Traceback" not in err


def test_preview_speech_no_audio(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["preview", str(folder), "--pipeline", "speech"]) == 2
    err = capsys.readouterr().err
    assert "error: no audio files in the sub-folders" in err and "Traceback" not in err


def test_info(capsys: pytest.CaptureFixture[str]) -> None:
    import headrace as ndd

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"headrace {ndd.__version__}")
    for word in ("libjpeg-turbo (simplejpeg)", "OpenCV", "Pillow", "soundfile", "torch", "CUDA",
                 "nvImageCodec", "PyAV (video", "lmdb", "protobuf", "google-crc32c", "lz4",
                 f"threads: {ndd.get_num_threads()}",
                 "JPEG crops decode only the window: "):  # fmt: skip
        assert word in out


def test_ctrl_c_stops_cleanly(folder: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "headrace.cli", "bench", str(folder), "--epochs", "1000",
         "--batch-size", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # the first line is printed once headrace is imported, data found
    seen = b""
    deadline = time.monotonic() + 60
    while b"epoch 1/" not in seen and time.monotonic() < deadline:  # the timed loop has begun
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break
        seen += chunk
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    err = seen + err
    assert proc.returncode == 130, err.decode()[-2000:]
    assert b"interrupted" in err and b"Traceback" not in err


@pytest.mark.skipif(shutil.which("headrace") is None, reason="console script not installed")
def test_console_script() -> None:
    proc = subprocess.run(["headrace", "info"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("headrace ")


def test_bench_runs_without_pytorch(monkeypatch, capsys, tmp_path):
    import cv2
    import numpy as np

    from headrace import _benchmark, cli

    for c in range(2):
        (tmp_path / f"c{c}").mkdir()
        for i in range(3):
            cv2.imwrite(str(tmp_path / f"c{c}" / f"{i}.jpg"), np.full((40, 50, 3), i, np.uint8))
    monkeypatch.setattr(_benchmark, "torch_available", lambda: False)
    assert cli.main(["bench", str(tmp_path), "--epochs", "1", "--batch-size", "4",
                     "--no-progress"]) == 0  # fmt: skip
    assert "numpy arrays" in capsys.readouterr().out
    assert cli.main(["bench", str(tmp_path), "--compare", "--no-progress"]) == 2


def test_info_says_when_nvimgcodec_is_too_old(monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed nvImageCodec older than 0.9 is shown as not used (headrace treats it as
    absent), a current one by its version."""
    import headrace.cli as cli

    def installed(version: str):  # type: ignore[no-untyped-def]
        return lambda *dists: version if "nvidia-nvimgcodec-cu12" in dists else None

    monkeypatch.setattr(cli, "_first_version", installed("0.7.0"))
    assert cli._nvimgcodec_version() == "0.7.0 (too old, not used: headrace needs >= 0.9)"
    monkeypatch.setattr(cli, "_first_version", installed("0.9.1"))
    assert cli._nvimgcodec_version() == "0.9.1"


@pytest.mark.parametrize("command", [["bench", "--batch-size", "2", "--epochs", "1"],
                                     ["preview", "--num", "2"]])  # fmt: skip
def test_a_corrupt_image_is_one_line_and_status_2(tmp_path, capsys, command) -> None:
    """A folder with an undecodable image: the command names the file in one line and exits
    with status 2 (it printed a traceback and exited with 1)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    cv2.imwrite(str(tmp_path / "a" / "ok.jpg"), np.zeros((10, 10, 3), np.uint8))
    (tmp_path / "b" / "bad.jpg").write_bytes(b"garbage")
    extra = ["--out", str(tmp_path / "p.png")] if command[0] == "preview" else []
    assert main([command[0], str(tmp_path), *command[1:], *extra]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert "Traceback" not in err and len(errors) == 1 and "bad.jpg" in errors[0]
