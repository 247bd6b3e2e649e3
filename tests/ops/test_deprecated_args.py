"""Arguments the reference deprecates: accepted, with its DeprecationWarning at the user's line."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import headrace as ndd
from headrace._dispatch.deprecated_args import DEPRECATED_ARGS, message

#: headrace name -> the reference's operator schema
_SCHEMAS = {
    "crop": "Crop", "crop_mirror_normalize": "CropMirrorNormalize",
    "decoders.image": "decoders__Image", "decoders.image_crop": "decoders__ImageCrop",
    "decoders.image_random_crop": "decoders__ImageRandomCrop",
    "decoders.image_slice": "decoders__ImageSlice", "lookup_table": "LookupTable",
    "optical_flow": "OpticalFlow", "resize": "Resize", "rotate": "Rotate", "slice": "Slice",
    "warp_affine": "WarpAffine", "readers.NemoAsr": "readers__NemoAsr",
    "readers.COCO": "readers__COCO",
}  # fmt: skip

_QUERY = """
import json, sys
import nvidia.dali.backend as b
out = {}
for op, schema in json.loads(sys.argv[1]).items():
    s = b.GetSchema(schema)
    out[op] = {a: s.DeprecatedArgInfo(a)["msg"] for a in s.GetArgumentNames()
               if s.IsDeprecatedArg(a)}
print(json.dumps(out))
"""


def _caught(fn) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.dali
def test_table_matches_the_reference_schemas():
    """Every deprecated argument of these operators, with the reference's exact message."""
    pytest.importorskip("nvidia.dali")
    res = subprocess.run([sys.executable, "-c", _QUERY, json.dumps(_SCHEMAS)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    ref = json.loads(res.stdout.strip().splitlines()[-1])
    ours = {op: {a: message(a, k) for a, k in args.items()} for op, args in DEPRECATED_ARGS.items()}
    assert ours == ref


def test_alias_warns_at_the_callers_line_and_still_works():
    x = ndd.tensor(np.full((6, 6, 3), 10, np.uint8), layout="HWC")
    out = []
    caught = _caught(lambda: out.append(ndd.crop_mirror_normalize(x, output_dtype=ndd.float32)))
    assert [str(w.message) for w in caught] == [
        "The argument `output_dtype` is a deprecated alias for `dtype`. Use `dtype` instead."
    ]
    assert caught[0].filename == __file__
    assert out[0].dtype == ndd.float32


def test_ignored_and_discouraged_arguments_warn():
    x = ndd.tensor(np.zeros((8, 8, 3), np.uint8), layout="HWC")
    caught = _caught(lambda: ndd.resize(x, size=(4, 4), image_type=0).evaluate())
    assert "`image_type` is no longer used" in str(caught[0].message)
    import cv2

    ok, jpeg = cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))
    assert ok
    data = ndd.tensor(np.frombuffer(jpeg.tobytes(), np.uint8))
    caught = _caught(lambda: ndd.decoders.image(data, split_stages=True).evaluate())
    assert [str(w.message) for w in caught] == [
        "The argument `split_stages` is now deprecated and its usage is discouraged."
    ]


def test_no_warning_without_the_deprecated_argument():
    x = ndd.tensor(np.zeros((8, 8, 3), np.uint8), layout="HWC")
    assert _caught(lambda: ndd.crop_mirror_normalize(x, dtype=ndd.float32).evaluate()) == []


def test_readers_warn_from_their_constructor(tmp_path):
    manifest = tmp_path / "m.json"
    manifest.write_text("")

    def nemo():
        ndd.readers.NemoAsr(manifest_filepaths=[str(manifest)], normalize_text=True)

    caught = _caught(nemo)
    assert [str(w.message) for w in caught] == [
        "The argument `normalize_text` is no longer used and will be removed in a future release."
    ]

    def coco():
        with pytest.raises(ValueError, match="annotations_file"):  # (only the warning matters)
            ndd.readers.COCO(file_root=str(tmp_path), save_img_ids=True)

    caught = _caught(coco)
    assert [str(w.message) for w in caught] == [
        "The argument `save_img_ids` is a deprecated alias for `image_ids`. Use `image_ids` "
        "instead."
    ]
