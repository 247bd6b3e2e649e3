"""headrace: fast, CPU-first data loading and augmentation with DALI's dynamic-mode API.

Use it as ``import headrace as ndd``.

Examples
--------
>>> import numpy as np
>>> import headrace as ndd
>>> img = ndd.tensor(np.zeros((4, 6, 3), np.uint8), layout="HWC")
>>> ndd.transpose(img, perm=[2, 0, 1]).shape
(3, 4, 6)
"""

from __future__ import annotations

import importlib as _importlib
from threading import local as local  # (the reference's namespace holds threading.local so)
from types import ModuleType as _ModuleType

from headrace import capture, checkpoint, compile, decoders, io, random, readers, types
from headrace._core import memory as _memory
from headrace._core.batch import Batch, as_batch, batch
from headrace._core.device import Device, device
from headrace._core.dtype import (
    DataType,
    DType,
    ImageType,
    InterpType,
    bfloat16,
    dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    type_id,
    uint8,
    uint16,
    uint32,
    uint64,
)
from headrace._core.dtype import bool_ as bool
from headrace._core.errors import DecodeError, HeadraceError
from headrace._core.eval_mode import EvalMode
from headrace._core.tensor import Tensor, as_tensor, tensor
from headrace._exec.context import (
    EvalContext,
    ThreadPool,
    get_num_threads,
    set_num_threads,
)
from headrace._exec.streams import (
    Stream,
    get_current_stream,
    get_default_stream,
    set_current_stream,
    set_default_stream,
    stream,
)
from headrace.decoders.image import imread, peek_image_shape
from headrace.external_source import ExternalSource
from headrace.ops import color as _color
from headrace.ops import coords as _coords
from headrace.ops import detection as _detection
from headrace.ops import filters as _filters
from headrace.ops import geometry as _geometry
from headrace.ops import image as _image
from headrace.ops import math, noise, reductions
from headrace.ops import misc as _misc
from headrace.ops import optical_flow as _optical_flow
from headrace.ops import resampling as _resampling
from headrace.ops import speech as _speech
from headrace.ops import utilities as _utilities
from headrace.ops import warp as _warp
from headrace.ops.color import *  # noqa: F403 - each family's __all__ is public
from headrace.ops.coords import *  # noqa: F403
from headrace.ops.detection import *  # noqa: F403
from headrace.ops.filters import *  # noqa: F403
from headrace.ops.geometry import *  # noqa: F403
from headrace.ops.image import *  # noqa: F403
from headrace.ops.misc import *  # noqa: F403
from headrace.ops.misc import _shape as _shape
from headrace.ops.optical_flow import *  # noqa: F403
from headrace.ops.resampling import *  # noqa: F403
from headrace.ops.speech import *  # noqa: F403
from headrace.ops.utilities import *  # noqa: F403
from headrace.ops.warp import *  # noqa: F403

__version__ = "0.1.0"

_memory.tune_malloc()

__all__ = [
    "as_batch",
    "as_tensor",
    "Batch",
    "batch",
    "bfloat16",
    "bool",
    "capture",
    "checkpoint",
    "compile",
    "DataType",
    "DecodeError",
    "decoders",
    "Device",
    "device",
    "DType",
    "dtype",
    "EvalContext",
    "EvalMode",
    "ExternalSource",
    "float16",
    "float32",
    "float64",
    "get_current_stream",
    "get_default_stream",
    "get_num_threads",
    "HeadraceError",
    "ImageType",
    "imread",
    "int16",
    "int32",
    "int64",
    "int8",
    "InterpType",
    "io",
    "math",
    "noise",
    "peek_image_shape",
    "random",
    "readers",
    "reductions",
    "set_current_stream",
    "set_default_stream",
    "set_num_threads",
    "Stream",
    "stream",
    "Tensor",
    "tensor",
    "ThreadPool",
    "type_id",
    "types",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
]
# Operator families: their public functions, listed once in each module's __all__.
__all__ += (
    _color.__all__
    + _coords.__all__
    + _detection.__all__
    + _filters.__all__
    + _geometry.__all__
    + _image.__all__
    + _misc.__all__
    + _optical_flow.__all__
    + _speech.__all__
    + _resampling.__all__
    + _utilities.__all__
    + _warp.__all__
)

#: Sub-packages the reference exposes that are imported on first attribute access
#: (``ndd.pytorch`` imports torch only then); names whose module headrace lacks stay missing.
_LAZY_SUBMODULES = frozenset(
    {"_compile", "_exceptions", "_ops", "experimental", "pytorch", "segmentation", "transforms"}
)


def __getattr__(name: str) -> _ModuleType:
    """``ndd.pytorch`` (and the other sub-packages above) without an explicit import."""
    if name in _LAZY_SUBMODULES:
        try:
            module = _importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
        else:
            globals()[name] = module
            return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {n for n in _LAZY_SUBMODULES if _has_module(n)})


def _has_module(name: str) -> bool:
    from importlib.util import find_spec

    return find_spec(f"{__name__}.{name}") is not None
