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
from headrace._core.tensor import Tensor, as_tensor, tensor
from headrace._exec.context import (
    EvalContext,
    ThreadPool,
    get_num_threads,
    set_num_threads,
)
from headrace._exec.eval_mode import EvalMode
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
from headrace.ops import math, noise
from headrace.ops.color import (
    brightness_contrast,
    color_space_conversion,
    color_twist,
    hsv,
    hue,
    lookup_table,
    normalize,
    saturation,
)
from headrace.ops.filters import gaussian_blur, grid_mask, jitter, sphere, water
from headrace.ops.geometry import (
    crop,
    crop_mirror_normalize,
    erase,
    flip,
    pad,
    paste,
    random_resized_crop,
    resize,
    resize_crop_mirror,
    slice,
    tensor_resize,
)
from headrace.ops.misc import (
    cast,
    cat,
    copy,
    expand_dims,
    full,
    one_hot,
    ones,
    per_frame,
    reshape,
    shapes,
    squeeze,
    stack,
    transpose,
    zeros,
)
from headrace.ops.warp import rotate, warp_affine

__version__ = "0.1.0"

_memory.tune_malloc()

__all__ = [
    "Stream",
    "get_current_stream",
    "get_default_stream",
    "set_current_stream",
    "set_default_stream",
    "stream",
    "brightness_contrast",
    "color_space_conversion",
    "color_twist",
    "hsv",
    "hue",
    "lookup_table",
    "normalize",
    "saturation",
    "gaussian_blur",
    "grid_mask",
    "jitter",
    "sphere",
    "water",
    "rotate",
    "warp_affine",
    "noise",
    "capture",
    "compile",
    "crop",
    "crop_mirror_normalize",
    "erase",
    "flip",
    "pad",
    "paste",
    "random_resized_crop",
    "resize",
    "resize_crop_mirror",
    "slice",
    "tensor_resize",
    "Batch",
    "DecodeError",
    "ExternalSource",
    "readers",
    "HeadraceError",
    "decoders",
    "imread",
    "io",
    "peek_image_shape",
    "DType",
    "DataType",
    "Device",
    "EvalContext",
    "EvalMode",
    "ImageType",
    "InterpType",
    "Tensor",
    "ThreadPool",
    "as_batch",
    "as_tensor",
    "batch",
    "bfloat16",
    "bool",
    "cast",
    "cat",
    "checkpoint",
    "copy",
    "device",
    "dtype",
    "expand_dims",
    "float16",
    "float32",
    "float64",
    "full",
    "get_num_threads",
    "int8",
    "int16",
    "int32",
    "int64",
    "math",
    "one_hot",
    "ones",
    "per_frame",
    "random",
    "reshape",
    "set_num_threads",
    "shapes",
    "squeeze",
    "stack",
    "tensor",
    "transpose",
    "type_id",
    "types",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "zeros",
]
