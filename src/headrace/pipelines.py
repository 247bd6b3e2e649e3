"""Ready-made image-classification input pipelines (ResNet-50 style), one batch at a time.

Each pipeline is a plain function of the File reader's outputs, ``(encoded, labels)``, that
returns ``(images, labels)``: images as a float32 ``NCHW``-ready ``Batch`` (layout ``CHW``,
normalised with the ImageNet mean and standard deviation), labels unchanged. They are what
``headrace bench`` and ``headrace preview`` run, and what the examples build on:

* ``eval``: ``decoders.image`` -> ``resize(resize_shorter=256)`` -> centre
  ``crop_mirror_normalize(crop=(224, 224))``.
* ``train``: ``decoders.image_random_crop`` (decodes only the random window) ->
  ``resize(size=(224, 224))`` -> ``crop_mirror_normalize(mirror=random.coin_flip(...))``.

one for object detection, :func:`detection_pipeline` (``"detection"``, SSD style): the outputs of
``readers.COCO(ltrb=True, ratio=True)`` -> ``decoders.image`` -> ``random_bbox_crop`` ->
``slice`` -> ``resize`` -> random horizontal flip of the images and (``bb_flip``) the boxes ->
normalise -> ``box_encoder`` against :func:`ssd_anchors`; and one for audio files,
:func:`speech_pipeline` (``"speech"``): ``decoders.audio`` ->
``preemphasis_filter`` -> ``spectrogram`` -> ``mel_filter_bank`` -> ``to_decibels`` ->
``normalize``, giving log-mel spectrograms that :func:`spectrogram_image` colours for display.

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

import itertools
import math
from collections.abc import Callable
from types import ModuleType
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


#: Side of the SSD300 input images.
SSD_SIZE = 300
# SSD300's feature maps: (cells per side, step in pixels, box scale in pixels, aspect ratios).
_SSD_MAPS = (
    (38, 8, 21, (2,)), (19, 16, 45, (2, 3)), (10, 32, 99, (2, 3)),
    (5, 64, 153, (2, 3)), (3, 100, 207, (2,)), (1, 300, 261, (2,)),
)  # fmt: skip
_SSD_LAST_SCALE = 315


def ssd_anchors(size: int = SSD_SIZE) -> list[float]:
    """The 8732 default boxes of SSD300 (Liu et al., 2016) as ``box_encoder`` takes them.

    Every cell of the six feature maps gets, centred on it, a square of the map's scale, a
    square of the geometric mean of its scale and the next map's, and for each aspect ratio
    ``r`` boxes of ``scale * sqrt(r)`` by ``scale / sqrt(r)`` and the transposed ones; sizes
    are relative to the ``size`` x ``size`` image (the scales grow with ``size``), clipped to
    ``[0, 1]``, ltrb, flattened (``4 * 8732`` numbers).

    Examples
    --------
    >>> a = ssd_anchors()
    >>> len(a) // 4
    8732
    >>> [round(v, 4) for v in a[:4]]  # the first cell's small square
    [0.0, 0.0, 0.0483, 0.0483]
    """
    k = size / SSD_SIZE
    scales = [m[2] * k for m in _SSD_MAPS] + [_SSD_LAST_SCALE * k]
    out: list[float] = []
    for i, (cells, step, _, ratios) in enumerate(_SSD_MAPS):
        s1, s2 = scales[i] / size, math.sqrt(scales[i] * scales[i + 1]) / size
        shapes = [(s1, s1), (s2, s2)]
        for r in ratios:
            q = math.sqrt(r)
            shapes += [(s1 * q, s1 / q), (s1 / q, s1 * q)]
        for y, x in itertools.product(range(cells), repeat=2):
            cx, cy = (x + 0.5) * step * k / size, (y + 0.5) * step * k / size
            for w, h in shapes:
                out += [min(max(v, 0.0), 1.0) for v in (cx - w / 2, cy - h / 2, cx + w / 2,
                                                         cy + h / 2)]  # fmt: skip
    return out


#: ``random_bbox_crop`` settings of SSD's training augmentation.
SSD_CROP = {
    "aspect_ratio": [0.5, 2.0],
    "thresholds": [0.0, 0.1, 0.3, 0.5, 0.7, 0.9],
    "scaling": [0.3, 1.0],
    "bbox_layout": "xyXY",
    "allow_no_crop": True,
    "num_attempts": 1,
}
#: ``box_encoder`` normalisation of SSD's offsets.
SSD_STDS = (0.1, 0.1, 0.2, 0.2)


def detection_pipeline(
    encoded: Any,
    boxes: Any,
    labels: Any,
    *,
    size: int = SSD_SIZE,
    anchors: Any = None,
    encode: bool = True,
    rng: Any = None,
    api: ModuleType | None = None,
) -> tuple[Any, Any, Any]:
    """SSD-style training augmentation of detection samples, with anchor encoding.

    ``decoders.image`` -> ``random_bbox_crop`` (SSD's IoU thresholds, :data:`SSD_CROP`) ->
    ``slice`` to the window -> ``resize`` to ``size`` x ``size`` -> a random horizontal flip of
    the images and, with ``bb_flip``, the boxes -> normalisation (ImageNet mean and standard
    deviation, float32 ``CHW``) -> ``box_encoder`` (IoU 0.5, offsets scaled by
    :data:`SSD_STDS`) against ``anchors``.

    Parameters
    ----------
    encoded, boxes, labels : Batch
        Encoded images, their ltrb boxes relative to the image and their labels: the outputs
        of ``readers.COCO(ltrb=True, ratio=True)``.
    size : int
        Side of the square output images.
    anchors : sequence of float, optional
        ltrb anchors, flattened (default: :func:`ssd_anchors` of ``size``).
    encode : bool
        Encode the boxes against the anchors (default); False gives the augmented boxes
        (relative ltrb, variable count) and their labels, e.g. to draw them.
    rng : random.RNG, optional
        Generator of the crop windows and the flips; pass one for reproducible augmentation.
    api : module, optional
        The dynamic-mode module to run the pipeline with (default: ``headrace``). The
        reference's ``nvidia.dali.experimental.dynamic`` runs the same code, which is how
        ``bench/detection.py`` compares the two.

    Returns
    -------
    (Batch, Batch, Batch)
        float32 ``CHW`` images of shape ``(3, size, size)``; boxes ``[M, 4]`` (offsets from
        the ``M`` anchors) and labels ``[M]`` (0: background), or with ``encode=False`` the
        boxes ``[N, 4]`` and labels ``[N]`` of each sample.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> import headrace as ndd
    >>> jpg = cv2.imencode(".jpg", np.zeros((60, 80, 3), np.uint8))[1].ravel()
    >>> boxes = ndd.batch([np.float32([[0.1, 0.2, 0.6, 0.9]])])
    >>> labels = ndd.batch([np.int32([3])])
    >>> img, enc, lab = detection_pipeline(ndd.batch([jpg]), boxes, labels,
    ...                                    rng=ndd.random.RNG(0))
    >>> img.shape, enc.shape, lab.shape
    ([(3, 300, 300)], [(8732, 4)], [(8732,)])
    >>> int((lab.torch() == 3).sum()) > 0  # anchors matched to the box
    True
    """
    if api is None:
        import headrace as api
    ndd = api
    images = ndd.decoders.image(encoded)
    anchor, shape, boxes, labels = ndd.random_bbox_crop(boxes, labels, rng=rng, **SSD_CROP)
    images = ndd.slice(images, anchor, shape, out_of_bounds_policy="trim_to_shape")
    images = ndd.resize(images, size=(size, size))
    flip = ndd.random.coin_flip(batch_size=encoded.batch_size, rng=rng)
    boxes = ndd.bb_flip(boxes, ltrb=True, horizontal=flip)
    images = ndd.crop_mirror_normalize(
        images, mirror=flip, mean=list(MEAN), std=list(STD), dtype=ndd.float32
    )
    if encode:
        anchors = ssd_anchors(size) if anchors is None else anchors
        boxes, labels = ndd.box_encoder(
            boxes, labels, anchors=anchors, criteria=0.5, offset=True, stds=list(SSD_STDS)
        )
    return images, boxes, labels


def draw_boxes(
    image: Any, boxes: Any, color: tuple[int, int, int] = (255, 40, 200), thickness: int = 2
) -> Any:
    """Draw relative ltrb boxes on an ``HWC`` uint8 RGB image (a copy) as rectangles.

    Examples
    --------
    >>> import numpy as np
    >>> img = draw_boxes(np.zeros((10, 20, 3), np.uint8), [[0.0, 0.0, 0.5, 0.5]], thickness=1)
    >>> img[0, 0].tolist(), img[4, 9].tolist(), img[2, 4].tolist()
    ([255, 40, 200], [255, 40, 200], [0, 0, 0])
    """
    import cv2
    import numpy as np

    out = np.ascontiguousarray(image, np.uint8).copy()
    h, w = out.shape[:2]
    for l, t, r, b in np.asarray(boxes, np.float64).reshape(-1, 4):
        p0 = (round(l * (w - 1)), round(t * (h - 1)))
        p1 = (round(r * (w - 1)), round(b * (h - 1)))
        cv2.rectangle(out, p0, p1, color, thickness, cv2.LINE_8)
    return out


#: Defaults of :func:`speech_pipeline`: 16 kHz, 25 ms windows every 10 ms, 64 mel bands.
SPEECH_SAMPLE_RATE = 16000
SPEECH_NFILTER = 64


def speech_pipeline(
    encoded: Any,
    labels: Any,
    *,
    device: str = "cpu",
    sample_rate: float = SPEECH_SAMPLE_RATE,
    nfilter: int = SPEECH_NFILTER,
    window_length: int = 400,
    window_step: int = 160,
    nfft: int = 512,
    cutoff_db: float = -80.0,
) -> tuple[Any, Any]:
    """Decode audio files into normalised log-mel spectrograms (layout ``"ft"``).

    ``decoders.audio`` (down-mixed, resampled to ``sample_rate``) -> ``preemphasis_filter`` ->
    ``spectrogram`` -> ``mel_filter_bank`` (up to ``sample_rate / 2``) -> ``to_decibels`` ->
    ``normalize`` over the whole spectrogram (mean 0, standard deviation 1 per sample).

    Parameters
    ----------
    encoded : Batch
        Encoded audio files (1-D uint8 samples: WAV, FLAC, OGG ...), e.g. from ``readers.File``.
    labels : Batch
        Passed through unchanged.
    device : {"cpu", "gpu"}
        Where to compute the features (decoding is on the CPU).
    sample_rate : float
        Rate the signals are resampled to while decoding.
    nfilter : int
        Number of mel bands.
    window_length, window_step, nfft : int
        Spectrogram window length, step and FFT size, in samples.
    cutoff_db : float
        Floor of the decibel scale, relative to each sample's maximum.

    Returns
    -------
    (Batch, Batch)
        float32 spectrograms of shape ``(nfilter, frames)`` (low frequencies first) and the
        labels.

    Examples
    --------
    >>> import io, numpy as np, soundfile as sf
    >>> import headrace as ndd
    >>> buf = io.BytesIO()
    >>> sf.write(buf, np.sin(np.arange(8000) * 0.3), 16000, format="WAV")
    >>> wav = np.frombuffer(buf.getvalue(), np.uint8)
    >>> mel, _ = speech_pipeline(ndd.batch([wav]), None)
    >>> mel.shape, mel.layout
    ([(64, 51)], 'ft')
    """
    import headrace as ndd

    audio, _ = ndd.decoders.audio(encoded, sample_rate=sample_rate, downmix=True)
    if _decoder_device(device) == "gpu":
        audio = audio.gpu()
    audio = ndd.preemphasis_filter(audio)
    spec = ndd.spectrogram(audio, nfft=nfft, window_length=window_length, window_step=window_step)
    mel = ndd.mel_filter_bank(
        spec, nfilter=nfilter, sample_rate=sample_rate, freq_high=sample_rate / 2
    )
    log_mel = ndd.to_decibels(mel, cutoff_db=cutoff_db)
    return ndd.normalize(log_mel), labels


def spectrogram_image(
    ft: Any, height: int = 128, width: int = 224, *, value_range: float = 3.0
) -> Any:
    """Colour a ``(frequency, time)`` spectrogram as an ``HWC`` uint8 RGB image for display.

    Values in ``[-value_range, value_range]`` (standard deviations, for a normalised
    spectrogram) map linearly onto OpenCV's "magma" colour map, the image is resized to
    ``height`` x ``width``, and low frequencies are at the bottom (row 0 of ``ft`` is the last
    row of the image).

    Examples
    --------
    >>> import numpy as np
    >>> ft = np.zeros((4, 10), np.float32)
    >>> ft[0] = 3.0  # loud lowest band
    >>> img = spectrogram_image(ft, height=8, width=10)
    >>> img.shape, img.dtype.name
    ((8, 10, 3), 'uint8')
    >>> bool(img[-1].mean() > img[0].mean())  # low frequencies at the bottom
    True
    """
    import cv2
    import numpy as np

    from headrace._core.saturate import saturate

    a = np.asarray(ft, dtype=np.float32)
    if a.ndim != 2 or 0 in a.shape:
        raise ValueError(f"spectrogram_image: expected a non-empty 2-D array, got shape {a.shape}")
    scaled = (a[::-1] + np.float32(value_range)) * np.float32(255.0 / (2 * value_range))
    gray = saturate(scaled, np.dtype(np.uint8), rounding="half_even", overwrite=True)
    gray = cv2.resize(np.ascontiguousarray(gray), (width, height), interpolation=cv2.INTER_LINEAR)
    return cv2.cvtColor(cv2.applyColorMap(gray, cv2.COLORMAP_MAGMA), cv2.COLOR_BGR2RGB)


PIPELINES: dict[str, Pipeline] = {
    "eval": eval_pipeline,
    "train": train_pipeline,
    "speech": speech_pipeline,
    "detection": detection_pipeline,
}


def get(name: str) -> Pipeline:
    """The pipeline called ``name`` (``"eval"``, ``"train"``, ``"speech"`` or ``"detection"``).

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
    "SPEECH_NFILTER",
    "SPEECH_SAMPLE_RATE",
    "SSD_CROP",
    "SSD_SIZE",
    "SSD_STDS",
    "STD",
    "denormalize",
    "detection_pipeline",
    "draw_boxes",
    "eval_pipeline",
    "get",
    "spectrogram_image",
    "speech_pipeline",
    "ssd_anchors",
    "train_pipeline",
]
