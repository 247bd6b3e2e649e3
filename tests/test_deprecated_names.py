"""Deprecated operator names (the reference's experimental decoder spellings) warn on every call
with the reference's dynamic-mode text, and compute what the current names compute."""

import inspect
import warnings

import cv2
import numpy as np
import pytest

import headrace as ndd

PNG = np.frombuffer(
    cv2.imencode(".png", np.arange(8 * 6 * 3, dtype=np.uint8).reshape(8, 6, 3))[1], np.uint8
)
API = "nvidia.dali.experimental.dynamic"

#: (deprecated path, current path, keyword arguments of a call)
DEPRECATED = [
    ("experimental.decoders.image", "decoders.image", {}),
    ("experimental.decoders.image_crop", "decoders.image_crop", {"crop": [4, 4]}),
    ("experimental.decoders.image_slice", "decoders.image_slice", {"start": [2, 1], "end": [6, 5]}),
    ("experimental.peek_image_shape", "peek_image_shape", {}),
]


def _get(path: str):
    obj = ndd
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _called(fn, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = np.asarray(fn(PNG, **kwargs))
    return out, [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize(("old", "new", "kwargs"), DEPRECATED)
def test_deprecated_name_warns_and_computes_the_same(old, new, kwargs):
    out, caught = _called(_get(old), **kwargs)
    assert len(caught) == 1
    text = str(caught[0].message)
    assert text.startswith(
        f"WARNING: `{API}.{old}` is now deprecated. Use `{API}.{new}` instead.\n"
    )
    assert caught[0].filename == __file__  # points at the caller's line
    ref, none = _called(_get(new), **kwargs)
    assert not none
    np.testing.assert_array_equal(out, ref)


def test_deprecated_names_keep_the_signature_and_warn_on_every_call():
    old, new = ndd.experimental.decoders.image_crop, ndd.decoders.image_crop
    assert inspect.signature(old) == inspect.signature(new)
    assert old.__name__ == "image_crop" and "deprecated" in old.__doc__.lower()
    assert [m for m in dir(old) if not m.startswith("_")] == []
    for _ in range(2):
        assert len(_called(old, crop=[2, 2])[1]) == 1


def test_random_crop_alias_warns():
    with pytest.warns(DeprecationWarning, match="experimental.decoders.image_random_crop"):
        out = ndd.experimental.decoders.image_random_crop(PNG, rng=ndd.random.RNG(seed=1))
    assert np.asarray(out).shape[2] == 3


def test_current_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        ndd.decoders.image(PNG).evaluate()
        ndd.peek_image_shape(PNG).evaluate()
        ndd.experimental.resize(ndd.decoders.image(PNG), size=[4, 4]).evaluate()


def test_experimental_video_decoder_is_the_older_spelling_of_decoders_video():
    from tests._helpers.videos import has_av, write_video

    if not has_av():
        pytest.skip("PyAV is not installed")
    data = write_video(n=6)
    with pytest.warns(DeprecationWarning, match=r"experimental\.decoders\.video"):
        old = np.asarray(ndd.experimental.decoders.video(data))
    np.testing.assert_array_equal(old, np.asarray(ndd.decoders.video(data)))
    assert old.shape == (6, 48, 64, 3)
