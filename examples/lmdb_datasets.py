"""Caffe and Caffe2 LMDB datasets, region decoding and LZ4-compressed tensors.

What it does
------------
1. Writes two small LMDB databases into a temporary folder, the way Caffe and Caffe2 tools
   store them: a Caffe one (``Datum`` records: a PNG and a class label) and a Caffe2 one
   (``TensorProtos`` records: a PNG, the active classes of a multi-label sample and a bounding
   box).
2. Reads the Caffe database with ``readers.Caffe`` (shuffled, two shards) and decodes the
   centre of each image with ``decoders.image_slice``.
3. Reads the Caffe2 database with ``readers.Caffe2`` (``label_type=1``: multi-hot labels) and
   cuts each image to its bounding box, again with ``decoders.image_slice``.
4. Stores short clips as LZ4-compressed frames and restores them with ``decoders.inflate``.

Run it
------
``python examples/lmdb_datasets.py`` (needs ``pip install headrace[lmdb,lz4]``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import cv2
import lmdb
import lz4.block
import numpy as np

import headrace as ndd
from headrace.readers._caffe_protos import INT32, STRING, messages

N = 12
CLASSES = 5


def image(i: int) -> np.ndarray:
    """A 40x60 RGB test card whose colour encodes ``i``."""
    img = np.zeros((40, 60, 3), np.uint8)
    img[..., 0] = 20 * (i % CLASSES)
    img[10:30, 15:45] = (255, 255, 255)
    return img


def png(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img[..., ::-1])
    assert ok
    return buf.tobytes()


def write_databases(root: Path) -> tuple[Path, Path]:
    m = messages()
    caffe, caffe2 = root / "caffe_lmdb", root / "caffe2_lmdb"
    with lmdb.open(str(caffe), map_size=1 << 24) as env, env.begin(write=True) as txn:
        for i in range(N):
            datum = m.Datum(data=png(image(i)), label=i % CLASSES, encoded=True)
            txn.put(f"{i:06d}".encode(), datum.SerializeToString())
    with lmdb.open(str(caffe2), map_size=1 << 24) as env, env.begin(write=True) as txn:
        for i in range(N):
            record = m.TensorProtos(
                protos=[
                    m.TensorProto(data_type=STRING, string_data=[png(image(i))]),
                    m.TensorProto(data_type=INT32, int32_data=[i % CLASSES, (i + 2) % CLASSES]),
                    m.TensorProto(data_type=INT32, int32_data=[15, 10, 30, 20]),  # x, y, w, h
                ]
            )
            txn.put(f"{i:06d}".encode(), record.SerializeToString())
    return caffe, caffe2


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        caffe, caffe2 = write_databases(Path(tmp))

        seen = []
        for shard in range(2):
            reader = ndd.readers.Caffe(path=caffe, random_shuffle=True, seed=7, num_shards=2,
                                       shard_id=shard, last_batch="partial")  # fmt: skip
            white = True
            for encoded, labels in reader.next_epoch(batch_size=4):
                centre = ndd.decoders.image_slice(
                    encoded, rel_start=[0.25, 0.25], rel_shape=[0.5, 0.5]
                )
                white = white and all(np.asarray(t).min() == 255 for t in centre.tensors)
                seen += [int(np.asarray(t)[0]) for t in labels.tensors]
            print(
                f"Caffe shard {shard}: centre shape {centre.tensors[0].shape}, all white: {white}"
            )
        print(f"Caffe labels over both shards: {sorted(seen)}")

        reader = ndd.readers.Caffe2(path=caffe2, label_type=1, num_labels=CLASSES, bbox=True)
        encoded, multi_hot, boxes = next(iter(reader.next_epoch(batch_size=3)))
        anchor = ndd.batch([np.asarray(b)[:2] for b in boxes.tensors])
        extent = ndd.batch([np.asarray(b)[2:] for b in boxes.tensors])
        crops = ndd.decoders.image_slice(encoded, anchor, extent)  # integer inputs: pixels
        print(f"Caffe2 multi-hot labels: {[np.asarray(t).tolist() for t in multi_hot.tensors]}")
        print(f"Caffe2 boxes cut out: {[t.shape for t in crops.tensors]}")

    clips = [np.stack([image(i + k) for k in range(3)]) for i in range(2)]
    blobs, sizes = [], []
    for clip in clips:
        frames = [lz4.block.compress(f.tobytes(), store_size=False) for f in clip]
        blobs.append(np.frombuffer(b"".join(frames), np.uint8))
        sizes.append(np.array([len(f) for f in frames], np.int32))
    restored = ndd.decoders.inflate(
        ndd.batch(blobs), shape=[40, 60, 3], chunk_sizes=ndd.batch(sizes), layout="HWC"
    )
    raw = sum(c.nbytes for c in clips)
    same = all(np.array_equal(np.asarray(t), c) for t, c in zip(restored.tensors, clips))
    packed = sum(b.size for b in blobs)
    shape = restored.tensors[0].shape
    print(f"inflate: {shape} {restored.layout}, {raw} bytes from {packed}, identical: {same}")


if __name__ == "__main__":
    main()
