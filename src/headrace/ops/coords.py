"""Point and vector coordinates: ``coord_flip`` and ``coord_transform``.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> pts = ndd.tensor(np.array([[0.25, 0.5]], np.float32))
>>> ndd.coord_flip(pts).torch().tolist()
[[0.75, 0.5]]
>>> ndd.coord_transform(pts, M=[2, 0, 0, 4], T=[1, 1]).torch().tolist()
[[1.5, 3.0]]
"""

from __future__ import annotations

from typing import Any

from headrace._dispatch.args import (
    Arg,
    forward_args,
    to_dtype,
    to_float,
    to_floats,
    to_int,
    to_layout,
)
from headrace._dispatch.schema import OpSchema

__all__ = ["coord_flip", "coord_transform"]

COORD_FLIP = OpSchema(
    "coord_flip",
    "coords",
    args=(
        Arg("layout", to_layout, "", doc='Order of the coordinates ("x", "xy", "xyz" by default).'),
        *(
            Arg(f"flip_{a}", to_int, int(a == "x"), per_sample=True, doc=f"Flip {a}.")
            for a in "xyz"
        ),
        *(
            Arg(f"center_{a}", to_float, 0.5, per_sample=True, doc=f"Flip center in {a}.")
            for a in "xyz"
        ),
    ),
)
COORD_TRANSFORM = OpSchema(
    "coord_transform",
    "coords",
    args=(
        Arg("M", to_floats, None, per_sample=True, doc="Matrix (m x n; a scalar: times identity)."),
        Arg("T", to_floats, None, per_sample=True, doc="Translation (m; a scalar broadcasts)."),
        Arg("MT", to_floats, None, per_sample=True, doc="The block matrix [M T]."),
        Arg("dtype", to_dtype, None, doc="Output type: float32 (default) or the input's."),
    ),
)


def coord_flip(
    input: Any,
    /,
    *,
    layout: str | None = None,
    flip_x: Any = None,
    flip_y: Any = None,
    flip_z: Any = None,
    center_x: Any = None,
    center_y: Any = None,
    center_z: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Reflect coordinates about a center: ``c' = 2 * center - c`` on the flipped axes.

    Parameters
    ----------
    input : Tensor or Batch
        float32 points, shape ``(N, D)`` with ``D`` of 1, 2 or 3.
    layout : str, optional
        Meaning of the ``D`` components, letters of "x", "y", "z" (default: "x", "xy" or
        "xyz").
    flip_x, flip_y, flip_z : int or Batch, optional
        Whether to flip each coordinate (defaults: 1, 0, 0).
    center_x, center_y, center_z : float or Batch, optional
        Flip centers (default 0.5: normalized coordinates).

    Returns
    -------
    Tensor or Batch
        Points of the same shape, type and layout.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> pts = ndd.tensor(np.array([[0.25, 0.5], [1.0, 0.0]], np.float32))
    >>> ndd.coord_flip(pts, flip_x=0, flip_y=1).torch().tolist()
    [[0.25, 0.5], [1.0, 1.0]]
    """
    return COORD_FLIP.call((input,), **forward_args(locals(), "input"))


def coord_transform(
    input: Any,
    /,
    *,
    M: Any = None,
    T: Any = None,
    MT: Any = None,
    dtype: Any = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Apply ``out = M @ v + T`` to every vector ``v`` along the last axis.

    Parameters
    ----------
    input : Tensor or Batch
        Points or vectors, at least 2-D: ``(..., n)``.
    M : float or list of float or Batch, optional
        ``m x n`` matrix (row-major, flat or 2-D); a scalar is that multiple of the identity.
        Default: the identity.
    T : float or list of float or Batch, optional
        ``m`` components (a scalar broadcasts). Default: zeros.
    MT : float or list of float or Batch, optional
        The ``m x (n + 1)`` block matrix ``[M T]`` (a scalar acts as ``M``); excludes ``M``
        and ``T``. The output of ``transforms.*`` fits here.
    dtype : DType, optional
        float32 (default) or the input's type (integers round half away from zero and
        saturate).

    Returns
    -------
    Tensor or Batch
        ``(..., m)`` points with the input's layout.

    Examples
    --------
    >>> import numpy as np
    >>> import headrace as ndd
    >>> pts = ndd.tensor(np.array([[1, 2], [3, 4]], np.float32))
    >>> ndd.coord_transform(pts, MT=ndd.transforms.translation(offset=[10, 0])).torch().tolist()
    [[11.0, 2.0], [13.0, 4.0]]
    """
    return COORD_TRANSFORM.call((input,), **forward_args(locals(), "input"))
