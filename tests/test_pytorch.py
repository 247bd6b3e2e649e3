"""headrace.pytorch: the Loader adapter, the ready-made pipelines, the baseline, torchdata nodes."""

from __future__ import annotations

import importlib.util
import math
import random
import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import headrace as ndd  # noqa: E402
from headrace import _benchmark as bm  # noqa: E402
from headrace import pipelines, sample_data  # noqa: E402
from headrace.pytorch import Loader  # noqa: E402


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sample_data.image_folder(
        tmp_path_factory.mktemp("cache"), num_images=12, num_classes=3, progress=False
    )


def _files(n: int) -> ndd.readers.File:
    return ndd.readers.File(files=[__file__] * n, labels=list(range(n)))


def _labels(data: object, label: object) -> object:
    return label


# --- Loader ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "bs"), [(10, 4), (8, 4), (3, 5), (1, 1)])
def test_len_matches_batches_and_epochs_are_exact(n: int, bs: int) -> None:
    loader = Loader(_files(n), _labels, batch_size=bs)
    for _ in range(3):
        assert len(loader) == math.ceil(n / bs)
        out = list(loader)
        assert len(out) == len(loader)
        assert torch.cat(out).flatten().tolist() == list(range(n))
    assert loader.epoch == 3


@pytest.mark.parametrize(("mode", "expected"), [("drop", 2), ("pad", 3), ("partial", 3)])
def test_len_follows_last_batch_mode(mode: str, expected: int) -> None:
    reader = ndd.readers.File(files=[__file__] * 10, labels=list(range(10)), last_batch=mode)
    loader = Loader(reader, _labels, batch_size=4)
    assert len(loader) == expected
    assert len(list(loader)) == expected


def test_len_of_a_shard() -> None:
    reader = ndd.readers.File(files=[__file__] * 10, labels=list(range(10)), num_shards=3,
                              shard_id=2, stick_to_shard=True)  # fmt: skip
    loader = Loader(reader, _labels, batch_size=2)
    got = list(loader)
    assert len(loader) == len(got) == 2  # shard 2 of 3 holds samples 6..9
    assert torch.cat(got).flatten().tolist() == [6, 7, 8, 9]


def test_shuffled_epochs_are_permutations() -> None:
    reader = ndd.readers.File(files=[__file__] * 9, labels=list(range(9)), random_shuffle=True,
                              seed=3)  # fmt: skip
    loader = Loader(reader, _labels, batch_size=4)
    orders = [torch.cat(list(loader)).flatten().tolist() for _ in range(3)]
    assert all(sorted(o) == list(range(9)) for o in orders)
    assert len({tuple(o) for o in orders}) > 1


@pytest.mark.parametrize("prefetch", [0, 1, 3])
def test_prefetch_depth_does_not_change_the_data(prefetch: int) -> None:
    loader = Loader(_files(7), lambda d, lab: (lab * 2, {"x": lab}), batch_size=2,
                    prefetch=prefetch)  # fmt: skip
    out = list(loader)
    assert [t.flatten().tolist() for t, _ in out] == [[0, 2], [4, 6], [8, 10], [12]]
    assert all(isinstance(d, dict) and d["x"].dtype == torch.int32 for _, d in out)


def test_outputs_without_fn_are_torch_tensors_on_the_device() -> None:
    loader = Loader(_files(3), batch_size=3, device="cpu")
    ((data, labels),) = list(loader)
    assert isinstance(data, torch.Tensor) and data.device.type == "cpu"
    assert data.dtype == torch.uint8 and data.shape[0] == 3
    assert labels.shape == (3, 1) and labels.dtype == torch.int32


def test_numpy_and_torch_outputs_pass_through() -> None:
    fn = lambda d, lab: (np.arange(3), torch.ones(2), None)  # noqa: E731
    ((a, b, c),) = list(Loader(_files(2), fn, batch_size=2))
    assert a.tolist() == [0, 1, 2] and b.tolist() == [1.0, 1.0] and c is None


def test_breaking_an_epoch_then_the_next_is_whole() -> None:
    loader = Loader(_files(10), _labels, batch_size=3)
    for _ in loader:
        break
    assert torch.cat(list(loader)).flatten().tolist() == list(range(10))


def test_state_dict_counts_only_delivered_batches() -> None:
    def make(state: dict | None = None) -> Loader:
        reader = ndd.readers.File(files=[__file__] * 10, labels=list(range(10)),
                                  enable_checkpointing=True)  # fmt: skip
        loader = Loader(reader, _labels, batch_size=2, prefetch=3)
        if state is not None:
            loader.load_state_dict(state)
        return loader

    loader = make()
    it = iter(loader)
    first = [next(it).flatten().tolist() for _ in range(2)]
    state = loader.state_dict()
    assert first == [[0, 1], [2, 3]] and state["position"] == 4
    resumed = make(state)
    assert len(resumed) == 3  # what is left of the interrupted epoch
    rest = [t.flatten().tolist() for t in resumed]
    assert rest == [[4, 5], [6, 7], [8, 9]]
    assert len(resumed) == 5  # the epoch after the resumed one is whole again


def test_state_dict_needs_checkpointing() -> None:
    with pytest.raises(RuntimeError, match="enable_checkpointing"):
        Loader(_files(2), batch_size=1).state_dict()


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({}, ValueError, "batch_size"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": 2, "prefetch": -1}, ValueError, "prefetch"),
        ({"batch_size": 2, "fn": 3}, TypeError, "callable"),
    ],
)
def test_bad_arguments(kwargs: dict, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        Loader(_files(2), **kwargs)


def test_not_a_reader() -> None:
    with pytest.raises(TypeError, match="reader"):
        Loader([1, 2, 3], batch_size=1)


def test_bad_fn_result() -> None:
    with pytest.raises(TypeError, match="returned a str"):
        list(Loader(_files(2), lambda d, lab: "oops", batch_size=2))


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_without_a_gpu_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no CUDA device"):
        Loader(_files(2), batch_size=1, device="cuda")


def test_max_batch_size_is_the_default_batch_size() -> None:
    reader = ndd.readers.File(files=[__file__] * 5, labels=list(range(5)), max_batch_size=2)
    assert [len(t) for t in Loader(reader, _labels)] == [2, 2, 1]


# --- pipelines ---------------------------------------------------------------------------------
def _first_batch(folder: Path, n: int = 6) -> tuple[ndd.Batch, ndd.Batch]:
    reader = ndd.readers.File(file_root=str(folder))
    return next(iter(reader.next_epoch(batch_size=n)))


def test_eval_pipeline_matches_a_numpy_reference(folder: Path) -> None:
    import cv2

    jpegs, labels = _first_batch(folder)
    images, out_labels = pipelines.eval_pipeline(jpegs, labels)
    x = images.torch()
    assert x.shape == (6, 3, 224, 224) and x.dtype == torch.float32
    assert out_labels is labels
    for i in range(6):
        rgb = cv2.cvtColor(cv2.imdecode(np.asarray(jpegs.tensors[i].cpu()), 1), cv2.COLOR_BGR2RGB)
        h, w = rgb.shape[:2]
        s = 256 / min(h, w)
        rw, rh = round(w * s), round(h * s)
        small = cv2.resize(rgb, (rw, rh), interpolation=cv2.INTER_AREA).astype(np.float32)
        y0, x0 = math.floor((rh - 224) / 2 + 0.5), math.floor((rw - 224) / 2 + 0.5)  # half up
        ref = (small[y0 : y0 + 224, x0 : x0 + 224] - pipelines.MEAN) / pipelines.STD
        diff = np.abs(x[i].numpy().transpose(1, 2, 0) - ref)
        assert diff.mean() < 0.03, diff.mean()  # about 1 grey level: the filters differ
        assert np.allclose(pipelines.denormalize(x[i]), np.clip(np.rint(
            x[i].numpy().transpose(1, 2, 0) * pipelines.STD + pipelines.MEAN), 0, 255))  # fmt: skip


def test_train_pipeline_is_reproducible_and_random(folder: Path) -> None:
    jpegs, labels = _first_batch(folder)
    a = pipelines.train_pipeline(jpegs, labels, rng=ndd.random.RNG(5))[0].torch()
    b = pipelines.train_pipeline(jpegs, labels, rng=ndd.random.RNG(5))[0].torch()
    c = pipelines.train_pipeline(jpegs, labels, rng=ndd.random.RNG(6))[0].torch()
    assert a.shape == (6, 3, 224, 224) and a.dtype == torch.float32
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert -3 < float(a.mean()) < 3 and 0.3 < float(a.std()) < 3


def test_pipeline_through_the_loader(folder: Path) -> None:
    reader = ndd.readers.File(file_root=str(folder))
    loader = Loader(reader, partial(pipelines.eval_pipeline, size=32, resize_shorter=40),
                    batch_size=5)  # fmt: skip
    shapes = [(tuple(x.shape), tuple(y.shape)) for x, y in loader]
    assert shapes == [((5, 3, 32, 32), (5, 1)), ((5, 3, 32, 32), (5, 1)), ((2, 3, 32, 32), (2, 1))]


def test_unknown_pipeline() -> None:
    with pytest.raises(ValueError, match="eval, train"):
        pipelines.get("test")


@pytest.mark.dali
def test_eval_pipeline_agrees_with_dali(folder: Path) -> None:
    pytest.importorskip("nvidia.dali")
    import nvidia.dali.experimental.dynamic as dndd

    jpegs, labels = _first_batch(folder)
    ours = pipelines.eval_pipeline(jpegs, labels)[0].torch().cpu().numpy()
    data = dndd.batch([np.asarray(t.cpu()) for t in jpegs.tensors])
    ref = dndd.decoders.image(data)
    ref = dndd.resize(ref, resize_shorter=256)
    ref = dndd.crop_mirror_normalize(ref, crop=(224, 224), mean=list(pipelines.MEAN),
                                     std=list(pipelines.STD))  # fmt: skip
    ref = np.stack([np.asarray(t) for t in ref.tensors])
    diff = np.abs(ours - ref) * np.asarray(pipelines.STD, np.float32)[:, None, None]
    # in grey levels: resized pixels may round the other way (measured: max 1, mean 0.16)
    assert diff.max() < 1.01 and diff.mean() < 0.3, (diff.max(), diff.mean())


# --- the DataLoader + Pillow baseline ------------------------------------------------------------
def test_baseline_does_the_same_work(folder: Path) -> None:
    imgs = bm.list_images(folder, limit=4)
    base = torch.stack([bm.PillowImageFolder(imgs, "eval")[i][0] for i in range(4)])
    reader = ndd.readers.File(files=imgs.paths, labels=imgs.labels)
    ours = Loader(reader, pipelines.eval_pipeline, batch_size=4)
    ((x, _),) = list(ours)
    assert base.shape == x.shape and base.dtype == x.dtype
    assert float((base - x).abs().mean()) < 0.2  # same crops, different resampling


def test_random_resized_crop_window_rule() -> None:
    rnd = random.Random(0)
    for w, h in [(500, 375), (100, 300), (640, 100)]:
        for _ in range(200):
            x, y, cw, ch = bm.rrc_window(w, h, rnd)
            assert 0 <= x and 0 <= y and x + cw <= w and y + ch <= h and cw > 0 and ch > 0
    # a very wide image falls back to the centred crop with the largest allowed ratio
    assert bm.rrc_window(10_000, 10, random.Random(0)) == ((10_000 - 13) // 2, 0, 13, 10)
    # windows cover 8 %-100 % of the area with ratios in [3/4, 4/3] when they fit
    x, y, cw, ch = bm.rrc_window(500, 375, random.Random(1))
    assert 0.08 * 500 * 375 * 0.9 <= cw * ch <= 500 * 375 and 0.7 <= cw / ch <= 1.4


def test_baseline_loader_runs_with_workers(folder: Path) -> None:
    imgs = bm.list_images(folder, limit=6)
    stop = threading.Event()
    busy = threading.Thread(target=stop.wait)  # another thread: forking now could hang a child
    busy.start()
    try:
        loader = bm.baseline_loader(imgs, "train", batch_size=4, workers=2)
        assert loader.multiprocessing_context.get_start_method() == "forkserver"
        out = list(loader)
    finally:
        stop.set()
        busy.join()
    assert [tuple(x.shape) for x, _ in out] == [(4, 3, 224, 224), (2, 3, 224, 224)]
    assert sorted(torch.cat([y for _, y in out]).tolist()) == sorted(imgs.labels)


# --- torchdata nodes -----------------------------------------------------------------------------
def test_nodes_need_torchdata() -> None:
    if importlib.util.find_spec("torchdata") is not None:
        pytest.skip("torchdata is installed")
    with pytest.raises(ImportError, match="pip install torchdata"):
        import headrace.pytorch.nodes  # noqa: F401


def test_nodes_pipeline() -> None:
    pytest.importorskip("torchdata.nodes")
    from torchdata.nodes import Loader as NodesLoader

    from headrace.pytorch import nodes

    files = [__file__] * 5
    reader = nodes.Reader(ndd.readers.File, batch_size=2, files=files, labels=[0, 1, 2, 3, 4])
    assert reader.output_names == ("data", "label")
    mapped = nodes.DictMapper(reader, lambda lab: lab * 10, key="label")
    loader = NodesLoader(nodes.ToTorch(mapped))
    # the reader's own epochs (its default last batch: topped up from the next epoch)
    same = ndd.readers.File(files=files, labels=[0, 1, 2, 3, 4], max_batch_size=2)
    for _ in range(2):
        out = list(loader)
        epoch = same.next_epoch(batch_size=2)
        want = [tuple(int(np.asarray(t)[0]) * 10 for t in lab.tensors) for _, lab in epoch]
        assert [tuple(t.flatten().tolist()) for _, t in out] == want
        assert all(isinstance(d, torch.Tensor) and d.dtype == torch.uint8 for d, _ in out)
    assert want[-1] == (0, 10)  # the second epoch: 1 2 | 3 4 | 0 1 (one continuous stream)
    assert reader.get_state() == {}


def test_nodes_reader_errors() -> None:
    pytest.importorskip("torchdata.nodes")
    from headrace.pytorch import nodes

    kw = {"files": [__file__], "labels": [0]}
    with pytest.raises(ValueError, match="output_names"):
        nodes.Reader(ndd.readers.File, batch_size=1, output_names=("a",), **kw)
    r = nodes.Reader(ndd.readers.File, batch_size=1, output_names=["img", "y"], **kw)
    with pytest.raises(RuntimeError, match="reset"):
        r.next()
    with pytest.raises(NotImplementedError):
        r.reset({"x": 1})
    r.reset()
    assert set(r.next()) == {"img", "y"}
