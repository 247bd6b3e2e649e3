"""TIFFs with alpha: the stored colour, never premultiplied by alpha, and gray + alpha kept as 2
channels with ``ANY_DATA`` (as the reference reads 8-bit files with interleaved samples).

OpenCV's libtiff RGBA interface premultiplies colour by an unassociated alpha and drops the
alpha of gray + alpha, so those files go through Pillow; the reference's own exceptions stay on
OpenCV: an orientation applied by the decoder, samples stored in planes, 16-bit files.

Oracle-free tests check closed forms (an RGBA file decodes as its RGB part does, the stored
samples come back); the differential ones compare every output type and dtype with the reference.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import headrace as ndd
from headrace import codecs
from headrace._core.errors import DecodeError

OUTPUT_TYPES = ["RGB", "BGR", "GRAY", "YCbCr", "ANY_DATA"]
COMPRESSIONS = [None, "tiff_lzw", "tiff_adobe_deflate"]


def _pil_tiff(arr: np.ndarray, mode: str, compression: str | None = None) -> np.ndarray:
    f = io.BytesIO()
    Image.fromarray(arr, mode).save(f, format="TIFF", compression=compression)
    return np.frombuffer(f.getvalue(), np.uint8)


def _tiff(
    arr: np.ndarray,
    extra: tuple[int, ...] = (2,),
    *,
    orientation: int | None = None,
    planar: int = 1,
    big_endian: bool = False,
) -> np.ndarray:
    """Uncompressed TIFF of ``HxWxC`` uint8/uint16 ``arr`` (one strip, or one per plane) whose
    last ``len(extra)`` samples are extra samples with these ExtraSamples values."""
    h, w, c = arr.shape
    e = ">" if big_endian else "<"
    planes = [arr] if planar == 1 else [arr[..., i] for i in range(c)]
    strips = [np.ascontiguousarray(p).astype(arr.dtype.newbyteorder(e)).tobytes() for p in planes]

    def header(data_at: int) -> bytes:
        offsets = list(np.cumsum([data_at] + [len(s) for s in strips[:-1]]))
        entries = [
            (256, 3, [w]),
            (257, 3, [h]),
            (258, 3, [arr.dtype.itemsize * 8] * c),
            (259, 3, [1]),
            (262, 3, [1 if c - len(extra) == 1 else 2]),
            (273, 4, offsets),
            (277, 3, [c]),
            (278, 3, [h]),
            (279, 4, [len(s) for s in strips]),
            (284, 3, [planar]),
        ]
        entries += [(274, 3, [orientation])] if orientation else []
        entries += [(338, 3, list(extra))] if extra else []
        entries.sort()
        after = 8 + 2 + 12 * len(entries) + 4  # arrays that do not fit in an entry
        ifd, arrays = struct.pack(e + "H", len(entries)), b""
        for tag, typ, values in entries:
            raw = struct.pack(e + ("H" if typ == 3 else "I") * len(values), *map(int, values))
            if len(raw) > 4:
                raw, arrays = struct.pack(e + "I", after + len(arrays)), arrays + raw
            ifd += struct.pack(e + "HHI", tag, typ, len(values)) + raw.ljust(4, b"\0")
        start = (b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8)
        return start + ifd + struct.pack(e + "I", 0) + arrays

    head = header(0)
    return np.frombuffer(header(len(head)) + b"".join(strips), np.uint8)


def _decode(data: np.ndarray, output_type: str, **kw: object) -> np.ndarray:
    return codecs.decode(data, output_type=output_type, **kw)


RNG = np.random.default_rng(7)
RGBA = RNG.integers(0, 256, (6, 9, 4), dtype=np.uint8)
RGBA[0, :4, 3] = (0, 1, 128, 255)  # transparent, almost, half and fully opaque
LA = RNG.integers(0, 256, (6, 9, 2), dtype=np.uint8)


# ---------------------------------------------------------------------- oracle-free
def test_repro_pixel_keeps_its_colour() -> None:
    """(200, 100, 50) at alpha 128 stays (200, 100, 50) in every output (not (100, 50, 25))."""
    px = np.zeros((2, 3, 4), np.uint8)
    px[...] = (200, 100, 50, 0)
    px[..., 3] = [[255, 128, 0], [64, 255, 10]]
    data = _pil_tiff(px, "RGBA")
    assert (_decode(data, "RGB") == (200, 100, 50)).all()
    assert (_decode(data, "BGR") == (50, 100, 200)).all()
    np.testing.assert_array_equal(_decode(data, "ANY_DATA"), px)


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_rgba_decodes_as_its_rgb_part(compression: str | None, dtype: type) -> None:
    rgba = _pil_tiff(RGBA, "RGBA", compression)
    rgb = _pil_tiff(np.ascontiguousarray(RGBA[..., :3]), "RGB", compression)
    for ot in ["RGB", "BGR", "GRAY", "YCbCr"]:
        got = _decode(rgba, ot, dtype=dtype)
        np.testing.assert_array_equal(got, _decode(rgb, ot, dtype=dtype), err_msg=ot)
    any_data = _decode(rgba, "ANY_DATA", dtype=dtype)
    np.testing.assert_array_equal(
        any_data, _decode(_pil_tiff(RGBA, "RGBA"), "ANY_DATA", dtype=dtype)
    )
    if dtype == np.uint8:
        np.testing.assert_array_equal(any_data, RGBA)
        assert any_data.flags.writeable and any_data.flags.c_contiguous


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_gray_alpha_keeps_two_channels(compression: str | None) -> None:
    data = _pil_tiff(LA, "LA", compression)
    np.testing.assert_array_equal(_decode(data, "ANY_DATA"), LA)
    assert codecs.peek_shape(data, output_type="ANY_DATA") == (6, 9, 2)
    gray = LA[..., :1]
    np.testing.assert_array_equal(_decode(data, "GRAY"), gray)
    np.testing.assert_array_equal(_decode(data, "RGB"), np.repeat(gray, 3, axis=2))
    np.testing.assert_array_equal(
        _decode(data, "ANY_DATA", dtype=np.uint16), LA.astype(np.uint16) * 257
    )


def test_gray_alpha_through_the_operator() -> None:
    data = _pil_tiff(LA, "LA", "tiff_lzw")
    out = ndd.decoders.image(ndd.as_tensor(data), output_type=ndd.types.ANY_DATA)
    assert out.shape == (6, 9, 2)
    np.testing.assert_array_equal(np.asarray(out), LA)


@pytest.mark.parametrize("big_endian", [False, True])
def test_associated_gray_alpha_and_big_endian(big_endian: bool) -> None:
    for extra in (1, 2):
        data = _tiff(LA, (extra,), big_endian=big_endian)
        np.testing.assert_array_equal(_decode(data, "ANY_DATA"), LA)
    np.testing.assert_array_equal(_decode(_tiff(RGBA, big_endian=big_endian), "ANY_DATA"), RGBA)


@pytest.mark.parametrize("orientation", [2, 3, 5, 6, 8])
def test_orientation(orientation: int) -> None:
    """Gray + alpha is oriented like any TIFF; RGB + unassociated alpha keeps its stored colour
    when the orientation is not applied (applied, the reference premultiplies: see the
    differential tests)."""
    from headrace.codecs.convert import orient

    la = _tiff(LA, orientation=orientation)
    np.testing.assert_array_equal(_decode(la, "ANY_DATA"), orient(LA, orientation))
    got = _decode(la, "ANY_DATA", adjust_orientation=False)
    np.testing.assert_array_equal(got, LA)
    rgba = _tiff(RGBA, orientation=orientation)
    np.testing.assert_array_equal(_decode(rgba, "ANY_DATA", adjust_orientation=False), RGBA)
    np.testing.assert_array_equal(_decode(_tiff(RGBA, orientation=1), "ANY_DATA"), RGBA)


def test_other_tiffs_stay_on_opencv() -> None:
    """16-bit RGBA comes back exact; associated alpha as stored; plain RGB/gray unchanged."""
    rgba16 = RNG.integers(0, 65536, (5, 7, 4), dtype=np.uint16)
    got = _decode(_tiff(rgba16), "ANY_DATA", dtype=np.uint16)
    np.testing.assert_array_equal(got, rgba16)
    np.testing.assert_array_equal(_decode(_tiff(RGBA, (1,)), "ANY_DATA"), RGBA)
    np.testing.assert_array_equal(
        _decode(_tiff(RGBA[..., :3].copy(), ()), "ANY_DATA"), RGBA[..., :3]
    )
    np.testing.assert_array_equal(_decode(_tiff(LA[..., :1].copy(), ()), "ANY_DATA"), LA[..., :1])


def test_tiff_samples_reads_the_layout() -> None:
    from headrace.codecs.headers import tiff_samples

    s = tiff_samples(_tiff(RGBA, orientation=6, big_endian=True))
    assert s is not None
    assert (s.photometric, s.samples, s.bits, s.extra, s.orientation, s.planar) == (
        2,
        4,
        8,
        2,
        6,
        1,
    )
    s = tiff_samples(_tiff(np.zeros((2, 2, 3), np.uint16), ()))
    assert s is not None and (s.bits, s.extra) == (16, None)
    assert tiff_samples(np.frombuffer(b"II*\x00\xff\xff\xff\x00", np.uint8)) is None


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("mode", ["RGBA", "LA"])
def test_corrupt_files_raise_naming_the_file(
    tmp_path: Path, compression: str | None, mode: str
) -> None:
    good = _pil_tiff(RGBA if mode == "RGBA" else LA, mode, compression)
    bad = tmp_path / "bad.tiff"
    bad.write_bytes(good.tobytes()[:60])
    with pytest.raises(DecodeError, match="tiff"):
        _decode(np.fromfile(bad, np.uint8), "RGB")
    (tmp_path / "good.tiff").write_bytes(good.tobytes())
    files = ndd.io.file.read([str(tmp_path / "good.tiff"), str(bad)])
    with pytest.raises(DecodeError, match=r"sample 1 \('.*bad\.tiff'\)"):
        [np.asarray(t) for t in ndd.decoders.image(files).tensors]
    with pytest.warns(UserWarning, match="bad.tiff"):
        kept = ndd.decoders.image(files, on_error="skip", output_type=ndd.types.ANY_DATA)
        arrays = [np.asarray(t) for t in kept.tensors]
    assert len(arrays) == 1 and arrays[0].shape[2] == (4 if mode == "RGBA" else 2)


# ---------------------------------------------------------------------- against the reference
def _reference_cases() -> list:
    """(name, file, output types the reference decodes sensibly): its RGB, BGR and YCbCr of
    gray + alpha read the 2 samples as 3 (a reference bug), and are left out."""
    rgba16 = np.random.default_rng(1).integers(0, 65536, (5, 7, 4), dtype=np.uint16)
    all_types = tuple(OUTPUT_TYPES)
    cases: list[tuple[str, np.ndarray, tuple[str, ...]]] = []
    for c in COMPRESSIONS:
        cases.append((f"rgba-{c}", _pil_tiff(RGBA, "RGBA", c), all_types))
        cases.append((f"la-{c}", _pil_tiff(LA, "LA", c), ("GRAY", "ANY_DATA")))
        cases.append(
            (f"rgb-{c}", _pil_tiff(np.ascontiguousarray(RGBA[..., :3]), "RGB", c), all_types)
        )
        cases.append((f"gray-{c}", _pil_tiff(np.ascontiguousarray(LA[..., 0]), "L", c), all_types))
    cases += [
        ("rgba-assoc", _tiff(RGBA, (1,)), all_types),
        ("rgba-unspecified", _tiff(RGBA, (0,)), all_types),
        ("rgba-big-endian", _tiff(RGBA, big_endian=True), all_types),
        ("rgba-planes", _tiff(RGBA, planar=2), all_types),
        ("la-assoc", _tiff(LA, (1,)), ("GRAY", "ANY_DATA")),
        ("rgba16", _tiff(rgba16), all_types),
        ("rgb16", _tiff(np.ascontiguousarray(rgba16[..., :3]), ()), all_types),
    ]
    cases += [(f"rgba-orientation{o}", _tiff(RGBA, orientation=o), all_types) for o in (2, 3, 6, 8)]
    return [pytest.param(*case, id=case[0]) for case in cases]


@pytest.mark.dali
@pytest.mark.parametrize(("name", "data", "types"), _reference_cases())
def test_matches_reference(name: str, data: np.ndarray, types: tuple[str, ...]) -> None:
    dndd = pytest.importorskip("nvidia.dali.experimental.dynamic")
    dali_types = pytest.importorskip("nvidia.dali.types")
    for ot in types:
        for dtype in ("uint8", "uint16", "float32"):
            for adjust in (True, False):
                kw = {"output_type": getattr(dali_types, ot), "adjust_orientation": adjust}
                ref = dndd.decoders.image(dndd.batch([data]), dtype=getattr(dndd, dtype), **kw)
                want = np.asarray(ref.tensors[0])
                got = _decode(data, ot, dtype=np.dtype(dtype), adjust_orientation=adjust)
                msg = f"{name} {ot} {dtype} adjust={adjust}"
                assert got.shape == want.shape and got.dtype == want.dtype, msg
                # float32: the reference's v * (1 / max) differs from v / max by 1 ulp
                np.testing.assert_allclose(got, want, rtol=0, atol=1.2e-7, err_msg=msg)
