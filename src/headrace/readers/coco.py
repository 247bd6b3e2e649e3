"""``readers.COCO``: images and their annotations from a COCO dataset (a folder of images and a
JSON annotations file).

Samples are the annotated images in increasing image ``id`` order (or the ``images`` list's
order); each sample's annotations are kept in the file's order. Labels are category positions
in the file's ``categories`` list, from 1, unless ``avoid_class_remapping``.
"""

from __future__ import annotations

import errno
import json
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from headrace._core.dtype import float32, int32, uint8
from headrace._core.errors import InvalidArgumentError, MissingArgumentError
from headrace._dispatch.deprecated_args import warn_given
from headrace.readers._base import Reader, _bool_arg, as_path
from headrace.readers._coco_masks import polygon_mask, rle_decode
from headrace.readers._preshuffle import preshuffled
from headrace.readers.file import FileReadError, MissingFileError

_OP = "readers.COCO"
_META = "headrace_coco_annotations.json"  # the preprocessed annotations file in its folder


def _bad(path: str, where: str, what: str) -> FileReadError:
    return FileReadError(errno.EINVAL, f"{_OP}: {where}: {what}", path)


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**63


def _parse(path: str, include_iscrowd: bool, size_threshold: float) -> dict[str, Any]:
    """The images (sorted by id) with their kept annotations, and the categories' order."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise MissingFileError(
            errno.ENOENT, f"{_OP}: annotations_file does not exist", path
        ) from None
    except (OSError, ValueError) as e:
        raise _bad(path, "annotations_file", f"cannot be read as JSON ({e})") from None
    if not isinstance(doc, dict):
        raise _bad(path, "the top level", f"must be a JSON object, got {type(doc).__name__}")
    lists = {}
    for key in ("images", "annotations", "categories"):
        v = doc.get(key)
        if not isinstance(v, list):
            raise _bad(path, f"{key!r}", "is missing or not a list")
        lists[key] = v
    cats: list[int] = []
    for i, c in enumerate(lists["categories"]):
        if not isinstance(c, dict) or not _int(c.get("id")):
            raise _bad(path, f"categories[{i}]", "needs an integer 'id'")
        cats.append(int(c["id"]))
    images: dict[int, dict[str, Any]] = {}
    for i, im in enumerate(lists["images"]):
        where = f"images[{i}]"
        if not isinstance(im, dict):
            raise _bad(path, where, "must be an object")
        if not _int(im.get("id")):
            raise _bad(path, where, f"needs an integer 'id' (got {im.get('id')!r})")
        if not isinstance(im.get("file_name"), str):
            raise _bad(path, where, "needs a string 'file_name'")
        for k in ("width", "height"):
            v = im.get(k)
            if not _int(v) or not 0 < v < 2**31:
                raise _bad(path, where, f"{k!r} must be a positive integer below 2**31 (got {v!r})")
        if im["id"] in images:
            raise _bad(path, where, f"the image id {im['id']} is used twice")
        images[im["id"]] = {
            "id": int(im["id"]),
            "file_name": im["file_name"],
            "width": int(im["width"]),
            "height": int(im["height"]),
            "anns": [],
        }
    known = set(cats)
    for i, a in enumerate(lists["annotations"]):
        where = f"annotations[{i}]"
        if not isinstance(a, dict):
            raise _bad(path, where, "must be an object")
        im = images.get(a.get("image_id")) if _int(a.get("image_id")) else None
        if im is None:  # (an annotation of an image not listed: ignored, as the reference)
            continue
        cat = a.get("category_id")
        if not _int(cat) or cat not in known:
            raise _bad(path, where, f"'category_id' {cat!r} names no category")
        bbox = a.get("bbox")
        if not isinstance(bbox, list) or len(bbox) != 4 or not all(_num(b) for b in bbox):
            raise _bad(path, where, f"'bbox' must be 4 finite numbers [x, y, w, h] (got {bbox!r})")
        x, y, w, h = (float(b) for b in bbox)
        W, H = im["width"], im["height"]
        if w <= 0 or h <= 0:  # (an empty box: dropped, as the reference; one reaching past
            continue  # the image is kept as given, as there)
        crowd = a.get("iscrowd", 0)
        if crowd not in (0, 1):
            raise _bad(path, where, f"'iscrowd' must be 0 or 1 (got {crowd!r})")
        if crowd and not include_iscrowd:
            continue
        if w < size_threshold or h < size_threshold:
            continue
        seg = _check_seg(path, where, a.get("segmentation"), H, W)
        im["anns"].append({"bbox": [x, y, w, h], "cat": int(cat), "seg": seg})
    return {"categories": cats, "images": [images[k] for k in sorted(images)]}


def _check_seg(path: str, where: str, seg: Any, h: int, w: int) -> Any:
    where = f"{where}.segmentation"
    if seg is None:
        return []
    if isinstance(seg, list):
        for j, p in enumerate(seg):
            if isinstance(p, list) and len(p) % 2:  # (an odd coordinate: dropped, as the
                p = seg[j] = p[:-1]  # reference)
            if not isinstance(p, list) or len(p) < 6 or not all(_num(v) for v in p):
                raise _bad(path, f"{where}[{j}]", "a polygon must be >= 3 points as finite "
                           "numbers [x0, y0, x1, y1, ...]")  # fmt: skip
        return seg
    if isinstance(seg, dict):
        size, counts = seg.get("size"), seg.get("counts")
        if size != [h, w]:
            raise _bad(path, where, f"the RLE 'size' {size!r} is not the image's [{h}, {w}]")
        if isinstance(counts, list) and all(_int(c) and c >= 0 for c in counts):
            if sum(counts) != h * w:
                raise _bad(path, where, f"the RLE counts cover {sum(counts)} pixels, not {h * w}")
            return seg
        if isinstance(counts, str):
            try:
                rle_decode(counts, h, w)
            except ValueError as e:
                raise _bad(path, where, str(e)) from None
            return seg
        raise _bad(path, where, "the RLE 'counts' must be non-negative integers or a string")
    raise _bad(
        path, where, f"must be a list of polygons or an RLE object (got {type(seg).__name__})"
    )


class _COCODataset:
    read_errors = (OSError,)

    def __init__(self, reader: COCO, root: str, images: list[dict[str, Any]]) -> None:
        self.r, self.root, self.images = reader, root, images

    def __len__(self) -> int:
        return len(self.images)

    def source(self, index: int) -> str:
        return os.path.join(self.root, self.images[index]["file_name"])

    def read(self, index: int) -> tuple[np.ndarray, ...]:
        r, im = self.r, self.images[index]
        with open(self.source(index), "rb") as f:
            data = np.frombuffer(f.read(), np.uint8).copy()
        W, H = im["width"], im["height"]
        anns = im["anns"]
        # float32 throughout, as the reference (its ratios differ from float64's in the last bit)
        boxes = np.array([a["bbox"] for a in anns], np.float32).reshape(-1, 4)
        if r._ltrb:
            boxes[:, 2:] += boxes[:, :2]
        if r._ratio:
            boxes /= np.array([W, H, W, H], np.float32)
        labels = np.array([a["cat"] if r._raw_ids else r._remap[a["cat"]] for a in anns], np.int32)
        out = [data, boxes, labels]
        if r._polygons:
            polys, verts, start = [], [], 0
            for m, a in enumerate(anns):
                if isinstance(a["seg"], list):
                    for p in a["seg"]:
                        v = np.array(p, np.float32).reshape(-1, 2)
                        if r._ratio:
                            v = v / np.array([W, H], np.float32)
                        polys.append([m, start, start + len(v)])
                        verts.append(v)
                        start += len(v)
            out.append(np.array(polys, np.int32).reshape(-1, 3))
            out.append(np.concatenate(verts) if verts else np.zeros((0, 2), np.float32))
        if r._pixelwise:
            mask = np.zeros((H, W), np.int32)
            for a, lab in zip(anns, labels, strict=True):
                seg = a["seg"]
                if isinstance(seg, dict):
                    obj = rle_decode(seg["counts"], H, W)
                else:
                    obj = np.zeros((H, W), np.uint8)
                    for p in seg:
                        obj |= polygon_mask(p, H, W)
                np.maximum(mask, obj.astype(np.int32) * int(lab), out=mask)
            out.append(mask[..., None])
        if r._image_ids:
            out.append(np.array([im["id"]], np.int32))
        return tuple(out)


class COCO(Reader):
    """Read images (encoded bytes) with their boxes, labels and masks from a COCO dataset.

    Outputs, in this order: ``images`` (uint8, 1-D encoded bytes), ``bboxes`` (float32
    ``(M, 4)``, ``[x, y, w, h]`` or ``[l, t, r, b]`` with ``ltrb``, divided by the image size
    with ``ratio``), ``labels`` (int32 ``(M,)``); with ``polygon_masks`` ``polygons`` (int32
    ``(P, 3)``: annotation index in the sample, first and one-past-last vertex) and ``vertices``
    (float32 ``(V, 2)``, relative with ``ratio``); with ``pixelwise_masks`` a mask (int32
    ``(H, W, 1)``, layout ``HWC``: each pixel holds the largest label of the annotations
    covering it, 0 for none; polygons are rasterised by the COCO API's rule and RLE
    segmentations, counts or compressed strings, decoded); with ``image_ids`` the image id
    (int32 ``(1,)``).

    Parameters
    ----------
    file_root : str or os.PathLike
        Folder the images' ``file_name`` are relative to.
    annotations_file : str or os.PathLike
        The COCO JSON file (needed unless ``preprocessed_annotations`` is given).
    ltrb, ratio : bool
        Box format and normalisation (default False).
    skip_empty : bool
        Leave out images without (kept) annotations (default False).
    size_threshold : float
        Annotations whose box width or height is below it are left out (default 0.1).
    include_iscrowd : bool
        Keep ``iscrowd: 1`` annotations (default True).
    avoid_class_remapping : bool
        Labels are the raw ``category_id`` instead of the category's position from 1.
    image_ids : bool
        Add the image-id output (``save_img_ids`` is the older name).
    images : list of str, optional
        File names (as in the annotations) to read, in this order, duplicates repeated.
    polygon_masks, pixelwise_masks : bool
        Mask outputs, mutually exclusive (``masks`` is the older name of ``polygon_masks``).
    preprocessed_annotations : str, optional
        A folder written with ``save_preprocessed_annotations`` to read instead of the JSON
        (``meta_files_path`` is the older name). headrace's own format (one JSON file), not
        the reference's binary meta files.
    save_preprocessed_annotations, save_preprocessed_annotations_dir
        Write the parsed, filtered annotations to that folder (``dump_meta_files``,
        ``dump_meta_files_path`` are the older names).
    shuffle_after_epoch, shuffle_after_epoch_seed
        Shuffle the whole data set every epoch, the same on every rank.
    **kwargs
        Common reader arguments (``shard_id``, ``num_shards``, ``random_shuffle``, ``seed``,
        ``pad_last_batch``, ``enable_checkpointing``, ``last_batch``, ``on_error`` ...).

    Raises
    ------
    FileReadError
        The annotations file or an image is missing, or an entry is malformed (wrong types,
        missing keys, numbers out of range, an unknown category id); the message names the
        file and the entry. As in the reference, a box reaching past its image is kept as
        given, an empty box (width or height <= 0) and an annotation of an image not listed
        are dropped, and a polygon's odd last coordinate is ignored.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from headrace.readers import COCO
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.jpg").write_bytes(b"jpeg")
    >>> ann = {"images": [{"id": 3, "file_name": "a.jpg", "width": 8, "height": 4}],
    ...        "categories": [{"id": 40}, {"id": 7}],
    ...        "annotations": [{"image_id": 3, "category_id": 7, "bbox": [1, 1, 2, 2]}]}
    >>> _ = (d / "ann.json").write_text(json.dumps(ann))
    >>> ((img, boxes, labels, ids),) = COCO(file_root=d, annotations_file=d / "ann.json",
    ...                                    ltrb=True, image_ids=True).next_epoch()
    >>> boxes.torch().tolist(), labels.torch().tolist(), ids.torch().tolist()
    ([[1.0, 1.0, 3.0, 3.0]], [2], [3])
    """

    def __init__(
        self,
        max_batch_size: int | None = None,
        name: str | None = None,
        device: Any = "cpu",
        num_inputs: int | None = None,
        *,
        annotations_file: str | os.PathLike[str] | None = None,
        avoid_class_remapping: bool = False,
        dump_meta_files: bool | None = None,
        dump_meta_files_path: str | os.PathLike[str] | None = None,
        file_root: str | os.PathLike[str] | None = None,
        image_ids: bool = False,
        images: Sequence[str] | None = None,
        include_iscrowd: bool = True,
        ltrb: bool = False,
        masks: bool | None = None,
        meta_files_path: str | os.PathLike[str] | None = None,
        pixelwise_masks: bool = False,
        polygon_masks: bool = False,
        preprocessed_annotations: str | os.PathLike[str] | None = None,
        ratio: bool = False,
        save_img_ids: bool | None = None,
        save_preprocessed_annotations: bool = False,
        save_preprocessed_annotations_dir: str | os.PathLike[str] | None = None,
        shuffle_after_epoch: bool = False,
        shuffle_after_epoch_seed: int | None = None,
        size_threshold: float = 0.1,
        skip_empty: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(max_batch_size, name, device, num_inputs, **kwargs)
        warn_given("readers.COCO", {
            "dump_meta_files": dump_meta_files, "dump_meta_files_path": dump_meta_files_path,
            "masks": masks, "meta_files_path": meta_files_path, "save_img_ids": save_img_ids,
        })  # fmt: skip
        b = {k: _bool_arg("COCO", k, v) for k, v in (
            ("avoid_class_remapping", avoid_class_remapping),
            ("dump_meta_files", dump_meta_files or False), ("image_ids", image_ids),
            ("include_iscrowd", include_iscrowd), ("ltrb", ltrb), ("masks", masks or False),
            ("pixelwise_masks", pixelwise_masks), ("polygon_masks", polygon_masks),
            ("ratio", ratio), ("save_img_ids", save_img_ids or False),
            ("save_preprocessed_annotations", save_preprocessed_annotations),
            ("shuffle_after_epoch", shuffle_after_epoch), ("skip_empty", skip_empty))}  # fmt: skip
        self._ltrb, self._ratio, self._raw_ids = b["ltrb"], b["ratio"], b["avoid_class_remapping"]
        self._polygons = b["polygon_masks"] or b["masks"]
        self._pixelwise = b["pixelwise_masks"]
        self._image_ids = b["image_ids"] or b["save_img_ids"]
        if self._polygons and self._pixelwise:
            raise InvalidArgumentError(
                f"{_OP}: pixelwise_masks and polygon_masks are mutually exclusive."
            )
        if not _num(size_threshold):
            raise InvalidArgumentError(
                f"{_OP}: size_threshold must be a finite number (got {size_threshold!r})."
            )
        if shuffle_after_epoch_seed is not None and b["shuffle_after_epoch"]:
            if not _int(shuffle_after_epoch_seed):
                raise InvalidArgumentError(f"{_OP}: shuffle_after_epoch_seed must be an integer.")
            self._seed, self._seed_given = int(shuffle_after_epoch_seed) & ((1 << 64) - 1), True
        if b["shuffle_after_epoch"] and (self._random_shuffle or self._stick_to_shard):
            raise InvalidArgumentError(
                f"{_OP}: shuffle_after_epoch cannot be combined with random_shuffle or "
                "stick_to_shard."
            )
        self._global_shuffle = b["shuffle_after_epoch"]
        if file_root is None:
            raise MissingArgumentError(f"{_OP}: file_root is required.")
        root = as_path(file_root, "file_root", "COCO")
        pre = preprocessed_annotations if preprocessed_annotations is not None else meta_files_path
        if pre is not None and os.fsdecode(pre):
            meta = os.path.join(as_path(pre, "preprocessed_annotations", "COCO"), _META)
            parsed = self._load_meta(meta, b["include_iscrowd"], float(size_threshold))
        elif annotations_file is not None and os.fsdecode(annotations_file):
            ann = as_path(annotations_file, "annotations_file", "COCO")
            parsed = _parse(ann, b["include_iscrowd"], float(size_threshold))
            parsed["settings"] = [b["include_iscrowd"], float(size_threshold)]
        else:
            raise InvalidArgumentError(f"{_OP}: give annotations_file or preprocessed_annotations.")
        if b["save_preprocessed_annotations"] or b["dump_meta_files"]:
            out = save_preprocessed_annotations_dir or dump_meta_files_path
            if not out:
                raise InvalidArgumentError(
                    f"{_OP}: save_preprocessed_annotations needs save_preprocessed_annotations_dir."
                )
            os.makedirs(os.fsdecode(out), exist_ok=True)
            with open(os.path.join(os.fsdecode(out), _META), "w", encoding="utf-8") as f:
                json.dump(parsed, f)
        self._remap = {c: i + 1 for i, c in enumerate(parsed["categories"])}
        imgs = parsed["images"]
        if b["skip_empty"]:
            imgs = [im for im in imgs if im["anns"]]
        if images is not None:
            if isinstance(images, (str, bytes)) or not isinstance(images, Sequence):
                raise InvalidArgumentError(f"{_OP}: images must be a list of file names.")
            by_name = {im["file_name"]: im for im in imgs}
            sel = []
            for i, n in enumerate(images):
                if n not in by_name:
                    raise InvalidArgumentError(
                        f"{_OP}: images[{i}] {n!r} is not an image of the annotations."
                    )
                sel.append(by_name[n])
            imgs = sel
        for im in imgs:
            p = os.path.join(root, im["file_name"])
            if not os.path.isfile(p):
                raise MissingFileError(errno.ENOENT, f"{_OP}: the file of image id {im['id']} "
                                       f"({im['file_name']!r}) is missing", p)  # fmt: skip
        if not imgs:
            raise InvalidArgumentError(f"{_OP}: no images to read.")
        imgs = preshuffled(imgs, self._random_shuffle)  # (before sharding, as the reference)
        self._dataset = _COCODataset(self, root, imgs)
        self._finish_init()
        outs: list[tuple[Any, str | None]] = [(uint8, None), (float32, None), (int32, None)]
        if self._polygons:
            outs += [(int32, None), (float32, None)]
        if self._pixelwise:
            outs.append((int32, "HWC"))
        if self._image_ids:
            outs.append((int32, None))
        self._outputs = tuple(outs)

    @staticmethod
    def _load_meta(path: str, include_iscrowd: bool, size_threshold: float) -> dict[str, Any]:
        try:
            with open(path, encoding="utf-8") as f:
                parsed = json.load(f)
        except FileNotFoundError:
            raise MissingFileError(
                errno.ENOENT, f"{_OP}: no preprocessed annotations", path
            ) from None
        except (OSError, ValueError) as e:
            raise _bad(path, "preprocessed annotations", f"cannot be read ({e})") from None
        if (
            not isinstance(parsed, dict)
            or not {"categories", "images", "settings"} <= parsed.keys()
        ):
            raise _bad(
                path, "preprocessed annotations", "not written by save_preprocessed_annotations"
            )
        if parsed["settings"] != [include_iscrowd, size_threshold]:
            got, want = parsed["settings"], [include_iscrowd, size_threshold]
            raise _bad(
                path,
                "preprocessed annotations",
                f"saved with include_iscrowd, size_threshold = {got}, not {want}",
            )
        return parsed


__all__ = ["COCO"]
