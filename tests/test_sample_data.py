"""Built-in sample data: layout, realism, determinism, caching and recovery from killed runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import headrace as ndd
from headrace import sample_data


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_data.image_folder(
        tmp_path_factory.mktemp("cache"), num_images=12, num_classes=3, progress=False
    )


def test_layout_counts_and_labels(folder: Path) -> None:
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir())
    assert classes == ["class_00", "class_01", "class_02"]
    assert [len(list((folder / c).glob("*.jpg"))) for c in classes] == [4, 4, 4]
    reader = ndd.readers.File(file_root=str(folder))
    labels = [int(lab.item()) for _, lab in reader.next_epoch()]
    assert labels == [0] * 4 + [1] * 4 + [2] * 4


def test_images_are_realistic_jpegs(folder: Path) -> None:
    sizes, pixels = [], []
    for path in sorted(folder.glob("*/*.jpg")):
        data = path.read_bytes()
        assert data[:2] == b"\xff\xd8"
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        h, w = img.shape[:2]
        assert 250 <= min(h, w) <= 500 and 300 <= max(h, w) <= 640
        # natural-looking: not flat, uses most of the range, channels differ
        assert img.std() > 20 and img.max() - img.min() > 150
        sizes.append(len(data))
        pixels.append(h * w)
    kb = np.array(sizes) / 1024
    assert 55 <= kb.mean() <= 120, kb
    assert kb.min() > 30
    assert 0.3 <= sum(sizes) / sum(pixels) <= 0.6  # bytes per pixel, ImageNet is about 0.45


def test_deterministic(folder: Path, tmp_path: Path) -> None:
    again = sample_data.image_folder(tmp_path, num_images=12, num_classes=3, progress=False)
    for a in sorted(folder.glob("*/*.jpg")):
        assert a.read_bytes() == (again / a.parent.name / a.name).read_bytes()
    other = sample_data.image_folder(tmp_path, num_images=3, num_classes=3, seed=1, progress=False)
    assert (other / "class_00" / "img_00000.jpg").read_bytes() != (
        folder / "class_00" / "img_00000.jpg"
    ).read_bytes()


def test_reused_without_regenerating(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> None:
        raise AssertionError("regenerated")

    monkeypatch.setattr(sample_data, "_generate", fail)
    again = sample_data.image_folder(folder.parent, num_images=12, num_classes=3, progress=False)
    assert again == folder


def test_default_location_follows_headrace_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEADRACE_CACHE", str(tmp_path / "c"))
    assert sample_data.cache_dir() == tmp_path / "c"
    out = sample_data.image_folder(num_images=2, num_classes=1, progress=False)
    assert out.parent == tmp_path / "c"
    monkeypatch.delenv("HEADRACE_CACHE")
    assert sample_data.cache_dir() == Path.home() / ".cache" / "headrace"


def test_incomplete_folder_is_regenerated(tmp_path: Path) -> None:
    first = sample_data.image_folder(tmp_path, num_images=3, num_classes=1, progress=False)
    (first / sample_data.MARKER).unlink()  # as if the run was killed before the marker
    (first / "class_00" / "img_00001.jpg").write_bytes(b"truncated")
    again = sample_data.image_folder(tmp_path, num_images=3, num_classes=1, progress=False)
    assert again == first
    assert (again / "class_00" / "img_00001.jpg").stat().st_size > 10_000
    assert json.loads((again / sample_data.MARKER).read_text())["num_images"] == 3


def test_killed_generation_leaves_nothing_behind(tmp_path: Path) -> None:
    # A generation killed half way: its partial folder belongs to a dead process.
    code = (
        "import os, sys; from headrace import sample_data as s\n"
        "orig = s.encode_jpeg\n"
        "n = [0]\n"
        "def enc(img):\n"
        "    n[0] += 1\n"
        "    if n[0] == 3: os._exit(9)\n"
        "    return orig(img)\n"
        "s.encode_jpeg = enc\n"
        f"s.image_folder({str(tmp_path)!r}, num_images=6, num_classes=2, progress=False)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert proc.returncode == 9
    partial = list(tmp_path.glob("*.partial-*"))
    assert partial and not [p for p in tmp_path.iterdir() if ".partial-" not in p.name]
    out = sample_data.image_folder(tmp_path, num_images=6, num_classes=2, progress=False)
    assert not list(tmp_path.glob("*.partial-*"))
    assert len(list(out.glob("*/*.jpg"))) == 6


def test_progress_bar_shown_while_generating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_data.image_folder(tmp_path, num_images=2, num_classes=1, progress=True)
    assert "generating sample images" in capsys.readouterr().err
    sample_data.image_folder(tmp_path, num_images=2, num_classes=1, progress=True)
    assert capsys.readouterr().err == ""  # reused: nothing to show


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_images": 0}, "num_images"),
        ({"num_images": 2, "num_classes": 3}, "num_classes"),
        ({"num_classes": 1.5}, "num_classes"),
    ],
)
def test_bad_arguments(tmp_path: Path, kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sample_data.image_folder(tmp_path, progress=False, **kwargs)  # type: ignore[arg-type]


def test_class_sets_the_dominant_hue() -> None:
    def hue(label: int) -> float:
        imgs = [sample_data.synthetic_image(i, label, 4) for i in range(3)]
        hsv = [cv2.cvtColor(im, cv2.COLOR_RGB2HSV_FULL)[..., 0].astype(float) for im in imgs]
        ang = np.concatenate([h.ravel() for h in hsv]) / 256 * 2 * np.pi
        return float(np.angle(np.exp(1j * ang).mean()) % (2 * np.pi))

    hues = [hue(k) for k in range(4)]
    gaps = [abs(np.angle(np.exp(1j * (hues[i] - hues[j])))) for i in range(4) for j in range(i)]
    assert min(gaps) > 0.5  # classes are a quarter turn apart, noise allowed


def test_generated_in_parallel_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    seen: set[int] = set()
    orig = sample_data.encode_jpeg

    def enc(img: np.ndarray) -> bytes:
        seen.add(threading.get_ident())
        return orig(img)

    monkeypatch.setattr(sample_data, "encode_jpeg", enc)
    sample_data.image_folder(tmp_path, num_images=8, num_classes=1, progress=False)
    assert threading.get_ident() not in seen and len(seen) >= 1
