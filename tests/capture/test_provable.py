"""Which traced calls are recorded: arguments the source proves constant (spec 12.2).

Each case runs a transform in a capture-mode loop and checks ``ndd.capture.is_captured`` of its
result on every step: recorded calls replay from the pipeline, the others run eagerly (with the
same values) and are counted in ``ndd.capture.stats`` with the reason.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import headrace as ndd
from headrace.capture._provable import unprovable_args

_GLOBAL_ANGLE = 30
_MARKED_ANGLE = ndd.capture.invariant(30)


def _flags(transform: Callable[[Any], Any], steps: int = 3) -> list[bool]:
    """``is_captured`` of ``transform``'s result on each step of a capture-mode loop."""
    src = ndd.ExternalSource(
        [np.zeros((4, 4, 3), np.uint8) + i for i in range(steps * 2)], layout="HWC"
    )
    flags = []
    for b in src.captured(batch_size=2):
        ndd.cast(b, dtype=ndd.float32)  # always recorded: the loop never captures nothing
        flags.append(ndd.capture.is_captured(transform(b)))
    return flags


def _literal(b: Any) -> Any:
    return ndd.rotate(b, angle=60)


def _inline_list(b: Any) -> Any:
    return ndd.resize(b, size=[2, 2])


def _local_constant(b: Any) -> Any:
    c = 30 + 30
    a, (d, _) = c, (2, 3)
    return ndd.resize(ndd.rotate(b, angle=a), size=(d, d))


def _dali_constant(b: Any) -> Any:
    dtype = ndd.int32
    return ndd.cast(b, dtype=dtype)


def _forwarded(b: Any) -> Any:
    def rotate(images: Any, angle: Any, fill: int = 0) -> Any:
        return ndd.rotate(images, angle=angle, fill_value=fill)

    return rotate(b, 60)


def _partial(b: Any) -> Any:
    def resize(images: Any, width: int, height: int) -> Any:
        return ndd.resize(images, size=(width, height))

    resize_2 = functools.partial(resize, width=2)
    return resize_2(b, height=3)


def _marked_global(b: Any) -> Any:
    return ndd.rotate(b, angle=_MARKED_ANGLE)


def _marked_call_result(b: Any) -> Any:
    return ndd.rotate(b, angle=ndd.capture.invariant(abs(-60)))


@pytest.mark.parametrize(
    "transform",
    [
        _literal,
        _inline_list,
        _local_constant,
        _dali_constant,
        _forwarded,
        _marked_global,
        _marked_call_result,
    ],
)
def test_provable_arguments_are_recorded(transform: Callable[[Any], Any]) -> None:
    flags = _flags(transform)
    assert len(flags) > 1 and all(flags)


def test_partial_keyword_is_recorded() -> None:
    flags = _flags(_partial)
    assert len(flags) > 1 and all(flags)


def _global(b: Any) -> Any:
    return ndd.rotate(b, angle=_GLOBAL_ANGLE)


def _mutable_local(b: Any) -> Any:
    size = [2, 2]
    return ndd.resize(b, size=size)


def _rebound(b: Any) -> Any:
    angle = 10
    if b is not None:
        angle = 60
    return ndd.rotate(b, angle=angle)


def _call_result(b: Any) -> Any:
    angle = abs(-60)
    return ndd.rotate(b, angle=angle)


class _Cfg:
    angle = 60


def _attribute(b: Any) -> Any:
    cfg = _Cfg()
    return ndd.rotate(b, angle=cfg.angle)


def _for_target(b: Any) -> Any:
    for angle in (60,):
        return ndd.rotate(b, angle=angle)
    raise AssertionError


def _forwarded_global(b: Any) -> Any:
    def rotate(images: Any, angle: Any) -> Any:
        return ndd.rotate(images, angle=angle)

    return rotate(b, _GLOBAL_ANGLE)


def _through_wrapper(b: Any) -> Any:
    def rotate(images: Any, angle: Any) -> Any:
        return ndd.rotate(images, angle=angle)

    def wrapper(*args: Any) -> Any:
        return rotate(*args)

    return wrapper(b, 60)


@pytest.mark.parametrize(
    "transform",
    [
        _global,
        _mutable_local,
        _rebound,
        _call_result,
        _attribute,
        _for_target,
        _forwarded_global,
        _through_wrapper,
    ],
)
def test_unprovable_arguments_run_eagerly(transform: Callable[[Any], Any]) -> None:
    src = ndd.ExternalSource([np.zeros((4, 4, 3), np.uint8)] * 6, layout="HWC")
    flags = []
    for b in src.captured(batch_size=2):
        ndd.cast(b, dtype=ndd.float32)
        flags.append(ndd.capture.is_captured(transform(b)))
    assert len(flags) > 1 and not any(flags)
    eager = [c for c in ndd.capture.stats(src).eager_calls if "provably constant" in c.reason]
    assert len(eager) == 1 and eager[0].count == len(flags)


def test_a_loop_feeding_a_call_its_own_output_records_only_the_first_run() -> None:
    def transform(b: Any) -> list[bool]:
        out = []
        for _ in range(3):
            b = ndd.rotate(b, angle=90)
            out.append(ndd.capture.is_captured(b))
        return out

    src = ndd.ExternalSource([np.zeros((4, 4, 3), np.uint8)] * 4, layout="HWC")
    seen = [transform(b) for b in src.captured(batch_size=2)]
    assert len(seen) > 1 and all(s == [True, False, False] for s in seen)


def test_without_source_only_marked_values_count() -> None:
    namespace: dict[str, Any] = {"ndd": ndd}
    code = "def f(b, angle):\n    return ndd.rotate(b, angle=angle)\n"
    exec(compile(code, "<no-source>", "exec"), namespace)
    f = namespace["f"]
    assert not any(_flags(lambda b: f(b, 60)))
    assert all(_flags(lambda b: f(b, ndd.capture.invariant(60))))
    assert unprovable_args(None, ["angle"]) == "angle"
