"""Ready-made image-classification input pipelines (ResNet-50 style), one batch at a time.

Each pipeline is a plain function of the File reader's outputs, ``(encoded, labels)``, that
returns ``(images, labels)``: images as a float32 ``NCHW``-ready ``Batch`` (layout ``CHW``,
normalised with the ImageNet mean and standard deviation), labels unchanged. They are what
``headrace bench`` and ``headrace preview`` run, and what the examples build on:

* ``eval``: ``decoders.image`` -> ``resize(resize_shorter=256)`` -> centre
  ``crop_mirror_normalize(crop=(224, 224))``.
* ``train``: ``decoders.image_random_crop`` (decodes only the random window) ->
  ``resize(size=(224, 224))`` -> ``crop_mirror_normalize(mirror=random.coin_flip(...))``.

and one for audio files, :func:`speech_pipeline` (``"speech"``): ``decoders.audio`` ->
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
}


def get(name: str) -> Pipeline:
    """The pipeline called ``name`` (``"eval"``, ``"train"`` or ``"speech"``).

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
    "STD",
    "denormalize",
    "eval_pipeline",
    "get",
    "spectrogram_image",
    "speech_pipeline",
    "train_pipeline",
]
