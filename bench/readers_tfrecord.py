"""TFRecord reading throughput: headrace vs the reference on the same files (records/s).

Writes ``--files`` TFRecord files of ``--records`` records in total into a temporary folder
(each record: ``--image-kb`` KiB of encoded-image bytes, an int64 label and four float32 box
coordinates), builds their index files once with ``tfrecord2idx``, then times full epochs of the
same dynamic-mode loop with ``import headrace as ndd`` and with the reference
(``nvidia.dali.experimental.dynamic``), both with ``--threads`` threads and batch ``--batch-size``.
The first epoch is warm-up (page cache, lazy set-up); the table shows the median of the others,
the process CPU time per record (all threads), and the ratio headrace / reference: the median of
the ratios of back-to-back epochs (each pair sees about the same machine load, which matters on a
shared machine), and the ratio of the medians.

    python bench/readers_tfrecord.py
    python bench/readers_tfrecord.py --records 20000 --image-kb 64 --epochs 5
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import tempfile
import time
import warnings
from typing import Any

import numpy as np


def write_data(folder: str, files: int, records: int, image_kb: int) -> tuple[list[str], list[str]]:
    from headrace.readers._example_proto import example_class
    from headrace.readers.tfrecord_index import main as tfrecord2idx
    from headrace.readers.tfrecord_index import masked_crc

    Example = example_class()
    rng = np.random.default_rng(0)
    paths, indexes = [], []
    per_file = -(-records // files)
    for f in range(files):
        path = os.path.join(folder, f"train-{f:05d}.tfrecord")
        with open(path, "wb") as out:
            for k in range(min(per_file, records - f * per_file)):
                ex = Example()
                feats = ex.features.feature
                size = image_kb * 1024 + int(rng.integers(0, 1024))
                feats["image/encoded"].bytes_list.value.append(rng.bytes(size))
                feats["image/class/label"].int64_list.value.append(f * per_file + k)
                feats["image/object/bbox"].float_list.value.extend([0.1, 0.2, 0.6, 0.9])
                data = ex.SerializeToString()
                head = len(data).to_bytes(8, "little")
                out.write(head + masked_crc(head).to_bytes(4, "little"))
                out.write(data + masked_crc(data).to_bytes(4, "little"))
        assert tfrecord2idx([path, path + ".idx"]) == 0
        paths.append(path)
        indexes.append(path + ".idx")
    return paths, indexes


def make_epoch(module: str, paths: list[str], indexes: list[str], args: argparse.Namespace) -> Any:
    """The same dynamic-mode loop for headrace and the reference: ``epoch()`` -> seconds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ndd = importlib.import_module(module)
        tfrec = importlib.import_module(
            "headrace.tfrecord" if module == "headrace" else "nvidia.dali.tfrecord"
        )
    ndd.set_num_threads(args.threads)
    features = {
        "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
        "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
        "image/object/bbox": tfrec.VarLenFeature([4], tfrec.float32, 0.0),
    }
    reader = ndd.readers.TFRecord(path=paths, index_path=indexes, features=features,
                                  random_shuffle=True, seed=1)  # fmt: skip

    def epoch() -> tuple[float, float]:
        n = 0
        t0, c0 = time.perf_counter(), time.process_time()
        for batch in reader.next_epoch(batch_size=args.batch_size):
            for out in batch.values():
                out.evaluate()
            n += batch["image/class/label"].batch_size
        # both readers top the last batch up with the next epoch's records ("fill")
        assert n == -(-args.records // args.batch_size) * args.batch_size, (module, n)
        return time.perf_counter() - t0, time.process_time() - c0

    return epoch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--records", type=int, default=8000)
    parser.add_argument("--image-kb", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths, indexes = write_data(folder, args.files, args.records, args.image_kb)
        mb = sum(os.path.getsize(p) for p in paths) / 2**20
        print(
            f"{args.records} records in {args.files} files ({mb:.0f} MiB), batch "
            f"{args.batch_size}, {args.threads} threads, median of {args.epochs - 1} epochs"
        )
        epochs = {"headrace": make_epoch("headrace", paths, indexes, args)}
        try:
            epochs["reference"] = make_epoch(
                "nvidia.dali.experimental.dynamic", paths, indexes, args
            )
        except ImportError as e:
            print(f" reference: skipped ({e})")
        times: dict[str, list[float]] = {name: [] for name in epochs}
        cpu: dict[str, list[float]] = {name: [] for name in epochs}
        for _ in range(args.epochs):  # alternate, so both see the same machine load
            for name, epoch in epochs.items():
                wall, used = epoch()
                times[name].append(wall)
                cpu[name].append(used)
        report(times, cpu, -(-args.records // args.batch_size) * args.batch_size)


def report(times: dict[str, list[float]], cpu: dict[str, list[float]], records: int) -> None:
    """Print records/s per side and the ratios (the first epoch of each side is warm-up)."""
    rates = {}
    for name, t in times.items():
        rates[name] = records / statistics.median(t[1:] or t)
        used = statistics.median(cpu[name][1:] or cpu[name]) / records * 1e6
        print(f"{name:>10}: {rates[name]:10.0f} records/s, {used:5.1f} us CPU/record  (epochs: "
              + ", ".join(f"{records / x:.0f}" for x in t) + ")")  # fmt: skip
    if len(rates) == 2:
        h, r = times["headrace"][1:], times["reference"][1:]
        pairs = statistics.median(b / a for a, b in zip(h, r)) if h else float("nan")
        print(
            f"     ratio: {pairs:.2f}x (headrace / reference, median of back-to-back epochs; "
            f"ratio of medians {rates['headrace'] / rates['reference']:.2f}x)"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
