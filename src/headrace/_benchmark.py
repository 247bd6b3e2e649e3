"""Measuring loaders: the image list, resource meters, the epoch loop, the PyTorch baseline.

Shared by ``headrace bench`` (:mod:`headrace.cli`) and the scripts in ``bench/``. The baseline
is what a PyTorch user writes without headrace: a ``torch.utils.data.DataLoader`` with worker
processes and Pillow doing torchvision's transforms by hand (``Resize(256)``, ``CenterCrop(224)``
or ``RandomResizedCrop(224)`` + ``RandomHorizontalFlip``, then ``ToTensor`` and ``Normalize``);
torchvision itself cannot be installed beside the CPU torch wheel.
"""

from __future__ import annotations

import math
import os
import random
import resource
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from headrace.pipelines import CROP, MEAN, RESIZE_SHORTER, STD


class FolderError(ValueError):
    """The image folder is missing, not a folder, or holds no images."""


# --- the image list --------------------------------------------------------------------------
@dataclass(frozen=True)
class ImageList:
    """Paths, integer labels and class names of an image-folder data set."""

    root: Path
    paths: list[str]
    labels: list[int]
    classes: list[str]


#: The audio files ``list_images(..., filters=AUDIO_FILTERS)`` lists.
AUDIO_FILTERS = ("*.wav", "*.flac", "*.ogg")


def list_images(
    root: str | os.PathLike[str],
    limit: int | None = None,
    filters: Sequence[str] | None = None,
) -> ImageList:
    """The images of an ImageNet-style folder (one sub-folder per class), at most ``limit``.

    ``limit`` keeps every k-th image, so that all classes stay represented. ``filters`` (glob
    patterns; default: ``readers.File``'s) chooses the files, e.g. :data:`AUDIO_FILTERS`.

    Examples
    --------
    >>> import tempfile
    >>> from headrace import sample_data
    >>> d = sample_data.image_folder(tempfile.mkdtemp(), num_images=6, num_classes=3,
    ...                              progress=False)
    >>> imgs = list_images(d, limit=3)
    >>> imgs.labels, imgs.classes
    ([0, 1, 2], ['class_00', 'class_01', 'class_02'])
    """
    from headrace.readers.file import DEFAULT_FILE_FILTERS, scan_folder

    path = Path(root).expanduser()
    if not path.exists():
        raise FolderError(f"folder not found: {path}")
    if not path.is_dir():
        raise FolderError(f"not a folder: {path}")
    classes = sorted(e.name for e in os.scandir(path) if e.is_dir())
    if not classes:
        raise FolderError(
            f"no class sub-folders in {path}: expected one sub-folder per class holding images "
            "(e.g. train/cat/1.jpg, train/dog/2.jpg)"
        )
    patterns = list(DEFAULT_FILE_FILTERS if filters is None else filters)
    try:
        paths, labels = scan_folder(str(path), patterns)
    except OSError:
        what = "images" if filters is None else "audio files"
        more = ", ..." if len(patterns) > 4 else ""
        raise FolderError(
            f"no {what} in the sub-folders of {path} (looked for {', '.join(patterns[:4])}{more})"
        ) from None
    if limit is not None and limit < len(paths):
        step = len(paths) / limit
        keep = [int(i * step) for i in range(limit)]
        paths, labels = [paths[i] for i in keep], [labels[i] for i in keep]
    return ImageList(path, paths, labels, classes)


# --- resource meters -------------------------------------------------------------------------
def _live_children() -> list[int]:
    """Process ids of this process's running children (Linux ``/proc``; else none)."""
    try:
        with open(f"/proc/self/task/{os.getpid()}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _proc_cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _cpu_seconds(children: bool) -> float:
    """CPU time of this process, and with ``children`` of its child processes: finished ones
    and (from ``/proc``) running ones such as persistent loader workers."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    t = r.ru_utime + r.ru_stime
    if children:
        c = resource.getrusage(resource.RUSAGE_CHILDREN)
        t += c.ru_utime + c.ru_stime + sum(_proc_cpu_seconds(p) for p in _live_children())
    return t


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Reset this process's peak resident memory (Linux ``clear_refs``); False if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mib(children: bool = False) -> float:
    """Peak resident memory in MiB: this process's (since the last reset), or, with
    ``children``, the largest finished child process's (e.g. a DataLoader worker).

    Examples
    --------
    >>> peak_rss_mib() > 1
    True
    """
    if children:
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    hwm = _status_kib("VmHWM")
    if hwm is not None:
        return hwm / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # pragma: no cover


def tree_peak_rss_mib() -> float:
    """Peak resident memory of this process plus that of each running child (e.g. loader
    workers), in MiB; shared pages count once per process that touched them.

    Examples
    --------
    >>> tree_peak_rss_mib() >= peak_rss_mib()
    True
    """
    total = peak_rss_mib()
    for pid in _live_children():
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:")) / 1024
        except (OSError, StopIteration):
            pass
    return total


@dataclass(frozen=True)
class EpochResult:
    """Images, batches, wall seconds and CPU seconds of one epoch."""

    images: int
    batches: int
    seconds: float
    cpu_seconds: float

    @property
    def img_per_s(self) -> float:
        return self.images / self.seconds if self.seconds > 0 else math.inf

    @property
    def ms_per_batch(self) -> float:
        return 1000 * self.seconds / max(self.batches, 1)

    @property
    def cores(self) -> float:
        return self.cpu_seconds / self.seconds if self.seconds > 0 else 0.0


def run_epochs(
    make_epoch: Callable[[], Iterable[Any]],
    epochs: int,
    *,
    count: Callable[[Any], int],
    total: Callable[[], int | None] = lambda: None,
    label: str = "",
    progress: bool = True,
    children: bool = False,
) -> list[EpochResult]:
    """Time ``epochs`` passes of ``make_epoch()``, with a progress bar per epoch.

    ``count(batch)`` gives the images in a batch; ``children`` adds the CPU time of finished
    child processes (DataLoader workers) to the CPU figure.

    Examples
    --------
    >>> res = run_epochs(lambda: [[1, 2], [3]], 2, count=len, progress=False)
    >>> [(r.images, r.batches) for r in res]
    [(3, 2), (3, 2)]
    """
    from tqdm.auto import tqdm

    results = []
    for e in range(epochs):
        images = batches = 0
        desc = f"{label} epoch {e + 1}/{epochs}".strip()
        with tqdm(total=total(), desc=desc, unit="batch", disable=not progress, leave=True) as bar:
            cpu0, t0 = _cpu_seconds(children), time.perf_counter()
            for batch in make_epoch():
                images += count(batch)
                batches += 1
                bar.update(1)
            t1, cpu1 = time.perf_counter(), _cpu_seconds(children)
            bar.set_postfix_str(f"{images / max(t1 - t0, 1e-9):.0f} img/s")
        results.append(EpochResult(images, batches, t1 - t0, cpu1 - cpu0))
    return results


def summarize(results: Sequence[EpochResult], warmup: bool = True) -> EpochResult:
    """The median epoch, leaving out the first (warm-up) one when there are several.

    With ``warmup=False`` every epoch counts.

    Examples
    --------
    >>> s = summarize([EpochResult(10, 1, 9.0, 1), EpochResult(10, 1, 1.0, 1),
    ...                EpochResult(10, 1, 2.0, 2)])
    >>> s.seconds
    1.5
    """
    timed = list(results[1:] if warmup and len(results) > 1 else results)
    return EpochResult(
        images=int(statistics.median(r.images for r in timed)),
        batches=int(statistics.median(r.batches for r in timed)),
        seconds=statistics.median(r.seconds for r in timed),
        cpu_seconds=statistics.median(r.cpu_seconds for r in timed),
    )


def format_table(rows: Sequence[tuple[str, EpochResult, float]]) -> str:
    """A text table: loader, img/s, ms/batch, CPU cores busy, peak MiB.

    Examples
    --------
    >>> table = format_table([("x", EpochResult(64, 1, 0.5, 1.0), 100.0)])
    >>> print(table)  # doctest: +NORMALIZE_WHITESPACE
    loader    img/s  ms/batch  CPU cores  peak MiB
    x         128.0     500.0       2.00       100
    """
    width = max(8, *(len(name) for name, _, _ in rows))
    lines = [f"{'loader':<{width}}  {'img/s':>5}  ms/batch  CPU cores  peak MiB"]
    for name, r, peak in rows:
        lines.append(
            f"{name:<{width}}  {r.img_per_s:5.1f}  {r.ms_per_batch:8.1f}  {r.cores:9.2f}  "
            f"{peak:8.0f}"
        )
    return "\n".join(lines)


# --- headrace --------------------------------------------------------------------------------
def headrace_loader(
    images: ImageList,
    pipeline: str,
    *,
    batch_size: int,
    device: str = "cpu",
    seed: int = 0,
    prefetch: int = 1,
    num_workers: int | None = None,
    worker_threads: int | None = None,
) -> Any:
    """A :class:`headrace.pytorch.Loader` running the named pipeline over ``images``
    (``num_workers``/``worker_threads`` as the loader's; ``None``: its defaults).

    Without PyTorch installed, the same pipeline yields numpy arrays instead.
    """
    import headrace as ndd
    from headrace import pipelines

    train = pipeline == "train"
    reader = ndd.readers.File(
        files=images.paths, labels=images.labels, random_shuffle=train, seed=seed
    )
    fn = pipelines.get(pipeline)
    kwargs: dict[str, Any] = {"device": device}
    if train:
        kwargs["rng"] = ndd.random.RNG(seed)
    gpu = device == "gpu"
    if not torch_available():
        return NumpyLoader(reader, partial(fn, **kwargs), batch_size, len(images.paths))
    from headrace.pytorch import Loader

    return Loader(
        reader,
        partial(fn, **kwargs),
        batch_size=batch_size,
        device=None if gpu else "cpu",
        prefetch=prefetch,
        num_workers=num_workers,
        worker_threads=worker_threads,
    )


def torch_available() -> bool:
    """Whether PyTorch can be imported (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("torch") is not None


class NumpyLoader:
    """The pipeline's batches as numpy arrays (``headrace bench`` without PyTorch)."""

    def __init__(self, reader: Any, fn: Callable[..., Any], batch_size: int, size: int) -> None:
        self.reader, self.fn, self.batch_size, self.size = reader, fn, batch_size, size

    def __len__(self) -> int:
        return -(-self.size // self.batch_size)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        import headrace as ndd

        for encoded, labels in self.reader.next_epoch(batch_size=self.batch_size):
            images, labels = self.fn(encoded, labels)
            yield np.asarray(ndd.as_tensor(images)), np.asarray(ndd.as_tensor(labels))


# --- the PyTorch DataLoader + Pillow baseline -------------------------------------------------
def _to_normalized_tensor(img: Any) -> Any:
    """torchvision's ``ToTensor`` + ``Normalize(mean, std)`` on a PIL RGB image."""
    import torch

    t = torch.from_numpy(np.array(img)).permute(2, 0, 1).contiguous().float().div_(255)
    mean = torch.tensor(MEAN).div_(255).view(3, 1, 1)
    std = torch.tensor(STD).div_(255).view(3, 1, 1)
    return t.sub_(mean).div_(std)


def pillow_eval(img: Any, size: int = CROP, resize_shorter: int = RESIZE_SHORTER) -> Any:
    """torchvision ``Resize(256)`` (bilinear, antialiased) + ``CenterCrop(224)`` on Pillow."""
    from PIL import Image

    w, h = img.size
    if w <= h:
        nw, nh = resize_shorter, int(resize_shorter * h / w)
    else:
        nw, nh = int(resize_shorter * w / h), resize_shorter
    img = img.resize((nw, nh), Image.BILINEAR)
    top, left = round((nh - size) / 2.0), round((nw - size) / 2.0)
    return img.crop((left, top, left + size, top + size))


def rrc_window(w: int, h: int, rnd: random.Random) -> tuple[int, int, int, int]:
    """torchvision ``RandomResizedCrop.get_params`` (scale 0.08-1, ratio 3/4-4/3, 10 tries)."""
    area = w * h
    log_ratio = (math.log(3 / 4), math.log(4 / 3))
    for _ in range(10):
        target = area * rnd.uniform(0.08, 1.0)
        ratio = math.exp(rnd.uniform(*log_ratio))
        cw, ch = round(math.sqrt(target * ratio)), round(math.sqrt(target / ratio))
        if 0 < cw <= w and 0 < ch <= h:
            return rnd.randint(0, w - cw), rnd.randint(0, h - ch), cw, ch
    in_ratio = w / h
    if in_ratio < 3 / 4:
        cw, ch = w, round(w / (3 / 4))
    elif in_ratio > 4 / 3:
        ch, cw = h, round(h * (4 / 3))
    else:
        cw, ch = w, h
    return (w - cw) // 2, (h - ch) // 2, cw, ch


def pillow_train(img: Any, rnd: random.Random, size: int = CROP) -> Any:
    """torchvision ``RandomResizedCrop(224)`` + ``RandomHorizontalFlip()`` on Pillow."""
    from PIL import Image

    x, y, cw, ch = rrc_window(*img.size, rnd)
    img = img.resize((size, size), Image.BILINEAR, box=(x, y, x + cw, y + ch))
    if rnd.random() < 0.5:
        img = img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return img


class PillowImageFolder:
    """Map-style data set (what ``torchvision.datasets.ImageFolder`` does) for the baseline.

    Examples
    --------
    >>> import tempfile
    >>> from headrace import sample_data
    >>> d = sample_data.image_folder(tempfile.mkdtemp(), num_images=2, num_classes=1,
    ...                              progress=False)
    >>> x, y = PillowImageFolder(list_images(d), "eval")[1]
    >>> tuple(x.shape), y
    ((3, 224, 224), 0)
    """

    def __init__(self, images: ImageList, pipeline: str) -> None:
        if pipeline not in ("eval", "train"):
            raise ValueError(f"unknown pipeline {pipeline!r}")
        self.paths, self.labels, self.train = images.paths, images.labels, pipeline == "train"
        self.rnd = random.Random()  # re-seeded from `random` in each worker, see worker_init

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> tuple[Any, int]:
        from PIL import Image

        with Image.open(self.paths[i]) as f:
            img = f.convert("RGB")
        img = pillow_train(img, self.rnd) if self.train else pillow_eval(img)
        return _to_normalized_tensor(img), self.labels[i]


def _worker_init(worker_id: int) -> None:
    import torch.utils.data

    info = torch.utils.data.get_worker_info()
    if info is not None:
        info.dataset.rnd.seed(info.seed)


def baseline_loader(
    images: ImageList,
    pipeline: str,
    *,
    batch_size: int,
    workers: int,
    seed: int = 0,
    persistent: bool = False,
) -> Any:
    """``torch.utils.data.DataLoader`` over :class:`PillowImageFolder` (fork workers, as users
    get by default; ``persistent`` keeps them across epochs, so their memory can be read at the
    end). A process that already runs other threads (a test session, a notebook) starts them
    from a fork server instead: a child forked while another thread holds a lock can hang."""
    import multiprocessing as mp
    import threading

    import torch
    import torch.utils.data

    g = torch.Generator()
    g.manual_seed(seed)
    context = None
    if workers and threading.active_count() > 1 and "forkserver" in mp.get_all_start_methods():
        context = "forkserver"
    return torch.utils.data.DataLoader(
        PillowImageFolder(images, pipeline),
        batch_size=batch_size,
        shuffle=pipeline == "train",
        num_workers=workers,
        worker_init_fn=_worker_init,
        generator=g,
        persistent_workers=persistent and workers > 0,
        multiprocessing_context=context,
    )


__all__ = [
    "EpochResult",
    "FolderError",
    "ImageList",
    "PillowImageFolder",
    "baseline_loader",
    "format_table",
    "headrace_loader",
    "list_images",
    "peak_rss_mib",
    "pillow_eval",
    "pillow_train",
    "reset_peak_rss",
    "rrc_window",
    "run_epochs",
    "summarize",
    "tree_peak_rss_mib",
]
