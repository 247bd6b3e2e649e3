"""``readers.NemoAsr`` on manifests of generated audio, against the reference where it runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import headrace as ndd
from headrace.readers.nemo_asr import ManifestError

SPECS = [(1600, 16000, 1), (4000, 8000, 2), (800, 16000, 1), (16000, 16000, 1), (2205, 22050, 2)]


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("nemo")
    (d / "wav").mkdir()
    lines = []
    for i, (n, rate, ch) in enumerate(SPECS):
        t = np.arange(n) / rate
        x = 0.3 * np.sin(2 * np.pi * (150 + 50 * i) * t)[:, None] * np.ones(ch)
        sf.write(d / "wav" / f"{i}.wav", x.astype(np.float32), rate, subtype="PCM_16")
        entry = {"audio_filepath": f"wav/{i}.wav", "duration": n / rate}
        if i != 2:
            entry["text"] = f"sample {i}: ünïcode"
        lines.append(json.dumps(entry))
    (d / "m.json").write_text("\n".join(lines) + "\n\n")
    return d / "m.json"


def _epoch(r: object, bs: int) -> list[tuple[np.ndarray, ...]]:
    out = []
    for b in r.next_epoch(batch_size=bs):  # type: ignore[attr-defined]
        for i in range(b[0].batch_size):
            out.append(tuple(np.asarray(x.tensors[i]) for x in b))
    return out


@pytest.mark.dali
@pytest.mark.parametrize(
    "kw",
    [
        {"read_idxs": True},
        {"min_duration": 0.1, "max_duration": 0.6, "read_idxs": True},
        {"sample_rate": 12000.0, "downmix": False, "dtype": "int16", "read_sample_rate": False},
        {"read_text": False, "quality": 20, "sample_rate": 44100.0},
    ],
)
def test_matches_reference(
    manifest: Path, kw: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    monkeypatch.chdir(manifest.parent)  # the reference resolves paths against the working folder
    dkw = {k: getattr(dndd, v) if k == "dtype" else v for k, v in kw.items()}  # type: ignore[arg-type]
    hkw = {k: getattr(ndd, v) if k == "dtype" else v for k, v in kw.items()}  # type: ignore[arg-type]
    ref = _epoch(dndd.readers.NemoAsr(manifest_filepaths=[str(manifest)], **dkw), 2)
    got = _epoch(ndd.readers.NemoAsr(manifest_filepaths=[manifest], **hkw), 2)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert len(g) == len(r)
        for a, b in zip(g, r):
            assert a.shape == b.shape and a.dtype == b.dtype
            assert np.abs(a.astype(np.float64) - b).max(initial=0) <= (
                1 if a.dtype == np.int16 else 2e-6
            )


def test_outputs_filters_and_fill(manifest: Path) -> None:
    r = ndd.readers.NemoAsr(manifest_filepaths=manifest, min_duration=0.09, read_idxs=True)
    (batch,) = list(r.next_epoch(batch_size=4))  # the 4 entries of at least 0.09 s
    audio, rate, text, idx = batch
    assert [a.shape for a in audio] == [(1600,), (4000,), (16000,), (2205,)]
    assert [float(x) for x in rate] == [16000.0, 8000.0, 16000.0, 22050.0]
    assert bytes(np.asarray(text.tensors[1])).decode() == "sample 1: ünïcode"
    assert [int(np.asarray(i)[0]) for i in idx] == [0, 1, 2, 3]
    # the reference's rate output is the file's rate, also when resampling
    (_, rate_rs, _) = next(
        iter(
            ndd.readers.NemoAsr(manifest_filepaths=manifest, sample_rate=8e3).next_epoch(
                batch_size=1
            )
        )
    )
    assert float(np.asarray(rate_rs.tensors[0])) == 16000.0
    r = ndd.readers.NemoAsr(manifest_filepaths=[manifest], read_text=False, last_batch="partial")
    sizes = [b[0].batch_size for b in r.next_epoch(batch_size=2)]
    assert sizes == [2, 2, 1]
    (_, _, t) = next(iter(ndd.readers.NemoAsr(manifest_filepaths=[manifest]).next_epoch()))
    assert bytes(np.asarray(t)) == b"sample 0: \xc3\xbcn\xc3\xafcode"


def test_errors_name_the_line_and_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"text": "no path"}\n')
    with pytest.raises(ManifestError, match=r"bad\.json:1"):
        ndd.readers.NemoAsr(manifest_filepaths=[bad])
    (tmp_path / "x.wav").write_bytes(b"not audio at all")
    m = tmp_path / "m.json"
    m.write_text(json.dumps({"audio_filepath": "x.wav"}))
    with pytest.raises(ndd.DecodeError, match=r"NemoAsr: sample 0 .*x\.wav"):
        list(ndd.readers.NemoAsr(manifest_filepaths=[m]).next_epoch())


def test_relative_paths_prefer_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same relative name beside the manifest and in the working folder: the reference reads
    # the working folder's file; with none there, headrace reads the manifest's folder
    (tmp_path / "data").mkdir()
    (tmp_path / "cwd").mkdir()
    sf.write(tmp_path / "data" / "a.wav", np.zeros(100, np.float32), 16000)
    sf.write(tmp_path / "cwd" / "a.wav", np.zeros(300, np.float32), 16000)
    manifest = tmp_path / "data" / "m.json"
    manifest.write_text(json.dumps({"audio_filepath": "a.wav"}) + "\n")
    monkeypatch.chdir(tmp_path / "cwd")
    (batch,) = ndd.readers.NemoAsr(manifest_filepaths=[manifest]).next_epoch(batch_size=1)
    assert batch[0].tensors[0].shape == (300,)
    monkeypatch.chdir(tmp_path)
    (batch,) = ndd.readers.NemoAsr(manifest_filepaths=[manifest]).next_epoch(batch_size=1)
    assert batch[0].tensors[0].shape == (100,)


def test_relative_paths_survive_a_change_of_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sf.write(tmp_path / "a.wav", np.zeros(120, np.float32), 16000)
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"audio_filepath": "a.wav"}) + "\n")
    monkeypatch.chdir(tmp_path)  # (found in the working directory) ...
    reader = ndd.readers.NemoAsr(manifest_filepaths=[manifest])
    monkeypatch.chdir(tmp_path.parent)  # ... and still read after leaving it
    (batch,) = reader.next_epoch(batch_size=1)
    assert batch[0].tensors[0].shape == (120,)
