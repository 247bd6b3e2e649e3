"""What the command line and the scaling table share: the usage error, default-marked option
values, and the images a benchmark runs on.

Examples
--------
>>> isinstance(DefaultStr("eval"), str), DefaultStr("eval") == "eval"
(True, True)
"""

from __future__ import annotations

import os
from typing import Any


class UsageError(Exception):
    """A problem with the command line or the data; printed without a traceback (exit 2)."""


class DefaultStr(str):
    """An option's default value, told apart from the same value given explicitly."""

    __slots__ = ()


def bench_images(
    folder: str | os.PathLike[str] | None, limit: int | None, progress: bool = True
) -> Any:
    """The images of ``folder`` (the built-in sample data when None), at most ``limit``."""
    from headrace import _benchmark, sample_data

    root = folder if folder is not None else sample_data.image_folder(progress=progress)
    try:
        return _benchmark.list_images(root, limit)
    except _benchmark.FolderError as e:
        raise UsageError(str(e)) from None


__all__ = ["DefaultStr", "UsageError", "bench_images"]
