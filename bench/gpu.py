"""GPU throughput: headrace ``device="gpu"`` against what users write by hand on the same GPU.

Rows (img/s, median of the timed epochs after one warm-up; one run, so ratios are fair):

* ``eval``  — decode -> resize shorter 256 (antialiased) -> centre crop 224 -> normalize (NCHW)
* ``train`` — random-crop decode (area 0.08-1, ratio 3/4-4/3) -> 224x224 -> mirror -> normalize
* ``decode`` — decoding only (files already in memory)
* ``ops``   — resize + crop_mirror_normalize on images already decoded on the GPU

Competitors: torchvision ``decode_jpeg(device="cuda")`` (batched nvJPEG) + v2 transforms on CUDA,
and nvImageCodec's batched decoder + the same v2 transforms (each only when installed). The last
lines print headrace's ratio to the best competitor of every row.

    python bench/gpu.py --data DIR            # a folder of class folders of JPEGs
    python bench/gpu.py --images 2048         # generate sample data first (in /tmp)

Without CUDA (or with ``HEADRACE_FAKE_GPU=1``) it still runs — useful to check the script — but
the figures then mean nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
RESULTS: dict[tuple[str, str], float] = {}


def list_files(root: str) -> list[str]:
    """Every file under the class folders of ``root``, sorted."""
    out = []
    for c in sorted(os.listdir(root)):
        d = os.path.join(root, c)
        if os.path.isdir(d):
            out += [os.path.join(d, f) for f in sorted(os.listdir(d))]
    return out


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def measure(name: str, row: str, n: int, epoch: Callable[[], Any], reps: int) -> None:
    """Time ``epoch`` (processing ``n`` images) ``reps`` times; print and record the median."""
    try:
        rates = []
        for _ in range(reps):
            sync()
            t0 = time.perf_counter()
            epoch()
            sync()
            rates.append(n / (time.perf_counter() - t0))
        med = statistics.median(rates[1:]) if len(rates) > 1 else rates[0]
        RESULTS[(row, name)] = med
        print(f"RESULT {row} {name} {med:.0f} img/s {[round(r) for r in rates]}", flush=True)
    except Exception as e:  # one failing configuration must not hide the others
        print(f"RESULT {row} {name} FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)


def v2_transforms(variant: str) -> Any:
    from torchvision.transforms import v2

    if variant == "eval":
        return v2.Compose([v2.Resize(256, antialias=True), v2.CenterCrop(224)])
    return v2.Compose([v2.RandomResizedCrop(224, antialias=True), v2.RandomHorizontalFlip()])


def v2_finish(imgs: list[Any], tf: Any) -> Any:
    """Per-image v2 transforms, stack, normalize (what a torchvision user writes)."""
    import torch

    mean = torch.tensor(MEAN, device="cuda").view(1, 3, 1, 1)
    std = torch.tensor(STD, device="cuda").view(1, 3, 1, 1)
    return (torch.stack([tf(im) for im in imgs]).float() - mean) / std


def headrace_pipeline(variant: str, batches: list[Any], **decoder: Any) -> Callable[[], None]:
    import headrace as ndd

    def epoch() -> None:
        for jpegs in batches:
            if variant == "eval":
                img = ndd.decoders.image(jpegs, device="gpu", **decoder)
                img = ndd.resize(img, resize_shorter=256)
                img = ndd.crop_mirror_normalize(img, crop=(224, 224), mean=MEAN, std=STD,
                                                dtype=ndd.float32, output_layout="CHW")
            else:
                img = ndd.decoders.image_random_crop(jpegs, device="gpu", random_area=[0.08, 1.0],
                                                     random_aspect_ratio=[3 / 4, 4 / 3])
                img = ndd.resize(img, size=(224, 224))
                flip = ndd.random.coin_flip(probability=0.5, batch_size=jpegs.batch_size)
                img = ndd.crop_mirror_normalize(img, mirror=flip, mean=MEAN, std=STD,
                                                dtype=ndd.float32, output_layout="CHW")
            img.torch()

    return epoch


def torchvision_pipeline(variant: str, tensors: list[list[Any]]) -> Callable[[], None]:
    from torchvision.io import decode_jpeg

    tf = v2_transforms(variant)
    return lambda: [v2_finish(decode_jpeg(b, device="cuda"), tf) for b in tensors]


def nvimgcodec_pipeline(variant: str, blobs: list[list[bytes]]) -> Callable[[], None]:
    import torch
    from nvidia import nvimgcodec

    dec = nvimgcodec.Decoder()
    tf = v2_transforms(variant)

    def epoch() -> None:
        for b in blobs:
            imgs = [torch.as_tensor(im, device="cuda").permute(2, 0, 1) for im in dec.decode(b)]
            v2_finish(imgs, tf)

    return epoch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", help="folder of class folders of JPEGs")
    ap.add_argument("--images", type=int, default=2048, help="sample images to make without --data")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--reps", type=int, default=4, help="epochs per row (the first is warm-up)")
    ap.add_argument("--threads", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--rows", default="decode,ops,eval,train")
    ap.add_argument("--profile", action="store_true",
                    help="also: the eval pipeline with hw_decoder_load=1.0, and one eval epoch "
                         "under torch.profiler (the busiest kernels and host calls)")
    a = ap.parse_args()

    import torch

    import headrace as ndd

    ndd.set_num_threads(a.threads)
    data = a.data
    if data is None:
        from headrace import sample_data

        data = sample_data.image_folder("/tmp/headrace_gpu_bench", num_images=a.images,
                                        num_classes=16, progress=False)
    files = list_files(data)
    with ThreadPoolExecutor(a.threads) as pool:
        raw = list(pool.map(lambda p: open(p, "rb").read(), files))
    n, bs = len(raw), a.batch
    blobs = [raw[s : s + bs] for s in range(0, n, bs)]
    tens = [[torch.frombuffer(bytearray(x), dtype=torch.uint8) for x in b] for b in blobs]
    hr = [ndd.batch([np.frombuffer(x, np.uint8) for x in b]) for b in blobs]
    print(f"# {n} images, batch {bs}, {a.threads} threads, torch {torch.__version__}, "
          f"cuda {torch.cuda.is_available()}", flush=True)
    rows = a.rows.split(",")
    have_tv = have_nvi = torch.cuda.is_available()  # the competitors need a real GPU
    try:
        import torchvision  # noqa: F401
    except ImportError:
        have_tv = False
    try:
        from nvidia import nvimgcodec
    except ImportError:
        have_nvi = False

    if "decode" in rows:
        measure("headrace", "decode",
                n, lambda: [ndd.decoders.image(b, device="gpu").evaluate() for b in hr], a.reps)
        if have_tv:
            from torchvision.io import decode_jpeg

            measure("torchvision-nvjpeg", "decode", n,
                    lambda: [decode_jpeg(b, device="cuda") for b in tens], a.reps)
        if have_nvi:
            dec = nvimgcodec.Decoder()
            measure("nvimgcodec", "decode", n, lambda: [dec.decode(b) for b in blobs], a.reps)
    if "ops" in rows:
        pre = [ndd.decoders.image(b, device="gpu").evaluate() for b in hr]

        def hr_ops() -> None:
            for b in pre:
                x = ndd.resize(b, resize_shorter=256)
                ndd.crop_mirror_normalize(x, crop=(224, 224), mean=MEAN, std=STD,
                                          dtype=ndd.float32, output_layout="CHW").torch()

        measure("headrace", "ops", n, hr_ops, a.reps)
        if have_tv:
            chw = [[s.torch().permute(2, 0, 1) for s in b.tensors] for b in pre]
            tf = v2_transforms("eval")
            measure("torchvision-v2", "ops", n, lambda: [v2_finish(b, tf) for b in chw], a.reps)
    for variant in ("eval", "train"):
        if variant not in rows:
            continue
        measure("headrace", variant, n, headrace_pipeline(variant, hr), a.reps)
        if have_tv:
            measure("torchvision-nvjpeg", variant, n, torchvision_pipeline(variant, tens), a.reps)
        if have_nvi:
            measure("nvimgcodec", variant, n, nvimgcodec_pipeline(variant, blobs), a.reps)
    if a.profile:
        profile(hr, n, a.reps)
    for row in rows:
        ours = RESULTS.get((row, "headrace"))
        others = {k[1]: v for k, v in RESULTS.items()
                  if k[0] == row and not k[1].startswith("headrace")}  # fmt: skip
        if ours and others:
            best = max(others, key=others.__getitem__)
            print(f"RATIO {row}: headrace / {best} = {ours / others[best]:.2f}x "
                  f"({ours:.0f} vs {others[best]:.0f} img/s)", flush=True)


def profile(hr: list[Any], n: int, reps: int) -> None:
    """The eval pipeline with all JPEGs on the hardware decoder, then one eval epoch under
    torch.profiler: where the GPU time goes, and whether decoding overlaps the operators."""
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    measure("headrace-hw1.0", "eval", n, headrace_pipeline("eval", hr, hw_decoder_load=1.0), reps)
    epoch = headrace_pipeline("eval", hr)
    epoch()
    cuda = torch.cuda.is_available()
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sync()
    t0 = time.perf_counter()
    with torch_profile(activities=acts) as prof:
        epoch()
        sync()
    wall = time.perf_counter() - t0
    key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    print(f"# profiled eval epoch: {n / wall:.0f} img/s under the profiler", flush=True)
    print(prof.key_averages().table(sort_by=key, row_limit=18, max_name_column_width=60),
          flush=True)


if __name__ == "__main__":
    main()
