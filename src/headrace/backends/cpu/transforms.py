"""CPU kernels of the affine transform operators (``ops/transforms.py``; CPU-only, as in the
reference): per sample, a ``(ndim + 1) x (ndim + 1)`` homogeneous matrix in float64, composed
with the input transform, returned as its top ``ndim x (ndim + 1)`` rows in float32.

Examples
--------
>>> homogeneous(np.array([[2.0, 1.0]]), "x").tolist()
[[2.0, 1.0], [0.0, 1.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from headrace._core import dtype as _dt
from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError
from headrace._dispatch.args import sample_args
from headrace._dispatch.kernel_context import KernelContext

Vals = dict[str, Any]


#: The layout of the matrices the transforms return, as the reference's.
_MATRIX = "**"


def homogeneous(m: np.ndarray, what: str) -> np.ndarray:
    """The ``ndim x (ndim + 1)`` transform ``m`` as a square homogeneous matrix."""
    a = np.asarray(m, dtype=np.float64)
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] != a.shape[0] + 1:
        raise InvalidArgumentError(
            f"{what} must be an ndim x (ndim + 1) affine transform matrix, got shape {a.shape}."
        )
    n = a.shape[0]
    out = np.eye(n + 1)
    out[:n] = a
    return out


def _vector(v: Any, ndim: int, name: str) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64).ravel()
    if a.size == 1 and ndim > 1:
        return np.full(ndim, a[0])
    if a.size != ndim:
        raise InvalidArgumentError(
            f"argument {name!r} has {a.size} elements; the transform has {ndim} dimensions."
        )
    return a


def _size(v: Any) -> int | None:
    return None if v is None else int(np.asarray(v).size)


def _with_center(lin: np.ndarray, a: Vals) -> np.ndarray:
    """The homogeneous matrix of the linear map ``lin`` about ``a['center']``."""
    n = lin.shape[0]
    h = np.eye(n + 1)
    h[:n, :n] = lin
    if a.get("center") is not None:
        c = _vector(a["center"], n, "center")
        h[:n, n] = c - lin @ c
    return h


def _ndim(sizes: list[int | None], in_ndim: int | None) -> int:
    """The transform's dimensions: the first size above 1, else the input's, else 1."""
    known = [s for s in sizes if s is not None and s > 1]
    if known:
        return known[0]
    return 1 if in_ndim is None else in_ndim


def _translation(a: Vals, in_ndim: int | None) -> np.ndarray:
    n = _size(a["offset"]) or 1
    h = np.eye(n + 1)
    h[:n, n] = _vector(a["offset"], n, "offset")
    return h


def _scale(a: Vals, in_ndim: int | None) -> np.ndarray:
    nd = a["ndim"]
    if nd is not None and nd < 1:
        raise InvalidArgumentError(f"argument 'ndim' must be positive, got {nd}.")
    sizes = [_size(a["scale"]), _size(a["center"]), nd]
    n = _ndim(sizes, in_ndim)
    return _with_center(np.diag(_vector(a["scale"], n, "scale")), a)


def _rotation(a: Vals, in_ndim: int | None) -> np.ndarray:
    ang = np.asarray(a["angle"], dtype=np.float64)
    if ang.size != 1:
        raise InvalidArgumentError(f"argument 'angle' must be a scalar, got {ang.size} values.")
    t = math.radians(float(ang.ravel()[0]))
    c, s = math.cos(t), math.sin(t)
    if a["axis"] is None:
        lin = np.array([[c, -s], [s, c]])
    else:
        u = np.asarray(a["axis"], dtype=np.float64).ravel()
        if u.size != 3:
            raise InvalidArgumentError(f"argument 'axis' must have 3 elements, got {u.size}.")
        norm = float(np.linalg.norm(u))
        if not norm or not math.isfinite(norm):
            raise InvalidArgumentError(f"argument 'axis' must have a non-zero length: {u}.")
        u = u / norm
        k = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
        lin = c * np.eye(3) + s * k + (1 - c) * np.outer(u, u)
    if in_ndim is not None and in_ndim != lin.shape[0]:
        raise InvalidArgumentError(
            f"a {lin.shape[0]}D rotation cannot extend a {in_ndim}D input transform."
        )
    return _with_center(lin, a)


_SHEAR_SLOTS = {2: ((0, 1), (1, 0)), 3: ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1))}


def _shear(a: Vals, in_ndim: int | None) -> np.ndarray:
    if (a["shear"] is None) == (a["angles"] is None):
        raise InvalidArgumentError("give exactly one of the arguments 'shear' and 'angles'.")
    if a["shear"] is not None:
        f = np.asarray(a["shear"], dtype=np.float64).ravel()
        name = "shear"
    else:
        ang = np.asarray(a["angles"], dtype=np.float64).ravel()
        if not np.all(np.abs(ang) < 90):  # tan(±90°) is no shear factor
            raise InvalidArgumentError(
                f"argument 'angles' must lie in (-90, 90) degrees, got {ang.tolist()}."
            )
        f = np.tan(np.radians(ang))
        name = "angles"
    n = {2: 2, 6: 3}.get(f.size)
    if n is None:
        raise InvalidArgumentError(
            f"argument {name!r} must have 2 (2D) or 6 (3D) elements, got {f.size}."
        )
    lin = np.eye(n)
    for v, (r, c) in zip(f, _SHEAR_SLOTS[n], strict=True):
        lin[r, c] = v
    if in_ndim is not None and in_ndim != n:
        raise InvalidArgumentError(f"a {n}D shear cannot extend a {in_ndim}D input transform.")
    return _with_center(lin, a)


_CROP_DEFAULTS = {"from_start": 0.0, "from_end": 1.0, "to_start": 0.0, "to_end": 1.0}


def _crop(a: Vals, in_ndim: int | None) -> np.ndarray:
    n = max(_size(a[k]) or 1 for k in _CROP_DEFAULTS)
    v = {k: _vector(d if a[k] is None else a[k], n, k) for k, d in _CROP_DEFAULTS.items()}
    fs, fe, ts, te = v["from_start"], v["from_end"], v["to_start"], v["to_end"]
    if a["absolute"]:
        fs, fe = np.minimum(fs, fe), np.maximum(fs, fe)
        ts, te = np.minimum(ts, te), np.maximum(ts, te)
    extent = fe - fs
    if np.any(extent == 0):
        raise InvalidArgumentError(
            f"from_start and from_end must differ in every dimension: {fs.tolist()}, {fe.tolist()}."
        )
    sc = (te - ts) / extent
    h = np.eye(n + 1)
    h[:n, :n] = np.diag(sc)
    h[:n, n] = ts - fs * sc
    return h


def _compose(build: Callable[[Vals, int | None], np.ndarray]) -> Callable[..., tuple[Batch]]:
    def kernel(kc: KernelContext, ins: list[Batch | None], args: Vals) -> tuple[Batch]:
        x = ins[0] if ins else None

        def one(i: int) -> np.ndarray:
            a = sample_args(args, i)
            prev = None if x is None else homogeneous(x._samples[i], "the input")
            h = build(a, None if prev is None else prev.shape[0] - 1)
            if prev is not None:
                if prev.shape != h.shape:
                    raise InvalidArgumentError(
                        f"a {h.shape[0] - 1}D transform cannot extend a "
                        f"{prev.shape[0] - 1}D input transform."
                    )
                h = prev @ h if a["reverse_order"] else h @ prev
            return h[:-1].astype(np.float32)

        return (Batch._wrap(kc.map(one, parallel=False), _dt.float32, _MATRIX, kc.device),)

    kernel.__name__ = build.__name__.lstrip("_")
    return kernel


translation = _compose(_translation)
scale = _compose(_scale)
rotation = _compose(_rotation)
shear = _compose(_shear)
crop = _compose(_crop)


def combine(kc: KernelContext, ins: list[Batch], args: Vals) -> tuple[Batch]:
    """``transforms.combine``: the product of the inputs' homogeneous matrices."""
    if len(ins) < 2:
        raise InvalidArgumentError(f"{kc.name}: needs at least two transforms, got {len(ins)}.")
    rev = bool(args["reverse_order"])

    def one(i: int) -> np.ndarray:
        hs = [homogeneous(b._samples[i], f"input {k}") for k, b in enumerate(ins)]
        if len({h.shape for h in hs}) != 1:
            dims = [h.shape[0] - 1 for h in hs]
            raise InvalidArgumentError(f"the transforms have different dimensions: {dims}.")
        out = hs[0]
        for h in hs[1:]:
            out = out @ h if rev else h @ out
        return out[:-1].astype(np.float32)

    return (Batch._wrap(kc.map(one, parallel=False), _dt.float32, _MATRIX, kc.device),)
