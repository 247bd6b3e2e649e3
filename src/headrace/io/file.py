"""``ndd.io.file.read``: read whole files named by UTF-8 path bytes.

The kernel is ``file_read`` in ``backends/cpu/decoders.py`` (CPU only); the paths become the
output's sources, so decoder errors name the file.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.tensor import Tensor
from headrace._dispatch.args import Arg, forward_args, to_bool
from headrace._dispatch.schema import OpSchema

FILE_READ = OpSchema(
    "io.file.read",
    "decoders",
    inputs=("filepaths",),
    devices=("cpu",),
    kernel="file_read",
    inline_bytes=0,
    args=(
        Arg(
            "dont_use_mmap",
            to_bool,
            False,
            doc="Accepted; no effect (each file is read with one read() call, never mapped).",
        ),
        Arg(
            "use_o_direct",
            to_bool,
            False,
            doc="Accepted; no effect on the bytes read (the page cache is used).",
        ),
    ),
)

#: One path: ``str``, ``bytes`` or ``os.PathLike``.
PathArg = str | bytes | os.PathLike  # type: ignore[type-arg]


def _path_bytes(path: PathArg) -> np.ndarray:
    return np.frombuffer(os.fsencode(path), np.uint8).copy()


def encode_paths(paths: Any, op: str = "io.file.read") -> Any:
    """Paths as the reference's operators take them: a path (``str``, ``bytes``,
    ``os.PathLike``) becomes a Tensor of its UTF-8 bytes, a list of paths a Batch; Tensors and
    Batches pass through.

    Examples
    --------
    >>> import pathlib
    >>> bytes(np.asarray(encode_paths(pathlib.Path("a/b.jpg"))))
    b'a/b.jpg'
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        return Tensor(_path_bytes(paths))
    if isinstance(paths, (list, tuple)) and all(
        isinstance(p, (str, bytes, os.PathLike)) for p in paths
    ):
        return Batch([_path_bytes(p) for p in paths], dtype=_dt.uint8)
    if isinstance(paths, (Tensor, Batch)):
        return paths
    raise TypeError(
        f"{op}: expected a path (str or os.PathLike), a list of paths, or a Tensor/Batch of "
        f"UTF-8 path bytes (got {type(paths).__name__})."
    )


def read(
    filepaths: Any,
    /,
    *,
    dont_use_mmap: bool | None = None,
    use_o_direct: bool | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Read whole files (``ndd.io.file.read``) into 1-D uint8 tensors.

    Parameters
    ----------
    filepaths : Tensor or Batch of UTF-8 path bytes, or str / os.PathLike / list of them
        The files to read (a path or list of paths is encoded for you).
    dont_use_mmap, use_o_direct : bool, optional
        Accepted for compatibility; no effect (files are read with one ``read()`` call).

    Examples
    --------
    >>> import numpy as np, tempfile, os, pathlib
    >>> import headrace as ndd
    >>> p = os.path.join(tempfile.mkdtemp(), "a.bin"); open(p, "wb").write(b"xyz")
    3
    >>> ndd.io.file.read(ndd.tensor(np.frombuffer(p.encode(), np.uint8))).shape
    (3,)
    >>> ndd.io.file.read(pathlib.Path(p)).shape
    (3,)
    """
    args = forward_args(locals(), "filepaths")
    return FILE_READ.call((encode_paths(filepaths),), **args)


__all__ = ["encode_paths", "read"]
