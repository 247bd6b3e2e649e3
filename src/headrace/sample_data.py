"""Built-in sample data, generated on first use (no downloads).

:func:`image_folder` writes an ImageNet-like folder of JPEG files (one sub-folder per class,
about 500x375 pixels with some variety of size and orientation, quality 90) whose content looks
enough like photographs (smooth colour fields, gradients, textures, sharp and blurred shapes,
sensor-like noise) that file sizes and decode times are realistic: 60-120 KB per file, like
ImageNet. The data are deterministic: the same arguments give the same bytes on every machine
with the same OpenCV.

:func:`audio_folder` writes a few 16 kHz WAV files (tones, chirps, band-limited noise and
voice-like harmonics) for ``headrace preview --pipeline speech``.

The folders are generated once into a cache directory (``$HEADRACE_CACHE``, default
``~/.cache/headrace``) and reused afterwards. Generation writes into a temporary folder that is
renamed into place only once complete, so an interrupted generation is simply redone.

Examples
--------
>>> import tempfile
>>> from headrace import sample_data
>>> root = sample_data.image_folder(tempfile.mkdtemp(), num_images=4, num_classes=2,
...                                 progress=False)
>>> sorted(p.name for p in root.iterdir() if p.is_dir())
['class_00', 'class_01']
>>> len(list(root.glob("*/*.jpg")))
4
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from headrace._core.errors import InvalidArgumentError

#: Bump when the generated content changes, so that old caches are not reused.
FORMAT_VERSION = 1
MARKER = ".complete.json"
JPEG_QUALITY = 90

# (width, height) choices around ImageNet's typical 500x375 (4:3 dominates, like ImageNet).
_SIZES = (
    (500, 375), (500, 375), (500, 375), (500, 333), (375, 500), (333, 500),
    (500, 500), (640, 427), (640, 480), (400, 300), (480, 360), (500, 281),
)  # fmt: skip


def cache_dir() -> Path:
    """The cache root: ``$HEADRACE_CACHE`` if set, else ``~/.cache/headrace``.

    Examples
    --------
    >>> import os
    >>> from headrace.sample_data import cache_dir
    >>> os.environ["HEADRACE_CACHE"] = "/tmp/hr-cache"
    >>> str(cache_dir())
    '/tmp/hr-cache'
    >>> del os.environ["HEADRACE_CACHE"]
    """
    env = os.environ.get("HEADRACE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "headrace"


def image_folder(
    root: str | os.PathLike[str] | None = None,
    *,
    num_images: int = 512,
    num_classes: int = 8,
    seed: int = 0,
    progress: bool = True,
) -> Path:
    """An ImageNet-like JPEG folder, generated into ``root`` on first use and reused afterwards.

    Parameters
    ----------
    root : path, optional
        Cache directory that holds the data set (default: :func:`cache_dir`). The images go
        into a sub-folder named after the arguments, so different sizes can live side by side.
    num_images : int
        Number of JPEG files (spread evenly over the classes).
    num_classes : int
        Number of class sub-folders, ``class_00``, ``class_01``, ...
    seed : int
        Seed of the content; the same arguments always give the same files.
    progress : bool
        Show a progress bar while generating.

    Returns
    -------
    pathlib.Path
        The folder with one sub-folder per class (the layout ``readers.File(file_root=...)``
        reads; labels are the sorted sub-folder indices).

    Examples
    --------
    >>> import tempfile
    >>> from headrace import sample_data
    >>> d = tempfile.mkdtemp()
    >>> a = sample_data.image_folder(d, num_images=2, num_classes=1, progress=False)
    >>> b = sample_data.image_folder(d, num_images=2, num_classes=1, progress=False)
    >>> a == b and (a / "class_00" / "img_00001.jpg").stat().st_size > 10_000
    True
    """
    _check_positive("num_images", num_images)
    _check_positive("num_classes", num_classes)
    if num_classes > num_images:
        raise InvalidArgumentError(
            f"num_classes ({num_classes}) must not exceed num_images ({num_images})."
        )
    base = Path(root).expanduser() if root is not None else cache_dir()
    params = {
        "version": FORMAT_VERSION,
        "num_images": int(num_images),
        "num_classes": int(num_classes),
        "seed": int(seed),
        "opencv": cv2.__version__,
    }
    name = f"images-v{FORMAT_VERSION}-n{num_images}-c{num_classes}-s{seed}"
    return _cached_folder(base, name, params, lambda tmp: _generate(tmp, params, progress))


def _cached_folder(
    base: Path, name: str, params: dict[str, object], write: Callable[[Path], None]
) -> Path:
    """``base / name``, written by ``write(folder)`` unless a complete one with ``params`` is
    there: into a temporary folder renamed into place once complete (an interrupted generation
    is simply redone)."""
    dest = base / name
    if _is_complete(dest, params):
        return dest
    if dest.exists():  # left over from an older or killed generation
        shutil.rmtree(dest, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(base, dest.name)
    tmp = Path(tempfile.mkdtemp(prefix=f"{dest.name}.partial-{os.getpid()}-", dir=base))
    try:
        write(tmp)
        (tmp / MARKER).write_text(json.dumps(params))
        try:
            tmp.rename(dest)
        except OSError:  # another process finished first
            if not _is_complete(dest, params):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _check_positive(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgumentError(f"{name} must be a positive integer (got {value!r}).")


def _remove_stale_partials(base: Path, name: str) -> None:
    """Delete temporary folders left by generations whose process is gone (killed runs)."""
    for p in base.glob(f"{name}.partial-*"):
        try:
            pid = int(p.name.split(".partial-", 1)[1].split("-", 1)[0])
            os.kill(pid, 0)  # raises if no such process
        except ProcessLookupError:
            shutil.rmtree(p, ignore_errors=True)
        except (ValueError, IndexError, PermissionError):
            continue


def _is_complete(dest: Path, params: dict[str, object]) -> bool:
    try:
        return json.loads((dest / MARKER).read_text()) == params
    except (OSError, ValueError):
        return False


def _generate(folder: Path, params: dict[str, object], progress: bool) -> None:
    from tqdm.auto import tqdm

    n, k, seed = int(params["num_images"]), int(params["num_classes"]), int(params["seed"])  # type: ignore[call-overload]
    for c in range(k):
        (folder / f"class_{c:02d}").mkdir()

    def write(i: int) -> None:
        label = i % k
        jpg = encode_jpeg(synthetic_image(i, label, k, seed))
        (folder / f"class_{label:02d}" / f"img_{i:05d}.jpg").write_bytes(jpg)

    threads = max(1, min(len(os.sched_getaffinity(0)), 16))
    desc = "headrace: generating sample images"
    pool = ThreadPoolExecutor(threads, thread_name_prefix="headrace-sample-data")
    try:
        with tqdm(total=n, desc=desc, unit="img", disable=not progress) as bar:
            for _ in pool.map(write, range(n)):
                bar.update(1)
    except BaseException:  # Ctrl-C or an error: drop the queued images, stop promptly
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()


def encode_jpeg(rgb: np.ndarray, quality: int = JPEG_QUALITY) -> bytes:
    """Encode an RGB uint8 image as a baseline JPEG (4:2:0 chroma subsampling).

    Examples
    --------
    >>> import numpy as np
    >>> from headrace.sample_data import encode_jpeg
    >>> encode_jpeg(np.zeros((8, 8, 3), np.uint8))[:2]
    b'\\xff\\xd8'
    """
    ok, buf = cv2.imencode(
        ".jpg",
        cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
        [cv2.IMWRITE_JPEG_QUALITY, quality, cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
         cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420],
    )  # fmt: skip
    if not ok:  # pragma: no cover - OpenCV always encodes uint8 RGB
        raise RuntimeError("cv2.imencode failed")
    return buf.tobytes()


def synthetic_image(index: int, label: int, num_classes: int, seed: int = 0) -> np.ndarray:
    """One deterministic photo-like RGB image (uint8, HWC) for sample ``index`` of class ``label``.

    The class sets the dominant hue and the kind of the main object, so that a small model can
    learn something from the data; everything else varies per image.

    Examples
    --------
    >>> from headrace.sample_data import synthetic_image
    >>> img = synthetic_image(0, 0, 8)
    >>> img.dtype, img.ndim, img.shape[2]
    (dtype('uint8'), 3, 3)
    >>> bool((img == synthetic_image(0, 0, 8)).all())
    True
    """
    rng = np.random.default_rng([seed, index])
    w, h = _SIZES[int(rng.integers(len(_SIZES)))]
    hue = (label / num_classes + rng.normal(0, 0.03)) % 1.0
    img = _background(rng, h, w, hue)
    for _ in range(int(rng.integers(1, 3))):
        _texture_patch(rng, img)
    for _ in range(int(rng.integers(3, 8))):
        _shape(rng, img, _random_color(rng, rng.random()), int(rng.integers(4)), rng.random() < 0.4)
    _shape(rng, img, _random_color(rng, hue, sat=0.8), label % 4, blur=False, big=True)
    # Mid-frequency detail (foliage, gravel) then per-pixel sensor noise.
    detail = rng.standard_normal((h // 2, w // 2), dtype=np.float32)
    detail = cv2.resize(detail, (w, h), interpolation=cv2.INTER_CUBIC)
    cv2.scaleAdd(np.repeat(detail[..., None], 3, 2), float(rng.uniform(5.0, 12.0)), img, dst=img)
    noise = rng.standard_normal((h, w, 3), dtype=np.float32)
    cv2.scaleAdd(noise, float(rng.uniform(9.0, 15.0)), img, dst=img)
    return np.clip(img, 0, 255, out=img).astype(np.uint8)


def _random_color(rng: np.random.Generator, hue: float, sat: float | None = None) -> np.ndarray:
    s = rng.uniform(0.3, 0.9) if sat is None else sat
    v = rng.uniform(0.35, 0.95)
    hsv = np.array([[[hue * 180.0, s * 255.0, v * 255.0]]], np.float32).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[0, 0].astype(np.float32)


def _background(rng: np.random.Generator, h: int, w: int, hue: float) -> np.ndarray:
    """A linear gradient between two colours plus a smooth low-frequency colour field.

    Both are smooth, so they are built on an 8x smaller grid and interpolated up.
    """
    a, b = _random_color(rng, hue), _random_color(rng, (hue + rng.uniform(-0.15, 0.15)) % 1)
    sh, sw = max(2, h // 8), max(2, w // 8)
    theta = rng.uniform(0, 2 * np.pi)
    ys, xs = np.ogrid[0:sh, 0:sw]
    t = (np.cos(theta) * xs / sw + np.sin(theta) * ys / sh).astype(np.float32)
    t = (t - t.min()) / max(float(t.max() - t.min()), 1e-6)
    small = a + t[..., None] * (b - a)
    gh, gw = int(rng.integers(3, 7)), int(rng.integers(3, 7))
    field = rng.normal(0, 28, (gh, gw, 3)).astype(np.float32)
    small += cv2.resize(field, (sw, sh), interpolation=cv2.INTER_CUBIC)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _texture_patch(rng: np.random.Generator, img: np.ndarray) -> None:
    """A rectangle of oriented sine texture (like fabric, grass or bark)."""
    h, w = img.shape[:2]
    ph, pw = int(h * rng.uniform(0.25, 0.6)), int(w * rng.uniform(0.25, 0.6))
    y0, x0 = int(rng.integers(0, h - ph)), int(rng.integers(0, w - pw))
    ys, xs = np.ogrid[0:ph, 0:pw]
    f, theta = rng.uniform(0.15, 0.6), rng.uniform(0, np.pi)
    wave = np.sin(f * (np.cos(theta) * xs + np.sin(theta) * ys) + rng.uniform(0, 6.3))
    amp = rng.uniform(15, 40)
    region = img[y0 : y0 + ph, x0 : x0 + pw]
    region += (amp * wave).astype(np.float32)[..., None] * rng.uniform(0.5, 1.0, 3).astype(
        np.float32
    )


def _shape(
    rng: np.random.Generator,
    img: np.ndarray,
    color: np.ndarray,
    kind: int,
    blur: bool,
    big: bool = False,
) -> tuple[int, int, int, int] | None:
    """Draw a filled circle, rectangle, polygon or thick line, optionally defocused; return its
    bounding box ``(x, y, w, h)`` in pixels (``None`` when nothing was drawn)."""
    h, w = img.shape[:2]
    scale = rng.uniform(0.25, 0.45) if big else rng.uniform(0.05, 0.2)
    r = max(2, int(scale * min(h, w)))
    cx, cy = int(rng.integers(r // 2, w - r // 2)), int(rng.integers(r // 2, h - r // 2))
    layer = np.zeros((h, w), np.uint8)
    if kind == 0:
        cv2.circle(layer, (cx, cy), r, 255, -1, cv2.LINE_AA)
    elif kind == 1:
        dx, dy = r, int(r * rng.uniform(0.5, 1.5))
        cv2.rectangle(layer, (cx - dx, cy - dy), (cx + dx, cy + dy), 255, -1, cv2.LINE_AA)
    elif kind == 2:
        n = int(rng.integers(3, 7))
        ang = np.sort(rng.uniform(0, 2 * np.pi, n))
        rad = r * rng.uniform(0.6, 1.2, n)
        pts = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], 1).astype(np.int32)
        cv2.fillPoly(layer, [pts], 255, cv2.LINE_AA)
    else:
        end = (cx + int(rng.integers(-2 * r, 2 * r)), cy + int(rng.integers(-2 * r, 2 * r)))
        cv2.line(layer, (cx, cy), end, 255, max(2, r // 4), cv2.LINE_AA)
    pad = 0
    if blur:
        pad = int(rng.integers(2, 8))
        layer = cv2.GaussianBlur(layer, (2 * pad + 1, 2 * pad + 1), 0)
    x, y, bw, bh = cv2.boundingRect(layer)
    if bw == 0 or bh == 0:
        return None
    roi = (slice(y, y + bh), slice(x, x + bw))
    alpha = layer[roi].astype(np.float32) * np.float32(rng.uniform(0.6, 1.0) / 255.0)
    shade = cv2.resize(rng.normal(0, 20, (2, 2, 3)).astype(np.float32), (bw, bh))
    region = img[roi]
    region += alpha[..., None] * (color + shade - region)
    return x, y, bw, bh


# --- audio -----------------------------------------------------------------------------------
#: Bump when the generated audio changes, so that old caches are not reused.
AUDIO_FORMAT_VERSION = 1
AUDIO_SAMPLE_RATE = 16000
#: The classes of :func:`audio_folder`, one sub-folder each.
AUDIO_CLASSES = ("chirp", "noise", "tone", "voice")


def audio_folder(
    root: str | os.PathLike[str] | None = None,
    *,
    num_files: int = 8,
    seconds: float = 1.5,
    seed: int = 0,
) -> Path:
    """A small folder of WAV files (tones, chirps, noise, voice-like), written on first use.

    The files are 16 kHz mono 16-bit PCM, spread over the sub-folders ``chirp``, ``noise``,
    ``tone`` and ``voice`` (:data:`AUDIO_CLASSES`); the same arguments always give the same
    bytes. Like :func:`image_folder`, the folder lives in the cache directory and is written into
    a temporary folder renamed into place once complete.

    Parameters
    ----------
    root : path, optional
        Cache directory (default: :func:`cache_dir`).
    num_files : int
        Number of WAV files (at least one per class when ``num_files >= 4``).
    seconds : float
        Length of every file.
    seed : int
        Seed of the content.

    Returns
    -------
    pathlib.Path
        The folder, one sub-folder per class (the layout ``readers.File(file_root=...)`` reads).

    Examples
    --------
    >>> import tempfile, soundfile as sf
    >>> from headrace import sample_data
    >>> d = sample_data.audio_folder(tempfile.mkdtemp(), num_files=4, seconds=0.5)
    >>> sorted(p.parent.name for p in d.glob("*/*.wav"))
    ['chirp', 'noise', 'tone', 'voice']
    >>> info = sf.info(str(next(d.glob("tone/*.wav"))))
    >>> info.samplerate, info.channels, info.frames, info.subtype
    (16000, 1, 8000, 'PCM_16')
    """
    import soundfile as sf

    _check_positive("num_files", num_files)
    if not seconds > 0:
        raise InvalidArgumentError(f"seconds must be positive (got {seconds!r}).")
    base = Path(root).expanduser() if root is not None else cache_dir()
    params = {
        "version": AUDIO_FORMAT_VERSION,
        "num_files": int(num_files),
        "seconds": float(seconds),
        "seed": int(seed),
    }

    def write(tmp: Path) -> None:
        k = len(AUDIO_CLASSES)
        for name in AUDIO_CLASSES[: min(k, num_files)]:
            (tmp / name).mkdir()
        for i in range(num_files):
            kind = AUDIO_CLASSES[i % k]
            signal = synthetic_audio(i, kind, seconds, seed)
            sf.write(tmp / kind / f"{kind}_{i:03d}.wav", signal, AUDIO_SAMPLE_RATE, "PCM_16")

    name = f"audio-v{AUDIO_FORMAT_VERSION}-n{num_files}-t{seconds:g}-s{seed}"
    return _cached_folder(base, name, params, write)


def synthetic_audio(index: int, kind: str, seconds: float = 1.5, seed: int = 0) -> np.ndarray:
    """One deterministic float32 mono signal at 16 kHz, in [-1, 1], of the class ``kind``.

    ``"tone"``: two or three steady sines; ``"chirp"``: an exponential sweep; ``"noise"``:
    band-limited noise bursts; ``"voice"``: harmonics of a gliding pitch, with syllable-like
    loudness. Every file fades in and out and carries a little background noise.

    Examples
    --------
    >>> from headrace.sample_data import synthetic_audio
    >>> a = synthetic_audio(0, "chirp", 0.25)
    >>> a.dtype, a.shape, bool(abs(a).max() <= 1.0)
    (dtype('float32'), (4000,), True)
    """
    if kind not in AUDIO_CLASSES:
        raise InvalidArgumentError(f"kind must be one of {AUDIO_CLASSES} (got {kind!r}).")
    sr = AUDIO_SAMPLE_RATE
    rng = np.random.default_rng([seed, index, AUDIO_CLASSES.index(kind)])
    n = max(1, round(seconds * sr))
    t = np.arange(n) / sr
    if kind == "tone":
        freqs = rng.uniform(200, 4000, int(rng.integers(2, 4)))
        x = sum(np.sin(2 * np.pi * f * t + rng.uniform(0, 6.3)) for f in freqs) / len(freqs)
    elif kind == "chirp":
        f0, f1 = rng.uniform(100, 300), rng.uniform(3000, 7000)
        if rng.random() < 0.5:
            f0, f1 = f1, f0
        rate = np.log(f1 / f0) / seconds
        x = np.sin(2 * np.pi * f0 * (np.exp(rate * t) - 1) / rate)
    elif kind == "noise":
        white = rng.standard_normal(n)
        spec = np.fft.rfft(white)
        freqs = np.fft.rfftfreq(n, 1 / sr)
        lo = rng.uniform(300, 3000)
        spec[(freqs < lo) | (freqs > lo * rng.uniform(1.5, 3.0))] = 0
        x = np.fft.irfft(spec, n)
        x /= max(float(np.abs(x).max()), 1e-9)
        bursts = np.sin(2 * np.pi * rng.uniform(1.5, 4.0) * t + rng.uniform(0, 6.3)) > -0.3
        x *= bursts
    else:  # voice
        f0 = rng.uniform(100, 220) * (1 + rng.uniform(-0.3, 0.3) * t / seconds)
        phase = 2 * np.pi * np.cumsum(f0) / sr
        x = sum(np.sin(k * phase) / k for k in range(1, 12))
        x *= 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(2.0, 5.0) * t) ** 2
        x /= max(float(np.abs(x).max()), 1e-9)
    fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.02)
    x = 0.6 * x * fade + rng.normal(0, 0.003, n)
    return np.clip(x, -1.0, 1.0).astype(np.float32)


# --- COCO detection data ---------------------------------------------------------------------
#: Bump when the generated detection data change, so that old caches are not reused.
COCO_FORMAT_VERSION = 1
#: The categories of :func:`coco_folder` (sparse ids, as COCO's are), one per shape kind.
COCO_CATEGORIES = (
    {"id": 1, "name": "disc"},
    {"id": 3, "name": "box"},
    {"id": 6, "name": "polygon"},
    {"id": 9, "name": "stroke"},
)


def synthetic_detection_image(
    index: int, seed: int = 0
) -> tuple[np.ndarray, list[tuple[int, tuple[int, int, int, int]]]]:
    """One photo-like RGB image with 1 to 6 labelled objects, and the objects.

    The objects are sharp discs, boxes, polygons and strokes drawn over a textured background
    (later objects may hide parts of earlier ones); each comes as ``(kind, (x, y, w, h))``:
    the index of its category in :data:`COCO_CATEGORIES` and its bounding box in pixels.

    Examples
    --------
    >>> from headrace.sample_data import synthetic_detection_image
    >>> img, objects = synthetic_detection_image(0)
    >>> img.dtype.name, 1 <= len(objects) <= 6
    ('uint8', True)
    >>> kind, (x, y, w, h) = objects[0]
    >>> 0 <= x and x + w <= img.shape[1] and 0 <= y and y + h <= img.shape[0]
    True
    """
    rng = np.random.default_rng([seed, index, 7])
    w, h = _SIZES[int(rng.integers(len(_SIZES)))]
    img = _background(rng, h, w, rng.random())
    _texture_patch(rng, img)
    for _ in range(int(rng.integers(2, 5))):  # unlabelled, defocused clutter
        _shape(rng, img, _random_color(rng, rng.random()), int(rng.integers(4)), True)
    objects = []
    for _ in range(int(rng.integers(1, 7))):
        kind = int(rng.integers(len(COCO_CATEGORIES)))
        color = _random_color(rng, rng.random(), sat=0.85)
        box = _shape(rng, img, color, kind, blur=False, big=rng.random() < 0.3)
        if box is not None and box[2] > 1 and box[3] > 1:
            objects.append((kind, box))
    noise = rng.standard_normal((h, w, 3), dtype=np.float32)
    cv2.scaleAdd(noise, float(rng.uniform(4.0, 9.0)), img, dst=img)
    return np.clip(img, 0, 255, out=img).astype(np.uint8), objects


def coco_folder(
    root: str | os.PathLike[str] | None = None,
    *,
    num_images: int = 64,
    seed: int = 0,
) -> Path:
    """A small COCO-format detection data set, written on first use and reused afterwards.

    The folder holds ``images/`` (JPEG files from :func:`synthetic_detection_image`, about
    500x375) and ``annotations.json`` (COCO's ``images``, ``annotations`` with ``bbox``,
    ``area``, ``iscrowd`` and ``categories``: :data:`COCO_CATEGORIES`), the layout
    ``readers.COCO(file_root=folder / "images", annotations_file=folder /
    "annotations.json")`` reads. It lives in the cache directory like :func:`image_folder`.

    Parameters
    ----------
    root : path, optional
        Cache directory (default: :func:`cache_dir`).
    num_images : int
        Number of images.
    seed : int
        Seed of the content; the same arguments always give the same files.

    Returns
    -------
    pathlib.Path
        The data set's folder.

    Examples
    --------
    >>> import json, tempfile
    >>> from headrace import sample_data
    >>> d = sample_data.coco_folder(tempfile.mkdtemp(), num_images=3)
    >>> doc = json.loads((d / "annotations.json").read_text())
    >>> len(doc["images"]), len(list((d / "images").glob("*.jpg")))
    (3, 3)
    >>> sorted(doc["annotations"][0])
    ['area', 'bbox', 'category_id', 'id', 'image_id', 'iscrowd']
    """
    _check_positive("num_images", num_images)
    base = Path(root).expanduser() if root is not None else cache_dir()
    params = {
        "version": COCO_FORMAT_VERSION,
        "num_images": int(num_images),
        "seed": int(seed),
        "opencv": cv2.__version__,
    }

    def write(tmp: Path) -> None:
        (tmp / "images").mkdir()
        images, anns = [], []
        for i in range(num_images):
            rgb, objects = synthetic_detection_image(i, seed)
            name = f"{i:06d}.jpg"
            (tmp / "images" / name).write_bytes(encode_jpeg(rgb))
            h, w = rgb.shape[:2]
            images.append({"id": i + 1, "file_name": name, "width": w, "height": h})
            for kind, (x, y, bw, bh) in objects:
                anns.append({
                    "id": len(anns) + 1, "image_id": i + 1,
                    "category_id": COCO_CATEGORIES[kind]["id"], "bbox": [x, y, bw, bh],
                    "area": bw * bh, "iscrowd": 0,
                })  # fmt: skip
        doc = {"images": images, "annotations": anns, "categories": list(COCO_CATEGORIES)}
        (tmp / "annotations.json").write_text(json.dumps(doc))

    name = f"coco-v{COCO_FORMAT_VERSION}-n{num_images}-s{seed}"
    return _cached_folder(base, name, params, write)


def write_video(
    path: str | os.PathLike[str],
    frames: Iterable[np.ndarray],
    *,
    codec: str = "ffv1",
    rate: int = 25,
    pix_fmt: str | None = None,
    options: dict[str, str] | None = None,
) -> Path:
    """Write RGB ``H x W x 3`` uint8 ``frames`` as a video file with PyAV (``headrace[video]``).

    The default codec, FFV1 (lossless; use a ``.mkv`` name), decodes back to the same pixels; pass
    ``codec="libx264"`` (``.mp4``) for the usual lossy kind.

    Examples
    --------
    >>> import tempfile
    >>> import headrace as ndd
    >>> p = write_video(Path(tempfile.mkdtemp()) / "a.mkv",
    ...                 [np.full((16, 32, 3), k, np.uint8) for k in range(4)])
    >>> r = ndd.readers.Video(filenames=[p], sequence_length=4)
    >>> [np.asarray(v)[:, 0, 0, 0].tolist() for (v,) in r.next_epoch()]
    [[0, 1, 2, 3]]
    """
    try:
        import av
    except ImportError as e:
        raise ImportError(
            "write_video needs PyAV: pip install headrace[video]  (or: pip install 'av>=12')."
        ) from e
    path = Path(path)
    default_fmt = {"ffv1": "bgr0", "mjpeg": "yuvj420p"}.get(codec, "yuv420p")
    with av.open(str(path), "w") as c:
        stream = None
        for img in frames:
            if stream is None:
                stream = c.add_stream(codec, rate=rate, options=options or {})
                stream.height, stream.width = img.shape[:2]
                stream.pix_fmt = pix_fmt or default_fmt
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                c.mux(packet)
        if stream is not None:
            for packet in stream.encode():
                c.mux(packet)
    return path


__all__ = [
    "AUDIO_CLASSES",
    "AUDIO_FORMAT_VERSION",
    "AUDIO_SAMPLE_RATE",
    "COCO_CATEGORIES",
    "COCO_FORMAT_VERSION",
    "FORMAT_VERSION",
    "audio_folder",
    "cache_dir",
    "coco_folder",
    "encode_jpeg",
    "image_folder",
    "synthetic_audio",
    "synthetic_detection_image",
    "synthetic_image",
    "write_video",
]
