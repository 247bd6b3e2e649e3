"""The public surface: names, signatures that match the operator schemas, kernel coverage."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import headrace as ndd
from headrace._dispatch.schema import REGISTRY

INTERNAL = {"arithmetic_generic_op", "_tensor_subscript"}
GENERIC = {"device", "batch_size", "rng"}


def _public(name: str):
    obj = ndd
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def test_top_level_names():
    for name in ["Tensor", "Batch", "tensor", "as_tensor", "batch", "as_batch", "DType", "dtype",
                 "Device", "device", "EvalMode", "EvalContext", "get_num_threads",
                 "set_num_threads", "random", "math", "types", "decoders", "imread", "uint8",
                 "float32", "bool", "cast", "reshape"]:  # fmt: skip
        assert name in ndd.__all__, name
        assert hasattr(ndd, name), name
    assert sorted(ndd.__all__) == sorted(set(ndd.__all__))
    for name in ndd.__all__:
        assert hasattr(ndd, name), f"{name} is in __all__ but missing"


def test_batch_has_no_getitem_or_len_and_tensor_members():
    assert not hasattr(ndd.Batch, "__getitem__") and not hasattr(ndd.Batch, "__len__")
    for m in ["evaluate", "cpu", "gpu", "to_device", "torch", "item", "shape", "dtype", "layout",
              "device", "ndim", "size", "nbytes", "itemsize"]:  # fmt: skip
        assert hasattr(ndd.Tensor, m), m
    for m in ["tensors", "slice", "select", "torch", "batch_size", "broadcast", "evaluate"]:
        assert hasattr(ndd.Batch, m), m


@pytest.mark.parametrize("name", sorted(n for n in REGISTRY if n not in INTERNAL))
def test_public_signature_matches_schema(name):
    schema = REGISTRY[name]
    fn = _public(name)
    assert fn is not None, f"operator {name} has no public function"
    params = inspect.signature(fn).parameters
    kw = {p for p, v in params.items() if v.kind is inspect.Parameter.KEYWORD_ONLY}
    args = {a.name for a in schema.args if not a.name.startswith("_")}
    assert args <= kw, f"{name}: schema arguments missing from the signature: {args - kw}"
    assert kw - args <= GENERIC, f"{name}: signature has unknown arguments {kw - args - GENERIC}"
    assert "device" in kw
    if schema.random:
        assert "rng" in kw
    assert fn.__doc__ and "Examples" in fn.__doc__, f"{name}: docstring needs an Examples block"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_schema_has_a_cpu_kernel_and_its_gpu_kernel(name):
    schema = REGISTRY[name]
    assert schema.devices, f"{name} runs on no device"
    for kind in schema.devices:  # imports the backend module, raises if the kernel is missing
        assert callable(schema.kernel_for(ndd.Device(kind)))


def test_import_does_not_import_torch():
    code = "import sys, headrace; import headrace.random; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the reference's surface ----------------------------------------------------------------------
SURFACE = Path("/work/shared/spec/reference-api-surface.txt")
#: Public callables taking ``**kwargs`` that forward them to another public callable.
FORWARDS = {"imread": "decoders.image"}


def _surface() -> list[tuple[str, list[tuple[str, str]]]]:
    """``(name, [(parameter, kind)])`` per line of the surface file; kind is ``"positional"``
    (before ``/``), ``"keyword"`` (after ``*``) or ``"either"``."""
    entries = []
    for line in SURFACE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^[✗ ]\s*([\w.]+)\((.*)\)\s*$", line)
        if not m or line.startswith("#"):
            continue
        params, kind = [], "either"
        parts = [p.strip() for p in m.group(2).split(",")]
        if "/" in parts:
            kind = "positional"
        for part in parts:
            if part == "/":
                kind = "either"
                continue
            if part.startswith("**") or part in ("...", ""):
                continue
            if part.startswith("*"):
                kind = "keyword"
                continue
            name = part.split("=")[0]
            if not name.startswith("_"):
                params.append((name, kind))
        entries.append((m.group(1), params))
    return entries


def _accepted(obj) -> tuple[dict[str, inspect.Parameter], bool]:
    """The parameters ``obj`` accepts, following ``**kwargs`` to where it forwards them; and
    whether some ``**kwargs`` stays unresolved."""
    params = dict(inspect.signature(obj).parameters)
    var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    if var_kw and isinstance(obj, type):  # readers: **kwargs go to the base classes
        for base in obj.__mro__[1:]:
            init = base.__dict__.get("__init__")
            if init is not None and base is not object:
                for name, p in inspect.signature(init).parameters.items():
                    params.setdefault(name, p)
        var_kw = False
    return params, var_kw


@pytest.mark.skipif(not SURFACE.exists(), reason="the reference's surface file is not here")
def test_every_reference_parameter_is_accepted() -> None:
    """Every parameter of the reference is accepted on the names headrace has, by keyword when
    the reference takes it by keyword."""
    problems = []
    for name, ref_params in _surface():
        obj = _public(name)
        if obj is None:
            continue  # a name headrace does not have (yet): listed by tools/api_surface.py
        try:
            params, unresolved = _accepted(obj)
        except (TypeError, ValueError):
            continue  # no signature (enum members, dtype constants)
        if name in FORWARDS:
            params = {**_accepted(_public(FORWARDS[name]))[0], **params}
            unresolved = False
        by_place = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        positional = [p for p in params.values() if p.kind in by_place]
        varargs = any(p.kind is p.VAR_POSITIONAL for p in params.values())
        for i, (pname, kind) in enumerate(ref_params):
            if pname in ("args", "kwargs", "inputs", "self"):
                continue
            if (
                kind == "positional"
            ):  # positional-only there: its name cannot matter, its place does
                if i >= len(positional) and not varargs:
                    problems.append(f"{name}: no positional parameter {i} ({pname!r})")
                continue
            p = params.get(pname)
            if p is None:
                if not unresolved:
                    problems.append(f"{name}: no parameter {pname!r}")
            elif kind != "positional" and p.kind is p.POSITIONAL_ONLY:
                problems.append(f"{name}: {pname!r} must be accepted by keyword")
    assert not problems, "\n".join(problems)


@pytest.mark.skipif(not SURFACE.exists(), reason="the reference's surface file is not here")
def test_every_reference_name_exists() -> None:
    """Every public name of the reference's dynamic-mode module is there (``local`` included:
    the reference's namespace holds ``threading.local`` under that name)."""
    missing = [name for name, _ in _surface() if _public(name) is None]
    assert not missing, missing


def test_surface_parser_reads_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "surface.txt"
    f.write_text("# header\n\n  cat(input_0, /, *inputs, batch_size, device, axis)\n"
                 "✗ gone(x)\n  Tensor(data, dtype, copy=False)\n", encoding="utf-8")  # fmt: skip
    monkeypatch.setattr(sys.modules[__name__], "SURFACE", f)
    assert _surface() == [
        ("cat", [("input_0", "positional"), ("batch_size", "keyword"), ("device", "keyword"),
                 ("axis", "keyword")]),
        ("gone", [("x", "either")]),
        ("Tensor", [("data", "either"), ("dtype", "either"), ("copy", "either")]),
    ]  # fmt: skip
