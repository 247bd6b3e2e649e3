"""``ndd.io.file.read``: read whole files named by UTF-8 path bytes.

The kernel is ``file_read`` in ``backends/cpu/decoders.py`` (CPU only); the paths become the
output's sources, so decoder errors name the file.
"""

from __future__ import annotations

from typing import Any

from headrace._dispatch.args import Arg, to_any
from headrace._dispatch.schema import OpSchema

FILE_READ = OpSchema(
    "io.file.read",
    "decoders",
    devices=("cpu",),
    kernel="file_read",
    inline_bytes=0,
    args=(Arg("_unused", to_any, None),),
)


def read(input: Any, /, *, device: Any = None, batch_size: int | None = None) -> Any:
    """Read whole files; the input holds UTF-8 encoded paths (``ndd.io.file.read``).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> import headrace as ndd
    >>> p = os.path.join(tempfile.mkdtemp(), "a.bin"); open(p, "wb").write(b"xyz")
    3
    >>> ndd.io.file.read(ndd.tensor(np.frombuffer(p.encode(), np.uint8))).shape
    (3,)
    """
    return FILE_READ.call((input,), device=device, batch_size=batch_size)


__all__ = ["read"]
