"""Ready-made image-classification input pipelines (ResNet-50 style), one batch at a time.

Each pipeline is a plain function of the File reader's outputs, ``(encoded, labels)``, that
returns ``(images, labels)``: images as a float32 ``NCHW``-ready ``Batch`` (layout ``CHW``,
normalised with the ImageNet mean and standard deviation), labels unchanged. They are what
``headrace bench`` and ``headrace preview`` run, and what the examples build on:

* ``eval``: ``decoders.image`` -> ``resize(resize_shorter=256)`` -> centre
  ``crop_mirror_normalize(crop=(224, 224))``.
* ``train``: ``decoders.image_random_crop`` (decodes only the random window) ->
  ``resize(size=(224, 224))`` -> ``crop_mirror_normalize(mirror=random.coin_flip(...))``.

Examples
--------
>>> import cv2, numpy as np
>>> import headrace as ndd
>>> from headrace import pipelines
>>> jpg = cv2.imencode(".jpg", np.full((300, 400, 3), 99, np.uint8))[1].ravel()
>>> data = ndd.batch([jpg, jpg])
>>> labels = ndd.batch([np.int32([0]), np.int32([1])])
>>> images, _ = pipelines.eval_pipeline(data, labels)
>>> images.shape[0], images.dtype == ndd.float32, images.layout
((3, 224, 224), True, 'CHW')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: ImageNet channel statistics on the 0-255 scale (RGB).
MEAN = (0.485 * 255, 0.456 * 255, 0.406 * 255)
STD = (0.229 * 255, 0.224 * 255, 0.225 * 255)
CROP = 224
RESIZE_SHORTER = 256

Pipeline = Callable[..., tuple[Any, Any]]


def _decoder_device(device: str) -> str:
    return "gpu" if str(device).startswith(("gpu", "cuda")) else "cpu"


def eval_pipeline(
    encoded: Any,
    labels: Any,
    *,
    device: str = "cpu",
    size: int = CROP,
    resize_shorter: int = RESIZE_SHORTER,
) -> tuple[Any, Any]:
    """Decode, resize the shorter side to ``resize_shorter``, centre-crop and normalise.

    Parameters
    ----------
    encoded : Batch
        Encoded images (1-D uint8 samples), e.g. the first output of ``readers.File``.
    labels : Batch
        Passed through unchanged.
    device : {"cpu", "gpu"}
        Where to decode and process.
    size : int
        Side of the square output.
    resize_shorter : int
        Length of the shorter side before the crop.

    Returns
    -------
    (Batch, Batch)
        float32 ``CHW`` images of shape ``(3, size, size)`` and the labels.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> jpg = cv2.imencode(".jpg", np.zeros((64, 80, 3), np.uint8))[1].ravel()
    >>> img, lab = eval_pipeline(ndd.batch([jpg]), ndd.batch([np.int32([3])]), size=32,
    ...                          resize_shorter=40)
    >>> img.shape, int(lab.select(0).item())
    ([(3, 32, 32)], 3)
    """
    import headrace as ndd

    images = ndd.decoders.image(encoded, device=_decoder_device(device))
    images = ndd.resize(images, resize_shorter=resize_shorter)
    images = ndd.crop_mirror_normalize(
        images, crop=(size, size), mean=list(MEAN), std=list(STD), dtype=ndd.float32
    )
    return images, labels


def train_pipeline(
    encoded: Any,
    labels: Any,
    *,
    device: str = "cpu",
    size: int = CROP,
    rng: Any = None,
) -> tuple[Any, Any]:
    """Random-resized-crop decode, resize to ``size`` x ``size``, random mirror, normalise.

    Parameters
    ----------
    encoded : Batch
        Encoded images (1-D uint8 samples).
    labels : Batch
        Passed through unchanged.
    device : {"cpu", "gpu"}
        Where to decode and process.
    size : int
        Side of the square output.
    rng : headrace.random.RNG, optional
        Generator for the crop windows and the mirror coin flips (default: the thread-local
        one); pass one to make the augmentation reproducible.

    Returns
    -------
    (Batch, Batch)
        float32 ``CHW`` images of shape ``(3, size, size)`` and the labels.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> jpg = cv2.imencode(".jpg", np.zeros((64, 80, 3), np.uint8))[1].ravel()
    >>> img, _ = train_pipeline(ndd.batch([jpg, jpg]), None, size=32, rng=ndd.random.RNG(0))
    >>> img.shape
    [(3, 32, 32), (3, 32, 32)]
    """
    import headrace as ndd

    n = encoded.batch_size
    images = ndd.decoders.image_random_crop(encoded, device=_decoder_device(device), rng=rng)
    images = ndd.resize(images, size=(size, size))
    mirror = ndd.random.coin_flip(batch_size=n, rng=rng)
    images = ndd.crop_mirror_normalize(
        images, mirror=mirror, mean=list(MEAN), std=list(STD), dtype=ndd.float32
    )
    return images, labels


PIPELINES: dict[str, Pipeline] = {"eval": eval_pipeline, "train": train_pipeline}


def get(name: str) -> Pipeline:
    """The pipeline called ``name`` (``"eval"`` or ``"train"``).

    Examples
    --------
    >>> get("eval") is eval_pipeline
    True
    """
    try:
        return PIPELINES[name]
    except KeyError:
        raise ValueError(
            f"unknown pipeline {name!r}; choose one of: {', '.join(PIPELINES)}"
        ) from None


def denormalize(chw: Any) -> Any:
    """Undo the normalisation of one ``CHW`` float image: an ``HWC`` uint8 RGB numpy array.

    Examples
    --------
    >>> import numpy as np
    >>> mean, std = np.array(MEAN)[:, None, None], np.array(STD)[:, None, None]
    >>> x = (np.full((3, 2, 2), 128.0) - mean) / std
    >>> denormalize(x)[0, 0].tolist()
    [128, 128, 128]
    """
    import numpy as np

    from headrace._core.saturate import saturate

    a = np.asarray(chw, dtype=np.float32).transpose(1, 2, 0)
    a = a * np.asarray(STD, np.float32) + np.asarray(MEAN, np.float32)
    return saturate(a, np.dtype(np.uint8), rounding="half_even", overwrite=True)


__all__ = [
    "CROP",
    "MEAN",
    "PIPELINES",
    "STD",
    "denormalize",
    "eval_pipeline",
    "get",
    "train_pipeline",
]
