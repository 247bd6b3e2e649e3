"""Arguments the reference deprecates: still accepted, with its ``DeprecationWarning`` text.

Three kinds, each with the reference's wording (its operator schemas, DALI 2.4):

- an *alias* of a newer argument: "The argument `output_dtype` is a deprecated alias for
  `dtype`. Use `dtype` instead.";
- an argument *no longer used* (ignored): "The argument `image_type` is no longer used and will
  be removed in a future release.";
- a *discouraged* one (a GPU decoder tuning knob): "The argument `split_stages` is now
  deprecated and its usage is discouraged.".

The warning points at the user's line. Operators look their arguments up by name here
(:data:`DEPRECATED_ARGS`); readers and `optical_flow` call :func:`warn_given` themselves.

Examples
--------
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warn_deprecated("crop", "output_dtype")
>>> str(caught[0].message)
'The argument `output_dtype` is a deprecated alias for `dtype`. Use `dtype` instead.'
"""

from __future__ import annotations

import warnings

from headrace._core.callsite import user_stacklevel

_DECODER = {
    "memory_stats": "discouraged",
    "split_stages": "discouraged",
    "use_chunk_allocator": "discouraged",
}
_IMAGE_TYPE = {"image_type": "removed"}
_OUTPUT_DTYPE = {"output_dtype": "alias:dtype"}

#: Operator (or reader) name -> deprecated argument -> its kind ("alias:<new name>", "removed",
#: "discouraged") or, for anything else, the whole message.
DEPRECATED_ARGS: dict[str, dict[str, str]] = {
    "crop": {**_IMAGE_TYPE, **_OUTPUT_DTYPE},
    "crop_mirror_normalize": {**_IMAGE_TYPE, **_OUTPUT_DTYPE},
    "decoders.image": _DECODER,
    "decoders.image_crop": _DECODER,
    "decoders.image_random_crop": _DECODER,
    "decoders.image_slice": _DECODER,
    "lookup_table": _OUTPUT_DTYPE,
    "optical_flow": {"output_format": "alias:output_grid"},
    "resize": _IMAGE_TYPE,
    "rotate": _OUTPUT_DTYPE,
    "slice": {**_IMAGE_TYPE, **_OUTPUT_DTYPE},
    "warp_affine": _OUTPUT_DTYPE,
    "readers.NemoAsr": {"normalize_text": "removed"},
    "readers.COCO": {
        "dump_meta_files": "alias:save_preprocessed_annotations",
        "dump_meta_files_path": "alias:save_preprocessed_annotations_dir",
        "meta_files_path": "alias:preprocessed_annotations",
        "save_img_ids": "alias:image_ids",
        "masks": (
            "Use `polygon_masks` instead. Note that the polygon format has changed ``mask_id, "
            "start_coord, end_coord`` to ``mask_id, start_vertex, end_vertex`` where\n"
            "start_coord and end_coord are total number of coordinates, effectly ``start_coord "
            "= 2 * start_vertex`` and ``end_coord = 2 * end_vertex``.\nExample: A polygon with "
            "vertices ``[[x0, y0], [x1, y1], [x2, y2]]`` would be represented as ``[mask_id, 0, "
            "6]`` when using the deprecated\nargument ``masks``, but ``[mask_id, 0, 3]`` when "
            "using the new argument `polygon_masks`."
        ),
    },
}


def message(arg: str, kind: str) -> str:
    """The warning text for deprecated argument ``arg`` of kind ``kind``."""
    if kind.startswith("alias:"):
        new = kind.removeprefix("alias:")
        return f"The argument `{arg}` is a deprecated alias for `{new}`. Use `{new}` instead."
    if kind == "removed":
        return f"The argument `{arg}` is no longer used and will be removed in a future release."
    if kind == "discouraged":
        return f"The argument `{arg}` is now deprecated and its usage is discouraged."
    return kind


def warn_deprecated(op: str, arg: str) -> None:
    """Warn that ``op``'s argument ``arg`` is deprecated (``DeprecationWarning``, at the user's
    line)."""
    kind = DEPRECATED_ARGS[op][arg]
    warnings.warn(message(arg, kind), DeprecationWarning, stacklevel=user_stacklevel())


def warn_given(op: str, given: dict[str, object]) -> None:
    """:func:`warn_deprecated` for each deprecated argument of ``op`` given a value (not
    ``None``) in ``given``."""
    for arg in DEPRECATED_ARGS.get(op, ()):
        if given.get(arg) is not None:
            warn_deprecated(op, arg)


__all__ = ["DEPRECATED_ARGS", "message", "warn_deprecated", "warn_given"]
