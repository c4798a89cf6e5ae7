"""gather and scatter_add from Python, against numpy (take_along_axis, add.at): the functions and
methods with PyTorch's argument order, repeated indices, the gradients, and the errors."""

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES


@pytest.mark.parametrize("device", DEVICES)
def test_gather_matches_take_along_axis(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5))
    for dim in (0, 1, 2, -1):
        shape = list(a.shape)
        shape[dim] = 6
        idx = rng.integers(0, a.shape[dim], size=shape)
        x, i = ofl.tensor(a, device=device), ofl.tensor(idx, device=device)
        want = np.take_along_axis(a, idx, axis=dim)
        np.testing.assert_array_equal(ofl.gather(x, dim, i).numpy(), want)
        np.testing.assert_array_equal(x.gather(dim, i).numpy(), want)
        np.testing.assert_array_equal(ofl.gather(input=x, dim=dim, index=i).numpy(), want)


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_add_and_gradients(device):
    self_ = np.zeros((2, 4))
    src = np.arange(6.0).reshape(2, 3)
    idx = np.array([[0, 0, 3], [2, 2, 2]])
    want = self_.copy()
    for r in range(2):
        np.add.at(want[r], idx[r], src[r])
    s = ofl.tensor(self_, device=device, requires_grad=True)
    t = ofl.tensor(src, device=device, requires_grad=True)
    out = s.scatter_add(1, ofl.tensor(idx, device=device), t)
    np.testing.assert_array_equal(out.numpy(), want)
    g = np.arange(8.0).reshape(2, 4)
    out.backward(ofl.tensor(g, device=device))
    np.testing.assert_array_equal(s.grad.numpy(), g)
    np.testing.assert_array_equal(t.grad.numpy(), np.take_along_axis(g, idx, axis=1))


def test_errors():
    x = ofl.tensor(np.ones((2, 3)))
    with pytest.raises(ofl.InvalidArgument, match="gather: index dtype int32 is not int64"):
        x.gather(1, ofl.tensor(np.zeros((2, 1), dtype=np.int32)))
    with pytest.raises(ofl.InvalidArgument, match="gather: dim 2 is out of range"):
        ofl.gather(x, 2, ofl.tensor(np.zeros((2, 1), dtype=np.int64)))
    with pytest.raises(TypeError, match="gather\\(\\): argument 'index' must be a Tensor"):
        ofl.gather(x, 1, [0, 1])
    with pytest.raises(ofl.Error, match="gather: index 3 is out of bounds for dim 1 with size 3"):
        ofl.gather(x, 1, ofl.tensor(np.array([[0], [3]]))).numpy()
    try:
        ofl.sync()  # at most the error reported above (sync reports what the VM raised)
    except ofl.Error:
        pass
    assert ofl.gather(x, 1, ofl.tensor(np.array([[0], [2]]))).tolist() == [[1.0], [1.0]]
