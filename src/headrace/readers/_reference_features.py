"""Features made with the reference's ``nvidia.dali.tfrecord``, readable by ``readers.TFRecord``.

The reference's ``FixedLenFeature``/``VarLenFeature`` return opaque objects whose settings
cannot be read from Python. So that programs keep ``import nvidia.dali.tfrecord as tfrec`` and
only change the ``ndd`` import, headrace wraps those two functions of that module, once it is
imported (now, or later through an import hook): each call still returns the reference's own
object (its pipelines are unaffected) and headrace notes the same feature built with
:mod:`headrace.tfrecord` from the same arguments. :func:`headrace_feature` finds it again.
Features made before ``import headrace`` cannot be read.

Examples
--------
>>> import headrace  # (installs the hook)
>>> headrace_feature(object()) is None
True
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

from headrace import tfrecord as _ours
from headrace.tfrecord import Feature

_MODULE = "nvidia.dali.tfrecord"
_lock = threading.Lock()
#: id(reference feature) -> (that feature, kept alive so that the id stays its own; ours)
_NOTED: dict[int, tuple[Any, Feature | None]] = {}


def headrace_feature(value: Any) -> Feature | None:
    """Our feature for a reference feature made after ``import headrace`` (None otherwise)."""
    noted = _NOTED.get(id(value))
    if noted is None or noted[0] is not value:
        return None
    return noted[1]


def _noting(make: Callable[..., Any], ours: Callable[..., Feature]) -> Callable[..., Any]:
    @functools.wraps(make)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        feature = make(*args, **kwargs)  # (the reference's own checks and errors come first)
        try:
            mine: Feature | None = ours(*args, **kwargs)
        except (TypeError, ValueError):  # a feature headrace does not support: the reader says
            mine = None
        with _lock:
            _NOTED[id(feature)] = (feature, mine)
        return feature

    wrapper.__headrace_wrapped__ = True  # type: ignore[attr-defined]
    return wrapper


def _wrap(module: ModuleType) -> None:
    for name in ("FixedLenFeature", "VarLenFeature"):
        make = getattr(module, name, None)
        if make is not None and not getattr(make, "__headrace_wrapped__", False):
            setattr(module, name, _noting(make, getattr(_ours, name)))


class _Loader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _wrap(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, ...: the real loader's
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Wraps the reference's ``tfrecord`` module when it is imported after headrace."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


def install() -> None:
    """Wrap the reference's feature functions now, or when their module is imported."""
    module = sys.modules.get(_MODULE)
    if module is not None:
        _wrap(module)
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


__all__ = ["headrace_feature", "install"]
