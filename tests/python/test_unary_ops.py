"""The elementwise-unary ops and the dtype conversions from Python, against numpy (and math for
erf and gelu): the functions and methods, the operators (-x, abs(x), x ** p), integer inputs of the
floating functions computed in float32, to(dtype) and .float()/.long()/..., the gradient of a cast
in the input's dtype, and the errors."""

import math

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES

XS = np.array([-2.5, -1.0, -0.25, 0.0, 0.5, 1.75, 3.0])
POS = np.array([0.1, 0.5, 1.0, 2.0, 9.0])
_erf = np.vectorize(math.erf)

CASES = {
    "neg": (lambda t: ofl.neg(t), lambda x: -x, XS),
    "abs": (lambda t: t.abs(), np.abs, XS),
    "sign": (lambda t: t.sign(), np.sign, XS),
    "relu": (lambda t: t.relu(), lambda x: np.maximum(x, 0), XS),
    "exp": (lambda t: t.exp(), np.exp, XS),
    "log": (lambda t: ofl.log(t), np.log, POS),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, POS),
    "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), POS),
    "sin": (lambda t: t.sin(), np.sin, XS),
    "cos": (lambda t: ofl.cos(t), np.cos, XS),
    "tanh": (lambda t: t.tanh(), np.tanh, XS),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), XS),
    "erf": (lambda t: t.erf(), _erf, XS),
    "silu": (lambda t: ofl.silu(t), lambda x: x / (1 + np.exp(-x)), XS),
    "gelu": (lambda t: ofl.gelu(t), lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), XS),
    "gelu_tanh": (
        lambda t: ofl.gelu(t, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        XS,
    ),
    "pow": (lambda t: t.pow(3), lambda x: x**3, XS),
    "pow_op": (lambda t: t**0.5, np.sqrt, POS),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy(name, device):
    op, ref, xs = CASES[name]
    for dtype, tol in ((ofl.float64, 1e-12), (ofl.float32, 2e-6)):
        t = ofl.tensor(xs, dtype=dtype, device=device)
        y = op(t)
        assert y.dtype is dtype
        assert y.shape == t.shape
        np.testing.assert_allclose(y.numpy().astype(np.float64), ref(xs), rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_operators_and_views(device):
    x = ofl.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], device=device)
    np.testing.assert_array_equal((-x).numpy(), -x.numpy())
    np.testing.assert_array_equal(abs(x).numpy(), np.abs(x.numpy()))
    np.testing.assert_allclose((x**2).numpy(), x.numpy() ** 2)
    # A transposed view, and a broadcast one.
    np.testing.assert_allclose(x.T.exp().numpy(), np.exp(x.numpy().T), rtol=1e-6)
    assert ofl.tanh(x[0].expand(4, 3)).shape == (4, 3)


def test_integer_inputs():
    i = ofl.tensor([-3, 0, 4], dtype=ofl.int64)
    assert i.abs().dtype is ofl.int64 and i.abs().tolist() == [3, 0, 4]
    assert (-i).tolist() == [3, 0, -4]
    assert i.relu().tolist() == [0, 0, 4]
    # A floating function of an integer tensor computes in float32, as torch.sqrt does.
    r = ofl.tensor([1, 4, 9], dtype=ofl.int32).sqrt()
    assert r.dtype is ofl.float32 and r.tolist() == [1.0, 2.0, 3.0]
    assert ofl.exp(ofl.tensor([False, True])).dtype is ofl.float32


def test_dtype_conversions():
    x = ofl.tensor([-1.75, 0.5, 2.5, 300.0, float("nan")])
    assert x.float() is x and x.to(ofl.float32) is x and x.to(dtype=ofl.float32) is x
    assert x.long().tolist() == [-1, 0, 2, 300, 0]
    assert x.long().dtype is ofl.int64
    assert x.to(ofl.int8).tolist() == [-1, 0, 2, 127, 0]
    assert x.byte().tolist() == [0, 0, 2, 255, 0]
    assert x.bool().tolist() == [True, True, True, True, True]
    assert x.double().dtype is ofl.float64
    assert x.half().dtype is ofl.float16 and x.bfloat16().dtype is ofl.bfloat16
    assert x.int().dtype is ofl.int32 and x.short().dtype is ofl.int16 and x.char().dtype is ofl.int8
    y = x.to("sim:0", ofl.float64)
    assert y.device == ofl.device("sim:0") and y.dtype is ofl.float64
    assert x.to("cpu") is x


def test_cast_gradient_is_in_the_inputs_dtype():
    x = ofl.tensor([1.5, -2.0], requires_grad=True)
    (x.double() ** 2).sum().backward()
    assert x.grad.dtype is ofl.float32
    assert x.grad.tolist() == [3.0, -4.0]
    assert not x.long().requires_grad


def test_bad_inputs():
    b = ofl.tensor([True])
    with pytest.raises(ofl.InvalidArgument, match=r"neg: dtype bool is not supported"):
        ofl.neg(b)
    x = ofl.ones(2)
    with pytest.raises(ofl.InvalidArgument, match=r'gelu: approximate is "fast"; expected "none" or "tanh"'):
        ofl.gelu(x, approximate="fast")
    with pytest.raises(TypeError, match=r"pow\(\): argument 'exponent' must be a number or a Tensor, not str"):
        x.pow("2")
    with pytest.raises(TypeError, match=r"gelu\(\): argument 'approximate' must be a str, not int"):
        ofl.gelu(x, approximate=1)
    with pytest.raises(TypeError, match=r"to\(\) takes a device, a dtype or both"):
        x.to()
    with pytest.raises(TypeError, match=r"pow\(\): argument 'exponent' must be a number or a Tensor, not bool"):
        x.pow(True)
    assert (x + 1).tolist() == [2.0, 2.0]
