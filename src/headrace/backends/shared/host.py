"""Batch kernels computed on the host for every backend: random draws, image decoding and
decompression (``inflate``).

These kernels run with numpy (random values) and the CPU codecs (images) whatever the op's
device, so the CPU and the GPU give identical results for the same RNG state and bytes. They are
the CPU kernels as they are (``backends/cpu/random.py``, ``backends/cpu/decoders.py``); the torch
backend wraps them with :func:`on_host`, which moves the inputs to the host and uploads the
outputs to the op's device once.

Kernels here see arguments only as the ops layer prepared them (see ``OpSchema.prepare``).

Examples
--------
>>> import numpy as np
>>> draw_coin_flip(np.random.default_rng(0), {"probability": 1.0}, (3,), [], 0).tolist()
[True, True, True]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from headrace import codecs
from headrace._core import dtype as _dt
from headrace._core import storage as _st
from headrace._core.batch import Batch, split_dense
from headrace._core.device import CPU
from headrace._core.errors import DecodeError, InvalidArgumentError
from headrace._dispatch.args import has_per_sample, sample_args
from headrace._dispatch.kernel_context import KernelContext
from headrace.codecs import npy as _npy

Vals = dict[str, Any]
Kernel = Callable[[KernelContext, list[Any], Vals], tuple[Batch, ...]]
#: ``draw(generator, args, shape, inputs, i)``: the values of sample ``i`` (or of the batch).
Draw = Callable[[np.random.Generator, Vals, Any, list[Any], int], Any]


def on_host(kernel: Kernel) -> Kernel:
    """``kernel`` run on host copies of the inputs, its outputs uploaded to ``kc.device``.

    Inputs already on the CPU are used as they are (with their sources); the outputs keep their
    dtype, layout and sources.
    """

    def kern(kc: KernelContext, ins: list[Any], v: Vals) -> tuple[Batch, ...]:
        host = [None if b is None else _to_host(b) for b in ins]
        return tuple(_upload(b, kc) for b in kernel(kc, host, v))

    kern.__name__ = kern.__qualname__ = kernel.__name__
    kern.__doc__ = kernel.__doc__
    return kern


def _to_host(b: Batch) -> Batch:
    if b._device.device_type == "cpu":
        return b
    samples = [_st.move(s, CPU, b._dtype) for s in b._samples]  # type: ignore[union-attr]
    out = Batch._wrap(samples, b._dtype, b._layout, CPU)
    out._sources = b._sources
    out._step = b._step
    return out


def _upload(b: Batch, kc: KernelContext) -> Batch:
    dev = kc.device
    moved = [_st.move(s, dev, _st.dtype_of(s)) for s in b._samples]  # type: ignore[union-attr]
    out = Batch._wrap(moved, b._dtype, b._layout, dev)
    out._sources = b._sources
    out._kept = b._kept
    return out


# --- random ----------------------------------------------------------------------------------
def _shape(v: Vals, like: Batch | None, i: int) -> tuple[int, ...]:
    if v["shape"] is not None:
        return tuple(int(s) for s in np.atleast_1d(v["shape"]))
    if like is not None:
        return tuple(like._samples[i].shape)  # type: ignore[index]
    return ()


def random_kernel(draw: Draw, default_dtype: _dt.DType | None, like_index: int = 0) -> Kernel:
    """A batch kernel drawing every sample's values from the call's generator, in sample order.

    Parameters
    ----------
    draw : callable
        ``draw(generator, args, shape, inputs, i)``.
    default_dtype : DType or None
        Output type without ``dtype=`` (``None``: the first input's).
    like_index : int
        The input whose samples give the shapes when ``shape`` is not given.
    """

    def kern(kc: KernelContext, ins: list[Any], v: Vals) -> tuple[Batch]:
        gen = kc.generator()
        like = ins[like_index] if len(ins) > like_index else None
        dt = v["dtype"] or (default_dtype if default_dtype is not None else ins[0]._dtype)
        per = has_per_sample(v)
        if not per and like is None and like_index == 0:
            # one vectorised draw for the whole batch (same values as drawing sample by sample)
            shape = _shape(v, None, 0)
            vals = np.asarray(draw(gen, v, (kc.n, *shape), ins, 0)).astype(dt.numpy, copy=False)
            return (Batch._wrap(split_dense(vals), dt, None, CPU, dense=vals),)
        outs = []
        for i in range(kc.n):
            a = sample_args(v, i) if per else v
            vals = np.asarray(draw(gen, a, _shape(a, like, i), ins, i))
            outs.append(vals.astype(dt.numpy, copy=False))
        return (Batch._wrap(outs, dt, None, CPU),)

    kern.__name__ = kern.__qualname__ = draw.__name__.removeprefix("draw_")
    return kern


def draw_uniform(gen: np.random.Generator, a: Vals, shape: Any, ins: list[Any], i: int) -> Any:
    """Uniform values in ``range``, or picked from ``values``."""
    if a["values"] is not None:
        vals = np.atleast_1d(a["values"])
        return vals[gen.integers(0, len(vals), size=shape)]
    r = a["range"]
    if r.ndim != 1 or r.shape[0] != 2:
        raise InvalidArgumentError(f"random.uniform: range must be [lo, hi] (got {r.tolist()}).")
    lo, hi = float(r[0]), float(r[1])
    if hi < lo:
        raise InvalidArgumentError(f"random.uniform: range [{lo}, {hi}] is reversed.")
    return gen.uniform(lo, hi, size=shape)


def draw_normal(gen: np.random.Generator, a: Vals, shape: Any, ins: list[Any], i: int) -> Any:
    """Normal values with ``mean`` and ``stddev``: ``mean + stddev * z`` (the values numpy's
    ``normal`` gives, and a negative ``stddev`` mirrors them, as in the reference)."""
    return a["mean"] + a["stddev"] * gen.standard_normal(size=shape)


def draw_coin_flip(gen: np.random.Generator, a: Vals, shape: Any, ins: list[Any], i: int) -> Any:
    """``True`` with ``probability``."""
    p = a["probability"]
    if not 0.0 <= p <= 1.0:
        raise InvalidArgumentError(f"random.coin_flip: probability must be in [0, 1] (got {p}).")
    return gen.random(size=shape) < p


def draw_choice(gen: np.random.Generator, a: Vals, shape: Any, ins: list[Any], i: int) -> Any:
    """Elements of input 0's sample ``i`` (``range(a)`` for a scalar), weighted by ``p``."""
    src = ins[0]._samples[i]
    pool = np.arange(int(src)) if src.ndim == 0 else src
    p = a["p"]
    if p is not None:
        p = np.asarray(p, np.float64)
        if p.shape[0] != pool.shape[0]:
            raise InvalidArgumentError(
                f"random.choice: p has {p.shape[0]} entries for {pool.shape[0]} choices."
            )
        p = p / p.sum()
    idx = gen.choice(pool.shape[0], size=shape, p=p)
    return pool[idx]


def draw_beta(gen: np.random.Generator, a: Vals, shape: Any, ins: list[Any], i: int) -> Any:
    """Beta values with ``alpha`` and ``beta``."""
    if a["alpha"] <= 0 or a["beta"] <= 0:
        raise InvalidArgumentError("random.beta: alpha and beta must be positive.")
    return gen.beta(a["alpha"], a["beta"], size=shape)


uniform = random_kernel(draw_uniform, _dt.float32)
normal = random_kernel(draw_normal, _dt.float32)
coin_flip = random_kernel(draw_coin_flip, _dt.int32)
choice = random_kernel(draw_choice, None, like_index=1)
beta = random_kernel(draw_beta, _dt.float32)


# --- image decoding ----------------------------------------------------------------------------
def encoded_samples(kc: KernelContext, x: Batch, what: str = "encoded bytes") -> list[Any]:
    """The samples of a decoder's input, checked to be ``what`` (1-D uint8)."""
    samples = x._samples
    assert samples is not None
    if x._dtype is not _dt.uint8 or (samples and samples[0].ndim != 1):
        raise InvalidArgumentError(
            f"{kc.name}: the input must be {what} (1-D uint8), got {x._dtype} with "
            f"{samples[0].ndim if samples else 0} dimensions. Read files with "
            "ndd.readers.File or ndd.io.file.read."
        )
    return samples


def image(kc: KernelContext, ins: list[Any], v: Vals) -> tuple[Batch]:
    """Decode every sample (its window ``v["roi"][i]`` when given) on the worker threads.

    ``v`` holds, as the decoders' ``prepare`` made it: ``codec`` (keyword arguments of
    :func:`headrace.codecs.decode`), ``roi`` (per-sample ``(y, x, h, w)`` or ``None``),
    ``on_error`` and ``report_skipped(kc, indices)``, called with the samples dropped by
    ``on_error="skip"``.
    """
    x = ins[0]
    samples = encoded_samples(kc, x)
    kw = v["codec"]
    rois = v["roi"]
    skip = v["on_error"] == "skip"
    name = kc.name

    def one(i: int) -> Any:
        try:
            return codecs.decode(samples[i], roi=rois[i] if rois else None, op=name, **kw)
        except DecodeError:
            if skip:
                return None
            raise

    outs = kc.map(one)
    keep = list(range(len(outs)))
    if skip and any(o is None for o in outs):
        keep = [i for i, o in enumerate(outs) if o is not None]
        if x._step is not None:  # the step's other outputs now refuse to be used unaligned
            x._step.record(name, len(outs), tuple(keep), x._sources)
        v["report_skipped"](kc, [i for i, o in enumerate(outs) if o is None])
        outs = [outs[i] for i in keep]
    out = Batch._wrap(outs, v["dtype"] or _dt.uint8, "HWC", CPU)
    if skip:
        out._kept = tuple(keep)
    if x._sources is not None:
        out._sources = [x._sources[i] for i in keep]
    return (out,)


# --- inflate -----------------------------------------------------------------------------------
#: The largest decompressed/compressed size ratio each algorithm can produce (plus a little), so a
#: declared output size beyond it is refused before anything is allocated.
_MAX_RATIO = {"LZ4": 256, "DEFLATE": 1040}


def _decompressor(algorithm: str) -> Callable[[memoryview, int], bytes | bytearray]:
    """``fn(chunk, expected_size)`` for ``algorithm``; ``lz4`` is imported on first use."""
    if algorithm == "DEFLATE":
        import zlib

        def inflate_deflate(chunk: memoryview, n: int) -> bytes:
            d = zlib.decompressobj(wbits=47)  # zlib or gzip header, detected
            out = d.decompress(chunk, n + 1)  # at most one byte past the expected size
            if len(out) <= n and not d.eof:
                raise ValueError("the stream is truncated")
            return out

        return inflate_deflate
    try:
        import lz4.block
    except ImportError as e:
        from headrace._core.errors import BackendUnavailableError

        raise BackendUnavailableError(
            "decoders.inflate decompresses LZ4 with the 'lz4' package, which is not installed: "
            "pip install headrace[lz4]"
        ) from e

    def inflate_lz4(chunk: memoryview, n: int) -> bytearray:
        out: bytearray = lz4.block.decompress(chunk, uncompressed_size=n, return_bytearray=True)
        return out

    return inflate_lz4


def _chunks(name: str, size: int, offsets: Any, sizes: Any) -> list[tuple[int, int]] | None:
    """``(offset, size)`` of each chunk of a sample of ``size`` bytes (``None``: not chunked)."""
    if offsets is None and sizes is None:
        return None
    off = None if offsets is None else [int(o) for o in np.atleast_1d(offsets)]
    siz = None if sizes is None else [int(s) for s in np.atleast_1d(sizes)]
    if off is None:
        assert siz is not None
        off = np.concatenate([[0], np.cumsum(siz[:-1])]).astype(int).tolist() if siz else []
    if siz is None:
        siz = [b - a for a, b in zip(off, off[1:] + [size])]
    if len(off) != len(siz):
        raise InvalidArgumentError(
            f"{name}: {len(off)} chunk_offsets but {len(siz)} chunk_sizes; give one of each per "
            "chunk."
        )
    for k, (o, s) in enumerate(zip(off, siz)):
        if o < 0 or s < 0 or o + s > size:
            raise InvalidArgumentError(
                f"{name}: chunk {k} (offset {o}, size {s}) lies outside the {size}-byte input."
            )
    return list(zip(off, siz))


def inflate(kc: KernelContext, ins: list[Any], v: Vals) -> tuple[Batch]:
    """Decompress every sample (each chunk of it) to ``shape`` elements of ``dtype``.

    ``v``: ``algorithm`` (``"LZ4"`` or ``"DEFLATE"``), ``shape`` (per sample: one chunk's
    shape), ``dtype``, ``chunk_offsets``/``chunk_sizes`` (per sample, optional) and
    ``out_layout`` (the ops layer's: the layout with the sequence axis when chunked).
    """
    x = ins[0]
    samples = x._samples
    assert samples is not None
    name = kc.name
    if x._dtype is not _dt.uint8 or any(s.ndim != 1 for s in samples):
        raise InvalidArgumentError(f"{name}: the input must be 1-D uint8 compressed bytes.")
    algorithm = v["algorithm"]
    decompress = _decompressor(algorithm)
    dt: _dt.DType = v["dtype"]
    np_dt = np.dtype(dt.numpy)
    per = has_per_sample(v)

    def one(i: int) -> np.ndarray:
        a = sample_args(v, i) if per else v
        data = np.ascontiguousarray(samples[i])
        shape = tuple(int(s) for s in np.atleast_1d(a["shape"]))
        if any(s < 0 for s in shape):
            raise InvalidArgumentError(f"{name}: shape {list(shape)} has a negative extent.")
        nbytes = int(np.prod(shape, dtype=np.int64)) * np_dt.itemsize
        chunks = _chunks(name, data.size, a["chunk_offsets"], a["chunk_sizes"])
        parts = [(0, data.size)] if chunks is None else chunks
        out = np.empty((len(parts), *shape), np_dt)
        raw = out.reshape(len(parts), -1).view(np.uint8)
        buf = memoryview(data)
        for k, (o, s) in enumerate(parts):
            where = f"chunk {k}: " if chunks is not None else ""
            if nbytes == 0 and s == 0:  # nothing stored for nothing wanted
                continue
            if nbytes > _MAX_RATIO[algorithm] * s + 64:
                raise DecodeError(
                    f"{name}: {where}{s} compressed bytes cannot hold {nbytes} bytes of "
                    f"{algorithm} output (shape {list(shape)}, {dt}); check shape and dtype."
                )
            try:
                got = decompress(buf[o : o + s], nbytes)
            except Exception as e:  # lz4.block.LZ4BlockError, zlib.error: corrupt data
                raise DecodeError(
                    f"{name}: {where}cannot decompress {algorithm} data ({e})."
                ) from e
            if len(got) != nbytes:
                raise DecodeError(
                    f"{name}: {where}the data decompresses to {len(got)}"
                    f"{'+' if len(got) > nbytes else ''} bytes, the output needs {nbytes} "
                    f"(shape {list(shape)}, {dt}); check shape and dtype."
                )
            raw[k] = np.frombuffer(got, np.uint8)
        return out if chunks is not None else out[0]

    outs = kc.map(one)
    out = Batch._wrap(outs, dt, v["out_layout"], CPU)
    if x._sources is not None:
        out._sources = list(x._sources)
    return (out,)


# --- .npy decoding -------------------------------------------------------------------------
def numpy(kc: KernelContext, ins: list[Any], v: Vals) -> tuple[Batch]:
    """Decode every sample's ``.npy`` bytes (C order, native byte order) on the worker threads;
    ``v["dtype"]`` (a DType or ``None``) converts them (rounded, saturated)."""
    x = ins[0]
    samples = encoded_samples(kc, x, ".npy file bytes")
    dt = v["dtype"]

    def one(i: int) -> np.ndarray:
        a = _npy.decode(samples[i], where=kc.source(i) or "the .npy bytes")
        return a if dt is None else _npy.convert(a, dt.numpy)

    outs = kc.map(one)
    if outs:
        first = outs[0]
        for i, a in enumerate(outs):
            if a.ndim != first.ndim or (dt is None and a.dtype != first.dtype):
                raise InvalidArgumentError(
                    f"{kc.name}: all samples need the same number of dimensions and element type "
                    f"(give dtype= to convert them); sample 0 is {first.dtype} {first.ndim}-D, "
                    f"sample {i} is {a.dtype} {a.ndim}-D."
                )
    out_dt = dt or (_dt.from_numpy(outs[0].dtype) if outs else _dt.uint8)
    out = Batch._wrap(outs, out_dt, None, CPU)
    out._sources = x._sources
    return (out,)


# --- dump_image ----------------------------------------------------------------------------------
def ppm_text(img: np.ndarray) -> str:
    """``img`` (H, W, 1 or 3; uint8) as the plain-text PPM (``P3``) or PGM (``P2``) the reference
    writes: a header, then one line of space-separated values per row.

    Examples
    --------
    >>> ppm_text(np.array([[[0], [255]]], np.uint8)).splitlines()
    ['P2', '2 1', '255', '0 255 ']
    """
    h, w, c = img.shape
    rows = img.reshape(h, w * c)
    body = "".join(" ".join(map(str, r.tolist())) + " \n" for r in rows)
    return f"{'P3' if c == 3 else 'P2'}\n{w} {h}\n255\n{body}"


def dump_image(kc: KernelContext, ins: list[Any], v: Vals) -> tuple[Batch]:
    """Write sample ``i`` to ``{i}-{suffix}-0.ppm`` in the working directory (as the reference
    names them); the input passes through unchanged."""
    x = ins[0]
    lay = v["input_layout"]
    if x._dtype is not _dt.uint8:
        raise InvalidArgumentError(f"{kc.name}: images must be uint8 (got {x._dtype}).")
    if lay not in ("HWC", "CHW"):
        raise InvalidArgumentError(f"{kc.name}: input_layout must be 'HWC' or 'CHW' (got {lay!r}).")

    def one(i: int) -> None:
        img = np.asarray(x._samples[i])  # type: ignore[index]
        if img.ndim != 3:
            raise InvalidArgumentError(f"a 3-D {lay} image is needed (got shape {img.shape})")
        if lay == "CHW":
            img = img.transpose(1, 2, 0)
        if img.shape[2] not in (1, 3):
            raise InvalidArgumentError(f"1 or 3 channels are needed (got {img.shape[2]})")
        with open(f"{i}-{v['suffix']}-0.ppm", "w", encoding="ascii") as f:
            f.write(ppm_text(img))

    kc.map(one, parallel=False)
    return (x,)
