"""Training data in containers: webdataset tar shards and MXNet RecordIO files.

What it does
------------
1. Encodes a few small JPEG images with a class label each and stores them twice: as webdataset
   shards (``<key>.jpg`` + ``<key>.cls`` members, written with ``tarfile``, one index file per
   shard from ``wds2idx``) and as one MXNet RecordIO file (``.rec`` + ``.idx``, written with the
   RecordIO framing below).
2. Reads the shards with ``readers.Webdataset`` (two ranks, shuffled, int32 labels straight
   from the ``.cls`` bytes) and the RecordIO file with ``readers.MXNet``, decodes the images
   and checks that both containers yield the same (image, label) pairs.

Run it
------
``python examples/record_formats.py`` (data goes to a temporary folder), or
``python examples/record_formats.py --images 64 --shards 4 --batch-size 8``.
"""

from __future__ import annotations

import argparse
import io
import struct
import tarfile
import tempfile
from pathlib import Path

import cv2
import numpy as np

import headrace as ndd
from headrace.readers.wds2idx import create_index

MAGIC = struct.pack("<I", 0xCED7230A)


def make_images(n: int) -> list[tuple[bytes, int]]:
    """``n`` (JPEG bytes, label) pairs: a flat colour per label, with a gradient."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        label = int(rng.integers(0, 5))
        img = np.zeros((24 + i % 5, 32, 3), np.uint8)
        img[:] = (label * 50, 255 - label * 50, 100)
        img[:, :, 2] = np.linspace(0, 255, 32, dtype=np.uint8)
        ok, jpg = cv2.imencode(".jpg", img)
        assert ok
        out.append((jpg.tobytes(), label))
    return out


def write_shards(folder: Path, data: list[tuple[bytes, int]], shards: int) -> list[Path]:
    paths = []
    for s in range(shards):
        path = folder / f"train-{s:04d}.tar"
        with tarfile.open(path, "w") as tf:
            for i in range(s, len(data), shards):
                jpg, label = data[i]
                for ext, blob in (("jpg", jpg), ("cls", label.to_bytes(4, "little"))):
                    info = tarfile.TarInfo(f"{i:06d}.{ext}")
                    info.size = len(blob)
                    tf.addfile(info, io.BytesIO(blob))
        create_index(path, path.with_suffix(".idx"))
        paths.append(path)
    return paths


def write_recordio(rec: Path, idx: Path, data: list[tuple[bytes, int]]) -> None:
    """MXNet's framing: magic, length word, IRHeader (flag, label, ids), image, 4-byte padding.
    (A payload holding the magic number at an aligned position is split into parts.)"""
    out, lines = bytearray(), []
    for key, (jpg, label) in enumerate(data):
        lines.append(f"{key}\t{len(out)}\n")
        payload = struct.pack("<IfQQ", 0, float(label), key, 0) + jpg
        parts, start = [], 0
        for i in range(0, len(payload) - 3, 4):
            if payload[i : i + 4] == MAGIC:
                parts.append(payload[start:i])
                start = i + 4
        parts.append(payload[start:])
        for k, part in enumerate(parts):
            flag = 0 if len(parts) == 1 else 1 if k == 0 else 3 if k == len(parts) - 1 else 2
            out += MAGIC + struct.pack("<I", (flag << 29) | len(part)) + part
            out += b"\0" * (-len(part) % 4)
    rec.write_bytes(bytes(out))
    idx.write_text("".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=24)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=4)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="headrace-records-"))
    data = make_images(args.images)
    shards = write_shards(folder, data, args.shards)
    write_recordio(folder / "train.rec", folder / "train.idx", data)
    print(f"wrote {len(data)} images: {len(shards)} tar shards with index files, 1 RecordIO file")

    from_tar: dict[bytes, int] = {}
    for rank in range(2):
        reader = ndd.readers.Webdataset(
            paths=shards, index_paths=[p.with_suffix(".idx") for p in shards],
            ext=["jpg", "cls"], dtypes=[ndd.uint8, ndd.int32], missing_component_behavior="error",
            num_shards=2, shard_id=rank, random_shuffle=True, seed=42, last_batch="partial",
        )  # fmt: skip
        n = 0
        for jpegs, labels in reader.next_epoch(batch_size=args.batch_size):
            images = ndd.decoders.image(jpegs)
            for jpg, img, lab in zip(jpegs, images, labels):
                from_tar[np.asarray(jpg).tobytes()] = int(np.asarray(lab)[0])
                assert np.asarray(img).shape[2] == 3
            n += len(list(labels))
        shapes = images.shape[:2]
        print(f"webdataset rank {rank}: {n} samples, image shapes of its last batch {shapes}")

    reader = ndd.readers.MXNet(path=folder / "train.rec", index_path=folder / "train.idx")
    same = 0
    for jpegs, labels in reader.next_epoch(batch_size=args.batch_size):
        images = ndd.decoders.image(jpegs)
        for jpg, lab in zip(jpegs, labels):
            same += from_tar[np.asarray(jpg).tobytes()] == int(np.asarray(lab)[0])
    print(f"recordio: {reader.get_metadata()['epoch_size']} records, labels float32")
    print(f"both containers agree on {same}/{len(data)} (image, label) pairs")


if __name__ == "__main__":
    main()
