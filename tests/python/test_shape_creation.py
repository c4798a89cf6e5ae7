"""cat, stack, split, chunk, flatten, squeeze, unsqueeze, arange, linspace, the *_like factories
and pow with a tensor exponent from Python, against numpy (and PyTorch's documented results): the
functions and methods in PyTorch's argument names, the gradients, and the errors."""

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES


@pytest.mark.parametrize("device", DEVICES)
def test_cat_stack_match_numpy(device, rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 5))
    x, y = ofl.tensor(a, device=device), ofl.tensor(b, device=device)
    np.testing.assert_array_equal(ofl.cat([x, y], dim=1).numpy(), np.concatenate([a, b], 1))
    np.testing.assert_array_equal(ofl.concat((x, x), -2).numpy(), np.concatenate([a, a], 0))
    np.testing.assert_array_equal(ofl.stack([x, x], 2).numpy(), np.stack([a, a], 2))
    ints = ofl.tensor([1, 2], dtype=ofl.int32, device=device)
    mixed = ofl.cat([ints, ofl.tensor([0.5], device=device)])
    assert mixed.dtype is ofl.float32 and mixed.tolist() == [1.0, 2.0, 0.5]
    assert ofl.cat([ofl.tensor([], device=device), x]).shape == (2, 3)


@pytest.mark.parametrize("device", DEVICES)
def test_split_chunk_are_views_with_gradients(device):
    x = ofl.arange(10.0, device=device).reshape(2, 5).requires_grad_()
    parts = x.split(2, dim=1)
    assert isinstance(parts, tuple) and [p.shape for p in parts] == [(2, 2), (2, 2), (2, 1)]
    assert [p.shape for p in ofl.split(x, [1, 4], 1)] == [(2, 1), (2, 4)]
    assert [p.shape[1] for p in x.chunk(3, 1)] == [2, 2, 1]
    assert len(ofl.chunk(x, 6, dim=1)) == 5
    (parts[0] * 2 + parts[1]).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[2, 2, 1, 1, 0], [2, 2, 1, 1, 0]])


@pytest.mark.parametrize("device", DEVICES)
def test_flatten_squeeze_unsqueeze(device):
    x = ofl.zeros(1, 2, 1, 3, device=device)
    assert x.flatten().shape == (6,)
    assert ofl.flatten(x, start_dim=1, end_dim=2).shape == (1, 2, 3)
    assert x.squeeze().shape == (2, 3)
    assert x.squeeze(2).shape == (1, 2, 3)
    assert ofl.squeeze(x, dim=1).shape == (1, 2, 1, 3)
    assert x.unsqueeze(-1).shape == (1, 2, 1, 3, 1)
    assert ofl.unsqueeze(x, dim=0).shape == (1, 1, 2, 1, 3)
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ofl.tensor(a, device=device).T.flatten().numpy(), a.T.flatten())


@pytest.mark.parametrize("device", DEVICES)
def test_arange_linspace_match_numpy(device):
    a = ofl.arange(5, device=device)
    assert a.dtype is ofl.int64 and a.tolist() == [0, 1, 2, 3, 4]
    assert ofl.arange(10, 0, -3, device=device).tolist() == [10, 7, 4, 1]
    f = ofl.arange(0, 1, 0.25, device=device)
    assert f.dtype is ofl.float32 and f.tolist() == [0.0, 0.25, 0.5, 0.75]
    np.testing.assert_array_equal(
        ofl.arange(1.0, 2.0, 0.1, dtype=ofl.float64, device=device).numpy(),
        1.0 + np.arange(10) * 0.1,
    )
    l = ofl.linspace(-1, 1, 9, dtype=ofl.float64, device=device).numpy()
    assert l[0] == -1 and l[-1] == 1
    np.testing.assert_allclose(l, np.linspace(-1, 1, 9), rtol=0, atol=1e-15)
    assert ofl.linspace(0, 10, steps=4, dtype=ofl.int64, device=device).tolist() == [0, 3, 6, 10]
    assert ofl.arange(3.0, requires_grad=True).requires_grad


def test_arange_is_the_same_on_every_device():
    want = ofl.arange(-3.7, 1e4, 0.37, dtype=ofl.float64).numpy()
    for device in DEVICES[1:]:
        np.testing.assert_array_equal(
            ofl.arange(-3.7, 1e4, 0.37, dtype=ofl.float64, device=device).numpy(), want
        )


@pytest.mark.parametrize("device", DEVICES)
def test_like_factories(device):
    x = ofl.tensor([[1, 2, 3]], dtype=ofl.int32, device=device)
    z = ofl.zeros_like(x)
    assert z.dtype is ofl.int32 and z.shape == (1, 3) and z.device == device
    assert ofl.ones_like(x, dtype=ofl.float64).tolist() == [[1.0, 1.0, 1.0]]
    assert ofl.full_like(x, 7).tolist() == [[7, 7, 7]]
    assert ofl.empty_like(x, device="cpu").device == "cpu"
    assert ofl.zeros_like(x, dtype=ofl.float32, requires_grad=True).requires_grad


@pytest.mark.parametrize("device", DEVICES)
def test_pow_with_tensor_exponent(device):
    base = np.array([[1.5, 2.0, 0.5]])
    exp = np.array([[2.0], [-1.0]])
    b = ofl.tensor(base, device=device, requires_grad=True)
    e = ofl.tensor(exp, device=device, requires_grad=True)
    y = b**e
    np.testing.assert_allclose(y.numpy(), base**exp, rtol=1e-15)
    np.testing.assert_allclose(ofl.pow(b, e).numpy(), base**exp, rtol=1e-15)
    y.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), (exp * base ** (exp - 1)).sum(0, keepdims=True))
    np.testing.assert_allclose(e.grad.numpy(), (base**exp * np.log(base)).sum(1, keepdims=True))
    i = ofl.tensor([2, 3, -2], dtype=ofl.int32, device=device)
    assert (2**i).dtype is ofl.int32 and (2**i).tolist() == [4, 8, 0]
    assert (2.5**i).dtype is ofl.float32
    assert i.pow(ofl.tensor([10, 2, 3], dtype=ofl.int32, device=device)).tolist() == [1024, 9, -8]
    assert ofl.pow(2, ofl.tensor([0.5], device=device)).tolist() == pytest.approx([2**0.5])


def test_errors():
    x = ofl.zeros(2, 2)
    with pytest.raises(ofl.InvalidArgument, match=r"cat: sizes of tensors must match except in dim 0"):
        ofl.cat([x, ofl.zeros(1, 3)])
    with pytest.raises(TypeError, match=r"cat\(\): argument 'tensors' item 1 must be a Tensor, not int"):
        ofl.cat([x, 1])
    with pytest.raises(TypeError, match=r"stack\(\): argument 'tensors' must be a tuple or list"):
        ofl.stack(x)
    with pytest.raises(ofl.InvalidArgument, match=r"split_with_sizes: split sizes \[1, 2\] add up to 3"):
        x.split([1, 2])
    with pytest.raises(ofl.InvalidArgument, match=r"arange: step must be finite and nonzero, got 0"):
        ofl.arange(0, 3, 0)
    with pytest.raises(ofl.InvalidArgument, match=r"arange: the range 3 -> 0 runs against the sign"):
        ofl.arange(3, 0)
    with pytest.raises(ofl.InvalidArgument, match=r"linspace: number of steps must be non-negative, got -2"):
        ofl.linspace(0, 1, -2)
    with pytest.raises(ofl.InvalidArgument, match=r"pow: dtype bool is not supported"):
        ofl.tensor([True]) ** ofl.tensor([True])
    with pytest.raises(ofl.InvalidArgument, match=r"full_like: value 300 cannot be converted to type uint8"):
        ofl.full_like(ofl.tensor([1], dtype=ofl.uint8), 300)
    with pytest.raises(TypeError, match=r"pow\(\): expected a Tensor"):
        ofl.pow(2, 3)
