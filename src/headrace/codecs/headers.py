"""Container sniffing and header parsing for encoded images.

Everything here reads a few header bytes and never decodes pixels: the format from its
magic bytes, the stored size and channel count, and the EXIF orientation (JPEG ``APP1``,
PNG ``eXIf``, TIFF ``IFD0``, WebP ``EXIF``). JPEG and PNG headers are parsed by hand (they
are the hot path of ``peek_image_shape``); the other formats ask Pillow, which also only
reads the header.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import Final

import numpy as np

from headrace._core.errors import DecodeError, InvalidTypeError
from headrace.codecs.limits import check_pixels

__all__ = [
    "FORMATS",
    "ImageInfo",
    "TiffSamples",
    "as_buffer",
    "check_declared_size",
    "check_png_chunks",
    "detect_format",
    "exif_orientation",
    "probe",
    "probe_known",
    "tiff_samples",
    "unknown_format_error",
]

#: Every name :func:`detect_format` can return, ``"unknown"`` aside.
FORMATS: Final = ("jpeg", "png", "bmp", "tiff", "webp", "gif", "pnm", "jpeg2000")

_ORIENTATION_TAG: Final = 0x0112
_JP2_SIGNATURE: Final = b"\x00\x00\x00\x0cjP  \r\n\x87\n"
_PNG_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
# SOFn markers that carry the frame header (C4 = DHT, C8 = JPG, CC = DAC are not frames).
_SOF_MARKERS: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Channels a PNG stores per colour type (palette counts as RGB, tRNS is not an extra channel).
_PNG_CHANNELS: Final = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}
_TIFF_TYPES: Final = {1: "B", 3: "H", 4: "I"}  # BYTE, SHORT, LONG (first value, inline)
_PIL_MODE_CHANNELS: Final = {"1": 1, "L": 1, "I": 1, "F": 1, "LA": 2, "La": 2, "PA": 4}


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """What the header of an encoded image says.

    Attributes
    ----------
    format : str
        One of :data:`FORMATS`.
    height, width : int
        Size as stored, before any EXIF orientation is applied.
    channels : int
        Channels the file stores (1 gray, 2 gray+alpha, 3 colour, 4 colour+alpha or CMYK).
    orientation : int
        EXIF orientation 1-8 (1 when the file has none).
    """

    format: str
    height: int
    width: int
    channels: int
    orientation: int = 1

    @property
    def swaps_axes(self) -> bool:
        """Whether the orientation transposes the image (EXIF values 5-8)."""
        return self.orientation >= 5


def as_buffer(data: object) -> np.ndarray:
    """View encoded bytes as a 1-D ``uint8`` array without copying them.

    Parameters
    ----------
    data : bytes, bytearray, memoryview or numpy.ndarray
        The encoded stream; an array must hold ``uint8`` (or ``int8``) and be contiguous.

    Returns
    -------
    numpy.ndarray
        A read-only or writable 1-D ``uint8`` view of the same memory.

    Examples
    --------
    >>> as_buffer(b"\\xff\\xd8").tolist()
    [255, 216]
    """
    if isinstance(data, np.ndarray):
        if data.dtype not in (np.uint8, np.int8):
            raise InvalidTypeError(
                f"decoders.image: encoded data must be uint8 (got an array of {data.dtype}). "
                "Pass the raw file bytes."
            )
        arr = data.view(np.uint8)
        if arr.ndim != 1:
            if not arr.flags.c_contiguous:
                raise InvalidTypeError(
                    f"decoders.image: encoded data must be a 1-D byte array (got shape "
                    f"{data.shape}). Pass the raw file bytes."
                )
            arr = arr.reshape(-1)
        return arr
    if isinstance(data, bytes | bytearray | memoryview):
        return np.frombuffer(data, dtype=np.uint8)
    raise InvalidTypeError(
        f"decoders.image: encoded data must be bytes, memoryview or a uint8 array "
        f"(got {type(data).__name__})."
    )


def detect_format(data: object) -> str:
    """Name the image format of an encoded stream from its magic bytes.

    Parameters
    ----------
    data : bytes, memoryview or numpy.ndarray
        The encoded stream (only its first 16 bytes are read).

    Returns
    -------
    str
        ``"jpeg"``, ``"png"``, ``"bmp"``, ``"tiff"``, ``"webp"``, ``"gif"``, ``"pnm"``,
        ``"jpeg2000"`` or ``"unknown"``.

    Examples
    --------
    >>> detect_format(b"\\x89PNG\\r\\n\\x1a\\n....")
    'png'
    >>> detect_format(b"<!DOCTYPE html>")
    'unknown'
    """
    head = as_buffer(data)[:16].tobytes()
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(_PNG_SIGNATURE):
        return "png"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "webp"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head.startswith(b"BM"):
        return "bmp"
    if len(head) >= 3 and head[0:1] == b"P" and head[1:2] in b"1234567" and head[2:3].isspace():
        return "pnm"
    if head.startswith(_JP2_SIGNATURE) or head.startswith(b"\xff\x4f\xff\x51"):
        return "jpeg2000"
    return "unknown"


def probe(data: object, *, op: str = "decoders.image") -> ImageInfo:
    """Read size, channel count and EXIF orientation from the header of an encoded image.

    Parameters
    ----------
    data : bytes, memoryview or numpy.ndarray
        The encoded stream.
    op : str
        Operator name used in error messages.

    Returns
    -------
    ImageInfo

    Raises
    ------
    DecodeError
        The stream is empty, of an unknown format or has a malformed header.

    Examples
    --------
    >>> import cv2, numpy as np
    >>> png = cv2.imencode(".png", np.zeros((4, 6), np.uint8))[1]
    >>> probe(png)
    ImageInfo(format='png', height=4, width=6, channels=1, orientation=1)
    """
    buf = as_buffer(data)
    fmt = detect_format(buf)
    if fmt == "unknown":
        raise unknown_format_error(buf, op)
    return probe_known(buf, fmt, op=op)


def probe_known(buf: np.ndarray, fmt: str, *, op: str = "decoders.image") -> ImageInfo:
    """:func:`probe` for a buffer whose format :func:`detect_format` already named.

    Examples
    --------
    >>> import cv2
    >>> jpg = cv2.imencode(".jpg", np.zeros((4, 6), np.uint8))[1]
    >>> probe_known(jpg, "jpeg").channels
    1
    """
    if fmt in _SIZE_PARSERS:  # check the size before Pillow reads the header
        check_declared_size(buf, fmt, op=op)
    try:
        if fmt == "jpeg":
            info = _probe_jpeg(buf)
        elif fmt == "png":
            info = _probe_png(buf)
        elif fmt == "tiff" and buf[2] != 0x2B and buf[3] != 0x2B:  # classic (not Big) TIFF
            info = _probe_tiff(memoryview(buf))
        else:
            info = _probe_with_pillow(buf, fmt)
    except DecodeError as exc:
        raise DecodeError(f"{op}: cannot decode sample: {exc}") from exc
    except Exception as exc:  # a malformed header trips struct/Pillow in many ways
        if type(exc).__name__ == "DecompressionBombError":  # Pillow's own size limit
            raise DecodeError(
                f"{op}: cannot decode sample: the {fmt} header declares more pixels than Pillow "
                f"agrees to read ({exc})"
            ) from exc
        raise DecodeError(
            f"{op}: cannot decode sample: corrupt or truncated {fmt} header ({type(exc).__name__})."
        ) from exc
    check_pixels(fmt, info.height, info.width, op)
    return info


def check_declared_size(buf: np.ndarray, fmt: str, *, op: str = "decoders.image") -> None:
    """Refuse a stream whose header declares more pixels than the limit, before decoding it.

    Reads the size straight from the header of a BMP, WebP or GIF (Pillow is not asked); for the
    other formats it is :func:`probe_known`. Never allocates pixels.

    Raises
    ------
    DecodeError
        The header declares more than :func:`headrace.codecs.max_image_pixels` pixels, or is
        too malformed to tell its size.

    Examples
    --------
    >>> bmp = np.frombuffer(b"BM" + bytes(12) + struct.pack("<Iii", 40, 70000, -70000), np.uint8)
    >>> check_declared_size(bmp, "bmp")
    Traceback (most recent call last):
    ...
    headrace._core.errors.DecodeError: decoders.image: cannot decode sample: the bmp header \
declares 70000 x 70000 = 4,900,000,000 pixels, more than the limit of 178,956,970 (raise it \
with headrace.codecs.set_max_image_pixels or HEADRACE_MAX_IMAGE_PIXELS).
    """
    parse = _SIZE_PARSERS.get(fmt)
    if parse is None:
        probe_known(buf, fmt, op=op)
        return
    try:
        height, width = parse(memoryview(buf))
    except (DecodeError, struct.error, IndexError) as exc:
        why = str(exc) if isinstance(exc, DecodeError) else f"corrupt or truncated {fmt} header."
        raise DecodeError(f"{op}: cannot decode sample: {why}") from exc
    check_pixels(fmt, height, width, op)


def _bmp_size(mv: memoryview) -> tuple[int, int]:
    (header,) = struct.unpack_from("<I", mv, 14)
    if header == 12:  # BITMAPCOREHEADER: 16-bit sizes
        width, height = struct.unpack_from("<HH", mv, 18)
    else:
        width, height = struct.unpack_from("<ii", mv, 18)
    return abs(height), abs(width)  # a negative height is a top-down image


def _webp_size(mv: memoryview) -> tuple[int, int]:
    kind = bytes(mv[12:16])
    if kind == b"VP8 ":  # lossy: 14-bit sizes after the frame tag and start code
        width, height = struct.unpack_from("<HH", mv, 26)
        return height & 0x3FFF, width & 0x3FFF
    if kind == b"VP8L":  # lossless: 14 + 14 bits (minus one) after the signature byte
        (bits,) = struct.unpack_from("<I", mv, 21)
        return ((bits >> 14) & 0x3FFF) + 1, (bits & 0x3FFF) + 1
    if kind == b"VP8X":  # extended: 24-bit canvas sizes (minus one)
        w = int.from_bytes(mv[24:27], "little") + 1
        h = int.from_bytes(mv[27:30], "little") + 1
        if len(mv) < 30:
            raise DecodeError("truncated WebP header.")
        return h, w
    raise DecodeError(f"corrupt WebP header (unknown chunk {kind!r}).")


def _gif_size(mv: memoryview) -> tuple[int, int]:
    width, height = struct.unpack_from("<HH", mv, 6)
    return height, width


_SIZE_PARSERS = {"bmp": _bmp_size, "webp": _webp_size, "gif": _gif_size}


def exif_orientation(buf: np.ndarray, fmt: str) -> int:
    """EXIF orientation (1-8) of a stream whose format is known; 1 when it has none.

    Examples
    --------
    >>> exif_orientation(np.frombuffer(b"BM" + bytes(60), np.uint8), "bmp")
    1
    """
    mv = memoryview(buf)
    try:
        if fmt == "jpeg":
            return _probe_jpeg(buf).orientation
        if fmt == "png":
            return _probe_png(buf).orientation
        if fmt == "tiff":
            return _tiff_orientation(mv)
        if fmt == "webp":
            return _webp_orientation(mv)
    except (DecodeError, struct.error):
        return 1
    return 1


def unknown_format_error(buf: np.ndarray, op: str) -> DecodeError:
    """Build the error raised for an empty or unrecognised stream."""
    if buf.size == 0:
        return DecodeError(f"{op}: cannot decode sample: the encoded data is empty (0 bytes).")
    first = " ".join(f"{b:02x}" for b in buf[:4].tolist())
    return DecodeError(
        f"{op}: cannot decode sample: not a JPEG/PNG/TIFF/BMP/WebP/GIF/PNM/JPEG 2000 stream "
        f"(first bytes {first})."
    )


def _probe_jpeg(buf: np.ndarray) -> ImageInfo:
    mv = memoryview(buf)
    pos, end = 2, len(mv)
    orientation = 1
    while pos + 4 <= end:
        if mv[pos] != 0xFF:
            raise DecodeError(f"corrupt JPEG header (no marker at byte {pos}).")
        marker = mv[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0xD9, 0xDA):  # EOI or SOS before any frame header
            break
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:  # markers without a length
            pos += 2
            continue
        (length,) = struct.unpack_from(">H", mv, pos + 2)
        seg = pos + 4
        if marker in _SOF_MARKERS:
            if seg + 6 > end:
                break
            _precision, height, width, ncomp = struct.unpack_from(">BHHB", mv, seg)
            if height == 0 or width == 0:
                raise DecodeError("unsupported JPEG: the frame header has a zero dimension.")
            return ImageInfo("jpeg", height, width, ncomp, orientation)
        if marker == 0xE1 and orientation == 1 and bytes(mv[seg : seg + 6]) == b"Exif\x00\x00":
            orientation = _tiff_orientation(mv[seg + 6 : pos + 2 + length])
        pos += 2 + length
    raise DecodeError("truncated JPEG (no frame header).")


def _probe_png(buf: np.ndarray) -> ImageInfo:
    mv = memoryview(buf)
    if len(mv) < 33 or bytes(mv[12:16]) != b"IHDR":
        raise DecodeError("truncated PNG (no IHDR chunk).")
    width, height, _depth, color_type = struct.unpack_from(">IIBB", mv, 16)
    if color_type not in _PNG_CHANNELS:
        raise DecodeError(f"corrupt PNG header (colour type {color_type}).")
    orientation = 1
    pos = 33
    while pos + 8 <= len(mv):
        length, ctype = struct.unpack_from(">I4s", mv, pos)
        if ctype in (b"IDAT", b"IEND"):
            break
        if ctype == b"eXIf":
            start = pos + 8
            exif = mv[start : start + length]
            if bytes(exif[:6]) == b"Exif\x00\x00":
                exif = exif[6:]
            orientation = _tiff_orientation(exif)
            break
        pos += 12 + length
    return ImageInfo("png", height, width, _PNG_CHANNELS[color_type], orientation)


def check_png_chunks(buf: np.ndarray, *, op: str = "decoders.image") -> None:
    """Refuse a PNG with a chunk longer than the bytes that follow it, before decoding it.

    Such a length (up to 4 GiB, in a file of a few hundred bytes) made the codec allocate and
    read for seconds (the fuzzed PNG that "hung"). A valid file has none; a cut one fails in the
    codec anyway.

    Examples
    --------
    >>> png = _PNG_SIGNATURE + struct.pack(">I4s", 13, b"IHDR") + bytes(17)
    >>> png += struct.pack(">I4s", 0x7FFFFFF0, b"IDAT") + bytes(10)
    >>> check_png_chunks(np.frombuffer(png, np.uint8))
    Traceback (most recent call last):
    ...
    headrace._core.errors.DecodeError: decoders.image: cannot decode sample: corrupt or truncated \
png stream: chunk 'IDAT' at byte 33 declares 2147483632 bytes, but only 10 follow.
    """
    mv = memoryview(buf)
    pos, end = 8, len(mv)
    while pos + 8 <= end:
        length, ctype = struct.unpack_from(">I4s", mv, pos)
        if length > end - pos - 8:
            raise DecodeError(
                f"{op}: cannot decode sample: corrupt or truncated png stream: chunk "
                f"{ctype.decode('latin-1')!r} at "
                f"byte {pos} declares {length} bytes, but only {end - pos - 8} follow."
            )
        if ctype == b"IEND":
            return
        pos += 12 + length


def _probe_with_pillow(buf: np.ndarray, fmt: str) -> ImageInfo:
    from PIL import Image  # lazy: only the less common formats need it

    with Image.open(io.BytesIO(buf)) as im:  # lazy: reads the header only
        width, height = im.size
        if fmt == "tiff":  # Pillow reports the oriented size; keep the stored one
            width, height = im.tag_v2.get(256, width), im.tag_v2.get(257, height)
        mode = im.mode
        if mode.startswith("I;16"):
            channels = 1
        elif mode == "P":
            channels = 3
        else:
            channels = _PIL_MODE_CHANNELS.get(mode, len(im.getbands()))
    orientation = 1
    if fmt == "tiff":
        orientation = _tiff_orientation(memoryview(buf))
    elif fmt == "webp":
        orientation = _webp_orientation(memoryview(buf))
    return ImageInfo(fmt, height, width, channels, orientation)


def _probe_tiff(mv: memoryview) -> ImageInfo:
    tags = _ifd0_tags(mv)
    if 256 not in tags or 257 not in tags:
        raise DecodeError("corrupt TIFF header (no image size in the first directory).")
    channels = 3 if tags.get(262) == 3 else tags.get(277, 1)  # a palette expands to RGB
    return ImageInfo("tiff", tags[257], tags[256], channels, _valid_orientation(tags))


@dataclass(frozen=True, slots=True)
class TiffSamples:
    """How the first image of a classic TIFF stores its pixels (see :func:`tiff_samples`).

    Attributes
    ----------
    photometric : int
        PhotometricInterpretation (0 min-is-white, 1 min-is-black, 2 RGB, 3 palette...).
    samples : int
        SamplesPerPixel, extra samples included.
    bits : int
        BitsPerSample of the first sample.
    extra : int or None
        The first ExtraSamples value (0 unspecified, 1 associated alpha, 2 unassociated
        alpha); ``None`` when the file has no extra samples.
    orientation : int
        The Orientation tag (1-8; 1 when absent or invalid).
    planar : int
        PlanarConfiguration: 1 samples interleaved (chunky), 2 one plane per sample.
    """

    photometric: int
    samples: int
    bits: int
    extra: int | None
    orientation: int
    planar: int


def tiff_samples(buf: np.ndarray) -> TiffSamples | None:
    """The sample layout of a classic TIFF's first directory, read from the header only.

    Returns
    -------
    TiffSamples or None
        ``None`` for a BigTIFF or a directory too malformed to read (the codec then reports).

    Examples
    --------
    >>> import io
    >>> from PIL import Image
    >>> f = io.BytesIO()
    >>> Image.new("RGBA", (3, 2)).save(f, format="TIFF")
    >>> tiff_samples(np.frombuffer(f.getvalue(), np.uint8))
    TiffSamples(photometric=2, samples=4, bits=8, extra=2, orientation=1, planar=1)
    """
    mv = memoryview(buf)
    if len(mv) < 8 or mv[2] == 0x2B or mv[3] == 0x2B:  # BigTIFF
        return None
    try:
        tags = _ifd0_tags(mv, _SAMPLE_TAGS)
    except (DecodeError, struct.error):
        return None
    photometric, samples, bits = tags.get(262, -1), tags.get(277, 1), tags.get(258, 1)
    orientation = _valid_orientation(tags)
    return TiffSamples(photometric, samples, bits, tags.get(338), orientation, tags.get(284, 1))


#: BitsPerSample and ExtraSamples: arrays, one value per (extra) sample.
_SAMPLE_TAGS: Final = frozenset({258, 338})


def _tiff_orientation(mv: memoryview) -> int:
    """Orientation tag of IFD0 in a TIFF-structured block; 1 when absent or malformed."""
    try:
        return _valid_orientation(_ifd0_tags(mv))
    except (DecodeError, struct.error):
        return 1


def _valid_orientation(tags: dict[int, int]) -> int:
    value = tags.get(_ORIENTATION_TAG, 1)
    return value if 1 <= value <= 8 else 1


def _ifd0_tags(mv: memoryview, follow: frozenset[int] = frozenset()) -> dict[int, int]:
    """First value of every SHORT/LONG/BYTE entry of the first IFD of a TIFF structure (the
    value field; for the tags in ``follow``, the first value of the array it points to when
    the values do not fit in it, as BitsPerSample of an RGBA file)."""
    order = bytes(mv[:2])
    if order not in (b"II", b"MM"):
        raise DecodeError("corrupt TIFF header (bad byte order mark).")
    e = "<" if order == b"II" else ">"
    magic, ifd = struct.unpack_from(e + "HI", mv, 2)
    if magic != 42:
        raise DecodeError("corrupt TIFF header (bad magic number).")
    (count,) = struct.unpack_from(e + "H", mv, ifd)
    tags: dict[int, int] = {}
    for i in range(count):
        entry = ifd + 2 + 12 * i
        tag, typ = struct.unpack_from(e + "HH", mv, entry)
        code = _TIFF_TYPES.get(typ)
        if code is None:
            continue
        at = entry + 8
        if tag in follow:
            (n,) = struct.unpack_from(e + "I", mv, entry + 4)
            if n * struct.calcsize(code) > 4:
                (at,) = struct.unpack_from(e + "I", mv, at)
        (tags[tag],) = struct.unpack_from(e + code, mv, at)
    return tags


def _webp_orientation(mv: memoryview) -> int:
    pos = 12
    while pos + 8 <= len(mv):
        ctype = bytes(mv[pos : pos + 4])
        (size,) = struct.unpack_from("<I", mv, pos + 4)
        if ctype == b"EXIF":
            exif = mv[pos + 8 : pos + 8 + size]
            if bytes(exif[:6]) == b"Exif\x00\x00":
                exif = exif[6:]
            return _tiff_orientation(exif)
        pos += 8 + size + (size & 1)
    return 1
