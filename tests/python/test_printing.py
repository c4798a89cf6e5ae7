"""repr/str of tensors: numpy's layout for up to 1000 elements; larger tensors summarised as
PyTorch and numpy do (the 3 first and last along each dim longer than 6, `...` between), reading
only the printed elements from the device; format() of a 0-dim tensor."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import oneflow_lite as ofl


def numpy_body(a):
    """numpy's summary of `a` in the layout the repr uses (prefix 'tensor(')."""
    return np.array2string(a, separator=", ", prefix="tensor(", threshold=1000, edgeitems=3)


@pytest.mark.parametrize("shape", [(1001,), (40, 30), (3, 20, 20), (7, 7, 7, 7), (2000, 2)])
def test_a_large_tensor_prints_numpys_summary(device, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 500
    t = ofl.tensor(a, device=device)
    r = repr(t)
    assert r.startswith("tensor(") and "..." in r
    assert r == "tensor(" + numpy_body(a) + ("" if device == "cpu" else f", device='{device}'") + ")"


def test_large_integer_and_bfloat16_tensors_are_summarised():
    a = np.arange(5000, dtype=np.int64).reshape(50, 100)
    assert repr(ofl.tensor(a)) == "tensor(" + numpy_body(a) + ")"
    b = ofl.tensor(np.linspace(-2, 2, 2000, dtype=np.float32), dtype=ofl.bfloat16)
    r = repr(b)
    assert r.startswith("tensor([-2.") and "..., " in r and r.endswith("dtype=oneflow_lite.bfloat16)")


def test_a_huge_expanded_view_prints_without_being_read_whole():
    # 2**40 floats (4 TiB) viewing one element: printing reads the 216 printed ones.
    code = textwrap.dedent(
        """
        import resource
        import oneflow_lite as ofl
        t = ofl.full([1, 1, 1], 2.5).expand(1 << 14, 1 << 13, 1 << 13)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        s = str(t)
        grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        print(s.count("2.5"), s.count("..."), grown_kib < 64 * 1024)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(6 * 6 * 6), str(6 * 6 + 6 + 1), "True"]


def test_printing_records_nothing_and_keeps_grad_info():
    t = ofl.ones(2000, requires_grad=True)
    y = t * 2
    r = repr(y)
    assert r.endswith("grad_fn=<MulBackward>)") and "..." in r
    assert repr(t).endswith("requires_grad=True)")


def test_format_of_a_0_dim_tensor_is_its_numbers():
    loss = ofl.tensor(0.123456)
    assert f"{loss:.4f}" == "0.1235"
    assert f"{ofl.tensor(3):>4d}" == "   3"
    assert f"{loss}" == str(loss.item())
    with pytest.raises(TypeError):
        f"{ofl.ones(2):.2f}"
