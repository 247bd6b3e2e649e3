"""One row per registered operator schema: how to call it, example inputs, arguments and flags.

``tests/ops/test_op_table.py`` runs :func:`tests._helpers.contract.check_op` on every case of every
row and fails when a schema of ``headrace._dispatch.schema.REGISTRY`` has no row (or a row names no
schema). Each :class:`Row` holds

* ``op``: the public function, called as ``op(*batches, **args)``;
* ``cases``: example inputs (lists of numpy samples, or a function making them: encoded images,
  file paths) with real, non-trivial arguments, per-sample ``Batch`` arguments included;
* flags checked against the schema: ``random``, ``devices``, ``per_sample`` (the schema has
  per-sample arguments, and then some case passes one);
* ``empty``: what a batch of 0 samples gives (``True``: a batch of 0 samples, or the error type);
* ``bad``: one invalid call (argument overrides, error type) every eval mode must reject alike.

Only the public API (``import headrace as ndd``) is used.
"""

from __future__ import annotations

import atexit
import functools
import io
import operator
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

import headrace as ndd
from headrace._core.errors import InvalidArgumentError, InvalidTypeError, ShapeError
from tests._helpers.contract import DROP, INPUTS

Samples = Sequence[np.ndarray]
Inputs = tuple[Samples, ...] | Callable[[], tuple[Samples, ...]]
#: ``Case.out_layout`` default: the output has the first input's layout.
SAME = "<same as input>"


@dataclass(frozen=True)
class Case:
    """One call of a row's operator: inputs, arguments, tolerances and expected output traits."""

    inputs: Inputs = ()
    args: Mapping[str, Any] = field(default_factory=dict)
    layout: str | tuple[str | None, ...] | None = None
    n: int | None = None
    atol: float = 0
    gpu_atol: float | None = None
    gpu_by_device: bool | None = None
    out_layout: str | None = SAME
    out_dtype: ndd.DType | None = None
    check: Callable[[ndd.Batch], bool] | None = None
    batch_level: bool = False
    marks: tuple[Any, ...] = ()
    id: str = ""
    output: int | None = None

    def samples(self) -> tuple[Samples, ...]:
        """The inputs' samples (made on first use for generated data)."""
        return self.inputs() if callable(self.inputs) else self.inputs


@dataclass(frozen=True)
class Row:
    """Everything the contract needs about one registered schema."""

    schema: str
    op: Callable[..., Any]
    cases: tuple[Case, ...]
    empty: bool | type[BaseException]
    bad: tuple[Mapping[str, Any], type[BaseException]]
    random: bool = False
    devices: tuple[str, ...] = ("cpu", "gpu")
    per_sample: bool = True
    gpu_by_device: bool = False
    xfail: Mapping[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------- example data


def _integers(rng: np.random.Generator, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.integers(0, 256, s, dtype=np.uint8) for s in shapes]


def _floats(rng: np.random.Generator, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [rng.random(s, dtype=np.float32) for s in shapes]


def _pattern(h: int, w: int, c: int = 3, seed: int = 0) -> np.ndarray:
    """Smooth pattern plus noise, uint8 HWC (realistic for resampling comparisons)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    base = 127 + 60 * (np.sin(xx / 7.0) * np.cos(yy / 5.0))[..., None]
    return np.clip(base + rng.normal(0, 30, (h, w, c)), 0, 255).astype(np.uint8)


_rng = np.random.default_rng(7)
COLOR = _integers(_rng, (5, 7, 3), (9, 4, 3), (6, 6, 3))
COLOR_SEQS = _floats(_rng, (2, 4, 5, 3), (3, 3, 2, 3))
_rng = np.random.default_rng(11)
FILTER = _integers(_rng, (12, 15, 3), (20, 9, 3), (16, 16, 3))
VOLUMES = _floats(_rng, (4, 6, 5, 2), (3, 3, 7, 2))
_rng = np.random.default_rng(5)
WARP = _integers(_rng, (14, 19, 3), (21, 10, 3), (16, 16, 3))
WARP_SEQS = _floats(_rng, (2, 6, 9, 3), (3, 8, 5, 3))
WARP_GRAY = [r[..., 0].copy() for r in WARP]
GEOM = [_pattern(37, 53), _pattern(64, 41, seed=1), _pattern(50, 50, seed=2)]
GEOM_FLOATS = _floats(np.random.default_rng(3), (7, 9, 2), (12, 5, 2))
_rng = np.random.default_rng(13)
SMALL = _integers(_rng, (4, 6, 3), (5, 3, 3), (2, 7, 3))
SMALL_F = _floats(_rng, (4, 6, 3), (5, 3, 3), (2, 7, 3))
SMALL_POS = [s // 2 + 1 for s in SMALL]
SMALL_I16 = [_rng.integers(-300, 300, s.shape, dtype=np.int16) for s in SMALL]
VECTORS = [np.arange(k, dtype=np.int32) * 3 - 4 for k in (5, 2, 7)]
LABELS = [np.array(v, np.int32) for v in ([0, 3, 1], [2], [4, 4, 0, 1])]
UNITS = [np.zeros((1, k, 1), np.float32) + k for k in (3, 1, 4)]
CHANNEL_MEANS = [s.mean(axis=(0, 1)).astype(np.float32) for s in SMALL]
SEQS = [np.arange(k * 6, dtype=np.int16).reshape(k, 3, 2) - 7 for k in (4, 2, 3)]

SHIFT = np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]], np.float32)
ZOOM = np.array([[0.8, 0.1, 1.5], [-0.2, 1.1, 0.5]], np.float32)
NN, LINEAR, CUBIC = ndd.types.INTERP_NN, ndd.types.INTERP_LINEAR, ndd.types.INTERP_CUBIC


# image and experimental operators
_rng = np.random.default_rng(17)
BAYER = _integers(_rng, (8, 10), (12, 6), (6, 6))
KERNELS = [(_rng.random(s, dtype=np.float32) - 0.3) for s in ((3, 3), (3, 5), (4, 2))]
FILLS = [np.array(v, np.uint8) for v in (7, 0, 250)]
MAPS_X = [(_rng.random(s, dtype=np.float32) * 22 - 2) for s in ((7, 9), (5, 4), (8, 8))]
MAPS_Y = [(_rng.random(m.shape, dtype=np.float32) * 24 - 2) for m in MAPS_X]
HOMOGRAPHIES = [
    np.array([[1.1, 0.1, -1.0], [0.05, 0.9, 1.0], [0.002, 0.001, 1.0]], np.float32),
    np.array([[0.9, -0.1, 2.0], [0.1, 1.0, -1.0], [0.0, 0.003, 1.0]], np.float32),
    np.eye(3, dtype=np.float32),
]

_rng = np.random.default_rng(19)
POINTS = _floats(_rng, (5, 2), (1, 2), (7, 2))
POINTS3 = _floats(_rng, (4, 3), (2, 3), (0, 3))
AFFINES = [(_rng.random((2, 3), dtype=np.float32) - 0.5) * 4 for _ in range(3)]
AFFINES3 = [(_rng.random((3, 4), dtype=np.float32) - 0.5) * 4 for _ in range(3)]


# detection and segmentation operators
_rng = np.random.default_rng(23)


def _rand_boxes(k: int) -> np.ndarray:
    lt = _rng.random((k, 2), dtype=np.float32) * 0.6
    return np.concatenate([lt, lt + 0.1 + _rng.random((k, 2), dtype=np.float32) * 0.3], 1)


BOXES = [_rand_boxes(k) for k in (3, 1, 5)]
BOX_LABELS = [np.arange(1, len(b) + 1, dtype=np.int32) for b in BOXES]
ANCHORS = np.array(
    [[x, y, x + 0.3, y + 0.3] for x in (0.0, 0.25, 0.5, 0.7) for y in (0.0, 0.35, 0.7)], np.float32
)
_rng = np.random.default_rng(31)
PASTE_IMGS = [_rng.integers(0, 255, s, dtype=np.uint8) for s in ((8, 7, 3), (6, 9, 3), (7, 7, 3))]
PASTE_SAME = [_rng.integers(0, 255, (6, 8, 1), dtype=np.uint8) for _ in range(3)]
IMAGE_SHAPES = [np.array(s, np.int64) for s in ((100, 200, 3), (50, 40, 3), (64, 64, 1))]
_rng = np.random.default_rng(29)
LABEL_MAPS = [_rng.integers(0, 3, s).astype(np.int32) for s in ((7, 9), (5, 5), (6, 8))]
LABEL_VOLS = [_rng.integers(0, 2, s).astype(np.uint8) for s in ((3, 4, 5), (2, 3, 3))]
MASK_IDS = [np.array(v, np.int32) for v in ([1], [2, 0], [0])]
POLYGONS = [np.array([[0, 0, 3], [1, 3, 5], [2, 5, 8]], np.int32)] * 3
VERTICES = [np.arange(16, dtype=np.float32).reshape(8, 2) + k for k in range(3)]


def per_sample(*values: object, dtype: Any = None) -> ndd.Batch:
    """One argument value per sample (float32, or int32 when all are integers, unless ``dtype``)."""
    arrs = [np.asarray(v) for v in values]
    if dtype is None:
        dtype = np.float32 if any(a.dtype.kind == "f" for a in arrs) else np.int32
    return ndd.batch([a.astype(dtype) for a in arrs])


def _encode(img: np.ndarray, ext: str) -> np.ndarray:
    if ext == ".png":  # Pillow for PNG, OpenCV for JPEG
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="PNG")
        return np.frombuffer(buf.getvalue(), np.uint8).copy()
    ok, enc = cv2.imencode(ext, img[..., ::-1].copy())
    assert ok
    return enc.ravel()


@functools.cache
def encoded() -> tuple[Samples]:
    """JPEG and PNG files of a few sizes, as 1-D uint8 samples."""
    imgs = [_pattern(24 + 6 * i, 30 + 5 * i, seed=i) for i in range(3)]
    return ([_encode(imgs[0], ".jpg"), _encode(imgs[1], ".png"), _encode(imgs[2], ".jpg")],)


@functools.cache
def encoded_with_region() -> tuple[Samples, Samples, Samples]:
    """:func:`encoded` with per-sample float anchors and integer shapes (x, y order)."""
    anchors = [np.array(a, np.float32) for a in ([0.1, 0.2], [0.0, 0.5], [0.25, 0.0])]
    shapes = [np.array(s, np.int32) for s in ([10, 8], [5, 5], [20, 1])]
    return (encoded()[0], anchors, shapes)


@functools.cache
def lz4_frames() -> tuple[Samples]:
    """LZ4 blocks: two samples of 2 and 3 chunks, each chunk a (4, 5) uint8 frame."""
    import lz4.block

    frames = [_pattern(4, 5, 1, seed=k)[..., 0] for k in range(5)]
    blocks = [lz4.block.compress(f.tobytes(), store_size=False) for f in frames]
    return ([np.frombuffer(b"".join(blocks[:2]), np.uint8).copy(),
             np.frombuffer(b"".join(blocks[2:]), np.uint8).copy()],)  # fmt: skip


def _lz4_sizes() -> ndd.Batch:
    import lz4.block

    frames = [_pattern(4, 5, 1, seed=k)[..., 0] for k in range(5)]
    n = [len(lz4.block.compress(f.tobytes(), store_size=False)) for f in frames]
    return _ps(n[:2], n[2:])


@functools.cache
def lz4_whole() -> tuple[Samples]:
    """One LZ4 block per sample: (3, 4) int16 tensors."""
    import lz4.block

    xs = [np.arange(12, dtype=np.int16).reshape(3, 4) * (k + 1) for k in range(3)]
    return ([np.frombuffer(lz4.block.compress(x.tobytes(), store_size=False), np.uint8).copy()
             for x in xs],)  # fmt: skip


def npy_files() -> tuple[Samples]:
    """``.npy`` files (C order, Fortran order, big-endian) of 2-D arrays, as 1-D uint8 samples."""
    arrays = [
        np.arange(12, dtype=np.int16).reshape(3, 4),
        np.asfortranarray(np.arange(10, dtype=np.int16).reshape(2, 5) - 4),
        np.arange(6, dtype=">i2").reshape(3, 2),
    ]
    out = []
    for a in arrays:
        buf = io.BytesIO()
        np.save(buf, a)
        out.append(np.frombuffer(buf.getvalue(), np.uint8).copy())
    return (out,)


@functools.cache
def _tmpdir() -> Path:
    d = Path(tempfile.mkdtemp(prefix="headrace-op-table-"))
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def _paths(names: Sequence[str]) -> list[np.ndarray]:
    return [np.frombuffer(str(_tmpdir() / n).encode(), np.uint8).copy() for n in names]


@functools.cache
def files() -> tuple[Samples]:
    """UTF-8 paths of temporary files (one of them empty)."""
    contents = {"a.bin": b"headrace", "b.bin": bytes(range(200)), "empty.bin": b""}
    for name, data in contents.items():
        (_tmpdir() / name).write_bytes(data)
    return (_paths(list(contents)),)


# ------------------------------------------------------------------------ public-API adapters


def binary(a: Any, b: Any, /, *, fn: Callable[[Any, Any], Any]) -> Any:
    """``fn(a, b)``: arithmetic through the Tensor/Batch operators and ``ndd.math``."""
    return fn(a, b)


def unary(a: Any, /, *, fn: Callable[[Any], Any]) -> Any:
    """``fn(a)``: unary arithmetic."""
    return fn(a)


def subscript(x: Any, /, *, lo: Any, at: Any, step: int = 1) -> Any:
    """``x[lo::step, at]`` per sample (``Batch.slice``; plain indexing for a Tensor)."""
    if isinstance(x, ndd.Batch):
        return x.slice[lo::step, at]
    return x[int(np.asarray(lo.cpu() if isinstance(lo, ndd.Tensor) else lo)) :: step, int(at)]


# speech features: 1-D signals (sine, chirp, noise), spectra "ft", mel spectrograms in dB
_rng = np.random.default_rng(17)
_t = np.arange(700) / 8000
AUDIO = [
    np.sin(2 * np.pi * 440 * _t).astype(np.float32),
    np.sin(2 * np.pi * (100 + 2000 * _t[:513]) * _t[:513]).astype(np.float32),
    (_rng.standard_normal(300) * 0.1).astype(np.float32),
]
AUDIO_I16 = [(a * 20000).astype(np.int16) for a in AUDIO]
SPECTRA = [(_rng.random((33, k)) * 10).astype(np.float32) for k in (7, 12, 1)]
MELS_DB = [(_rng.random((12, k)) * 80 - 80).astype(np.float32) for k in (5, 9, 2)]
SILENCE_CUT = [
    np.concatenate([np.zeros(300), _rng.standard_normal(200), np.zeros(150)]).astype(np.float32),
    np.zeros(400, np.float32),
    _rng.standard_normal(50).astype(np.float32),
]


def nonsilent_both(x: Any, /, **kw: Any) -> Any:
    """``nonsilent_region``'s (begin, length), stacked: one output the contract can check."""
    begin, length = ndd.nonsilent_region(x, **kw)
    return ndd.stack(begin, length)


def _ps(*values: object) -> ndd.Batch:
    return per_sample(*values)


@functools.cache
def video_files() -> tuple[Samples]:
    """Three small lossless videos (FFV1 in Matroska, 12-16 frames) as 1-D uint8 samples."""
    from tests._helpers.videos import write_video

    return ([write_video(n=12 + 2 * k, h=16, w=24 + 8 * k) for k in range(3)],)


@functools.cache
def audio_files() -> tuple[Samples]:
    """WAV (stereo, 16-bit), FLAC (mono) and OGG/Vorbis (stereo) files, as 1-D uint8 samples."""
    import soundfile as sf

    rng = np.random.default_rng(23)
    out = []
    for k, (fmt, sub, rate, ch) in enumerate(
        (("WAV", "PCM_16", 16000, 2), ("FLAC", "PCM_16", 8000, 1), ("OGG", "VORBIS", 22050, 2))
    ):
        n = 400 + 150 * k
        t = np.arange(n) / rate
        x = 0.4 * np.sin(2 * np.pi * 440 * t)[:, None] + 0.05 * rng.standard_normal((n, ch))
        buf = io.BytesIO()
        sf.write(buf, x.astype(np.float32), rate, format=fmt, subtype=sub)
        out.append(np.frombuffer(buf.getvalue(), np.uint8).copy())
    return (out,)


def _audio_signal(*args: Any, **kwargs: Any) -> Any:
    """``decoders.audio``'s first output (the signals)."""
    return ndd.decoders.audio(*args, **kwargs)[0]


SIGNALS = [np.sin(np.arange(n, dtype=np.float32) / 3) for n in (50, 37, 64)]
SIGNALS_2 = [np.stack([s, s[::-1] * 0.5], 1) for s in SIGNALS]
SIGNALS_I16 = [(s * 20000).astype(np.int16) for s in SIGNALS]


# ------------------------------------------------------------------------------- the table

#: Real bugs the contract found (``src/`` is fixed elsewhere); each xfail is strict.

ROWS: tuple[Row, ...] = (
    # ------------------------------------------------------------------------------- colour
    Row(
        "brightness",
        ndd.brightness,
        (Case((COLOR,), {"brightness": _ps(0.5, 1.0, 1.7), "brightness_shift": 0.1}, "HWC"),),
        empty=True,
        bad=({"brightness_shift": "x"}, ValueError),
    ),
    Row(
        "contrast",
        ndd.contrast,
        (Case((COLOR,), {"contrast": _ps(0.5, 1.0, 1.7), "contrast_center": 40.0}, "HWC"),),
        empty=True,
        bad=({"contrast": "x"}, ValueError),
    ),
    Row(
        "brightness_contrast",
        ndd.brightness_contrast,
        (
            Case((COLOR,), {"brightness": _ps(0.5, 1.0, 1.7), "contrast": 1.3}, "HWC"),
            Case((COLOR,), {"brightness_shift": 0.1, "dtype": ndd.float32}, "HWC"),
        ),
        empty=True,
        bad=({INPUTS: ([np.zeros((2, 2, 3), np.bool_)] * 3,)}, ValueError),
    ),
    Row(
        "color_twist",
        ndd.color_twist,
        (
            Case((COLOR,), {"hue": _ps(10, -45, 200), "saturation": 0.4}, "HWC", gpu_atol=1),
            Case(
                (COLOR_SEQS,),
                {"brightness": 1.2},
                "FHWC",
                gpu_atol=1e-5,
                out_dtype=ndd.float32,
                id="float-sequences",
            ),
        ),
        empty=True,
        bad=({INPUTS: ([COLOR[0], np.zeros((4, 4, 4), np.uint8)],)}, ShapeError),
    ),
    Row(
        "hsv",
        ndd.hsv,
        (
            Case(
                (COLOR,), {"hue": 30.0, "saturation": _ps(0, 1, 2), "value": 0.8}, "HWC", gpu_atol=1
            ),
        ),
        empty=True,
        bad=({INPUTS: ([np.zeros((3, 4, 4), np.uint8)] * 3,)}, ShapeError),
    ),
    Row(
        "hue",
        ndd.hue,
        (Case((COLOR,), {"hue": _ps(90, 180, 270)}, "HWC", gpu_atol=1),),
        empty=True,
        bad=({INPUTS: ([np.zeros((4, 4, 2), np.uint8)] * 3,)}, ShapeError),
    ),
    Row(
        "saturation",
        ndd.saturation,
        (Case((COLOR,), {"saturation": _ps(0.0, 0.5, 1.5)}, "HWC", gpu_atol=1),),
        empty=True,
        bad=({"saturation": _ps(1, 1, -1)}, InvalidArgumentError),
    ),
    Row(
        "color_space_conversion",
        ndd.color_space_conversion,
        (Case((COLOR,), {"image_type": ndd.types.RGB, "output_type": "ycbcr"}, "HWC", gpu_atol=1),),
        empty=True,
        bad=({INPUTS: ([s.astype(np.float32) for s in COLOR],)}, InvalidTypeError),
        per_sample=False,
    ),
    Row(
        "normalize",
        ndd.normalize,
        (
            Case((COLOR,), {"mean": _ps(10, 100, 200), "stddev": 50.0}, "HWC", gpu_atol=1e-4),
            Case(
                (COLOR,), {"axis_names": "HW", "scale": 64.0, "dtype": ndd.int16}, "HWC", gpu_atol=1
            ),
        ),
        empty=True,
        bad=({"axes": [0], "axis_names": "H"}, InvalidArgumentError),
    ),
    Row(
        "lookup_table",
        ndd.lookup_table,
        (
            Case(
                (COLOR,),
                {"keys": [0, 5, 255], "values": [1.0, 2.0, 3.0], "default_value": 9},
                "HWC",
            ),
        ),
        empty=True,
        bad=({INPUTS: (COLOR_SEQS[:1] * 3,)}, InvalidTypeError),
        per_sample=False,
    ),
    # ------------------------------------------------------------------------------ filters
    Row(
        "gaussian_blur",
        ndd.gaussian_blur,
        (
            Case(
                (FILTER,),
                {"sigma": _ps([0.8, 0.8], [1.5, 1.5], [1.0, 2.5])},
                "HWC",
                gpu_atol=1,
                out_dtype=ndd.uint8,
            ),
            Case(
                (FILTER,),
                {"window_size": 5, "dtype": ndd.float32},
                "HWC",
                gpu_atol=1e-3,
                out_dtype=ndd.float32,
            ),
            Case(
                (VOLUMES,),
                {"sigma": [0.5, 1.0, 1.5]},
                "DHWC",
                gpu_atol=1e-5,
                out_dtype=ndd.float32,
                id="volumes",
            ),
        ),
        empty=True,
        bad=({"window_size": per_sample(3, 4, 5, dtype=np.int32)}, InvalidArgumentError),
    ),
    Row(
        "laplacian",
        ndd.laplacian,
        (
            Case(
                (FILTER,),
                {
                    "window_size": _ps([3, 3], [5, 3], [7, 7]),
                    "scale": _ps([0.5, 0.5], [1.0, 1.0], [0.25, 0.1]),
                },
                "HWC",
                out_dtype=ndd.uint8,
            ),
            Case(
                (FILTER,),
                {
                    "window_size": 5,
                    "smoothing_size": 1,
                    "normalized_kernel": True,
                    "dtype": ndd.float32,
                },
                "HWC",
                gpu_atol=1e-4,
                out_dtype=ndd.float32,
            ),
            Case((VOLUMES,), {"smoothing_size": [1, 3, 5]}, "DHWC", gpu_atol=1e-4, id="volumes"),
        ),
        empty=True,
        bad=({"window_size": 4}, InvalidArgumentError),
    ),
    Row(
        "grid_mask",
        ndd.grid_mask,
        (
            Case(
                (FILTER,),
                {"tile": per_sample(4, 6, 9, dtype=np.int32), "angle": 0.3},
                "HWC",
                out_dtype=ndd.uint8,
            ),
            Case(
                (FILTER,), {"ratio": _ps(0.2, 0.5, 0.8), "shift_x": 2.0}, "HWC", out_dtype=ndd.uint8
            ),
        ),
        empty=True,
        bad=({"tile": per_sample(4, 4, 0, dtype=np.int32)}, InvalidArgumentError),
    ),
    Row(
        "water",
        ndd.water,
        (
            Case(
                (FILTER,),
                {"ampl_x": 3.0, "mask": per_sample(1, 0, 1, dtype=np.int32)},
                "HWC",
                out_dtype=ndd.uint8,
            ),
            Case(
                (FILTER,),
                {"interp_type": LINEAR, "fill_value": 7.0},
                "HWC",
                gpu_atol=1,
                out_dtype=ndd.uint8,
            ),
        ),
        empty=True,
        bad=({"interp_type": CUBIC}, InvalidArgumentError),
    ),
    Row(
        "sphere",
        ndd.sphere,
        (
            Case(
                (FILTER,), {"mask": per_sample(0, 1, 1, dtype=np.int32)}, "HWC", out_dtype=ndd.uint8
            ),
        ),
        empty=True,
        bad=({INPUTS: ([s.astype(np.int16) for s in FILTER],)}, InvalidTypeError),
    ),
    Row(
        "jitter",
        ndd.jitter,
        (
            Case(
                (FILTER,),
                {"nDegree": 3, "mask": per_sample(1, 0, 1, dtype=np.int32)},
                "HWC",
                out_dtype=ndd.uint8,
            ),
        ),
        empty=True,
        bad=({"nDegree": -1}, InvalidArgumentError),
        random=True,
    ),
    Row(
        "noise.gaussian",
        ndd.noise.gaussian,
        (
            Case(
                (FILTER,),
                {"mean": _ps(-3, 0, 40), "stddev": _ps(2, 5, 10)},
                "HWC",
                out_dtype=ndd.uint8,
            ),
        ),
        empty=True,
        bad=({"stddev": _ps(1, -1, 1)}, InvalidArgumentError),
        random=True,
    ),
    Row(
        "noise.salt_and_pepper",
        ndd.noise.salt_and_pepper,
        (
            Case(
                (FILTER,),
                {"prob": _ps(0.1, 0.3, 0.5), "salt_vs_pepper": 0.7},
                "HWC",
                out_dtype=ndd.uint8,
            ),
            Case((SMALL_F,), {"prob": 0.4, "per_channel": True}, "HWC", id="float-per-channel"),
        ),
        empty=True,
        bad=({"prob": 1.5}, InvalidArgumentError),
        random=True,
    ),
    Row(
        "noise.shot",
        ndd.noise.shot,
        (Case((FILTER,), {"factor": _ps(2, 0.5, 8)}, "HWC", out_dtype=ndd.uint8),),
        empty=True,
        bad=({"factor": -1.0}, InvalidArgumentError),
        random=True,
    ),
    # ----------------------------------------------------------------------------- geometry
    Row(
        "resize",
        ndd.resize,
        (
            Case((GEOM,), {"size": _ps([20, 30], [40, 10], [33, 33])}, "HWC", gpu_atol=1),
            Case((GEOM,), {"resize_shorter": 24, "interp_type": _ps(0, 1, 2)}, "HWC", gpu_atol=1),
            Case((GEOM_FLOATS,), {"size": [20, 12], "interp_type": CUBIC}, "HWC", gpu_atol=1e-4),
        ),
        empty=True,
        bad=({"mode": "bogus"}, InvalidArgumentError),
    ),
    Row(
        "crop",
        ndd.crop,
        (
            Case((GEOM,), {"crop": [20, 25], "crop_pos_x": _ps(0.0, 0.3, 1.0)}, "HWC"),
            Case(
                (GEOM,),
                {
                    "crop_h": 60,
                    "crop_w": 45,
                    "out_of_bounds_policy": "pad",
                    "fill_values": [1, 2, 3],
                },
                "HWC",
            ),
        ),
        empty=True,
        bad=({"crop": [60, 60]}, ShapeError),
    ),
    Row(
        "crop_mirror_normalize",
        ndd.crop_mirror_normalize,
        (
            Case(
                (GEOM,),
                {"crop": [20, 20], "mirror": _ps(0, 1, 1), "mean": [120, 110, 100], "std": 50},
                "HWC",
                gpu_atol=1e-5,
                out_layout="CHW",
            ),
            Case((GEOM_FLOATS,), {"output_layout": "HWC", "std": [2.0, 4.0]}, "HWC", gpu_atol=1e-6),
        ),
        empty=True,
        bad=({"mean": [1.0, 2.0]}, InvalidArgumentError),
    ),
    Row(
        "random_resized_crop",
        ndd.random_resized_crop,
        (
            Case(
                ([_pattern(20, 30), _pattern(40, 60, seed=1), _pattern(33, 25, seed=2)],),
                {"size": [16, 12], "random_area": [0.3, 1.0], "interp_type": _ps(0, 1, 1)},
                "HWC",
                gpu_atol=1,
            ),
        ),
        empty=True,
        bad=({"random_area": [0.5, 0.1]}, InvalidArgumentError),
        random=True,
    ),
    Row(
        "flip",
        ndd.flip,
        (Case((GEOM,), {"horizontal": _ps(1, 0, 1), "vertical": _ps(0, 1, 1)}, "HWC"),),
        empty=True,
        bad=({INPUTS: ([np.zeros(5, np.uint8)] * 3,)}, ShapeError),
    ),
    Row(
        "slice",
        ndd.slice,
        (
            Case(
                (
                    GEOM,
                    [np.float32([0.1, 0.2]), np.float32([0.0, 0.5]), np.float32([0.3, 0.3])],
                    [np.float32([0.5, 0.4]), np.float32([0.9, 0.2]), np.float32([0.1, 0.6])],
                ),
                {},
                ("HWC", None, None),
                id="anchor-shape-inputs",
            ),
            Case((GEOM,), {"rel_start": _ps([0.1, 0.2], [0.0, 0.5], [0.3, 0.3])}, "HWC"),
        ),
        empty=True,
        bad=({"start": [100, 100], "shape": [5, 5]}, InvalidArgumentError),
    ),
    Row(
        "pad",
        ndd.pad,
        (
            Case((GEOM,), {"shape": [70, 70, 4], "fill_value": _ps(1.0, 2.0, 3.0)}, "HWC"),
            Case((GEOM,), {"axis_names": "HW", "shape": [70, 65], "align": [8, 16]}, "HWC"),
            Case(
                ([_pattern(5, 7), _pattern(5, 7, seed=1)],),
                {"fill_value": 3.0},
                "HWC",
                check=lambda out: [t.shape for t in out.tensors] == [(5, 7, 3)] * 2,
                id="equal-shapes",
            ),
        ),
        empty=True,
        bad=({"axes": [5]}, InvalidArgumentError),
    ),
    Row(
        "paste",
        ndd.paste,
        (Case((GEOM,), {"ratio": _ps(1.0, 1.5, 2.0), "fill_value": [9, 8, 7]}, "HWC"),),
        empty=True,
        bad=({"ratio": 0.5}, InvalidArgumentError),
    ),
    Row(
        "erase",
        ndd.erase,
        (
            Case(
                (GEOM,),
                {"anchor": _ps([3, 4], [10, 0], [0, 30]), "shape": [10, 12], "axis_names": "HW"},
                "HWC",
            ),
        ),
        empty=True,
        bad=({"anchor": [1, 2, 3], "shape": [10, 12], "axis_names": "HW"}, InvalidArgumentError),
    ),
    Row(
        "resize_crop_mirror",
        ndd.resize_crop_mirror,
        (
            Case(
                (GEOM,),
                {"resize_shorter": 40, "crop": [30, 30], "mirror": _ps(0, 1, 0)},
                "HWC",
                gpu_atol=1,
            ),
        ),
        empty=True,
        bad=({"crop": [10, 10, 10]}, InvalidArgumentError),
    ),
    Row(
        "tensor_resize",
        ndd.tensor_resize,
        (
            Case(
                (GEOM_FLOATS,),
                {"sizes": _ps([3, 4], [8, 2]), "axes": [0, 1]},
                gpu_atol=1e-5,
            ),
        ),
        empty=True,
        bad=({"sizes": [3, 4, 5], "axes": [0, 1]}, InvalidArgumentError),
    ),
    # --------------------------------------------------------------------------------- warp
    Row(
        "rotate",
        ndd.rotate,
        (
            Case((WARP,), {"angle": _ps(30.0, -75.0, 180.0)}, "HWC", gpu_atol=1),
            Case(
                (WARP,), {"angle": 20.0, "keep_size": True, "fill_value": 17.0}, "HWC", gpu_atol=1
            ),
            Case(
                (WARP,),
                {"angle": _ps(10, 20, 30), "size": _ps([8, 9], [12, 5], [7, 7])},
                "HWC",
                gpu_atol=1,
            ),
            Case(
                (WARP_SEQS,),
                {"angle": 40.0, "interp_type": NN},
                "FHWC",
                gpu_atol=1e-4,
                check=lambda out: out.shape[0][0] == 2,
                id="float-sequences",
            ),
        ),
        empty=True,
        bad=({"dtype": ndd.uint8, "output_dtype": ndd.float32}, InvalidArgumentError),
    ),
    Row(
        "warp_affine",
        ndd.warp_affine,
        (
            Case((WARP,), {"matrix": per_sample(SHIFT, ZOOM, SHIFT)}, "HWC", gpu_atol=1),
            Case((WARP,), {"matrix": SHIFT.ravel().tolist(), "interp_type": NN}, "HWC", gpu_atol=1),
            Case(
                (WARP,), {"matrix": ZOOM, "size": [11, 13], "inverse_map": False}, "HWC", gpu_atol=1
            ),
            Case(
                (WARP,),
                {"matrix": SHIFT, "dtype": ndd.float32, "fill_value": 0.0},
                "HWC",
                gpu_atol=1,
            ),
            Case(
                (WARP_GRAY,),
                {"matrix": ZOOM},
                "HW",
                gpu_atol=1,
                check=lambda out: out.shape == [g.shape for g in WARP_GRAY],
                id="gray",
            ),
            Case((WARP, [SHIFT, ZOOM, SHIFT]), {}, ("HWC", None), gpu_atol=1, id="matrix-input"),
        ),
        empty=True,
        bad=({"matrix": np.zeros((2, 3)), "inverse_map": False}, InvalidArgumentError),
    ),
    # ---------------------------------------------------------------------------- decoders
    Row(
        "decoders.audio",
        _audio_signal,
        (
            Case(audio_files, {}, out_layout=None, atol=0),
            Case(
                audio_files,
                {"sample_rate": _ps(11025.0, 16000.0, 8000.0), "downmix": True, "quality": 30},
                out_layout=None,
            ),
            Case(audio_files, {"dtype": ndd.int16, "sample_rate": 12000.0}, out_layout=None),
        ),
        empty=True,
        bad=({INPUTS: ([np.arange(50, dtype=np.uint8)] * 3,)}, ndd.DecodeError),
        devices=("cpu",),
    ),
    Row(
        "decoders.video",
        ndd.decoders.video,
        (
            Case(video_files, {}, out_layout="FHWC"),
            Case(
                video_files,
                {"start_frame": _ps(0, 3, 10), "sequence_length": 4, "stride": 2},
                out_layout="FHWC",
            ),
            Case(video_files, {"frames": [5, 1, 1], "build_index": False}, out_layout="FHWC"),
        ),
        empty=True,
        bad=({INPUTS: ([np.arange(50, dtype=np.uint8)] * 3,)}, ndd.DecodeError),
    ),
    Row(
        "audio_resample",
        ndd.audio_resample,
        (
            Case((SIGNALS,), {"in_rate": 16000.0, "out_rate": 22050.0}, atol=1e-6),
            Case((SIGNALS_2,), {"scale": _ps(0.5, 1.37, 2.0), "quality": 0}, atol=1e-6),
            Case((SIGNALS_I16,), {"out_length": _ps(20, 90, 64), "dtype": ndd.float32}, atol=1e-6),
        ),
        empty=True,
        bad=({"scale": 2.0, "in_rate": 3.0}, InvalidArgumentError),
    ),
    Row(
        "decoders.image",
        ndd.decoders.image,
        (
            Case(encoded, {}, out_layout="HWC"),
            Case(
                encoded,
                {"output_type": ndd.types.GRAY, "dtype": ndd.float32},
                out_layout="HWC",
                atol=0,
            ),
        ),
        empty=True,
        bad=({INPUTS: ([np.arange(50, dtype=np.uint8)] * 3,)}, ndd.DecodeError),
        per_sample=False,
        gpu_by_device=True,
    ),
    Row(
        "decoders.image_crop",
        ndd.decoders.image_crop,
        (
            Case(
                encoded, {"crop": (10, 12), "crop_pos_x": 0.0, "crop_pos_y": 1.0}, out_layout="HWC"
            ),
            Case(
                encoded,
                {"crop_h": _ps(5, 6, 7), "crop_w": 9.0, "crop_pos_x": _ps(0.2, 0.5, 1.0)},
                out_layout="HWC",
            ),
        ),
        empty=True,
        bad=({"crop": (1000, 10)}, ValueError),
        gpu_by_device=True,
    ),
    Row(
        "decoders.image_random_crop",
        ndd.decoders.image_random_crop,
        (
            Case(
                encoded, {"random_area": [0.2, 0.9], "output_type": ndd.types.BGR}, out_layout="HWC"
            ),
        ),
        empty=True,
        bad=({"on_error": "ignore"}, ValueError),
        random=True,
        per_sample=False,
        gpu_by_device=True,
    ),
    Row(
        "decoders.image_slice",
        ndd.decoders.image_slice,
        (
            Case(encoded_with_region, {}, out_layout="HWC", id="inputs"),
            Case(
                encoded,
                {
                    "start": _ps([2, 3], [0, 0], [5, 1]),
                    "rel_end": [0.5, 0.75],
                    "dtype": ndd.float32,
                },
                out_layout="HWC",
                id="arguments",
            ),
            Case(encoded, {"rel_start": 0.25, "shape": [6], "axis_names": "H"}, out_layout="HWC"),
        ),
        empty=True,
        bad=({"axis_names": "WQ"}, InvalidArgumentError),
        gpu_by_device=True,
    ),
    Row(
        "decoders.inflate",
        ndd.decoders.inflate,
        (
            Case(lz4_whole, {"shape": [3, 4], "dtype": ndd.int16}, out_layout=None, id="whole"),
            Case(
                lz4_frames,
                {"shape": [4, 5], "chunk_sizes": _lz4_sizes(), "layout": "HW"},
                out_layout="FHW",
                id="chunks",
            ),
        ),
        empty=True,
        bad=({"shape": [5, 5]}, ndd.DecodeError),
        gpu_by_device=True,
    ),
    Row(
        "decoders.numpy",
        ndd.decoders.numpy,
        (
            Case(npy_files, {}, out_layout=None),
            Case(npy_files, {"dtype": ndd.float32}, out_layout=None),
        ),
        empty=True,
        bad=({INPUTS: ([np.arange(50, dtype=np.uint8)] * 3,)}, ndd.DecodeError),
        per_sample=False,
        gpu_by_device=True,
    ),
    Row(
        "peek_image_shape",
        ndd.peek_image_shape,
        (Case(encoded, {"image_type": ndd.types.GRAY, "dtype": ndd.int32}, out_layout=None),),
        empty=True,
        bad=({"image_type": "xyz"}, ValueError),
        devices=("cpu",),
        per_sample=False,
    ),
    Row(
        "io.file.read",
        ndd.io.file.read,
        (Case(files, {}, out_layout=None),),
        empty=True,
        bad=({INPUTS: (_paths(["missing-1", "missing-2", "missing-3"]),)}, FileNotFoundError),
        devices=("cpu",),
        per_sample=False,
    ),
    # ------------------------------------------------------------------------------- random
    Row(
        "random.uniform",
        ndd.random.uniform,
        (
            Case((), {"range": [0.0, 10.0], "shape": [3]}, n=4, id="range"),
            Case((), {"values": [1.0, 2.5, 7.0], "shape": [2, 2]}, n=3, id="values"),
            Case((), {"range": _ps([0, 1], [5, 6], [-2, 2]), "shape": [2]}, id="per-sample"),
            Case((), {"range": _ps([0, 1], [5, 6])}, id="per-sample-scalar"),
            Case((SMALL,), {"range": [-1.0, 1.0]}, out_layout=None, id="shape-like"),
        ),
        empty=True,
        bad=({"range": [2.0, 1.0]}, InvalidArgumentError),
        random=True,
        gpu_by_device=True,
    ),
    Row(
        "random.normal",
        ndd.random.normal,
        (
            Case((), {"mean": 3.0, "stddev": 2.0, "shape": [5]}, n=3, id="scalar-args"),
            Case(
                (),
                {"mean": _ps(0, 10, -5), "stddev": _ps(1, 0.5, 3), "shape": [4]},
                id="per-sample",
            ),
            Case(
                (),
                {"mean": _ps(0, 10), "stddev": 2.0},
                id="per-sample-scalar",
            ),
        ),
        empty=True,
        bad=({"mean": "a"}, ValueError),
        random=True,
        gpu_by_device=True,
    ),
    Row(
        "random.coin_flip",
        ndd.random.coin_flip,
        (
            Case((), {"probability": 0.3, "shape": [16]}, n=3, id="scalar-args"),
            Case(
                (),
                {"probability": _ps(0.1, 0.5, 0.9), "shape": [16], "dtype": ndd.uint8},
                id="per-sample",
            ),
            Case((), {"probability": _ps(0.2, 0.7)}, id="per-sample-scalar"),
        ),
        empty=True,
        bad=({"probability": 2.0}, InvalidArgumentError),
        random=True,
        gpu_by_device=True,
    ),
    Row(
        "random.choice",
        ndd.random.choice,
        (
            Case(
                ([np.int32([10, 20, 30]), np.int32([1, 2, 3]), np.int32([7, 8, 9])],),
                {"shape": [6]},
            ),
            Case(
                ([np.int32(5), np.int32(3), np.int32(9)],),
                {"p": None, "shape": [4]},
                id="range-of-scalar",
            ),
            Case(
                ([np.float32([0.5, 1.5]), np.float32([2.5, 3.5]), np.float32([4.5, 5.5])],),
                {"p": _ps([0.2, 0.8], [0.5, 0.5], [0.9, 0.1]), "shape": [5]},
                id="weighted",
            ),
        ),
        empty=True,
        bad=({"p": [0.5, 0.5]}, InvalidArgumentError),
        random=True,
        devices=("cpu",),
    ),
    Row(
        "random.beta",
        ndd.random.beta,
        (
            Case((), {"alpha": 2.0, "beta": 5.0, "shape": [6]}, n=3, id="scalar-args"),
            Case((), {"alpha": _ps(0.5, 1, 3), "beta": _ps(1, 2, 0.5)}, id="per-sample"),
        ),
        empty=True,
        bad=({"alpha": 0.0}, InvalidArgumentError),
        random=True,
        devices=("cpu",),
    ),
    # ------------------------------------------------------------------------- arithmetic
    Row(
        "arithmetic_generic_op",
        binary,
        (
            Case((SMALL, SMALL_I16), {"fn": operator.add}, id="add-promotes"),
            Case((SMALL_F, SMALL_POS), {"fn": operator.truediv}, gpu_atol=1e-6, id="div"),
            Case((SMALL, SMALL_I16), {"fn": operator.lt}, id="compare"),
            Case((SMALL_I16, SMALL), {"fn": ndd.math.max}, id="max"),
            Case(
                (SMALL_F, [np.float32([1.0, 2.0, 3.0])] * 3), {"fn": operator.mul}, id="broadcast"
            ),
        ),
        empty=True,
        bad=({"fn": operator.and_, INPUTS: (SMALL_F, SMALL)}, InvalidArgumentError),
        per_sample=False,
    ),
    # ------------------------------------------------------------------------------- misc
    Row(
        "copy",
        ndd.copy,
        (
            Case((SMALL,), {}, "HWC"),
            Case(([np.float32(v) for v in (1, 2, 3)],), {}, id="scalars"),
        ),
        empty=True,
        bad=({"device": "tpu"}, ValueError),
        per_sample=False,
    ),
    Row(
        "cast",
        ndd.cast,
        (
            Case((SMALL_F,), {"dtype": ndd.uint8}, "HWC", id="float-to-uint8"),
            Case((SMALL_I16,), {"dtype": ndd.uint8}, "HWC", id="saturates"),
        ),
        empty=True,
        bad=({"dtype": DROP}, TypeError),
        per_sample=False,
    ),
    Row(
        "reshape",
        ndd.reshape,
        (
            Case((SMALL,), {"shape": _ps([2, -1], [9, 5], [7, 2, 3])}, "HWC", out_layout=None),
            Case((SMALL,), {"rel_shape": [1, -1]}, "HWC", out_layout=None, id="rel-shape"),
            Case(
                (SMALL,),
                {"src_dims": [2, 0, -1, 1], "layout": "CHXW"},
                "HWC",
                out_layout="CHXW",
                id="src-dims",
            ),
        ),
        empty=True,
        bad=({"shape": [7, 7]}, ShapeError),
    ),
    Row(
        "transpose",
        ndd.transpose,
        (
            Case((SMALL,), {"perm": [2, 0, 1]}, "HWC", out_layout="CHW"),
            Case((SMALL_F,), {"perm": [1, 0, 2], "output_layout": "ABC"}, "HWC", out_layout="ABC"),
        ),
        empty=True,
        bad=({"perm": [0, 0, 1]}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "expand_dims",
        ndd.expand_dims,
        (Case((SMALL,), {"axes": [0, 3], "new_axis_names": "FX"}, "HWC", out_layout="FHWXC"),),
        empty=True,
        bad=({"axes": [9]}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "squeeze",
        ndd.squeeze,
        (
            Case((UNITS,), {"axis_names": "F"}, "FWC", out_layout="WC"),
            Case((UNITS,), {"axes": [0, 2]}, "FWC", out_layout="W"),
        ),
        empty=True,
        bad=({"axis_names": DROP, "axes": [1]}, ShapeError),
        per_sample=False,
    ),
    Row(
        "zeros",
        ndd.zeros,
        (Case((), {"shape": [2, 3], "dtype": ndd.int16, "layout": "HW"}, n=3, out_layout="HW"),),
        empty=True,
        bad=({"dtype": "bogus"}, ValueError),
        per_sample=False,
        gpu_by_device=True,
    ),
    Row(
        "ones",
        ndd.ones,
        (Case((), {"shape": [4], "dtype": ndd.float64}, n=2, out_layout=None),),
        empty=True,
        bad=({"shape": [-2]}, ValueError),
        per_sample=False,
        gpu_by_device=True,
    ),
    Row(
        "full",
        ndd.full,
        (
            Case(
                ([np.float32([1, 2, 3]), np.float32([4, 5])],),
                {"dtype": ndd.int16},
                out_layout=None,
            ),
            Case(
                ([np.int32(7), np.int32(1)],),
                {"shape": [3, 2], "dtype": ndd.uint8},
                out_layout=None,
                id="scalar",
            ),
            Case(
                ([np.float32([1, 2, 3]), np.float32([4, 5, 6])],),
                {"shape": [2, 3]},
                out_layout=None,
                id="broadcast",
            ),
        ),
        empty=True,
        bad=({"dtype": "bogus"}, ValueError),
        per_sample=False,
    ),
    Row(
        "shapes",
        ndd.shapes,
        (Case((SMALL,), {}, "HWC", out_layout=None, out_dtype=ndd.int64),),
        empty=True,
        bad=({"dtype": "bogus"}, ValueError),
        per_sample=False,
    ),
    Row(
        "stack",
        ndd.stack,
        (
            Case((SMALL, SMALL), {"axis": 1, "axis_name": "S"}, ("HWC", "HWC"), out_layout="HSWC"),
            Case((SMALL_F, SMALL_F, SMALL_F), {}, out_layout=None, id="three"),
        ),
        empty=True,
        bad=({INPUTS: (SMALL, SMALL_F)}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "cat",
        ndd.cat,
        (Case((SMALL, SMALL), {"axis": 2}, ("HWC", "HWC")),),
        empty=True,
        bad=({"axis": 5}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "one_hot",
        ndd.one_hot,
        (
            # (batch-level: without axis, a lone one-element sample reads as a scalar)
            Case((LABELS,), {"num_classes": 5}, out_layout=None, batch_level=True),
            Case(
                (LABELS,),
                {"num_classes": 6, "axis": 0, "dtype": ndd.int32, "on_value": 4, "off_value": -1},
                out_layout=None,
                id="axis-0",
            ),
        ),
        empty=True,
        bad=({"num_classes": -1}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "per_frame",
        ndd.per_frame,
        (
            Case((SMALL,), {"replace": True}, "HWC", out_layout="FWC"),
            Case((SMALL,), {}, out_layout="F**", id="no-layout"),
        ),
        empty=True,
        bad=({"replace": False}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "_tensor_subscript",
        subscript,
        (
            Case((SMALL,), {"lo": per_sample(1, 0, 1), "at": 1}, "HWC", out_layout="HC"),
            Case(
                (SMALL,), {"lo": per_sample(0, 2, 1), "at": -1, "step": 2}, "HWC", out_layout="HC"
            ),
        ),
        empty=True,
        bad=({"at": 9}, IndexError),
    ),
    # --------------------------------------------------------------------------- reductions
    *(
        Row(
            f"reductions.{kind}",
            getattr(ndd.reductions, kind),
            (
                Case((SMALL,), {"axis_names": "HW"}, "HWC", gpu_atol=1e-6, out_layout="C"),
                Case(
                    (SMALL_I16,),
                    {"axes": [0, -1], "keep_dims": True, **extra},
                    "HWC",
                    gpu_atol=1e-6,
                    id="int16-keep-dims",
                ),
                Case((SMALL_F,), {}, "HWC", gpu_atol=1e-6, out_layout=None, id="float-all-axes"),
            ),
            empty=True,
            bad=({"axes": 3}, InvalidArgumentError),
            per_sample=False,
        )
        for kind, extra in (
            ("sum", {"dtype": ndd.int16}),
            ("min", {}),
            ("max", {}),
            ("mean", {"dtype": ndd.int16}),
            ("mean_square", {"dtype": ndd.int64}),
            ("rms", {"dtype": ndd.int16}),
        )
    ),
    *(
        Row(
            f"reductions.{kind}",
            getattr(ndd.reductions, kind),
            (
                Case(
                    (SMALL, CHANNEL_MEANS),
                    {"axis_names": "HW", "ddof": 1},
                    ("HWC", None),
                    gpu_atol=1e-5,
                    out_layout="C",
                ),
                Case(
                    (SMALL_F, [np.float32(0.5)] * 3),
                    {"axes": [0, 1], "keep_dims": True},
                    ("HWC", None),
                    gpu_atol=1e-6,
                    id="scalar-mean",
                ),
            ),
            empty=True,
            bad=({INPUTS: (SMALL, [np.zeros(2, np.float32)] * 3)}, ShapeError),
            per_sample=False,
        )
        for kind in ("std_dev", "variance")
    ),
    # ---------------------------------------------------------------- batch and type utilities
    Row(
        "batch_permutation",
        ndd.batch_permutation,
        (
            Case(
                (),
                {"no_fixed_points": True},
                n=5,
                out_layout=None,
                batch_level=True,
                check=lambda b: (
                    sorted(int(t.item()) for t in b.tensors) == list(range(5))
                    and all(int(t.item()) != i for i, t in enumerate(b.tensors))
                ),
            ),
            Case((), {"allow_repetitions": True}, n=6, out_layout=None, batch_level=True),
        ),
        empty=True,
        bad=({"no_fixed_points": [1, 2]}, ValueError),
        random=True,
        devices=("cpu",),
        per_sample=False,
    ),
    Row(
        "permute_batch",
        ndd.permute_batch,
        (
            Case((SMALL,), {"indices": per_sample(2, 0, 0)}, "HWC", batch_level=True),
            Case((SMALL,), {"indices": [1, 2, 0]}, "HWC", batch_level=True, id="list"),
        ),
        empty=True,
        bad=({"indices": per_sample(0, 3, 1)}, InvalidArgumentError),
    ),
    Row(
        "cast_like",
        ndd.cast_like,
        (
            Case((SMALL_F, SMALL_I16), {}, ("HWC", None), out_dtype=ndd.int16),
            Case((SMALL_I16, SMALL), {}, ("HWC", None), out_dtype=ndd.uint8, id="saturate"),
        ),
        empty=True,
        bad=({INPUTS: (SMALL, SMALL[:2])}, ShapeError),
        per_sample=False,
    ),
    Row(
        "full_like",
        ndd.full_like,
        (
            Case((SMALL, [np.float32(v) for v in (300.5, -2, 7.5)]), {}, ("HWC", None)),
            Case(
                (SMALL_I16, [np.array([1, -2, 3], np.int32)] * 3),
                {},
                ("HWC", None),
                id="broadcast",
            ),
        ),
        empty=True,
        bad=({INPUTS: (SMALL, [np.zeros(2, np.int32)] * 3)}, ShapeError),
        per_sample=False,
    ),
    *(
        Row(
            name,
            getattr(ndd, name),
            (
                Case((SMALL,), {"dtype": ndd.float32}, "HWC", out_dtype=ndd.float32),
                Case((SMALL_I16,), {}, "HWC", out_dtype=ndd.int16, id="same-type"),
            ),
            empty=True,
            bad=({"dtype": "nonsense"}, ValueError),
            per_sample=False,
        )
        for name in ("ones_like", "zeros_like")
    ),
    Row(
        "element_extract",
        ndd.element_extract,
        (
            Case((SEQS,), {"element_map": 1}, "FHW", out_layout="HW"),
            Case((SEQS,), {"element_map": [0]}, None, out_layout=None, id="no-layout"),
        ),
        empty=True,
        bad=({"element_map": 2}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "dump_image",
        ndd.dump_image,
        (Case((COLOR,), {"suffix": "t"}, "HWC"),),
        empty=True,
        bad=({"input_layout": "HW"}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "get_property",
        ndd.get_property,
        (
            Case((SMALL,), {"key": "layout"}, "HWC", out_layout=None),
            Case((SMALL,), {"key": "source_info"}, "HWC", out_layout=None, id="source"),
        ),
        empty=True,
        bad=({"key": "colour"}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "reinterpret",
        ndd.reinterpret,
        (
            Case(
                (SMALL_I16,),
                {"dtype": ndd.uint8, "shape": per_sample([12, -1], [-1, 9], [84])},
                "HWC",
                out_layout=None,
            ),
            Case((SMALL_I16,), {"dtype": ndd.uint8}, "HWC", id="innermost"),
            Case(
                (SMALL, [np.array([s.size], np.int32) for s in SMALL]),
                {"layout": "X"},
                ("HWC", None),
                out_layout="X",
                id="shape-input",
            ),
        ),
        empty=True,
        bad=({"shape": [7, 7]}, ShapeError),
    ),
    Row(
        "sequence_rearrange",
        ndd.sequence_rearrange,
        (
            Case((SEQS,), {"new_order": per_sample([3, 0], [1, 1, 0], [2])}, "FHW"),
            Case((SEQS,), {"new_order": [0, 0]}, "FHW", id="shared"),
        ),
        empty=True,
        bad=({"new_order": per_sample([3], [2], [0])}, InvalidArgumentError),
    ),
    # --------------------------------------------------------------- image operators
    Row(
        "clahe",
        ndd.clahe,
        (
            Case((FILTER,), {"clip_limit": 2.0, "tiles_x": 2, "tiles_y": 3}, "HWC"),
            Case(
                (FILTER,),
                {"clip_limit": 3.0, "tiles_x": 3, "tiles_y": 2, "luma_only": False},
                "HWC",
                id="per-channel",
            ),
        ),
        empty=True,
        bad=({"bins": 128}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "equalize",
        ndd.equalize,
        (Case((FILTER,), {}, "HWC"), Case((BAYER,), {}, "HW", id="gray")),
        empty=True,
        bad=({INPUTS: (SMALL_F,)}, InvalidTypeError),
        per_sample=False,
    ),
    Row(
        "debayer",
        ndd.debayer,
        (
            Case((BAYER,), {"blue_position": _ps([0, 0], [1, 1], [0, 1])}, "HW", out_layout="HWC"),
            Case(
                (BAYER,),
                {"blue_position": [1, 0], "algorithm": "edgeaware_ocv"},
                "HW",
                out_layout="HWC",
                id="edgeaware",
            ),
        ),
        empty=True,
        bad=({"blue_position": [2, 0]}, InvalidArgumentError),
    ),
    Row(
        "filter",
        ndd.filter,
        (
            Case((FILTER, KERNELS), {"anchor": _ps([0, 1], [-1, -1], [1, 0])}, ("HWC", None)),
            Case(
                (FILTER, KERNELS, FILLS),
                {"border": "constant", "mode": "valid"},
                ("HWC", None, None),
                id="constant-valid",
            ),
            Case(
                (FILTER, KERNELS),
                {"border": "wrap", "dtype": ndd.float32},
                ("HWC", None),
                gpu_atol=1e-3,
                out_dtype=ndd.float32,
                id="wrap-float",
            ),
        ),
        empty=True,
        bad=({"border": "mirror"}, InvalidArgumentError),
    ),
    Row(
        "jpeg_compression_distortion",
        ndd.jpeg_compression_distortion,
        (Case((FILTER,), {"quality": _ps(10, 50, 95)}, "HWC"),),
        empty=True,
        bad=({INPUTS: (SMALL_F,)}, InvalidTypeError),
    ),
    # ---------------------------------------------------------------------- coordinates
    Row(
        "coord_flip",
        ndd.coord_flip,
        (
            Case((POINTS,), {"flip_y": per_sample(1, 0, 1), "center_x": per_sample(0.5, 2, 0)}),
            Case((POINTS3,), {"layout": "zxy", "flip_z": 1, "center_z": 0.25}, id="zxy"),
        ),
        empty=True,
        bad=({INPUTS: (SMALL,)}, InvalidTypeError),
    ),
    Row(
        "coord_transform",
        ndd.coord_transform,
        (
            Case((POINTS,), {"M": per_sample([1, 2, 3, 4], [0.5, 0, 0, 2], [2]), "T": [1, -2]}),
            Case(
                (POINTS3,), {"MT": np.arange(8, dtype=np.float32) - 3}, gpu_atol=1e-5, id="MT-2x4"
            ),
            Case((SMALL_I16,), {"M": [1.5, -0.5, 2.25], "dtype": ndd.int16}, id="int16-sat"),
        ),
        empty=True,
        bad=({"MT": [1, 2, 3, 4], "M": 2}, InvalidArgumentError),
    ),
    # ---------------------------------------------------------------------- transforms
    Row(
        "transforms.translation",
        ndd.transforms.translation,
        (
            Case((AFFINES,), {"offset": per_sample([1, 2], [0, -3], [5, 5])}, out_layout="**"),
            Case((AFFINES,), {"offset": [1, 2], "reverse_order": True}, out_layout="**", id="rev"),
        ),
        empty=True,
        bad=({"offset": [1, 2, 3]}, InvalidArgumentError),
        devices=("cpu",),
    ),
    Row(
        "transforms.scale",
        ndd.transforms.scale,
        (
            Case(
                (AFFINES,),
                {"scale": per_sample([2, 3], [0.5], [1, -1]), "center": [1, 2]},
                out_layout="**",
            ),
            Case((AFFINES,), {"scale": 2, "reverse_order": True}, out_layout="**", id="scalar"),
        ),
        empty=True,
        bad=({"scale": [1, 2, 3]}, InvalidArgumentError),
        devices=("cpu",),
    ),
    Row(
        "transforms.rotation",
        ndd.transforms.rotation,
        (
            Case((AFFINES,), {"angle": per_sample(30, -45, 90), "center": [1, 2]}, out_layout="**"),
            Case((AFFINES3,), {"angle": 40, "axis": [1, 2, 3]}, out_layout="**", id="3d"),
        ),
        empty=True,
        bad=({"angle": 30, "axis": [0, 0, 0], INPUTS: (AFFINES3,)}, InvalidArgumentError),
        devices=("cpu",),
    ),
    Row(
        "transforms.shear",
        ndd.transforms.shear,
        (
            Case((AFFINES,), {"shear": per_sample([0.5, 0], [1, 2], [0, -1])}, out_layout="**"),
            Case(
                (AFFINES,),
                {"angles": [10, -20], "center": [3, 4], "reverse_order": True},
                out_layout="**",
                id="angles",
            ),
        ),
        empty=True,
        bad=({"angles": [90, 0]}, InvalidArgumentError),
        devices=("cpu",),
    ),
    Row(
        "transforms.crop",
        ndd.transforms.crop,
        (
            Case(
                (AFFINES,),
                {
                    "from_start": per_sample([10, 20], [0, 0], [5, 1]),
                    "from_end": [30, 60],
                    "to_start": [1, 2],
                    "to_end": [0, 5],
                },
                out_layout="**",
            ),
            Case(
                (AFFINES,),
                {"from_start": [30, 20], "from_end": [10, 60], "absolute": True},
                out_layout="**",
                id="absolute",
            ),
        ),
        empty=True,
        bad=({"from_start": [1, 2], "from_end": [1, 3]}, InvalidArgumentError),
        devices=("cpu",),
    ),
    Row(
        "transforms.combine",
        ndd.transforms.combine,
        (
            Case((AFFINES, AFFINES[::-1]), {}, out_layout="**"),
            Case(
                (AFFINES, AFFINES, AFFINES[1:] + AFFINES[:1]),
                {"reverse_order": True},
                out_layout="**",
                id="three-reversed",
            ),
        ),
        empty=True,
        bad=({INPUTS: (AFFINES, AFFINES3)}, InvalidArgumentError),
        devices=("cpu",),
        per_sample=False,
    ),
    # ---------------------------------------------------------------------- experimental
    Row(
        "experimental.dilate",
        ndd.experimental.dilate,
        (
            Case((FILTER,), {"mask_size": _ps([3, 3], [5, 3], [1, 3])}, "HWC"),
            Case(
                (FILTER,),
                {"anchor": [0, 2], "iterations": 2, "border_mode": "reflect"},
                "HWC",
                id="anchor",
            ),
        ),
        empty=True,
        bad=({"mask_size": [0, 3]}, InvalidArgumentError),
    ),
    Row(
        "experimental.erode",
        ndd.experimental.erode,
        (
            Case((FILTER,), {"mask_size": _ps([3, 3], [5, 3], [1, 3])}, "HWC"),
            Case((FILTER,), {"border_mode": "wrap", "iterations": 2}, "HWC", id="wrap"),
        ),
        empty=True,
        bad=({"border_mode": "mirror"}, InvalidArgumentError),
    ),
    Row(
        "experimental.median_blur",
        ndd.experimental.median_blur,
        (Case((FILTER,), {"window_size": _ps([3, 3], [5, 3], [3, 5])}, "HWC"),),
        empty=True,
        bad=({"window_size": 4}, InvalidArgumentError),
    ),
    Row(
        "experimental.remap",
        ndd.experimental.remap,
        (
            Case((WARP, MAPS_X, MAPS_Y), {}, ("HWC", None, None), gpu_atol=1),
            Case(
                (WARP, MAPS_X, MAPS_Y),
                {"interp": NN, "pixel_origin": "center"},
                ("HWC", None, None),
                id="nn-center",
            ),
        ),
        empty=True,
        bad=({"pixel_origin": "middle"}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "experimental.warp_perspective",
        ndd.experimental.warp_perspective,
        (
            Case((WARP,), {"matrix": per_sample(*HOMOGRAPHIES)}, "HWC", gpu_atol=1),
            Case(
                (WARP,),
                {"matrix": HOMOGRAPHIES[0], "border_mode": "reflect_101", "size": [9, 11]},
                "HWC",
                gpu_atol=1,
                id="reflect-size",
            ),
            Case(
                (WARP, HOMOGRAPHIES),
                {"fill_value": [9.0, 8.0, 7.0], "interp_type": CUBIC},
                ("HWC", None),
                gpu_atol=2,
                id="matrix-input",
            ),
        ),
        empty=True,
        bad=({"matrix": np.zeros(4)}, InvalidArgumentError),
    ),
    # ---------------------------------------------------------------------- speech
    Row(
        "preemphasis_filter",
        ndd.preemphasis_filter,
        (
            Case((AUDIO,), {"preemph_coeff": _ps(0.97, 0.5, 0.0), "border": "reflect"}),
            Case(
                (AUDIO_I16,),
                {"border": "zero", "dtype": ndd.int16},
                out_dtype=ndd.int16,
                id="int16",
            ),
        ),
        empty=True,
        bad=({"border": "mirror"}, InvalidArgumentError),
    ),
    Row(
        "spectrogram",
        ndd.spectrogram,
        (
            Case(
                (AUDIO,),
                {"nfft": 64, "window_length": 48, "window_step": 16},
                out_layout="ft",
                gpu_atol=1e-3,
            ),
            Case(
                (AUDIO_I16,),
                {
                    "window_length": 40,
                    "window_step": 25,
                    "center_windows": False,
                    "power": 1,
                    "layout": "tf",
                    "window_fn": np.hamming(40).tolist(),
                },
                out_layout="tf",
                gpu_atol=0.5,
                id="tf-magnitude-int16",
            ),
        ),
        empty=True,
        bad=({"nfft": 16, "window_length": 48}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "power_spectrum",
        ndd.power_spectrum,
        (
            Case((SPECTRA,), {"axis": 0, "nfft": 40}, gpu_atol=1e-2),
            Case((AUDIO,), {"power": 1}, gpu_atol=1e-3, id="1d-magnitude"),
        ),
        empty=True,
        bad=({"power": 3}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "mel_filter_bank",
        ndd.mel_filter_bank,
        (
            Case((SPECTRA,), {"nfilter": 8, "sample_rate": 8000.0}, "ft", gpu_atol=1e-5),
            Case(
                ([np.ascontiguousarray(s.T) for s in SPECTRA],),
                {
                    "nfilter": 6,
                    "sample_rate": 8000.0,
                    "mel_formula": "htk",
                    "normalize": False,
                    "freq_low": 200.0,
                    "freq_high": 3000.0,
                },
                "tf",
                gpu_atol=1e-4,
                id="tf-htk",
            ),
        ),
        empty=True,
        bad=({"mel_formula": "bark"}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "to_decibels",
        ndd.to_decibels,
        (
            Case((SPECTRA,), {}, "ft", gpu_atol=1e-4),
            Case(
                (SPECTRA,),
                {"multiplier": 20.0, "reference": 5.0, "cutoff_db": -30.0},
                gpu_atol=1e-4,
                id="reference",
            ),
        ),
        empty=True,
        bad=({INPUTS: (AUDIO_I16,)}, InvalidTypeError),
        per_sample=False,
    ),
    Row(
        "mfcc",
        ndd.mfcc,
        (
            Case((MELS_DB,), {"n_mfcc": 6, "lifter": 10.0}, gpu_atol=1e-3),
            Case(
                (MELS_DB,),
                {"axis": 1, "n_mfcc": 2, "dct_type": 3, "normalize": True},
                gpu_atol=1e-3,
                id="axis1-dct3",
            ),
        ),
        empty=True,
        bad=({"n_mfcc": 0}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "nonsilent_region",
        nonsilent_both,
        (
            Case((SILENCE_CUT,), {"window_length": 32, "cutoff_db": -40.0}),
            Case(
                (AUDIO_I16,),
                {"window_length": 64, "reset_interval": -1, "reference_power": 1e6},
                id="int16-reference",
            ),
        ),
        empty=True,
        bad=({"window_length": 0}, InvalidArgumentError),
        per_sample=False,
    ),
    # ---------------------------------------------------------------- detection
    Row(
        "bb_flip",
        ndd.bb_flip,
        (
            Case((BOXES,), {"horizontal": per_sample(1, 0, 1), "vertical": 1}, out_layout=None),
            Case((BOXES,), {"ltrb": True}, out_layout=None, id="ltrb"),
        ),
        empty=True,
        bad=({INPUTS: ([np.zeros((2, 3), np.float32)] * 3,)}, ShapeError),
    ),
    Row(
        "bbox_paste",
        ndd.bbox_paste,
        (
            Case((BOXES,), {"ratio": per_sample(2.0, 1.5, 3.0), "paste_x": 0.2}, out_layout=None),
            Case(
                (BOXES,), {"ratio": 2.0, "ltrb": True, "paste_y": 0.9}, out_layout=None, id="ltrb"
            ),
        ),
        empty=True,
        bad=({"ratio": 0.5}, InvalidArgumentError),
        devices=("cpu",),
    ),
    Row(
        "bbox_rotate",
        ndd.bbox_rotate,
        (
            Case(
                (BOXES, BOX_LABELS),
                {"angle": per_sample(30.0, -75.0, 200.0), "input_shape": [100, 160]},
                out_layout=None,
                output=0,
            ),
            Case(
                (BOXES, BOX_LABELS),
                {
                    "angle": 50.0,
                    "input_shape": per_sample([80, 60, 3], [40, 90, 3], [64, 64, 1]),
                    "keep_size": True,
                    "mode": "halfway",
                    "remove_threshold": 0.4,
                },
                out_layout=None,
                output=1,
                id="keep-size-labels",
            ),
            Case(
                (BOXES,),
                {
                    "angle": 100.0,
                    "input_shape": [120, 90],
                    "shape_layout": "WH",
                    "size": [70, 150],
                    "mode": "fixed",
                },
                out_layout=None,
                id="size-fixed",
            ),
        ),
        empty=True,
        bad=({"mode": "shrink"}, InvalidArgumentError),
        devices=("cpu",),
    ),
    Row(
        "box_encoder",
        ndd.box_encoder,
        (
            Case(
                (BOXES, BOX_LABELS),
                {"anchors": ANCHORS, "criteria": 0.3},
                out_layout=None,
                output=0,
                gpu_atol=1e-6,
            ),
            Case(
                (BOXES, BOX_LABELS),
                {"anchors": ANCHORS, "offset": True, "scale": 300.0, "stds": [0.1, 0.1, 0.2, 0.2]},
                out_layout=None,
                output=0,
                gpu_atol=1e-4,
                id="offset",
            ),
            Case((BOXES, BOX_LABELS), {"anchors": ANCHORS}, out_layout=None, output=1, id="labels"),
        ),
        empty=True,
        bad=({"anchors": [0.0, 0.0, 1.0]}, InvalidArgumentError),
        per_sample=False,
    ),
    Row(
        "multi_paste",
        ndd.multi_paste,
        (
            Case(
                (PASTE_IMGS,),
                {
                    "in_ids": per_sample([0, 2], [1], [2, 0], dtype=np.int32),
                    "output_size": [9, 10],
                    "in_anchors": per_sample([[1, 0], [0, 2]], [[1, 1]], [[0, 0], [3, 3]]),
                    "shapes": per_sample([[4, 5], [3, 3]], [[5, 4]], [[6, 6], [2, 2]]),
                    "out_anchors": per_sample([[0, 0], [5, 6]], [[4, 5]], [[1, 1], [2, 2]]),
                },
                "HWC",
                batch_level=True,
                id="in-ids",
            ),
            Case(
                (PASTE_SAME, PASTE_SAME[::-1]),
                {
                    "out_anchors_rel": [[0.0, 0.0], [0.5, 0.4]],
                    "shapes_rel": [[0.5, 0.6], [0.5, 0.5]],
                    "dtype": ndd.float32,
                },
                "HWC",
                id="two-inputs-rel",
            ),
        ),
        empty=True,
        bad=({"out_anchors": [[7, 7]], "shapes": [[5, 5]]}, InvalidArgumentError),
    ),
    Row(
        "random_bbox_crop",
        ndd.random_bbox_crop,
        (
            Case(
                (BOXES, BOX_LABELS),
                {
                    "thresholds": [0.1, 0.3],
                    "scaling": [0.3, 1.0],
                    "aspect_ratio": [0.5, 2.0],
                    "num_attempts": 10,
                },
                out_layout=None,
                output=2,
            ),
            Case(
                (BOXES, BOX_LABELS),
                {
                    "crop_shape": per_sample([30, 20], [40, 40], [20, 50]),
                    "input_shape": [100, 80],
                    "thresholds": [0.0],
                    "threshold_type": "overlap",
                    "output_bbox_indices": True,
                },
                out_layout=None,
                output=4,
                id="crop-shape-indices",
            ),
            Case(
                (BOXES, BOX_LABELS),
                {
                    "scaling": [0.4, 0.9],
                    "bbox_prune_threshold": 0.3,
                    "allow_no_crop": False,
                    "all_boxes_above_threshold": False,
                    "thresholds": [0.2],
                    "total_num_attempts": 50,
                    "quiet": True,
                },
                out_layout=None,
                output=0,
                id="prune-anchor",
            ),
        ),
        empty=True,
        bad=({"threshold_type": "area"}, InvalidArgumentError),
        random=True,
        devices=("cpu",),
    ),
    Row(
        "roi_random_crop",
        ndd.roi_random_crop,
        (
            Case(
                (SMALL,),
                {
                    "crop_shape": [2, 2, 3],
                    "roi_start": per_sample([1, 1, 0], [0, 0, 0], [0, 2, 0]),
                    "roi_end": [2, 3, 3],
                },
                "HWC",
                out_layout=None,
            ),
            Case(
                (SMALL,),
                {"crop_shape": [3, 3, 3], "roi_start": [0, 1, 0], "roi_shape": [1, 1, 3]},
                "HWC",
                out_layout=None,
                id="roi-shape",
            ),
        ),
        empty=True,
        bad=({"roi_shape": [1, 1, 3]}, InvalidArgumentError),
        random=True,
        devices=("cpu",),
    ),
    Row(
        "random_crop_generator",
        ndd.random_crop_generator,
        (
            Case((IMAGE_SHAPES,), {}, out_layout=None, output=0),
            Case(
                (IMAGE_SHAPES,),
                {"random_area": [0.3, 0.6], "random_aspect_ratio": [0.5, 2.0], "num_attempts": 5},
                out_layout=None,
                output=1,
                id="ranges",
            ),
        ),
        empty=True,
        bad=({"random_area": [0.5, 0.1]}, InvalidArgumentError),
        random=True,
        devices=("cpu",),
        per_sample=False,
    ),
    # ---------------------------------------------------------------- segmentation
    Row(
        "segmentation.random_mask_pixel",
        ndd.segmentation.random_mask_pixel,
        (
            Case((LABEL_MAPS,), {"foreground": per_sample(1, 0, 1)}, out_layout=None),
            Case((LABEL_MAPS,), {"foreground": 1, "value": 2}, out_layout=None, id="value"),
            Case((LABEL_VOLS,), {"foreground": 1, "threshold": 0.5}, out_layout=None, id="3d"),
        ),
        empty=True,
        bad=({"threshold": [1.0, 2.0]}, ValueError),
        random=True,
        devices=("cpu",),
    ),
    Row(
        "segmentation.random_object_bbox",
        ndd.segmentation.random_object_bbox,
        (
            Case(
                (LABEL_MAPS,),
                {"foreground_prob": per_sample(1.0, 0.5, 1.0)},
                out_layout=None,
                output=1,
            ),
            Case(
                (LABEL_MAPS,),
                {
                    "format": "box",
                    "k_largest": 2,
                    "classes": [1, 2],
                    "class_weights": [1.0, 3.0],
                    "output_class": True,
                },
                out_layout=None,
                output=1,
                id="box-class",
            ),
            Case(
                (LABEL_VOLS,),
                {"format": "start_end", "threshold": [1, 2, 1]},
                out_layout=None,
                output=0,
                id="3d",
            ),
            Case(
                (LABEL_MAPS,),
                {"format": "box", "ignore_class": True},
                out_layout=None,
                id="ignore-class",
            ),
        ),
        empty=True,
        bad=({"format": "xywh"}, InvalidArgumentError),
        random=True,
        devices=("cpu",),
    ),
    Row(
        "segmentation.select_masks",
        ndd.segmentation.select_masks,
        (
            Case((MASK_IDS, POLYGONS, VERTICES), {}, out_layout=None, output=0),
            Case(
                (MASK_IDS, POLYGONS, VERTICES),
                {"reindex_masks": True},
                out_layout=None,
                output=1,
                id="reindex-vertices",
            ),
        ),
        empty=True,
        bad=({INPUTS: ([np.array([5], np.int32)] * 3, POLYGONS, VERTICES)}, InvalidArgumentError),
        devices=("cpu",),
        per_sample=False,
    ),
)
