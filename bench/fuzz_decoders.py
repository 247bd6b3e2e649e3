"""Fuzz the image decoders with mutated JPEG, PNG, BMP, TIFF and WebP files.

Every case is a small valid image (several encodings of each format) mutated at random: bit
flips, random or boundary byte values, truncation, inserted/deleted/duplicated ranges, splices,
and header edits that declare a huge size (PNG with a recomputed CRC, so the codec believes it).
Each case goes through ``decoders.image``, ``decoders.image_random_crop`` and
``peek_image_shape`` (bytes read by ``io.file.read``, so errors can name the file) in a worker
process whose address space is limited to its start size plus ``--mem-gib``; a case running
past ``--timeout`` seconds is killed. The outcome of every case and op is one of:

``ok``        decoded (or peeked) fine;
``rejected``  a ``DecodeError`` naming the file (the contract);
``unnamed``   a ``DecodeError`` whose message does not name the file;
``wrong``     another exception type;
``memory``    ``MemoryError``, or an allocation the limit refused (a memory blow-up);
``crash``     the worker died;
``hang``      the case ran past the timeout.

    python bench/fuzz_decoders.py                       # 4000 cases, seed 0
    python bench/fuzz_decoders.py --cases 300 --seed 1 --json out.json
    python bench/fuzz_decoders.py --keep DIR            # keep the failing inputs in DIR

The exit status is 1 when any case is ``unnamed``, ``wrong``, ``memory``, ``crash`` or ``hang``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

BAD = ("unnamed", "wrong", "memory", "crash", "hang")
OPS = ("image", "random_crop", "peek")


# --- seeds -------------------------------------------------------------------------------------
def seeds() -> list[tuple[str, bytes]]:
    """Small valid files, several encodings per format: ``(extension, bytes)``."""
    import cv2
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:24, 0:32]
    rgb = np.stack([x * 8, y * 10, (x + y) * 4], -1).astype(np.uint8)
    rgb = np.clip(rgb + rng.integers(0, 16, rgb.shape), 0, 255).astype(np.uint8)
    gray = rgb[..., 0]
    rgba = np.dstack([rgb, gray])
    out: list[tuple[str, bytes]] = []

    def cv(ext: str, img: np.ndarray, params: list[int] | None = None) -> None:
        ok, buf = cv2.imencode(ext, img, params or [])
        assert ok
        out.append((ext, buf.tobytes()))

    def pil(ext: str, img: Image.Image, **kw: object) -> None:
        b = io.BytesIO()
        img.save(b, format={".jpg": "JPEG", ".tif": "TIFF"}.get(ext, ext[1:].upper()), **kw)
        out.append((ext, b.getvalue()))

    cv(".jpg", rgb)
    cv(".jpg", gray)
    cv(".jpg", rgb, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])
    pil(".jpg", Image.fromarray(rgb), subsampling=0, quality=90)
    pil(".jpg", Image.fromarray(rgb).convert("CMYK"))
    cv(".png", rgb)
    cv(".png", rgba)
    cv(".png", (gray.astype(np.uint16) * 257))
    pil(".png", Image.fromarray(rgb).convert("P"))
    pil(".png", Image.fromarray(rgb), optimize=False)  # one IDAT, interlace off
    cv(".bmp", rgb)
    pil(".bmp", Image.fromarray(rgb).convert("P"))
    pil(".bmp", Image.fromarray(rgba))
    cv(".tif", rgb)
    pil(".tif", Image.fromarray(rgb), compression="tiff_lzw")
    pil(".tif", Image.fromarray(rgb), compression="tiff_adobe_deflate")
    pil(".tif", Image.fromarray(gray))
    cv(".webp", rgb, [cv2.IMWRITE_WEBP_QUALITY, 80])
    cv(".webp", rgb, [cv2.IMWRITE_WEBP_QUALITY, 101])
    pil(".webp", Image.fromarray(rgba), lossless=True)
    return out


# --- mutations ---------------------------------------------------------------------------------
_INTERESTING = (0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF)


def _huge_header(ext: str, data: bytearray, r: random.Random) -> bytearray:
    """Declare a huge (or odd) width/height in the format's header."""
    big = r.choice([0x7FFF, 0xFFFF, 40000, 1 << 16, 1 << 20, 1 << 24, 0x7FFFFFFF, 0xFFFFFFFF])
    if ext == ".png" and len(data) >= 33:
        w, h = struct.unpack_from(">II", data, 16)
        field = r.choice(["w", "h", "both", "both"])
        w = big if field in ("w", "both") else w
        h = big if field in ("h", "both") else h
        struct.pack_into(">II", data, 16, w & 0xFFFFFFFF, h & 0xFFFFFFFF)
        if r.random() < 0.5:
            data[24] = r.choice([1, 2, 4, 8, 16])  # bit depth
        struct.pack_into(">I", data, 29, zlib.crc32(bytes(data[12:29])))  # a valid CRC
        return data
    if ext == ".jpg":
        for m in (0xC0, 0xC1, 0xC2):
            i = data.find(bytes([0xFF, m]))
            if i > 0 and i + 9 <= len(data):
                v = min(big, 0xFFFF)
                off = i + 5 + 2 * r.randrange(2)  # height, then width
                struct.pack_into(">H", data, off, v)
                if r.random() < 0.5:
                    struct.pack_into(">H", data, i + 5 + (2 if off == i + 5 else 0), v)
                return data
        return data
    if ext == ".bmp" and len(data) >= 26:
        w = big if r.random() < 0.7 else r.randrange(1 << 31)
        h = -big if r.random() < 0.3 else big
        struct.pack_into("<i", data, 18 + 4 * r.randrange(2), _i32(w))
        if r.random() < 0.5:
            struct.pack_into("<i", data, 22, _i32(h))
        return data
    if ext == ".tif" and len(data) >= 8 and data[:2] in (b"II", b"MM"):
        e = "<" if data[:2] == b"II" else ">"
        try:
            (ifd,) = struct.unpack_from(e + "I", data, 4)
            (count,) = struct.unpack_from(e + "H", data, ifd)
            for k in range(count):
                entry = ifd + 2 + 12 * k
                tag, typ = struct.unpack_from(e + "HH", data, entry)
                if tag in (256, 257) and (tag == 256 + r.randrange(2) or r.random() < 0.5):
                    if typ == 3:
                        struct.pack_into(e + "H", data, entry + 8, min(big, 0xFFFF))
                    elif typ == 4:
                        struct.pack_into(e + "I", data, entry + 8, big)
        except struct.error:
            pass
        return data
    if ext == ".webp":
        i = data.find(b"VP8")
        if i > 0 and i + 30 <= len(data):
            kind = data[i + 3 : i + 4]
            if kind == b" ":  # lossy: 14-bit sizes after the start code
                struct.pack_into("<HH", data, i + 14, 0x3FFF, 0x3FFF)
            elif kind == b"L":  # lossless: 14+14 bits after the signature byte
                struct.pack_into("<I", data, i + 9, 0x0FFFFFFF)
            elif kind == b"X":
                struct.pack_into("<I", data, i + 12, 0xFFFFFF)
        return data
    return data


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def mutate(ext: str, data: bytes, other: bytes, r: random.Random) -> bytes:
    """One random mutation (sometimes two) of ``data``."""
    b = bytearray(data)
    if r.random() < 0.1:  # a declared size the codec believes: the decompression bombs
        return bytes(_huge_header(ext, b, r))
    for _ in range(1 if r.random() < 0.8 else 2):
        op = r.randrange(9)
        n = len(b)
        if n < 4:
            break
        if op == 0:
            for _ in range(r.randint(1, 8)):
                i = r.randrange(n)
                b[i] ^= 1 << r.randrange(8)
        elif op == 1:
            for _ in range(r.randint(1, 4)):
                b[r.randrange(n)] = r.randrange(256)
        elif op == 2:
            i = r.randrange(min(n, 64)) if r.random() < 0.6 else r.randrange(n)
            b[i] = r.choice(_INTERESTING)
        elif op == 3:
            b = b[: r.randrange(1, n)]
        elif op == 4:
            i = r.randrange(n)
            b[i:i] = bytes(r.randrange(256) for _ in range(r.randint(1, 16)))
        elif op == 5:
            i = r.randrange(n)
            del b[i : i + r.randint(1, 32)]
        elif op == 6:
            i, j = sorted(r.randrange(n) for _ in range(2))
            k = r.randrange(n)
            b[k:k] = b[i : j + 1][:256]
        elif op == 7:
            cut = r.randrange(n)
            b = b[:cut] + bytearray(other[r.randrange(len(other)) :])
        else:
            b = _huge_header(ext, b, r)
    return bytes(b)


def make_cases(n: int, seed: int, directory: Path) -> list[Path]:
    """Write ``n`` mutated files into ``directory`` (the same files for the same seed)."""
    base = seeds()
    r = random.Random(seed)
    paths = []
    for i in range(n):
        ext, data = base[i % len(base)]
        other = base[r.randrange(len(base))][1]
        p = directory / f"case_{i:05d}{ext}"
        p.write_bytes(mutate(ext, data, other, r))
        paths.append(p)
    return paths


# --- the worker ----------------------------------------------------------------------------------
def worker(mem_gib: float) -> None:
    """Read paths from stdin, print one JSON line per case."""
    import resource

    import numpy as np

    import headrace as ndd

    ndd.set_num_threads(1)
    os.environ["OPENCV_LOG_LEVEL"] = "OFF"
    if mem_gib > 0:
        with open("/proc/self/statm") as f:
            vsz = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = vsz + int(mem_gib * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    rng = ndd.random.RNG(seed=0)

    def run(op: str, path: str) -> tuple[str, str]:
        try:
            with ndd.EvalMode.sync_cpu:
                raw = ndd.io.file.read(ndd.batch([np.frombuffer(path.encode(), np.uint8)]))
                if op == "image":
                    out = ndd.decoders.image(raw)
                elif op == "random_crop":
                    out = ndd.decoders.image_random_crop(raw, rng=rng)
                else:
                    out = ndd.peek_image_shape(raw)
                out.torch()
            return "ok", ""
        except MemoryError as e:
            return "memory", f"MemoryError: {e}"
        except ndd.DecodeError as e:
            msg = str(e)
            if "memory" in msg.lower() and "insufficient" in msg.lower():
                return "memory", msg
            return ("rejected" if os.path.basename(path) in msg else "unnamed"), msg
        except Exception as e:  # classified, not hidden
            msg = f"{type(e).__name__}: {e}"
            if "memory" in msg.lower() and ("alloc" in msg.lower() or "insufficient" in msg):
                return "memory", msg
            return "wrong", msg

    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        res = {op: run(op, path) for op in OPS}
        print(json.dumps({"path": path, "res": res}), flush=True)


# --- the driver ----------------------------------------------------------------------------------
def _start(mem_gib: float) -> subprocess.Popen[str]:
    env = dict(os.environ, OPENCV_LOG_LEVEL="OFF", HEADRACE_FAKE_GPU="0")
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", "--mem-gib", str(mem_gib)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def fuzz(
    n: int, seed: int, timeout: float = 10.0, mem_gib: float = 4.0, keep: Path | None = None
) -> dict[str, object]:
    """Run ``n`` cases; returns counts per outcome and the failing cases."""
    tmp = Path(tempfile.mkdtemp(prefix="headrace-fuzz-"))
    try:
        paths = make_cases(n, seed, tmp)
        counts: Counter[str] = Counter()
        failures: list[dict[str, str]] = []
        slow: list[tuple[float, str]] = []
        proc = _start(mem_gib)
        start_wait = 60.0  # the first case also imports headrace
        for p in paths:
            assert proc.stdin is not None and proc.stdout is not None
            t0 = time.monotonic()
            try:
                proc.stdin.write(f"{p}\n")
                proc.stdin.flush()
            except BrokenPipeError:
                pass
            ready, _, _ = select.select([proc.stdout], [], [], timeout + start_wait)
            line = proc.stdout.readline() if ready else None
            start_wait = 0.0
            took = time.monotonic() - t0
            if line and took > 1.0:
                slow.append((round(took, 1), p.name))
            if line:
                res = json.loads(line)["res"]
                for op, (kind, msg) in res.items():
                    counts[kind] += 1
                    if kind in BAD:
                        failures.append({"case": p.name, "op": op, "kind": kind, "msg": msg[:300]})
                continue
            kind = "hang" if line is None else "crash"
            if kind == "hang":
                proc.kill()
            proc.wait()
            if kind == "crash" and proc.returncode == 0:
                kind = "crash"
            counts[kind] += 1
            failures.append(
                {
                    "case": p.name,
                    "op": "?",
                    "kind": kind,
                    "msg": f"after {time.monotonic() - t0:.1f} s, exit {proc.returncode}",
                }
            )
            proc = _start(mem_gib)
            start_wait = 60.0
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for name in {f["case"] for f in failures}:
                shutil.copy(tmp / name, keep / name)
        if keep is not None:
            for _, name in slow:
                shutil.copy(tmp / name, keep / name)
        return {
            "cases": n,
            "seed": seed,
            "counts": dict(counts),
            "failures": failures,
            "slowest": sorted(slow, reverse=True)[:20],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per case")
    ap.add_argument("--mem-gib", type=float, default=4.0, help="address space beyond the start")
    ap.add_argument("--json", type=Path, help="write the report here")
    ap.add_argument("--keep", type=Path, help="copy failing inputs here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.mem_gib)
        return 0
    t0 = time.monotonic()
    rep = fuzz(a.cases, a.seed, a.timeout, a.mem_gib, a.keep)
    rep["seconds"] = round(time.monotonic() - t0, 1)
    if a.json:
        a.json.write_text(json.dumps(rep, indent=1))
    print(json.dumps(rep["counts"]), f"{rep['seconds']} s")
    print("slowest cases (s):", rep["slowest"])
    for f in rep["failures"][:40]:  # type: ignore[index]
        print(f"  {f['kind']:8} {f['case']} {f['op']}: {f['msg'][:160]}")
    return 1 if any(k in BAD for k in rep["counts"]) else 0  # type: ignore[operator]


if __name__ == "__main__":
    sys.exit(main())
