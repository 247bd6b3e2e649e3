"""The reference's parameters and spellings that programs written for it use: paths as
``os.PathLike``, GPU-decoder hints, volumetric crop arguments, ``batch_size`` and positional
input names on the basic operators, ``EvalContext(thread_pool=)``, ``tensor(pad=)``, and the
sub-packages reachable as attributes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

import headrace as ndd
from headrace.cli import main


@pytest.fixture
def image_file(tmp_path: Path) -> Path:
    p = tmp_path / "img.png"
    rng = np.random.default_rng(0)
    cv2.imwrite(str(p), rng.integers(0, 255, (12, 16, 3), dtype=np.uint8))
    return p


# --- paths ------------------------------------------------------------------------------------
def test_imread_and_file_read_take_pathlib_paths(image_file: Path) -> None:
    want = np.asarray(ndd.imread(str(image_file)))
    assert np.array_equal(np.asarray(ndd.imread(image_file)), want)
    both = ndd.imread([image_file, str(image_file)])
    assert both.batch_size == 2 and all(np.array_equal(np.asarray(t), want) for t in both.tensors)
    raw = ndd.io.file.read(image_file, dont_use_mmap=True, use_o_direct=True)
    assert bytes(np.asarray(raw)) == image_file.read_bytes()
    with pytest.raises(TypeError, match="imread: expected a path"):
        ndd.imread(3)


def test_cli_takes_pathlib_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for cls in ("a", "b"):
        (tmp_path / "imgs" / cls).mkdir(parents=True)
        for i in range(2):
            cv2.imwrite(str(tmp_path / "imgs" / cls / f"{i}.jpg"), np.zeros((8, 8, 3), np.uint8))
    out = tmp_path / "grid.png"
    argv = ["preview", tmp_path / "imgs", "--out", out, "--num", "2", "--pipeline", "eval"]
    assert main(argv) == 0
    assert out.is_file() and "wrote" in capsys.readouterr().out


# --- decoders -----------------------------------------------------------------------------------
def test_gpu_decoder_hints_are_accepted_and_change_nothing(image_file: Path) -> None:
    enc = ndd.io.file.read(image_file)
    hints = {"affine": False, "device_memory_padding": 1, "device_memory_padding_jpeg2k": 2,
             "host_memory_padding": 3, "host_memory_padding_jpeg2k": 4,
             "hybrid_huffman_threshold": 5, "split_stages": True,
             "use_chunk_allocator": True}  # fmt: skip
    cache = {"cache_size": 10, "cache_threshold": 1, "cache_type": "threshold",
             "cache_batch_copy": False, "cache_debug": False}  # fmt: skip
    plain = np.asarray(ndd.decoders.image(enc))
    assert np.array_equal(np.asarray(ndd.decoders.image(enc, **hints, **cache)), plain)
    assert np.array_equal(np.asarray(ndd.imread(image_file, **hints, **cache)), plain)
    crop = ndd.decoders.image_crop(enc, crop=(4, 6), **hints)
    assert np.array_equal(np.asarray(crop), plain[4:8, 5:11])
    rng = ndd.random.RNG(seed=1)
    a = ndd.decoders.image_random_crop(enc, rng=rng.clone(), **hints)
    assert np.array_equal(np.asarray(a), np.asarray(ndd.decoders.image_random_crop(enc, rng=rng)))


def test_image_crop_depth_arguments(image_file: Path) -> None:
    enc = ndd.io.file.read(image_file)
    want = np.asarray(ndd.decoders.image_crop(enc, crop_h=4, crop_w=6))
    for kw in ({"crop_d": 1, "crop_pos_z": 0.2}, {"crop_d": 0}, {"crop_pos_z": 1.0}):
        got = ndd.decoders.image_crop(enc, crop_h=4, crop_w=6, **kw)
        assert np.array_equal(np.asarray(got), want), kw
    assert np.array_equal(np.asarray(ndd.decoders.image_crop(enc, crop=(1, 4, 6))), want)
    with ndd.EvalMode.sync_cpu:
        with pytest.raises(ValueError, match="crop_d"):
            ndd.decoders.image_crop(enc, crop_h=4, crop_w=6, crop_d=2)
        with pytest.raises(ValueError, match="crop_d"):
            ndd.decoders.image_crop(enc, crop=(3, 4, 6))
        with pytest.raises(ValueError, match="together with crop_h and crop_w"):
            ndd.decoders.image_crop(enc, crop_d=1)


@pytest.mark.dali
def test_image_crop_depth_arguments_match_the_reference(image_file: Path) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    enc = np.frombuffer(image_file.read_bytes(), np.uint8)
    for kw in ({"crop_h": 4, "crop_w": 6, "crop_d": 1, "crop_pos_z": 0.3},
               {"crop": (1, 4, 6), "crop_pos_x": 0.1}):  # fmt: skip
        want = np.asarray(dndd.decoders.image_crop(dndd.as_tensor(enc), **kw).cpu())
        got = np.asarray(ndd.decoders.image_crop(ndd.as_tensor(enc), **kw))
        assert np.array_equal(got, want), kw


# --- basic operators ----------------------------------------------------------------------------
def test_positional_names_and_batch_size_of_basic_ops() -> None:
    t = ndd.tensor([1, 2, 3, 4])
    assert ndd.reshape(t, ndd.tensor([2, 2])).shape == (2, 2)
    ragged = ndd.batch([np.arange(4), np.arange(6)])
    shapes = ndd.batch([np.array([2, 2]), np.array([3, 2])])
    assert [x.shape for x in ndd.reshape(ragged, shapes).tensors] == [(2, 2), (3, 2)]
    with pytest.raises(ValueError, match="not both"):
        ndd.reshape(t, ndd.tensor([2, 2]), shape=[4])
    assert ndd.cat(t, t).shape == (8,) and ndd.stack(t, t, axis=1).shape == (4, 2)
    for out in (ndd.cast(t, dtype=ndd.float32, batch_size=3), ndd.copy(t, batch_size=3),
                ndd.expand_dims(t, axes=[0], batch_size=3), ndd.squeeze(t, batch_size=3),
                ndd.transpose(ndd.tensor(np.zeros((2, 3))), perm=[1, 0], batch_size=3),
                ndd.one_hot(ndd.tensor(1), num_classes=3, batch_size=3),
                ndd.per_frame(t, batch_size=3), ndd.cat(t, t, batch_size=3),
                ndd.stack(t, t, batch_size=3)):  # fmt: skip
        assert isinstance(out, ndd.Batch) and out.batch_size == 3
    assert ndd.math.sqrt(input=ndd.tensor(4.0)).item() == 2.0
    assert ndd.math.clamp(value=ndd.tensor(5), lo=0, hi=3).item() == 3


def test_tensor_pad_and_type_id() -> None:
    ragged = ndd.batch([[1, 2], [3]])
    assert ndd.tensor(ragged, pad=True).torch().tolist() == [[1, 2], [3, 0]]
    with pytest.raises(ValueError, match="pad"):
        ndd.tensor(ragged)
    assert ndd.type_id(dtype=ndd.float32) == ndd.type_id(ndd.float32)


def test_eval_context_thread_pool() -> None:
    pool = ndd.ThreadPool(2)
    ctx = ndd.EvalContext(thread_pool=pool)
    assert ctx.thread_pool is pool and ctx.num_threads == 2
    with ctx:
        out = ndd.flip(ndd.batch([np.zeros((4, 4, 3), np.uint8)] * 4), horizontal=1)
        assert out.batch_size == 4
    assert ndd.EvalContext(thread_pool=pool).thread_pool is pool  # shared between contexts
    with pytest.raises(ValueError, match="cannot be specified together"):
        ndd.EvalContext(thread_pool=pool, num_threads=2)
    with pytest.raises(TypeError, match="ThreadPool"):
        ndd.EvalContext(thread_pool=2)  # type: ignore[arg-type]


def test_streams_take_the_reference_names() -> None:
    import inspect

    for fn in (ndd.set_current_stream, ndd.set_default_stream):
        assert next(iter(inspect.signature(fn).parameters)) == "cuda_stream"
    ndd.set_current_stream(None)
    ndd.set_default_stream(None, device_id=None)


# --- sub-packages -------------------------------------------------------------------------------
def test_submodules_are_attributes_without_importing_torch() -> None:
    code = (
        "import sys, headrace as ndd\n"
        "assert 'torch' not in sys.modules and 'pytorch' in dir(ndd)\n"
        "assert ndd.pytorch.Loader.__name__ == 'Loader'\n"
        "assert 'torch' not in sys.modules\n"
        "for name in ('readers', 'decoders', 'random', 'math', 'noise', 'io', 'checkpoint',\n"
        "             'capture'):\n"
        "    getattr(ndd, name)\n"
        "assert not hasattr(ndd, 'no_such_module')\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_pytorch_nodes_without_torchdata_is_a_clear_attribute_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import headrace.pytorch as hp

    monkeypatch.delitem(hp.__dict__, "nodes", raising=False)
    monkeypatch.delitem(sys.modules, "headrace.pytorch.nodes", raising=False)
    monkeypatch.setitem(sys.modules, "torchdata.nodes", None)  # import fails
    with pytest.raises(AttributeError, match="pip install torchdata"):
        hp.nodes  # noqa: B018
    assert not hasattr(hp, "nodes")
