"""GPU decode throughput: ``ndd.decoders.image(..., device="gpu")`` with each available
``HEADRACE_GPU_DECODER`` backend, against nvImageCodec and torchvision's ``decode_jpeg`` called
directly on the same batches.

The JPEG files are read into memory first, so only decoding is timed (one row adds the
hand-off to one padded torch tensor); every timed run ends with ``torch.cuda.synchronize()``.
One line per configuration: ``RESULT <name> <img/s>`` (median over ``--reps``), then each
headrace row as a ratio of the faster direct decoder. Runs in well under a minute on one GPU
with the defaults. Without CUDA (``HEADRACE_FAKE_GPU=1``) only the host path and the CPU
decoder run.

    python bench/gpu_decode.py                       # 512 built-in sample images, batch 128
    python bench/gpu_decode.py DIR --num 2048 --reps 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def headrace_run(
    blobs: list[bytes], batch: int, backend: str | None, op: str = "image", torch_pad: bool = False
) -> Callable[[], None]:
    """Decode every batch with headrace (``backend=None``: on the CPU); ``torch_pad`` adds the
    hand-off a training loop makes (``.torch(pad=True)``: one padded tensor)."""
    import headrace as ndd

    arrays = [np.frombuffer(b, np.uint8) for b in blobs]
    batches = [ndd.batch(arrays[i : i + batch]) for i in range(0, len(arrays), batch)]
    fn = getattr(ndd.decoders, op)
    kw = {"device": "gpu"} if backend is not None else {}
    if op == "image_random_crop":
        kw["rng"] = ndd.random.RNG(seed=1)

    def run() -> None:
        if backend is not None:
            os.environ["HEADRACE_GPU_DECODER"] = backend
        for b in batches:
            out = fn(b, **kw)
            if torch_pad:
                out.torch(pad=True)
            else:
                out.evaluate()
        _sync()

    return run


def nvimgcodec_run(blobs: list[bytes], batch: int) -> Callable[[], None]:
    """``nvimgcodec.Decoder().decode(list_of_bytes)`` per batch (default backends)."""
    from nvidia import nvimgcodec

    dec = nvimgcodec.Decoder()

    def run() -> None:
        for i in range(0, len(blobs), batch):
            dec.decode(blobs[i : i + batch])
        _sync()

    return run


def torchvision_run(blobs: list[bytes], batch: int) -> Callable[[], None]:
    """``torchvision.io.decode_jpeg(list, device="cuda")`` per batch (batched nvJPEG)."""
    import torch
    from torchvision.io import decode_jpeg

    tensors = [torch.frombuffer(bytearray(b), dtype=torch.uint8) for b in blobs]

    def run() -> None:
        for i in range(0, len(tensors), batch):
            decode_jpeg(tensors[i : i + batch], device="cuda")
        _sync()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", help="image folder (default: built-in sample data)")
    parser.add_argument("--num", type=int, default=512, help="images to decode")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    import torch

    import headrace as ndd
    from headrace.backends.torch import gpu_decode

    cuda = torch.cuda.is_available()
    if not cuda:
        os.environ.setdefault("HEADRACE_FAKE_GPU", "1")
    if args.dir is None:
        from headrace import sample_data

        args.dir = str(sample_data.image_folder(num_images=args.num, progress=False))
    paths = sorted(Path(args.dir).glob("*/*.jp*g"))[: args.num]
    if not paths:
        parser.error(f"no JPEG files in the sub-folders of {args.dir}")
    blobs = [p.read_bytes() for p in paths]
    ndd.set_num_threads(args.threads)
    where = f"CUDA: {torch.cuda.get_device_name()}" if cuda else "no CUDA (fake GPU)"
    print(f"{len(blobs)} JPEGs, batch {args.batch_size}, {args.threads} threads, {where}")

    impls: dict[str, Callable[[], None]] = {}
    direct: list[str] = []
    if cuda:
        direct_impls = {"nvimgcodec-direct": nvimgcodec_run, "torchvision-direct": torchvision_run}
        for name, make in direct_impls.items():
            try:
                impls[name] = make(blobs, args.batch_size)
                impls[name]()  # fails here when the library cannot run
                direct.append(name)
            except Exception as e:
                impls.pop(name, None)
                print(f"RESULT {name} FAILED {type(e).__name__}: {str(e)[:160]}")
    backends = [
        b for b in gpu_decode.BACKENDS if b == "host" or gpu_decode._AVAILABLE[b]() is not None
    ]
    if not cuda:
        backends = ["host"]
    for b in backends:
        impls[f"headrace-gpu-{b}"] = headrace_run(blobs, args.batch_size, b)
        impls[f"headrace-gpu-{b}-random-crop"] = headrace_run(
            blobs, args.batch_size, b, "image_random_crop"
        )
    impls[f"headrace-gpu-{backends[0]}-torch-pad"] = headrace_run(
        blobs, args.batch_size, backends[0], torch_pad=True
    )
    impls["headrace-cpu"] = headrace_run(blobs, args.batch_size, None)

    # One configuration at a time (a user runs one decoder): switching between GPU decoders
    # costs each of them a re-initialisation that interleaved repetitions would measure.
    times: dict[str, list[float]] = {k: [] for k in impls}
    for key, fn in impls.items():
        fn()  # warm-up: decoders, pinned memory, thread pools
        for _ in range(args.reps):
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
    rates = {k: len(blobs) / statistics.median(ts) for k, ts in times.items()}
    for k, r in rates.items():
        print(f"RESULT {k} {r:.0f} img/s")
    if direct:
        best = max(direct, key=lambda k: rates[k])
        for k, r in rates.items():
            if k.startswith("headrace"):
                print(f"RATIO {k} / {best}: {r / rates[best]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
