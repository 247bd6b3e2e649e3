"""Segmentation operators (``ndd.segmentation``): random_mask_pixel, random_object_bbox and
select_masks. CPU only, as in the reference.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> m = np.zeros((4, 5), np.uint8)
>>> m[1:3, 2:4] = 1
>>> ndd.segmentation.random_object_bbox(ndd.tensor(m), format="box").torch().tolist()
[1, 2, 3, 4]
"""

from __future__ import annotations

from typing import Any

from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import (
    Arg,
    forward_args,
    to_bool,
    to_float,
    to_floats,
    to_int,
    to_ints,
    to_str,
)
from headrace._dispatch.schema import OpSchema
from headrace._rng import RNG

__all__ = ["random_mask_pixel", "random_object_bbox", "select_masks"]

#: The values ``random_object_bbox``'s ``format`` takes.
BBOX_FORMATS = ("anchor_shape", "start_end", "box")


def _schema(name: str, **kw: Any) -> OpSchema:
    """A segmentation op: CPU batch kernels in ``backends/cpu/segmentation.py``."""
    return OpSchema(f"segmentation.{name}", "segmentation", devices=("cpu",), **kw)


def _opt_int(v: Any) -> int | None:
    return None if v is None else to_int(v)


def _opt_ints(v: Any) -> Any:
    return None if v is None else to_ints(v)


def _opt_floats(v: Any) -> Any:
    return None if v is None else to_floats(v)


def _check_format(vals: dict[str, Any]) -> None:
    if vals["format"] not in BBOX_FORMATS:
        raise InvalidArgumentError(
            f"segmentation.random_object_bbox: format must be one of {list(BBOX_FORMATS)}, got "
            f"{vals['format']!r}."
        )


RANDOM_MASK_PIXEL = _schema(
    "random_mask_pixel",
    args=(
        Arg("foreground", to_int, 0, per_sample=True, doc="Draw among foreground pixels (1)."),
        Arg("threshold", to_float, 0.0, per_sample=True, doc="Foreground: values above this."),
        Arg("value", _opt_int, None, per_sample=True, doc="Foreground: values equal to this."),
    ),
    random=True,
)
RANDOM_OBJECT_BBOX = _schema(
    "random_object_bbox",
    num_outputs=3,  # the public function keeps those ``format`` and ``output_class`` ask for
    args=(
        Arg("background", _opt_int, None, per_sample=True, doc="Background label (0)."),
        Arg("cache_objects", to_bool, False, doc="Accepted; has no effect."),
        Arg("class_weights", _opt_floats, None, per_sample=True, doc="Weights of classes."),
        Arg("classes", _opt_ints, None, per_sample=True, doc="Labels to choose from."),
        Arg("foreground_prob", to_float, 1.0, per_sample=True, doc="Chance of an object."),
        Arg("format", to_str, "anchor_shape", doc="anchor_shape, start_end or box."),
        Arg("ignore_class", to_bool, False, doc="Any non-background label is one object class."),
        Arg("k_largest", _opt_int, None, doc="Choose among the k largest blobs."),
        Arg("output_class", to_bool, False, doc="Also output the chosen class."),
        Arg("threshold", _opt_ints, None, per_sample=True, doc="Minimum extents of a blob."),
    ),
    random=True,
    check=_check_format,
)
SELECT_MASKS = _schema(
    "select_masks",
    inputs=("mask_ids", "polygons", "vertices"),
    num_outputs=2,
    args=(Arg("reindex_masks", to_bool, False, doc="Renumber masks 0.. in mask_ids order."),),
)


def random_mask_pixel(
    input: Any,
    /,
    *,
    foreground: Any = None,
    threshold: Any = None,
    value: Any = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """A random pixel position in a mask: uniform among its foreground pixels or all pixels.

    Parameters
    ----------
    input : Tensor or Batch
        The mask, any rank.
    foreground : int or Batch, optional
        Non-zero: draw among foreground pixels (any pixel when there is none); 0 (default): among
        all pixels.
    threshold : float or Batch, optional
        Foreground pixels are those above this (default 0).
    value : int or Batch, optional
        Foreground pixels are those equal to this (instead of ``threshold``).
    rng : random.RNG, optional
        Generator to draw from.

    Returns
    -------
    Tensor or Batch
        int64 coordinates, one per dimension of the mask.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> m = np.zeros((4, 5), np.uint8)
    >>> m[2, 3] = 9
    >>> ndd.segmentation.random_mask_pixel(ndd.tensor(m), foreground=1).torch().tolist()
    [2, 3]
    """
    if value is not None and threshold is not None:
        raise InvalidArgumentError(
            "segmentation.random_mask_pixel: give threshold or value, not both."
        )
    return RANDOM_MASK_PIXEL.call((input,), **forward_args(locals(), "input"))


def random_object_bbox(
    input: Any,
    /,
    *,
    background: Any = None,
    cache_objects: bool | None = None,
    class_weights: Any = None,
    classes: Any = None,
    foreground_prob: Any = None,
    format: str | None = None,
    ignore_class: bool | None = None,
    k_largest: int | None = None,
    output_class: bool | None = None,
    threshold: Any = None,
    device: Any = None,
    batch_size: int | None = None,
    rng: RNG | None = None,
) -> Any:
    """The bounding box of a random object (connected blob of one label) of a label map.

    With probability ``foreground_prob`` a class is drawn among the labels present (other than
    ``background``; only ``classes`` when given, weighted by ``class_weights``) that have a
    blob left after the filters: blobs are face-connected regions of the class, at least
    ``threshold`` in every extent, only the ``k_largest`` largest (pixel count). A blob of the
    class is then drawn uniformly. Otherwise, or without any object, the box is the whole input
    and the class is the background.

    Parameters
    ----------
    input : Tensor or Batch
        Integer label map, any rank (e.g. ``HW`` or ``DHW``).
    background : int or Batch, optional
        Background label (default 0, or a value not in ``classes``).
    cache_objects : bool, optional
        Accepted for compatibility; has no effect.
    class_weights : sequence of float or Batch, optional
        Relative chance of each of ``classes`` (default ``1..len(class_weights)``).
    classes : sequence of int or Batch, optional
        Labels that count as objects (default: all but the background).
    foreground_prob : float or Batch, optional
        Chance of choosing an object rather than the whole input (default 1).
    format : str, optional
        ``"anchor_shape"`` (default: start and extent), ``"start_end"`` or ``"box"`` (one
        output, start then end).
    ignore_class : bool, optional
        Every non-background label is the same class (blobs may mix labels).
    k_largest : int, optional
        Choose among the k largest blobs only.
    output_class : bool, optional
        Add the chosen class (int32 scalar) as the last output.
    threshold : sequence of int or Batch, optional
        Minimum extent of a blob's box, per dimension (or one for all).
    rng : random.RNG, optional
        Generator to draw from.

    Returns
    -------
    Tensor, Batch or tuple
        int32 coordinates in the ``format`` asked for, then the class with ``output_class``.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> m = np.zeros((6, 6), np.uint8)
    >>> m[1:3, 1:4] = 2
    >>> a, s, c = ndd.segmentation.random_object_bbox(ndd.tensor(m), output_class=True)
    >>> a.torch().tolist(), s.torch().tolist(), int(c.torch())
    ([1, 1], [2, 3], 2)
    """
    res = RANDOM_OBJECT_BBOX.call((input,), **forward_args(locals(), "input"))
    out = (res[0],) if format == "box" else res[:2]
    if output_class:
        out = (*out, res[2])
    return out[0] if len(out) == 1 else out


def select_masks(
    mask_ids: Any,
    polygons: Any,
    vertices: Any,
    /,
    *,
    reindex_masks: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Keep the polygons of some masks (COCO's ``polygons``/``vertices`` outputs).

    Parameters
    ----------
    mask_ids : Tensor or Batch
        The masks to keep (distinct ids), in output order.
    polygons : Tensor or Batch
        ``[N, 3]`` integers: mask id, first vertex, end vertex (exclusive).
    vertices : Tensor or Batch
        ``[V, D]`` vertex coordinates.
    reindex_masks : bool, optional
        Renumber the kept masks 0, 1, … in ``mask_ids`` order (default: keep their ids).

    Returns
    -------
    tuple
        The kept polygons (int32, every polygon of each mask, in ``mask_ids`` order, then input
        order) with vertex ranges into the kept vertices (the input's type).

    Raises
    ------
    InvalidArgumentError
        A mask id missing from ``polygons``, repeated ids, vertex ranges out of bounds.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> polys = ndd.tensor(np.array([[0, 0, 2], [1, 2, 3]], np.int32))
    >>> verts = ndd.tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    >>> p, v = ndd.segmentation.select_masks(ndd.tensor(np.array([1], np.int32)), polys, verts,
    ...                                      reindex_masks=True)
    >>> p.torch().tolist(), v.torch().tolist()
    ([[0, 0, 1]], [[4.0, 5.0]])
    """
    return SELECT_MASKS.call(
        (mask_ids, polygons, vertices),
        **forward_args(locals(), "mask_ids", "polygons", "vertices"),
    )
