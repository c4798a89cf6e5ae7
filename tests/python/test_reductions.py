"""The reductions beyond sum from Python, against numpy: mean, amax/amin, max/min (whole, along a
dim as torch.return_types-like named tuples, and pairwise with a tensor), argmax/argmin, logsumexp,
their gradients, and the errors."""

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES

X = np.array([[1.0, 7.0, 7.0, -2.0], [4.0, 0.5, 6.0, 6.0], [2.0, 2.0, -3.0, 9.0]])


@pytest.mark.parametrize("device", DEVICES)
def test_mean_amax_amin_match_numpy(device):
    x = ofl.tensor(X, device=device)
    for dim in (None, 0, 1, (0, 1), -1):
        kw = {} if dim is None else {"dim": dim}
        np_axis = None if dim is None else dim
        np.testing.assert_allclose(x.mean(**kw).numpy(), X.mean(axis=np_axis), rtol=1e-6)
        np.testing.assert_array_equal(x.amax(**kw).numpy(), X.max(axis=np_axis))
        np.testing.assert_array_equal(ofl.amin(x, **kw).numpy(), X.min(axis=np_axis))
    assert x.mean(1, keepdim=True).shape == (3, 1)
    assert ofl.amax(x, dim=0, keepdim=True).shape == (1, 4)


@pytest.mark.parametrize("device", DEVICES)
def test_max_min_forms(device):
    x = ofl.tensor(X, device=device)
    assert x.max().item() == 9.0
    assert ofl.min(x).item() == -3.0
    r = x.max(1)
    assert isinstance(r, ofl.return_types.max)
    np.testing.assert_array_equal(r.values.numpy(), X.max(axis=1))
    np.testing.assert_array_equal(r.indices.numpy(), X.argmax(axis=1))  # first among ties
    assert r.indices.dtype is ofl.int64
    values, indices = ofl.min(x, dim=0, keepdim=True)
    assert values.shape == (1, 4)
    np.testing.assert_array_equal(indices.numpy(), X.argmin(axis=0)[None])
    other = ofl.tensor([5.0, 5.0, 5.0, 5.0], device=device)
    np.testing.assert_array_equal(x.max(other).numpy(), np.maximum(X, 5.0))
    np.testing.assert_array_equal(ofl.min(x, other).numpy(), np.minimum(X, 5.0))
    assert x.argmax().item() == X.argmax()
    np.testing.assert_array_equal(ofl.argmin(x, dim=1).numpy(), X.argmin(axis=1))
    assert x.argmax(dim=None, keepdim=True).shape == (1, 1)
    nan = ofl.tensor([1.0, float("nan"), 3.0], device=device)
    assert nan.argmax().item() == 1 and np.isnan(nan.max().item())


@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp(device):
    x = ofl.tensor(X, dtype=ofl.float64, device=device)
    ref = np.log(np.exp(X).sum(axis=1))
    np.testing.assert_allclose(ofl.logsumexp(x, dim=1).numpy(), ref, rtol=1e-12)
    big = ofl.tensor([1000.0, 1000.0], dtype=ofl.float64, device=device)
    assert abs(big.logsumexp().item() - (1000 + np.log(2))) < 1e-9


@pytest.mark.parametrize("device", DEVICES)
def test_gradients(device):
    x = ofl.tensor([1.0, 3.0, 3.0, 2.0], dtype=ofl.float64, device=device, requires_grad=True)
    x.amax().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5, 0.0]
    y = ofl.tensor([[3.0, 1.0, 3.0]], dtype=ofl.float64, device=device, requires_grad=True)
    y.max(1).values.sum().backward()
    assert y.grad.tolist() == [[1.0, 0.0, 0.0]]
    z = ofl.tensor([0.0, float(np.log(3.0))], dtype=ofl.float64, device=device, requires_grad=True)
    z.logsumexp().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0.25, 0.75], rtol=1e-12)
    m = ofl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ofl.float64, device=device, requires_grad=True)
    m.mean().backward()
    assert m.grad.tolist() == [[0.25, 0.25], [0.25, 0.25]]


def test_bad_inputs():
    x = ofl.tensor(X)
    with pytest.raises(ofl.InvalidArgument, match="mean: dtype int64 is not supported"):
        ofl.tensor([1, 2]).mean()
    with pytest.raises(ofl.InvalidArgument, match="max_dim: dim 2 is out of range for a 2-dim tensor"):
        x.max(2)
    with pytest.raises(ofl.InvalidArgument, match="amax: the input has no elements"):
        ofl.zeros(0).amax()
    with pytest.raises(TypeError, match="max\\(\\): keepdim needs a dim"):
        x.max(keepdim=True)
    with pytest.raises(TypeError, match="min\\(\\): keepdim is not taken with a tensor 'other'"):
        x.min(x, keepdim=True)
    with pytest.raises(TypeError, match="argument 'dim' must be"):
        x.argmax(dim="a")


@pytest.mark.parametrize("device", DEVICES)
def test_sum_with_dtype_casts_first_and_returns_that_dtype(device):
    a = np.array([[100, 100], [100, -1]], dtype=np.int8)
    x = ofl.tensor(a, device=device)
    s = x.sum(dtype=ofl.int32)
    assert s.dtype is ofl.int32 and s.item() == 299
    r = ofl.sum(x, 1, keepdim=True, dtype=ofl.int32)
    assert r.dtype is ofl.int32 and r.shape == (2, 1) and r.numpy().ravel().tolist() == [200, 99]
    big = ofl.tensor(np.array([2**31 - 1, 1], dtype=np.int32), device=device)
    assert big.sum(dtype=ofl.int32).item() == -(2**31)  # wraps at int32, as PyTorch's
    assert big.sum().item() == 2**31 and big.sum().dtype is ofl.int64
    h = ofl.full((3,), 40000.0, dtype=ofl.float16, device=device, requires_grad=True)
    f = h.sum(dtype=ofl.float64)
    assert f.dtype is ofl.float64 and f.item() == 120000.0
    f.backward()
    assert h.grad.dtype is ofl.float16 and h.grad.float().numpy().tolist() == [1.0, 1.0, 1.0]
    assert x.sum(dtype=ofl.bool).item() is True  # any nonzero, as torch's
    with pytest.raises(TypeError):
        ofl.sum([1, 2], dtype=ofl.int32)
