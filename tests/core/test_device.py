import os
import subprocess
import sys
import textwrap
import threading

import pytest

import headrace as ndd


def test_parse_and_normalise():
    assert ndd.Device("cuda").device_type == "gpu"
    assert str(ndd.Device("cuda:0")) == "gpu:0"
    assert ndd.Device("cpu").device_id is None
    assert repr(ndd.Device("gpu", 0)) == "Device(device_type='gpu', device_id=0)"
    assert repr(ndd.Device("cpu")) == "Device(device_type='cpu')"  # no id: the reference omits it
    assert ndd.Device("gpu:0") == ndd.Device("gpu", 0)
    assert hash(ndd.Device("gpu:0")) == hash(ndd.Device("cuda", 0))
    assert ndd.Device.CPU == ndd.Device("cpu")
    assert ndd.Device("cpu:0") == ndd.Device("cpu", 0) == ndd.Device("cpu")  # as the reference
    assert ndd.Device("cpu:0").device_id is None


@pytest.mark.parametrize(
    "args, msg",
    [
        (("gpu:0", 0), "Invalid device name"),
        (("cpu:99",), "Invalid device id"),
        (("cpu", 1), "Invalid device id"),
        (("gpu:7",), "Invalid device id"),
        (("gpu:-1",), "Invalid device id"),
        (("tpu",), "Invalid device type"),
    ],
)
def test_errors(args, msg):
    with pytest.raises(ValueError, match=msg):
        ndd.Device(*args)


def test_device_function():
    import torch

    assert ndd.device(None) is None
    d = ndd.Device("cpu")
    assert ndd.device(d) is d
    assert ndd.device(torch.device("cuda", 0)) == ndd.Device("gpu:0")
    with pytest.raises(TypeError, match="Cannot convert"):
        ndd.device(3.5)


def test_current_device_stack_is_thread_local():
    assert ndd.Device.current() == ndd.Device("gpu")  # fake GPU present in tests
    seen = []
    with ndd.Device("cpu"):
        assert ndd.Device.current() == ndd.Device("cpu")
        t = threading.Thread(target=lambda: seen.append(ndd.Device.current()))
        t.start()
        t.join()
    assert seen == [ndd.Device("gpu")]
    assert ndd.Device.current() == ndd.Device("gpu")


def test_a_gpu_call_without_a_gpu_says_so_before_any_library_does():
    """Without CUDA (and without fake-GPU mode) a GPU call fails with one clear error, before
    torch or nvImageCodec report their own."""
    pytest.importorskip("torch")
    code = textwrap.dedent(
        """
        import numpy as np, torch
        import headrace as ndd
        from headrace._core.errors import BackendUnavailableError
        if torch.cuda.is_available():
            print("HAS-GPU"); raise SystemExit
        for call in (lambda: ndd.Tensor(np.zeros(3)).gpu(),
                     lambda: ndd.decoders.image(ndd.Tensor(np.zeros(8, np.uint8)), device="gpu"),
                     lambda: ndd.flip(ndd.Tensor(np.zeros((2, 2, 3)), device="gpu"))):
            try:
                call()
            except BackendUnavailableError as e:
                assert "HEADRACE_FAKE_GPU=1" in str(e) and "none is available" in str(e), e
                print("OK")
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "HEADRACE_FAKE_GPU"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    if "HAS-GPU" in out.stdout:
        pytest.skip("this machine has a GPU")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["OK"] * 3
