"""``optical_flow``: not available — the reference computes it on NVIDIA's optical-flow
hardware (NVOFA, through the Optical Flow SDK), which no pip-installable package exposes.

Examples
--------
>>> from headrace._core.errors import UnsupportedDeviceError
>>> issubclass(UnsupportedDeviceError, ValueError)
True
"""

from __future__ import annotations

from typing import Any

from headrace._core.errors import UnsupportedDeviceError
from headrace._dispatch.deprecated_args import warn_given

_WHY = (
    "optical_flow: not supported on any device. The reference computes it with NVIDIA's "
    "optical-flow hardware (the NVOFA engine of Turing and newer GPUs, driven by the NVIDIA "
    "Optical Flow SDK), and no pip-installable package exposes that engine; a software flow "
    "(for example OpenCV's cv2.calcOpticalFlowFarneback) gives different vectors, so headrace "
    "does not substitute one."
)


def optical_flow(
    input_0: Any,
    input_1: Any = None,
    /,
    *,
    enable_external_hints: bool | None = None,
    enable_temporal_hints: bool | None = None,
    hint_grid: int | None = None,
    image_type: Any = None,
    output_format: int | None = None,
    output_grid: int | None = None,
    preset: float | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> Any:
    """Optical flow between frames of sequences — always raises :class:`UnsupportedDeviceError`.

    The reference runs it on NVIDIA's optical-flow hardware (NVOFA, Optical Flow SDK), which no
    pip-installable package exposes; headrace accepts the reference's parameters so that code
    using them fails with this explanation rather than a missing name.

    Parameters
    ----------
    input_0, input_1 : Tensor or Batch
        Frame sequences (``FHWC``) and optional external hints.
    enable_external_hints, enable_temporal_hints, hint_grid, image_type, output_format,
    output_grid, preset, device, batch_size
        The reference's parameters (not used).

    Raises
    ------
    UnsupportedDeviceError
        Always, naming why.

    Examples
    --------
    >>> import headrace as ndd
    >>> try:
    ...     ndd.optical_flow(None, None)
    ... except ValueError as e:
    ...     print(type(e).__name__, "optical-flow hardware" in str(e))
    UnsupportedDeviceError True
    """
    warn_given("optical_flow", {"output_format": output_format})
    raise UnsupportedDeviceError(_WHY)


__all__ = ["optical_flow"]
