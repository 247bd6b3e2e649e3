"""The ``headrace`` command: ``bench``, ``preview`` and ``info``.

``headrace bench`` runs a ResNet-50 style input pipeline over a folder of images (default: the
built-in sample data, generated on first use) and prints throughput, time per batch, CPU use
and peak memory; ``--compare`` also runs a PyTorch DataLoader + Pillow baseline doing the same
work; ``--threads T --workers N`` runs the loader in N worker processes of T threads each, and
``--scaling`` prints a table over thread and worker counts with the baseline (one line
``RESULT <configuration> <pipeline> <img/s> <cores>`` per run, for scripts).
``headrace preview`` saves a grid of augmented samples with their labels (or, with
``--pipeline speech``, of the log-mel spectrograms of audio files).
``headrace info`` says what headrace found on this machine.

Examples
--------
>>> from headrace.cli import build_parser
>>> args = build_parser().parse_args(["bench", "--pipeline", "train", "--limit", "64"])
>>> args.command, args.pipeline, args.batch_size, args.limit
('bench', 'train', 64, 64)
>>> args = build_parser().parse_args(["bench", "--threads", "2", "--workers", "4"])
>>> args.threads, args.workers, args.scaling
(2, 4, False)
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import sys
import threading
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from headrace._cli_support import DefaultStr, UsageError
from headrace._cli_support import bench_images as _images

PROG = "headrace"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``headrace`` command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="headrace: fast CPU-first data loading with DALI's dynamic-mode API.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    folder_help = "image folder, one sub-folder per class (default: built-in sample data)"

    b = sub.add_parser("bench", help="measure an input pipeline's throughput")
    b.add_argument("dir", nargs="?", metavar="DIR", help=folder_help)
    b.add_argument(
        "--pipeline",
        choices=("eval", "train"),
        default=DefaultStr("eval"),
        help="default: eval (with --scaling: both)",
    )
    b.add_argument("--batch-size", type=_positive, default=64)
    b.add_argument(
        "--threads",
        type=_positive,
        help="headrace threads (per worker process with --workers; default: CPUs available, "
        "divided among the workers)",
    )
    b.add_argument(
        "--workers",
        type=_non_negative,
        help="worker processes of the loader (default: pytorch.Loader's choice, 0 below 8 CPUs)",
    )
    b.add_argument(
        "--scaling",
        action="store_true",
        help="a table over thread and worker counts, with the DataLoader + Pillow baseline "
        "(each configuration in its own process; see also --limit, --epochs)",
    )
    b.add_argument("--result-line", action="store_true", help=argparse.SUPPRESS)
    b.add_argument("--baseline-only", action="store_true", help=argparse.SUPPRESS)
    b.add_argument("--ceiling-only", action="store_true", help=argparse.SUPPRESS)
    b.add_argument("--epochs", type=_positive, default=3, help="the first one counts as warm-up")
    b.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    b.add_argument(
        "--compare", action="store_true", help="also run a PyTorch DataLoader + Pillow baseline"
    )
    b.add_argument("--limit", type=_positive, help="use at most N images of the folder")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--no-progress", action="store_true", help="no progress bars")

    p = sub.add_parser("preview", help="save a grid of augmented samples with their labels")
    p.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help=folder_help[:-1] + "; with --pipeline speech: audio files, WAV/FLAC/OGG; with "
        "--pipeline detection: a COCO image folder, or one holding images/ and annotations.json)",
    )
    p.add_argument(
        "--pipeline",
        choices=("eval", "train", "speech", "detection"),
        default="train",
        help="speech: log-mel spectrograms of audio files; detection: SSD augmentation of a COCO "
        "data set with the boxes drawn (default: train)",
    )
    p.add_argument(
        "--annotations", metavar="FILE", help="with --pipeline detection: the COCO JSON file"
    )
    p.add_argument("--out", default="preview.png", help="output image (PNG or JPEG)")
    p.add_argument("--num", type=_positive, default=16, help="number of samples")
    p.add_argument("--seed", type=int, default=0)

    sub.add_parser("info", help="version, codecs, backends and threads found")
    return parser


def _audio_files(folder: str | os.PathLike[str] | None) -> Any:
    """The audio files of ``folder``: one sub-folder per class, or the files of a flat folder."""
    from headrace import _benchmark, sample_data

    root = folder if folder is not None else sample_data.audio_folder()
    path = Path(root).expanduser()
    if path.is_dir() and not any(e.is_dir() for e in os.scandir(path)):
        suffixes = {f.lstrip("*").lower() for f in _benchmark.AUDIO_FILTERS}
        flat = sorted(
            e.path for e in os.scandir(path)
            if e.is_file() and Path(e.name).suffix.lower() in suffixes
        )  # fmt: skip
        if flat:
            return _benchmark.ImageList(path, flat, [0] * len(flat), [path.name])
    try:
        return _benchmark.list_images(root, None, filters=_benchmark.AUDIO_FILTERS)
    except _benchmark.FolderError as e:
        raise UsageError(str(e)) from None


def _check_device(device: str) -> None:
    if device == "gpu":
        from headrace._core.device import Device

        if Device.gpu_count() < 1:
            raise UsageError("--device gpu: no CUDA device found (use --device cpu)")


# --- bench -----------------------------------------------------------------------------------
def cmd_bench(args: argparse.Namespace) -> int:
    """``headrace bench``: time the pipeline (and the baseline with ``--compare``)."""
    import headrace as ndd
    from headrace import _benchmark as bm

    _check_device(args.device)
    if args.scaling:
        from headrace._scaling import run_scaling

        return run_scaling(args)
    if args.result_line:
        from headrace._scaling import result_line

        return result_line(args)
    progress = not args.no_progress
    images = _images(args.dir, args.limit, progress)
    workers = _workers(args.workers)
    threads = args.threads or max(1, ndd.get_num_threads() // max(workers, 1))
    ndd.set_num_threads(threads)
    in_workers = f" in each of {workers} worker processes" if workers else ""
    print(
        f"{PROG} bench: {args.pipeline} pipeline, {len(images.paths)} images in "
        f"{len(images.classes)} classes from {images.root}\n"
        f"batch {args.batch_size}, {threads} threads{in_workers}, {args.epochs} epochs, "
        f"device {args.device}"
    )
    rows = []
    has_torch = bm.torch_available()
    if args.compare and not has_torch:
        print(f"{PROG} bench: error: --compare needs PyTorch (pip install torch)", file=sys.stderr)
        return 2
    if args.compare:  # first, so that its forked workers do not inherit headrace's memory
        loader = bm.baseline_loader(
            images, args.pipeline, batch_size=args.batch_size, workers=workers or threads,
            seed=args.seed,
        )  # fmt: skip
        res = bm.run_epochs(
            lambda: loader,
            args.epochs,
            count=lambda b: len(b[1]),
            total=lambda: len(loader),
            label="DataLoader+Pillow",
            progress=progress,
            children=True,
        )
        base = ("DataLoader+Pillow", bm.summarize(res), bm.peak_rss_mib(children=True))
    bm.reset_peak_rss()
    loader = bm.headrace_loader(
        images, args.pipeline, batch_size=args.batch_size, device=args.device, seed=args.seed,
        num_workers=workers, worker_threads=threads,
    )  # fmt: skip
    res = bm.run_epochs(
        lambda: loader,
        args.epochs,
        count=lambda b: b[0].shape[0],
        total=lambda: len(loader),
        label=PROG,
        progress=progress,
        children=bool(workers),
    )
    rows.append((PROG, bm.summarize(res), bm.tree_peak_rss_mib() if workers else bm.peak_rss_mib()))
    if workers:
        loader.close()
    if args.compare:
        rows.append(base)
    timed = "median of epochs 2-" + str(args.epochs) if args.epochs > 1 else "1 epoch"
    out = "torch tensors" if has_torch else "numpy arrays (install torch for torch tensors)"
    print(f"\n{bm.format_table(rows)}\n({timed}; output float32 NCHW {out})")
    if args.compare:
        ratio = rows[0][1].img_per_s / rows[1][1].img_per_s
        print(
            f"{PROG} is {ratio:.2f}x the DataLoader's throughput ({workers or threads} workers; "
            "its peak "
            "memory is the largest worker's)."
        )
    return 0


def _workers(requested: int | None) -> int:
    """The loader's worker count for ``--workers`` (its default when not given)."""
    if requested is not None:
        return requested
    from headrace._exec.workers import default_num_workers

    return default_num_workers()


# --- preview ---------------------------------------------------------------------------------
def make_grid(tiles: Sequence[Any], captions: Sequence[str], columns: int) -> Any:
    """Arrange equal-size HWC uint8 RGB tiles in a grid, each captioned under it.

    Examples
    --------
    >>> import numpy as np
    >>> make_grid([np.zeros((8, 8, 3), np.uint8)] * 3, ["a", "b", "c"], 2).shape
    (66, 22, 3)
    """
    import cv2
    import numpy as np

    h, w = tiles[0].shape[:2]
    pad, text_h = 2, 22
    rows = -(-len(tiles) // columns)
    cell_h, cell_w = h + text_h + pad, w + pad
    grid = np.full((rows * cell_h + pad, columns * cell_w + pad, 3), 24, np.uint8)
    for k, (tile, caption) in enumerate(zip(tiles, captions)):
        y, x = pad + (k // columns) * cell_h, pad + (k % columns) * cell_w
        grid[y : y + h, x : x + w] = tile
        cv2.putText(
            grid, caption, (x + 3, y + h + text_h - 6), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
            (235, 235, 235), 1, cv2.LINE_AA,
        )  # fmt: skip
    return grid


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")


def cmd_preview(args: argparse.Namespace) -> int:
    """``headrace preview``: run the pipeline on a few samples and save them as a grid."""
    import math

    import cv2

    import headrace as ndd
    from headrace import pipelines

    path = Path(args.out)
    if path.suffix.lower() not in _IMAGE_SUFFIXES:
        raise UsageError(f"--out: cannot write {path}: use a name ending in .png or .jpg")
    if not path.parent.is_dir():
        raise UsageError(f"--out: folder {path.parent} does not exist")
    if args.pipeline == "speech":
        return _preview_speech(args, path)
    if args.pipeline == "detection":
        return _preview_detection(args, path)
    images = _images(args.dir, None)
    n = min(args.num, len(images.paths))
    reader = ndd.readers.File(
        files=images.paths, labels=images.labels, random_shuffle=True, seed=args.seed
    )
    encoded, labels = next(iter(reader.next_epoch(batch_size=n)))
    fn = pipelines.get(args.pipeline)
    kwargs = {"rng": ndd.random.RNG(args.seed)} if args.pipeline == "train" else {}
    out, labels = fn(encoded, labels, **kwargs)
    tiles = [pipelines.denormalize(t.cpu()) for t in out.tensors]
    captions = [images.classes[int(t.cpu().item())] for t in labels.tensors]
    grid = make_grid(tiles, captions, columns=math.ceil(math.sqrt(n)))
    if not cv2.imwrite(str(path), cv2.cvtColor(grid, cv2.COLOR_RGB2BGR)):
        raise UsageError(f"--out: cannot write {path} (use a .png or .jpg name)")
    print(f"wrote {path}: {n} {args.pipeline}-pipeline samples from {images.root}")
    return 0


def _preview_speech(args: argparse.Namespace, path: Path) -> int:
    """``headrace preview --pipeline speech``: a grid of coloured log-mel spectrograms."""
    import math

    import cv2

    import headrace as ndd
    from headrace import pipelines

    files = _audio_files(args.dir)
    n = min(args.num, len(files.paths))
    reader = ndd.readers.File(
        files=files.paths, labels=files.labels, random_shuffle=True, seed=args.seed
    )
    encoded, labels = next(iter(reader.next_epoch(batch_size=n)))
    try:
        mel, labels = pipelines.speech_pipeline(encoded, labels)
        mel.evaluate()
    except ndd.DecodeError as e:  # a corrupt or unsupported file: name it, no traceback
        raise UsageError(str(e)) from None
    step_s = 160 / pipelines.SPEECH_SAMPLE_RATE  # the pipeline's window step
    tiles, captions = [], []
    for t, label in zip(mel.tensors, labels.tensors):
        ft = t.cpu()
        tiles.append(pipelines.spectrogram_image(ft))
        seconds = (ft.shape[1] - 1) * step_s
        captions.append(f"{files.classes[int(label.cpu().item())]} {seconds:.1f}s")
    grid = make_grid(tiles, captions, columns=math.ceil(math.sqrt(n)))
    if not cv2.imwrite(str(path), cv2.cvtColor(grid, cv2.COLOR_RGB2BGR)):
        raise UsageError(f"--out: cannot write {path} (use a .png or .jpg name)")
    print(
        f"wrote {path}: {n} log-mel spectrograms ({pipelines.SPEECH_NFILTER} bands, low "
        f"frequencies at the bottom) from {files.root}"
    )
    return 0


def _coco_paths(folder: str | None, annotations: str | None) -> tuple[Path, Path]:
    """The image folder and annotations file of ``preview --pipeline detection``."""
    from headrace import sample_data

    if folder is None and annotations is None:
        folder = str(sample_data.coco_folder())
    root = Path(folder if folder is not None else ".").expanduser()
    if annotations is None:
        if not (root / "annotations.json").is_file():
            raise UsageError(f"{root}: no annotations.json there; give the COCO JSON file with "
                             "--annotations FILE")  # fmt: skip
        return (root / "images" if (root / "images").is_dir() else root), root / "annotations.json"
    return root, Path(annotations).expanduser()


def _preview_detection(args: argparse.Namespace, path: Path) -> int:
    """``headrace preview --pipeline detection``: SSD-augmented images with their boxes drawn."""
    import math

    import cv2

    import headrace as ndd
    from headrace import pipelines

    root, ann = _coco_paths(args.dir, args.annotations)
    try:
        reader = ndd.readers.COCO(
            file_root=root, annotations_file=ann, ltrb=True, ratio=True, skip_empty=True,
            random_shuffle=True, seed=args.seed,
        )  # fmt: skip
        epoch = reader.next_epoch(batch_size=args.num, last_batch="partial")
        encoded, boxes, labels = next(iter(epoch))
        n = encoded.batch_size
        images, boxes, labels = pipelines.detection_pipeline(
            encoded, boxes, labels, encode=False, rng=ndd.random.RNG(args.seed)
        )
        images.evaluate()
    except (ndd.DecodeError, OSError, ValueError) as e:  # bad data: name it, no traceback
        raise UsageError(str(e)) from None
    tiles, captions = [], []
    for img, b in zip(images.tensors, boxes.tensors):
        tiles.append(pipelines.draw_boxes(pipelines.denormalize(img.cpu()), b.cpu()))
        captions.append(f"{b.shape[0]} box" + ("" if b.shape[0] == 1 else "es"))
    grid = make_grid(tiles, captions, columns=math.ceil(math.sqrt(n)))
    if not cv2.imwrite(str(path), cv2.cvtColor(grid, cv2.COLOR_RGB2BGR)):
        raise UsageError(f"--out: cannot write {path} (use a .png or .jpg name)")
    print(f"wrote {path}: {n} detection-pipeline samples with their boxes from {root}")
    return 0


# --- info ------------------------------------------------------------------------------------
def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _first_version(*dists: str) -> str | None:
    return next((v for d in dists if (v := _version(d)) is not None), None)


def info_lines() -> list[str]:
    """What ``headrace info`` prints: versions, codecs, backends, threads, cache.

    Examples
    --------
    >>> info_lines()[0].startswith("headrace ")
    True
    """
    import headrace as ndd
    from headrace import sample_data

    missing = "not installed"
    rows = [
        ("libjpeg-turbo (simplejpeg)", _version("simplejpeg") or missing),
        ("libjpeg-turbo (PyTurboJPEG)", _version("PyTurboJPEG") or missing),
        ("OpenCV", _first_version("opencv-python-headless", "opencv-python") or missing),
        ("Pillow", _version("pillow") or missing),
        ("soundfile", _version("soundfile") or missing),
        ("astropy (FITS reader)", _version("astropy") or missing),
        ("nvImageCodec (GPU decoding, CPU window decoding)", _nvimgcodec_version() or missing),
        ("CV-CUDA", _first_version("cvcuda-cu12", "cvcuda-cu13") or missing),
        ("lmdb (readers.Caffe, Caffe2)", _version("lmdb") or missing),
        ("protobuf (readers.Caffe, Caffe2, TFRecord)", _version("protobuf") or missing),
        ("google-crc32c (readers.TFRecord)", _version("google-crc32c") or missing),
        ("lz4 (decoders.inflate)", _version("lz4") or missing),
        ("PyAV (video readers and decoders)", _version("av") or missing),
        ("PyNvVideoCodec (GPU video decoding)", _version("PyNvVideoCodec") or missing),
    ]  # fmt: skip
    torch_v = _version("torch")
    cuda = "no (torch not installed)"
    if torch_v is not None:
        import torch

        if torch.cuda.is_available():
            n = torch.cuda.device_count()
            cuda = f"{n} device(s): {torch.cuda.get_device_name(0)} (CUDA {torch.version.cuda})"
        else:
            cuda = "no device" + ("" if torch.version.cuda else " (CPU-only torch build)")
    backends = [
        ("torch", torch_v or missing),
        ("CUDA", cuda),
        ("torchdata", _version("torchdata") or missing),
    ]
    if os.environ.get("HEADRACE_FAKE_GPU"):
        backends.append(("fake GPU", "on (HEADRACE_FAKE_GPU): 'gpu' runs on torch CPU tensors"))
    width = max(len(k) for k, _ in rows + backends)
    lines = [
        f"{PROG} {ndd.__version__}  (Python {platform.python_version()}, numpy "
        f"{_version('numpy')}, {platform.system()} {platform.machine()})",
        "codecs:",
        *(f"  {k:<{width}}  {v}" for k, v in rows),
        "backends:",
        *(f"  {k:<{width}}  {v}" for k, v in backends),
        f"threads: {ndd.get_num_threads()} (set with ndd.set_num_threads or HEADRACE_NUM_THREADS;"
        f" {len(os.sched_getaffinity(0))} CPUs available)",
        f"cache: {sample_data.cache_dir()} (HEADRACE_CACHE)",
        f"JPEG crops decode only the window: {_window_decoding()}",
    ]
    return lines


def _nvimgcodec_version() -> str | None:
    """nvImageCodec's version, saying so when headrace will not use it (older than 0.9)."""
    from headrace.codecs.jpeg_region import MIN_NVIMGCODEC, release

    v = _first_version("nvidia-nvimgcodec-cu12", "nvidia-nvimgcodec-cu13")
    if v is not None and release(v) < MIN_NVIMGCODEC:
        wanted = ".".join(map(str, MIN_NVIMGCODEC))
        return f"{v} (too old, not used: headrace needs >= {wanted})"
    return v


def _window_decoding() -> str:
    from headrace.codecs.jpeg_region import region_decoding

    if region_decoding():
        return "yes (nvImageCodec's CPU backend; HEADRACE_JPEG_ROI=0 turns it off)"
    if os.environ.get("HEADRACE_JPEG_ROI") == "0":
        return "no (HEADRACE_JPEG_ROI=0)"
    return "no (pip install headrace[jpeg-roi])"


def cmd_info(args: argparse.Namespace) -> int:
    """``headrace info``."""
    print("\n".join(info_lines()))
    return 0


COMMANDS = {"bench": cmd_bench, "preview": cmd_preview, "info": cmd_info}


def main(argv: Sequence[str | os.PathLike[str]] | None = None) -> int:
    """Entry point of the ``headrace`` console script; returns the exit status.

    Exit status: 0 on success, 2 for bad options or data (a one-line message, no traceback),
    130 when interrupted with Ctrl-C.
    """
    parser = build_parser()
    if argv is not None:  # paths may be given as os.PathLike (pathlib.Path)
        argv = [os.fspath(a) if isinstance(a, os.PathLike) else a for a in argv]
    args = parser.parse_args(argv)
    interrupted: list[bool] = []

    def on_sigint(signum: int, frame: Any) -> None:
        interrupted.append(True)
        raise KeyboardInterrupt

    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if main_thread else None
    try:
        try:
            status = COMMANDS[args.command](args)
        finally:  # a repeated or late Ctrl-C must not turn the clean exit into a kill
            if main_thread:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
        if not interrupted:
            return status
        # the KeyboardInterrupt was swallowed on its way (e.g. raised inside a finalizer)
    except UsageError as e:
        print(f"{PROG} {args.command}: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # bad data met by a pipeline (a corrupt image...): one line, named
        from headrace._core.errors import DecodeError

        if not isinstance(e, DecodeError):
            raise
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"{PROG} {args.command}: error: {first}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    finally:
        if main_thread and previous is not None and argv is not None:
            signal.signal(signal.SIGINT, previous)  # called as a function: restore
    print(f"\n{PROG} {args.command}: interrupted", file=sys.stderr)
    return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
