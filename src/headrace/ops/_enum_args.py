"""Argument converters for enum-valued operator arguments (colour spaces, interpolation).

Examples
--------
>>> to_image_type("bgr").name, to_interp_type(1).name
('BGR', 'INTERP_LINEAR')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from headrace import types as _types


def _scalar(v: Any) -> Any:
    if isinstance(v, (str, _types.DALIImageType, _types.DALIInterpType)):
        return v
    return int(np.asarray(v).reshape(()))


def to_image_type(v: Any) -> _types.DALIImageType:
    """A colour-space argument: ``types.RGB``, its integer value or a name such as ``"gray"``.

    Examples
    --------
    >>> to_image_type(2).name
    'GRAY'
    """
    return _types.image_type(_scalar(v))


def to_interp_type(v: Any) -> _types.DALIInterpType:
    """An interpolation argument: ``types.INTERP_NN``, its integer value or a name.

    Examples
    --------
    >>> to_interp_type("nn").name
    'INTERP_NN'
    """
    return _types.interp_type(_scalar(v))
