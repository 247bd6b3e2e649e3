"""Batch kernels of the filter and noise operators (``ops/filters.py``, ``ops/noise.py``),
written once for any backend.

``register(device, module)`` registers them for ``device`` using the pixel kernels of
``module`` (``backends.cpu.filters`` here, ``backends.torch.filters`` for the GPU).
"""

from __future__ import annotations

from types import ModuleType

from headrace.backends import _planned as pl
from headrace.backends.cpu import filters as _cpu_filters
from headrace.ops import _filter_params as P
from headrace.ops import filters as F
from headrace.ops import noise as N

_HWC = {3: "HWC"}
SPECS = (
    (F.GAUSSIAN_BLUR, pl.Planned(P.gaussian_blur_params, "gaussian_blur")),
    (F.GRID_MASK, pl.Planned(P.grid_mask_params, "grid_mask")),
    (F.WATER, pl.Planned(P.water_params, "water", layouts=_HWC)),
    (F.SPHERE, pl.Planned(P.sphere_params, "sphere", layouts=_HWC)),
    (F.JITTER, pl.Planned(P.jitter_sampler, "jitter", random=True, layouts=_HWC)),
    (N.GAUSSIAN, pl.Planned(P.noise_gaussian_sampler, "noise_gaussian", random=True)),
    (
        N.SALT_AND_PEPPER,
        pl.Planned(P.noise_salt_and_pepper_sampler, "noise_salt_and_pepper", random=True),
    ),
    (N.SHOT, pl.Planned(P.noise_shot_sampler, "noise_shot", random=True)),
)


def register(device: str, module: ModuleType) -> None:
    """Register the filter and noise batch kernels for ``device`` with ``module``'s kernels."""
    for schema, spec in SPECS:
        schema.legacy_kernel(device)(pl.planned_kernel(spec, module))


register("cpu", _cpu_filters)
