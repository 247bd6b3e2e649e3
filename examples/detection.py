"""Feed an SSD detector: COCO reader, SSD augmentation and anchor encoding with headrace.

Each step reads a batch from ``readers.COCO`` (ltrb boxes relative to the image) and runs the
SSD training input pipeline of ``headrace.pipelines.detection_pipeline``: decode, draw a crop
window that keeps the objects (``random_bbox_crop``, SSD's IoU thresholds), ``slice`` the image
to it, ``resize`` to 300x300, flip images and boxes (``bb_flip``) together at random,
normalise, and encode the boxes against SSD300's 8732 anchors (``box_encoder``). What comes out
is what an SSD loss takes: float32 NCHW images, per-anchor box offsets and per-anchor labels.

Run it on a generated COCO-format data set (written on first use) or on real COCO::

    python examples/detection.py --images 64 --epochs 2
    python examples/detection.py --file-root coco/train2017 \\
        --annotations coco/annotations/instances_train2017.json --batch-size 32
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

import headrace as ndd
from headrace import pipelines, sample_data


def decode_offsets(offsets: np.ndarray, anchors: np.ndarray) -> np.ndarray:
    """Undo ``box_encoder``'s SSD offsets: ltrb boxes ``[M, 4]`` from offsets and anchors."""
    stds = np.asarray(pipelines.SSD_STDS, np.float32)
    a_c = (anchors[:, :2] + anchors[:, 2:]) / 2
    a_wh = anchors[:, 2:] - anchors[:, :2]
    c = offsets[:, :2] * stds[:2] * a_wh + a_c
    wh = np.exp(offsets[:, 2:] * stds[2:]) * a_wh
    return np.concatenate([c - wh / 2, c + wh / 2], 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file-root", help="COCO image folder (default: generated data)")
    parser.add_argument("--annotations", help="COCO annotations JSON (with --file-root)")
    parser.add_argument("--images", type=int, default=64, help="size of the generated data set")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, help="headrace worker threads")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    if args.threads:
        ndd.set_num_threads(args.threads)
    if args.file_root is None:
        folder = sample_data.coco_folder(num_images=args.images)
        args.file_root, args.annotations = folder / "images", folder / "annotations.json"
    elif args.annotations is None:
        parser.error("--file-root needs --annotations")

    reader = ndd.readers.COCO(
        file_root=args.file_root,
        annotations_file=args.annotations,
        ltrb=True,  # boxes as [left, top, right, bottom] ...
        ratio=True,  # ... relative to the image size, as the box operators take them
        skip_empty=True,  # SSD trains on images with at least one object
        random_shuffle=True,
        seed=args.seed,
    )
    rng = ndd.random.RNG(seed=args.seed)  # crop windows and flips: reproducible
    anchors = pipelines.ssd_anchors()  # SSD300's default boxes, computed once
    anchor_array = np.asarray(anchors, np.float32).reshape(-1, 4)
    print(f"SSD input pipeline: {len(anchor_array)} anchors, batch {args.batch_size}")

    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        batches = images_seen = matched = 0
        worst = 0.0
        digest = hashlib.sha256()
        for jpegs, boxes, labels in reader.next_epoch(
            batch_size=args.batch_size, last_batch="partial"
        ):
            images, offsets, anchor_labels = pipelines.detection_pipeline(
                jpegs, boxes, labels, anchors=anchors, rng=rng
            )
            x, loc, cls = images.torch(), offsets.torch(), anchor_labels.torch()
            # ... here an SSD model would compute its loss from (x, loc, cls) ...
            batches += 1
            images_seen += x.shape[0]
            hit = cls.numpy() > 0
            matched += int(hit.sum())
            for i in range(x.shape[0]):  # matched anchors decode to boxes inside the image
                dec = decode_offsets(loc[i].numpy()[hit[i]], anchor_array[hit[i]])
                worst = max(worst, float(np.clip(-dec, 0, None).max(initial=0)),
                            float(np.clip(dec - 1, 0, None).max(initial=0)))  # fmt: skip
            digest.update(loc.numpy().tobytes())
        seconds = time.perf_counter() - t0
        print(
            f"epoch {epoch}/{args.epochs}: {batches} batches, {images_seen} images, "
            f"images {tuple(x.shape)} {x.dtype}, boxes {tuple(loc.shape)}, labels "
            f"{tuple(cls.shape)} {cls.dtype}, {matched / images_seen:.1f} matched anchors per "
            f"image, decoded boxes inside the image: {worst < 1e-4}, checksum "
            f"{digest.hexdigest()[:12]}, {images_seen / seconds:.0f} img/s"
        )


if __name__ == "__main__":
    main()
