"""``decoders.numpy``: arrays from ``.npy`` file bytes already in memory.

The header parser and the conversions are those of :mod:`headrace.codecs.npy` (the one
``readers.Numpy`` uses); the kernel is ``numpy`` in ``backends/<backend>/decoders.py``
(``device="gpu"`` decodes on the host and uploads each array once).

Examples
--------
>>> import io, numpy as np
>>> import headrace as ndd
>>> buf = io.BytesIO(); np.save(buf, np.eye(2, dtype=np.float32))
>>> ndd.decoders.numpy(ndd.as_tensor(np.frombuffer(buf.getvalue(), np.uint8))).shape
(2, 2)
"""

from __future__ import annotations

from typing import Any

from headrace._dispatch.args import Arg, forward_args, to_dtype
from headrace._dispatch.schema import OpSchema

DECODE_NUMPY = OpSchema(
    "decoders.numpy",
    "decoders",
    args=(Arg("dtype", to_dtype, None, doc="Output type (default: each file's own)."),),
    kernel="numpy",
    cpu_only_inputs=True,
    inline_bytes=0,
)


def numpy(
    data: Any,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Decode serialized ``.npy`` files (1-D uint8) into their arrays.

    The output has the file's shape and element type (bool, int8-64, uint8-64, float16/32/64),
    C-ordered and in native byte order: a Fortran-ordered or big-endian file gives the same
    logical array as ``np.load``. All samples of a batch must have the same number of
    dimensions, and the same element type unless ``dtype`` is given.

    Parameters
    ----------
    data : Tensor or Batch
        The bytes of ``.npy`` files (as ``readers.File`` or ``io.file.read`` give them).
    dtype : DType, optional
        Convert to this type (floats to integers round half away from zero; integers
        saturate).
    device : {"cpu", "gpu"}, optional
        ``"gpu"`` decodes on the host and uploads the arrays.

    Returns
    -------
    Tensor or Batch

    Raises
    ------
    DecodeError
        A sample is not a readable ``.npy`` array (bad magic or header, unsupported element
        type, or fewer bytes than the header declares); the message names the sample.

    Examples
    --------
    >>> import io, numpy as np
    >>> import headrace as ndd
    >>> buf = io.BytesIO(); np.save(buf, np.array([0.4, 2.6, 300.0]))
    >>> raw = ndd.as_tensor(np.frombuffer(buf.getvalue(), np.uint8))
    >>> np.asarray(ndd.decoders.numpy(raw, dtype=ndd.uint8)).tolist()
    [0, 3, 255]
    """
    return DECODE_NUMPY.call((data,), **forward_args(locals(), "data"))


__all__ = ["numpy"]
