"""The public surface: names, signatures that match the operator schemas, kernel coverage."""

import inspect
import subprocess
import sys

import pytest

import headrace as ndd
from headrace._dispatch.schema import REGISTRY

INTERNAL = {"arithmetic_generic_op", "_tensor_subscript", "io.file.read"}
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
