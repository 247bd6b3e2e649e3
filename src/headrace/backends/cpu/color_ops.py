"""Batch kernels of the colour operators (``ops/color.py``), written once for any backend.

``register(device, module)`` registers every colour kernel for ``device`` using the pixel
kernels of ``module`` (``backends.cpu.color`` here, ``backends.torch.color`` for the GPU).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from headrace._core.batch import Batch
from headrace._core.errors import InvalidArgumentError, ShapeError
from headrace.backends import _planned as pl
from headrace.backends.cpu import color as _cpu_color
from headrace.ops import _color_params as P
from headrace.ops import color as C
from headrace.ops._schema import KernelContext, PerSample

_IMAGE = {3: "HWC", 4: "FHWC"}


def _image_op(plan: Any, kernel: str) -> pl.Planned:
    return pl.Planned(plan, kernel, layouts=_IMAGE)


SPECS = (
    (C.BRIGHTNESS_CONTRAST, _image_op(P.brightness_contrast_params, "brightness_contrast")),
    (C.COLOR_TWIST, _image_op(P.color_twist_params, "color_twist")),
    (C.HSV, _image_op(P.hsv_params, "hsv")),
    (C.HUE, _image_op(P.hue_params, "hue")),
    (C.SATURATION, _image_op(P.saturation_params, "saturation")),
    (
        C.COLOR_SPACE_CONVERSION,
        _image_op(P.color_space_conversion_params, "color_space_conversion"),
    ),
    (C.LOOKUP_TABLE, pl.Planned(P.lookup_table_params, "lookup_table")),
)
_NORMALIZE = pl.Planned(P.normalize_params, "normalize")


def _one_value(vals: dict[str, Any], name: str) -> Any:
    """The single value of a statistic given to a ``batch=True`` normalisation."""
    v = vals[name]
    if type(v) is not PerSample:
        return v
    first = v[0] if v else None
    if any(x is None or first is None or x.shape != first.shape or (x != first).any() for x in v):
        raise InvalidArgumentError(
            f"normalize: `{name}` cannot vary per sample with batch=True (got "
            f"{[None if x is None else x.tolist() for x in v]}). Pass one value or set "
            "batch=False."
        )
    return first


def normalize_kernel(module: ModuleType) -> Any:
    """The ``normalize`` batch kernel; ``batch=True`` with computed statistics uses the batch."""
    per_sample = pl.planned_kernel(_NORMALIZE, module)

    def kern(kc: KernelContext, ins: list[Batch], vals: dict[str, Any]) -> tuple[Batch]:
        if not vals["batch"] or (vals["mean"] is not None and vals["stddev"] is not None):
            return per_sample(kc, ins, vals)
        x = ins[0]
        samples = x._samples
        assert samples is not None
        if not samples:
            return (Batch._wrap([], x._dtype, x._layout, kc.device),)
        vals = {**vals, "mean": _one_value(vals, "mean"), "stddev": _one_value(vals, "stddev")}
        args = pl.plan_args(kc.name, vals)
        lay, in_dt = x._layout, x._dtype.numpy
        plans = kc.map(
            lambda i: P.normalize_params(tuple(samples[i].shape), lay, in_dt, **args),
            parallel=False,
        )
        axes = plans[0].kwargs["axes"]

        def kept(i: int) -> tuple[int, ...]:
            return tuple(e for d, e in enumerate(samples[i].shape) if d not in axes)

        for i, p in enumerate(plans):
            if p.kwargs["axes"] != axes or kept(i) != kept(0):
                raise ShapeError(
                    f"normalize: with batch=True all samples must agree outside the reduced "
                    f"axes {list(axes)} (got shapes {tuple(samples[0].shape)} and "
                    f"{tuple(samples[i].shape)} for samples 0 and {i}). Reduce those axes too "
                    "or set batch=False."
                )
        outs = module.normalize_batch(list(samples), lay, **plans[0].kwargs)
        return (pl.wrap(kc, outs, plans, x, lay),)

    return kern


def register(device: str, module: ModuleType) -> None:
    """Register the colour batch kernels for ``device`` with the pixel kernels of ``module``."""
    for schema, spec in SPECS:
        schema.kernel(device)(pl.planned_kernel(spec, module))
    C.NORMALIZE.kernel(device)(normalize_kernel(module))


register("cpu", _cpu_color)
