"""``ndd.segmentation``: random_mask_pixel, random_object_bbox and select_masks (declared in
:mod:`headrace.ops.segmentation`).

Examples
--------
>>> import headrace as ndd
>>> sorted(ndd.segmentation.__all__)
['random_mask_pixel', 'random_object_bbox', 'select_masks']
"""

from __future__ import annotations

from headrace.ops.segmentation import random_mask_pixel, random_object_bbox, select_masks

__all__ = ["random_mask_pixel", "random_object_bbox", "select_masks"]
