"""Patches of 3-D volumes from ``.npy`` files, read without loading whole volumes.

What it does
------------
1. Writes a few small 3-D "scans" (``np.save``; one of them Fortran-ordered) to a temporary
   folder.
2. Reads a fixed 16x16x16 region of interest of every scan with ``readers.Numpy`` (the files
   are memory mapped: only the region is read), sharded over two ranks, shuffled.
3. Reads a region reaching past the border with ``out_of_bounds_policy="pad"``.
4. Decodes the same files from their bytes with ``decoders.numpy`` and checks the patches equal
   the corresponding slices of the full arrays.

Run it
------
``python examples/numpy_volumes.py`` (prints one line per step).
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import headrace as ndd


def write_scans(folder: str, count: int, size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    scans = []
    for i in range(count):
        vol = rng.integers(0, 4096, size=(size, size + 8, size + 16), dtype=np.int16)
        np.save(
            os.path.join(folder, f"scan_{i:02d}.npy"), np.asfortranarray(vol) if i == 0 else vol
        )
        scans.append(vol)
    return scans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=6)
    parser.add_argument("--size", type=int, default=48)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scans = write_scans(folder, args.scans, args.size)

        # 1. a fixed ROI, two shards, shuffled within the shard
        seen = 0
        for rank in range(2):
            reader = ndd.readers.Numpy(
                file_root=folder, roi_start=[8, 8, 8], roi_shape=[16, 16, 16],
                num_shards=2, shard_id=rank, random_shuffle=True, seed=42,
            )  # fmt: skip
            for (patches,) in reader.next_epoch(batch_size=2):
                for patch, src in zip(patches.torch(), patches._sources):
                    i = int(os.path.basename(src)[5:7])
                    assert np.array_equal(patch.numpy(), scans[i][8:24, 8:24, 8:24])
                    seen += 1
            print(f"rank {rank}: {reader.get_metadata()['epoch_size']} scans, shard read")
        print(f"roi patches: {seen} of shape (16, 16, 16), equal to the slices: True")

        # 2. relative ROI on the last two axes, padded past the border
        reader = ndd.readers.Numpy(
            file_root=folder, rel_roi_start=[0.75, 0.75], rel_roi_shape=[0.5, 0.5],
            roi_axes=[1, 2], out_of_bounds_policy="pad", fill_value=-1,
        )  # fmt: skip
        (first,) = next(iter(reader.next_epoch()))
        pad = int((np.asarray(first) == -1).sum())
        print(f"padded roi: shape {tuple(first.shape)}, {pad} fill values")

        # 3. the same files as bytes, decoded in memory
        files = ndd.readers.File(files=sorted(os.listdir(folder)), file_root=folder)
        ok = True
        for raw, labels in files.next_epoch(batch_size=3):
            arrays = ndd.decoders.numpy(raw)
            for arr, lab in zip(arrays.torch(), labels.torch()):
                ok &= np.array_equal(arr.numpy(), scans[int(lab)])
        print(f"decoders.numpy: {args.scans} volumes decoded from bytes, equal to np.load: {ok}")


if __name__ == "__main__":
    main()
