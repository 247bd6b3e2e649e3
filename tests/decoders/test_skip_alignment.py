"""``on_error="skip"`` never pairs an image with another image's label (issue 20, point 1).

Every image is filled with the colour ``10 * label``, so a pair is aligned exactly when the
decoded pixel equals ten times the label next to it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest

import headrace as ndd
from headrace._core.errors import BatchSizeMismatchError

N = 21
BAD = {1, 5, 9, 13, 17}  # undecodable files


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], list[int]]:
    root = tmp_path_factory.mktemp("skip")
    files = []
    for i in range(N):
        p = root / f"{i:02d}.png"
        if i in BAD:
            p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(40))  # a PNG signature, then nonsense
        else:
            cv2.imwrite(str(p), np.full((3, 4, 3), 10 * i, np.uint8))
        files.append(str(p))
    return files, list(range(N))


@pytest.fixture(autouse=True)
def _quiet() -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def _pairs(images: ndd.Batch, labels: ndd.Batch) -> list[tuple[int, int]]:
    return [
        (int(np.asarray(im)[0, 0, 0]), int(np.asarray(lab).item()))
        for im, lab in zip(images, labels)
    ]


@pytest.mark.parametrize("capture", [False, True])
def test_aligned_with_select_kept(dataset: tuple[list[str], list[int]], capture: bool) -> None:
    files, labels = dataset
    r = ndd.readers.File(
        files=files, labels=labels, random_shuffle=True, seed=3, last_batch="partial"
    )
    seen, dropped_steps = [], 0
    for jpegs, labs in r.next_epoch(batch_size=6, capture=capture):
        images = ndd.decoders.image(jpegs, on_error="skip")
        assert images.kept is not None
        if images.batch_size < labs.batch_size:
            dropped_steps += 1
            with pytest.raises(BatchSizeMismatchError, match=r"select\(images.kept\)"):
                _pairs(images, labs)
        pairs = _pairs(images, labs.select(images.kept))
        assert all(pix == 10 * lab for pix, lab in pairs), pairs
        seen += [lab for _, lab in pairs]
    assert sorted(seen) == [i for i in range(N) if i not in BAD]
    assert dropped_steps >= 2


def test_every_unaligned_use_raises(dataset: tuple[list[str], list[int]]) -> None:
    files, labels = dataset
    r = ndd.readers.File(files=files[:6], labels=labels[:6], max_batch_size=6)
    (jpegs, labs), *_ = r.next_epoch()
    images = ndd.decoders.image(jpegs, on_error="skip")
    uses = [
        lambda: labs.torch(),  # possibly before the (asynchronous) decode finished: it waits
        lambda: list(labs),
        lambda: labs.tensors[0],
        lambda: labs.select([0, 1, 2, 3]),
        lambda: ndd.batch(labs),
        lambda: labs + 1,
        lambda: ndd.peek_image_shape(jpegs),
        lambda: ndd.flip(images, horizontal=labs),
    ]
    for use in uses:
        with pytest.raises(BatchSizeMismatchError, match=r"dropped samples 1 \('.*01.png'\), 5"):
            use()
    assert images.kept == (0, 2, 3, 4)
    aligned = labs.select(images.kept)
    assert [int(x.item()) for x in aligned] == [0, 2, 3, 4]
    assert _pairs(images, aligned) == [(0, 0), (20, 2), (30, 3), (40, 4)]
    assert images.torch().shape[0] == aligned.torch().shape[0] == 4
    # the encoded files can be aligned the same way (e.g. to report them)
    assert jpegs.select(images.kept).batch_size == 4


def test_checked_before_the_decode_finishes(dataset: tuple[list[str], list[int]]) -> None:
    files, labels = dataset
    r = ndd.readers.File(files=files[:6], labels=labels[:6], max_batch_size=6)
    with ndd.EvalMode.deferred:
        for jpegs, labs in r.next_epoch():
            images = ndd.decoders.image(jpegs, on_error="skip")
            with pytest.raises(BatchSizeMismatchError):
                labs.torch()  # runs the pending decode first
            assert images.batch_size == 4


def test_nothing_dropped_keeps_everything_usable(dataset: tuple[list[str], list[int]]) -> None:
    files, _ = dataset
    good = [f for i, f in enumerate(files) if i not in BAD]
    r = ndd.readers.File(files=good, labels=[int(Path(f).stem) for f in good], max_batch_size=4)
    for jpegs, labs in r.next_epoch():
        images = ndd.decoders.image(jpegs, on_error="skip")
        assert images.kept == tuple(range(labs.batch_size))
        assert all(p == 10 * lab for p, lab in _pairs(images, labs))


def test_sample_mode_raises_instead_of_skipping(dataset: tuple[list[str], list[int]]) -> None:
    files, labels = dataset
    r = ndd.readers.File(files=files[:3], labels=labels[:3])
    got = []
    for jpeg, lab in r.next_epoch():
        try:
            img = ndd.decoders.image(jpeg, on_error="skip").evaluate()
        except ndd.DecodeError as e:
            assert "01.png" in str(e)
            continue
        got.append((int(np.asarray(img)[0, 0, 0]), int(lab.item())))
    assert got == [(0, 0), (20, 2)]
