"""``decoders.inflate``: decompress LZ4 blocks (or DEFLATE streams) into tensors of a given shape.

Each input sample is 1-D uint8: one compressed chunk, or several (``chunk_offsets`` and/or
``chunk_sizes``) that each decompress to ``shape``; the chunks of a sample are stacked along a
new outer axis named ``sequence_axis_name``. LZ4 uses the ``lz4`` package (extra
``headrace[lz4]``, imported on first use); ``"DEFLATE"`` (zlib or gzip streams, through the
standard library) goes beyond the reference.

The reference runs this operator on the GPU only; here it decompresses on the CPU worker threads
(``lz4`` releases the GIL) and ``device="gpu"`` uploads the results. A chunk must decompress to
exactly the bytes ``shape`` and ``dtype`` need (``check_output_size`` is therefore always on);
a declared output larger than the algorithm could produce from the chunk is refused before
anything is allocated.

Examples
--------
>>> import numpy as np, pytest
>>> lz4_block = pytest.importorskip("lz4.block")
>>> import headrace as ndd
>>> frames = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
>>> parts = [lz4_block.compress(f.tobytes(), store_size=False) for f in frames]
>>> data = ndd.as_tensor(np.frombuffer(b"".join(parts), np.uint8))
>>> out = ndd.decoders.inflate(data, shape=[3, 4], chunk_sizes=[len(p) for p in parts],
...                            layout="HW")
>>> out.shape, out.layout, bool((np.asarray(out) == frames).all())
((2, 3, 4), 'FHW', True)
"""

from __future__ import annotations

from typing import Any

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import (
    REQUIRED,
    Arg,
    PerSample,
    forward_args,
    to_bool,
    to_dtype,
    to_ints,
    to_layout,
    to_shape,
    to_str,
)
from headrace._dispatch.kernel_context import KernelContext
from headrace._dispatch.schema import OpSchema

Vals = dict[str, Any]
ALGORITHMS = ("LZ4", "DEFLATE")


def _algorithm(v: Any) -> str:
    s = to_str(v).upper()
    if s not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {list(ALGORITHMS)}, got {v!r}")
    return s


def _layout(kc: KernelContext, ins: list[Batch | None], v: Vals) -> Vals:
    """The output layout: ``layout``, with ``sequence_axis_name`` in front for chunked samples."""
    layout = v["layout"] or ""
    chunked = v["chunk_offsets"] is not None or v["chunk_sizes"] is not None
    if layout:
        shapes = v["shape"] if type(v["shape"]) is PerSample else [v["shape"]]
        for s in shapes:
            if len(s.reshape(-1)) != len(layout):
                raise InvalidArgumentError(
                    f"{kc.name}: layout {layout!r} has {len(layout)} axes, shape "
                    f"{s.reshape(-1).tolist()} has {s.size}; give one name per axis of a chunk."
                )
        if chunked:
            seq = v["sequence_axis_name"]
            if len(seq) != 1 or seq in layout:
                raise InvalidArgumentError(
                    f"{kc.name}: sequence_axis_name must be one axis name not in the layout "
                    f"(got {seq!r} with layout {layout!r})."
                )
            layout = seq + layout
    return {**v, "out_layout": layout or None}


INFLATE = OpSchema(
    "decoders.inflate",
    "decoders",
    args=(
        Arg("shape", to_shape, REQUIRED, per_sample=True, doc="Shape of one inflated chunk."),
        Arg("algorithm", _algorithm, "LZ4", doc='"LZ4" (or "DEFLATE", beyond the reference).'),
        Arg("dtype", to_dtype, _dt.uint8, doc="Type of the inflated data."),
        Arg("layout", to_layout, "", doc="Layout of one inflated chunk."),
        Arg("sequence_axis_name", to_layout, "F", doc="Name of the chunk axis."),
        Arg("chunk_offsets", to_ints, None, per_sample=True, doc="Where each chunk starts."),
        Arg("chunk_sizes", to_ints, None, per_sample=True, doc="Compressed size of each chunk."),
        Arg("check_output_size", to_bool, False, doc="Accepted; sizes are always checked."),
    ),
    kernel="inflate",
    prepare=_layout,
    cpu_only_inputs=True,
    inline_bytes=0,
)


def inflate(
    input: Any,
    /,
    *,
    shape: Any = None,
    algorithm: str | None = None,
    dtype: Any = None,
    layout: str | None = None,
    sequence_axis_name: str | None = None,
    chunk_offsets: Any = None,
    chunk_sizes: Any = None,
    check_output_size: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Decompress each sample (or each of its chunks) to a tensor of ``shape`` and ``dtype``.

    Parameters
    ----------
    input : Tensor or Batch
        Compressed bytes, 1-D uint8 (CPU or GPU; decompression runs on the CPU).
    shape : sequence of int, or Batch
        Shape of one inflated chunk (required). Per sample.
    algorithm : str, optional
        ``"LZ4"`` (default; LZ4 *block* format, as ``lz4.block.compress(...,
        store_size=False)`` writes it) or ``"DEFLATE"`` (zlib/gzip streams; beyond the
        reference).
    dtype : DType, optional
        Type of the inflated data (default uint8); the chunk must decompress to exactly
        ``prod(shape) * itemsize`` bytes.
    layout : str, optional
        Layout of one chunk (one name per axis of ``shape``).
    sequence_axis_name : str, optional
        Name of the chunk axis put in front of ``layout`` for chunked samples (default
        ``"F"``); ignored without ``layout`` or chunks.
    chunk_offsets, chunk_sizes : sequence of int, or Batch, optional
        Where each chunk starts / how long it is in the sample. With only offsets the chunks
        run to the next offset (the last to the end); with only sizes they are packed from 0.
        Either one makes the output a sequence ``(chunks, *shape)``, even of one chunk.
    check_output_size : bool, optional
        Accepted; sizes are always checked (a mismatch raises).
    device : {"cpu", "gpu"}, optional
        ``"gpu"`` returns the results on the GPU (decompressed on the host, then uploaded; the
        reference decompresses on the GPU).

    Returns
    -------
    Tensor or Batch
        ``shape`` (or ``(chunks, *shape)``) of ``dtype``.

    Raises
    ------
    DecodeError
        A chunk is corrupt, or decompresses to another size than ``shape`` and ``dtype`` need.
    InvalidArgumentError
        Chunks outside the sample, offsets and sizes of different lengths, a layout that does
        not fit ``shape``.
    BackendUnavailableError
        ``lz4`` is not installed (``pip install headrace[lz4]``).

    Examples
    --------
    >>> import numpy as np, pytest
    >>> lz4_block = pytest.importorskip("lz4.block")
    >>> import headrace as ndd
    >>> x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    >>> data = ndd.as_tensor(np.frombuffer(lz4_block.compress(x.tobytes(), store_size=False),
    ...                                    np.uint8))
    >>> out = ndd.decoders.inflate(data, shape=[2, 3], dtype=ndd.float32)
    >>> bool((np.asarray(out) == x).all())
    True
    """
    return INFLATE.call((input,), **forward_args(locals(), "input"))


__all__ = ["ALGORITHMS", "inflate"]
