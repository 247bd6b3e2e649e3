"""Every registered operator passes the shared contract (``check_op``) on the operator table."""

from __future__ import annotations

from typing import Any

import pytest
from tests._helpers.contract import check_bad, check_empty, check_op
from tests._helpers.op_table import ROWS, SAME, Case, Row

import headrace as ndd
from headrace._dispatch.schema import REGISTRY


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Operators that write files (``dump_image``) write them here, not into the checkout."""
    monkeypatch.chdir(tmp_path)


BY_NAME = {r.schema: r for r in ROWS}
#: Seed of the generator every call of a random operator gets.
SEED = 1234


def _params() -> list[Any]:
    return [
        pytest.param(row, case, id=f"{row.schema}-{case.id or k}", marks=case.marks)
        for row in ROWS
        for k, case in enumerate(row.cases)
    ]


def _row_params(check: str) -> list[Any]:
    """One param per row; rows whose ``check`` found a bug are strict xfails."""
    return [
        pytest.param(
            row,
            id=row.schema,
            marks=[pytest.mark.xfail(strict=True, reason=row.xfail[check])]
            if check in row.xfail
            else [],
        )
        for row in ROWS
    ]


def test_every_schema_has_one_row() -> None:
    names = [r.schema for r in ROWS]
    assert len(names) == len(set(names)), "a schema has two rows"
    assert set(REGISTRY) - set(names) == set(), "registered schemas without a row"
    assert set(names) - set(REGISTRY) == set(), "rows naming no registered schema"


@pytest.mark.parametrize("row", ROWS, ids=[r.schema for r in ROWS])
def test_row_flags_match_schema(row: Row) -> None:
    schema = REGISTRY[row.schema]
    assert row.random == schema.random
    assert tuple(row.devices) == tuple(schema.devices)
    takes_per_sample = any(a.per_sample for a in schema.args)
    assert row.per_sample == takes_per_sample
    if takes_per_sample:
        assert any(isinstance(v, ndd.Batch) for c in row.cases for v in c.args.values()), (
            "the schema accepts per-sample arguments but no case passes one"
        )


def _check_args(row: Row, case: Case) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional and keyword arguments of the contract checks for ``case`` of ``row``."""
    inputs = case.samples()
    n = case.n
    if not inputs and n is None:
        n = next(v.batch_size for v in case.args.values() if isinstance(v, ndd.Batch))
    kw = {
        "layout": case.layout,
        "n": n,
        "gpu": "gpu" in row.devices,
        "gpu_by_device": row.gpu_by_device if case.gpu_by_device is None else case.gpu_by_device,
        "seed": SEED if row.random else None,
        "op_args": case.args,
        "output": case.output,
    }
    return inputs, kw


@pytest.mark.parametrize(("row", "case"), _params())
def test_contract(row: Row, case: Case) -> None:
    inputs, kw = _check_args(row, case)
    out = check_op(
        row.op,
        *inputs,
        atol=case.atol,
        gpu_atol=case.gpu_atol,
        batch_level=case.batch_level,
        **kw,
    )
    first = case.layout[0] if isinstance(case.layout, tuple) else case.layout
    assert out.layout == (first if case.out_layout == SAME else case.out_layout)
    if case.out_dtype is not None:
        assert out.dtype == case.out_dtype
    if case.check is not None:
        assert case.check(out)


@pytest.mark.parametrize("row", _row_params("empty"))
def test_empty_batch(row: Row) -> None:
    inputs, kw = _check_args(row, row.cases[0])
    check_empty(row.op, *inputs, empty=row.empty, **kw)


@pytest.mark.parametrize("row", _row_params("bad"))
def test_bad_call_same_error_in_every_mode(row: Row) -> None:
    inputs, kw = _check_args(row, row.cases[0])
    check_bad(row.op, *inputs, bad=row.bad, **kw)
