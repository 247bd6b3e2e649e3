"""Read TFRecord files of ``tf.train.Example`` records: images and labels, sharded and shuffled.

What it does
------------
1. Writes a few TFRecord files into a temporary folder: each record holds a JPEG-encoded image
   (``image/encoded``), an int64 label and a float32 bounding box, as TensorFlow's
   ``tf.train.Example`` (built here with ``protobuf``; TensorFlow's own writer gives the same
   bytes).
2. Reads them with ``ndd.readers.TFRecord`` without index files (each file is scanned once and
   its index cached next to it), decodes the images and resizes them, in batches.
3. Reads the same data as two shards with ``shuffle_after_epoch`` (a new file order per epoch,
   identical on both ranks) and shows the shards cover the data set exactly once.

Run it
------
``python examples/tfrecord_reading.py`` (needs ``pip install headrace[tfrecord]``).
"""

from __future__ import annotations

import argparse
import os
import tempfile

import cv2
import numpy as np

import headrace as ndd
import headrace.tfrecord as tfrec
from headrace.readers._example_proto import example_class
from headrace.readers.tfrecord_index import masked_crc


def write_tfrecord(path: str, records: list[dict[str, object]]) -> None:
    """One framed, checksummed ``tf.train.Example`` per record."""
    Example = example_class()
    with open(path, "wb") as f:
        for rec in records:
            ex = Example()
            feats = ex.features.feature
            feats["image/encoded"].bytes_list.value.append(rec["jpeg"])  # type: ignore[arg-type]
            feats["image/class/label"].int64_list.value.append(rec["label"])  # type: ignore[arg-type]
            feats["image/object/bbox"].float_list.value.extend(rec["bbox"])  # type: ignore[arg-type]
            data = ex.SerializeToString()
            head = len(data).to_bytes(8, "little")
            f.write(head + masked_crc(head).to_bytes(4, "little"))
            f.write(data + masked_crc(data).to_bytes(4, "little"))


def make_dataset(folder: str, files: int, per_file: int) -> list[str]:
    rng = np.random.default_rng(0)
    paths = []
    for f in range(files):
        records = []
        for k in range(per_file):
            label = f * per_file + k
            img = rng.integers(0, 256, (48 + 8 * (k % 3), 64, 3), dtype=np.uint8)
            ok, jpeg = cv2.imencode(".jpg", img)
            assert ok
            records.append({"jpeg": jpeg.tobytes(), "label": label, "bbox": [0.1, 0.2, 0.5, 0.9]})
        paths.append(os.path.join(folder, f"train-{f:05d}-of-{files:05d}.tfrecord"))
        write_tfrecord(paths[-1], records)
    return paths


FEATURES = {
    "image/encoded": tfrec.FixedLenFeature((), tfrec.string, ""),
    "image/class/label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
    "image/object/bbox": tfrec.VarLenFeature([4], tfrec.float32, 0.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--per-file", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        paths = make_dataset(folder, args.files, args.per_file)
        total = args.files * args.per_file

        reader = ndd.readers.TFRecord(path=paths, features=FEATURES, random_shuffle=True, seed=1)
        seen = []
        for step, batch in enumerate(reader.next_epoch(batch_size=args.batch_size)):
            images = ndd.resize(ndd.decoders.image(batch["image/encoded"]), size=[32, 32])
            labels = [int(np.asarray(t)[0]) for t in batch["image/class/label"].tensors]
            boxes = batch["image/object/bbox"].shape
            seen += labels
            if step == 0:
                print(f"first batch: image {images.shape[0]}, boxes {boxes[0]}, labels {labels}")
        cached = sum(os.path.exists(p + ".headrace-idx") for p in paths)
        once = sorted(seen) == list(range(total))
        print(f"epoch: {len(seen)} records of {total}, each once: {once}")
        print(f"indexes built and cached next to the data: {cached} of {len(paths)}")

        shards = [
            ndd.readers.TFRecord(
                path=paths,
                features=FEATURES,
                num_shards=2,
                shard_id=s,
                shuffle_after_epoch=True,
                last_batch="partial",
            )
            for s in range(2)
        ]
        for epoch in range(2):
            parts = [
                [
                    int(np.asarray(t)[0])
                    for b in r.next_epoch(batch_size=args.batch_size)
                    for t in b["image/class/label"].tensors
                ]
                for r in shards
            ]
            files = [p[0] // args.per_file for p in parts]
            whole = sorted(parts[0] + parts[1]) == list(range(total))
            print(f"sharded epoch {epoch}: shards start in files {files}, cover all once: {whole}")


if __name__ == "__main__":
    main()
