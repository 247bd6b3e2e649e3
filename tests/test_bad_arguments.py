"""Issue 20.5: bad arguments get clear errors naming the argument, never silently taken."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import headrace as ndd
from headrace._dispatch.args import to_bool
from headrace._dispatch.schema import REGISTRY
from headrace.readers import File
from tests._helpers.op_table import ROWS

_IMG = ndd.as_batch([np.zeros((8, 8, 3), np.uint8)], layout="HWC")


def _bool_cases() -> list[Any]:
    cases = []
    for row in ROWS:
        schema = REGISTRY[row.schema]
        case = row.cases[0]
        for a in schema.args:
            if a.convert is to_bool:
                for bad in ("no", 0.5, 2):
                    cases.append(
                        pytest.param(row, case, a.name, bad, id=f"{row.schema}-{a.name}-{bad}")
                    )
    return cases


@pytest.mark.parametrize(("row", "case", "arg", "bad"), _bool_cases())
def test_every_bool_argument_is_strict(row: Any, case: Any, arg: str, bad: Any) -> None:
    ins = [ndd.as_batch(list(s), layout=None) for s in case.samples()]
    kw = {k: v for k, v in case.args.items() if k != arg}
    if not ins:
        kw["batch_size"] = case.n or 2
    with pytest.raises((TypeError, ValueError), match=arg):
        out = row.op(*ins, **kw, **{arg: bad})
        for o in out if isinstance(out, tuple) else (out,):
            o.evaluate()


@pytest.mark.parametrize(
    ("call", "arg"),
    [
        (lambda: File(files=[__file__], random_shuffle="no"), "random_shuffle"),
        (lambda: File(files=[__file__], stick_to_shard=0.5), "stick_to_shard"),
        (lambda: File(files=[__file__], pad_last_batch="yes"), "pad_last_batch"),
        (lambda: File(file_root=123), "file_root"),
        (lambda: ndd.decoders.image(None), "input"),
        (lambda: ndd.decoders.image(_IMG, adjust_orientation="no"), "adjust_orientation"),
        (lambda: ndd.resize(_IMG, resize_shorter=math.inf), "resize_shorter"),
        (lambda: ndd.resize(_IMG, resize_longer=math.nan), "resize_longer"),
        (lambda: ndd.resize(_IMG, size=[2**31, 2**31]), "size"),
        (lambda: ndd.flip(_IMG, horizontal="yes"), "horizontal"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_named_bad_arguments(call: Any, arg: str) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        out = call()
        if isinstance(out, ndd.Batch):
            out.evaluate()
    assert arg in str(info.value), str(info.value)
