"""The matrix products from Python, against numpy: mm, bmm, matmul and the @ operator with
torch.matmul's shape rules, transposed operands, linear (with and without bias), the gradients,
and the errors."""

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES


def _rand(rng, *shape):
    return rng.standard_normal(shape)


@pytest.mark.parametrize("device", DEVICES)
def test_matmul_shape_rules_match_numpy(device):
    rng = np.random.default_rng(0)
    shapes = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
              ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((0, 3), (3, 2)),
              ((2, 0), (0, 3))]
    for sa, sb in shapes:
        a, b = _rand(rng, *sa), _rand(rng, *sb)
        want = np.matmul(a, b)
        ta, tb = ofl.tensor(a, device=device), ofl.tensor(b, device=device)
        for got in (ofl.matmul(ta, tb), ta.matmul(tb), ta @ tb):
            assert got.shape == want.shape, (sa, sb)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_mm_bmm_and_transposed_operands(device):
    rng = np.random.default_rng(1)
    a, b = _rand(rng, 4, 3), _rand(rng, 5, 4)
    ta, tb = ofl.tensor(a, device=device), ofl.tensor(b, device=device)
    np.testing.assert_allclose(ofl.mm(ta.transpose(0, 1), tb.transpose(0, 1)).numpy(), a.T @ b.T,
                               rtol=1e-12)
    np.testing.assert_allclose(ta.transpose(0, 1).mm(tb.transpose(0, 1)).numpy(), a.T @ b.T,
                               rtol=1e-12)
    x, y = _rand(rng, 3, 2, 4), _rand(rng, 3, 4, 5)
    tx, ty = ofl.tensor(x, device=device), ofl.tensor(y, device=device)
    np.testing.assert_allclose(ofl.bmm(tx, ty).numpy(), x @ y, rtol=1e-12)
    np.testing.assert_allclose(tx.bmm(ty.transpose(1, 2).contiguous().transpose(1, 2)).numpy(),
                               x @ y, rtol=1e-12)
    f32 = ofl.tensor(x.astype(np.float32), device=device) @ ofl.tensor(y.astype(np.float32),
                                                                      device=device)
    assert f32.dtype is ofl.float32
    np.testing.assert_allclose(f32.numpy(), x @ y, rtol=1e-5)
    i = ofl.tensor(np.arange(6, dtype=np.int64).reshape(2, 3), device=device)
    assert (i @ i.transpose(0, 1)).tolist() == [[5, 14], [14, 50]]


@pytest.mark.parametrize("device", DEVICES)
def test_linear_and_gradients(device):
    rng = np.random.default_rng(2)
    x, w, b = _rand(rng, 4, 3), _rand(rng, 2, 3), _rand(rng, 2)
    tx = ofl.tensor(x, device=device, requires_grad=True)
    tw = ofl.tensor(w, device=device, requires_grad=True)
    tb = ofl.tensor(b, device=device, requires_grad=True)
    y = ofl.linear(tx, tw, tb)
    np.testing.assert_allclose(y.numpy(), x @ w.T + b, rtol=1e-12)
    np.testing.assert_allclose(ofl.linear(tx, tw).numpy(), x @ w.T, rtol=1e-12)
    g = _rand(rng, 4, 2)
    y.backward(ofl.tensor(g, device=device))
    np.testing.assert_allclose(tx.grad.numpy(), g @ w, rtol=1e-12)
    np.testing.assert_allclose(tw.grad.numpy(), g.T @ x, rtol=1e-12)
    np.testing.assert_allclose(tb.grad.numpy(), g.sum(0), rtol=1e-12)
    # A batch of vectors against a batch of matrices: the gradient of the broadcast operand sums.
    u = ofl.tensor(_rand(rng, 3), device=device, requires_grad=True)
    m = _rand(rng, 2, 3, 4)
    (u @ ofl.tensor(m, device=device)).sum().backward()
    np.testing.assert_allclose(u.grad.numpy(), m.sum(axis=(0, 2)), rtol=1e-12)


def test_errors():
    a = ofl.tensor(np.ones((2, 3)))
    with pytest.raises(ofl.InvalidArgument,
                       match=r"matmul: shapes \(2,3\) and \(2,3\) cannot be multiplied"):
        a @ a
    with pytest.raises(ofl.InvalidArgument, match="mm: mat2 must be a 2-dim tensor"):
        ofl.mm(a, ofl.tensor(np.ones(3)))
    with pytest.raises(ofl.InvalidArgument, match="mm: expected input and mat2 to have the same dtype"):
        ofl.mm(a, ofl.tensor(np.ones((3, 2), dtype=np.float32)))
    with pytest.raises(ofl.InvalidArgument, match="matmul: both arguments need at least 1 dim"):
        ofl.matmul(a, ofl.tensor(2.0))
    with pytest.raises(TypeError):
        a @ 2
    with pytest.raises(ofl.InvalidArgument, match="linear: weight must have 1 or 2 dims"):
        ofl.linear(a, ofl.tensor(np.ones((1, 2, 3))))
    assert (a @ a.transpose(0, 1)).tolist() == [[3.0, 3.0], [3.0, 3.0]]
