"""softmax, log_softmax and mse_loss from Python, against numpy: every dim, large values, the
gradients, the reductions, and the errors."""

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES


def _softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_and_log_softmax_match_numpy(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 5)) * 10
    a[1] += 800  # the max shift keeps these finite
    x = ofl.tensor(a, device=device)
    for dim in (0, 1, 2, -1):
        want = _softmax(a, dim)
        np.testing.assert_allclose(ofl.softmax(x, dim).numpy(), want, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(x.softmax(dim=dim).numpy(), want, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(x.log_softmax(dim).numpy(),
                                   a - a.max(axis=dim, keepdims=True) -
                                   np.log(np.exp(a - a.max(axis=dim, keepdims=True))
                                          .sum(axis=dim, keepdims=True)), rtol=1e-12)
    a32 = a.astype(np.float32)  # the reference from the same rounded inputs
    f = ofl.tensor(a32, device=device).softmax(1)
    assert f.dtype is ofl.float32
    np.testing.assert_allclose(f.numpy(), _softmax(a32.astype(np.float64), 1), rtol=1e-5,
                               atol=1e-30)


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_gradient(device):
    rng = np.random.default_rng(1)
    a, g = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    x = ofl.tensor(a, device=device, requires_grad=True)
    x.softmax(1).backward(ofl.tensor(g, device=device))
    y = _softmax(a, 1)
    np.testing.assert_allclose(x.grad.numpy(), y * (g - (g * y).sum(1, keepdims=True)), rtol=1e-12)
    z = ofl.tensor(a, device=device, requires_grad=True)
    ofl.log_softmax(z, 0).backward(ofl.tensor(g, device=device))
    np.testing.assert_allclose(z.grad.numpy(), g - _softmax(a, 0) * g.sum(0, keepdims=True),
                               rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_mse_loss(device):
    a, t = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.0, 2.0], [5.0, 1.0]])
    x = ofl.tensor(a, device=device, requires_grad=True)
    target = ofl.tensor(t, device=device)
    assert ofl.mse_loss(x, target).item() == 3.5
    assert ofl.mse_loss(x, target, reduction="sum").item() == 14.0
    np.testing.assert_array_equal(ofl.mse_loss(x, target, "none").numpy(), (a - t) ** 2)
    ofl.mse_loss(input=x, target=target).backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * (a - t) / 4)


def test_errors():
    x = ofl.tensor(np.ones((2, 3)))
    with pytest.raises(ofl.InvalidArgument, match="softmax: dim 2 is out of range"):
        x.softmax(2)
    with pytest.raises(ofl.InvalidArgument, match="log_softmax: dtype int64 is not supported"):
        ofl.log_softmax(ofl.tensor([1, 2]), 0)
    with pytest.raises(ofl.InvalidArgument,
                       match="mse_loss: reduction 'avg' is not one of 'none', 'mean', 'sum'"):
        ofl.mse_loss(x, x, reduction="avg")
    with pytest.raises(TypeError):
        x.softmax()


def _log_softmax(a, axis):
    m = a.max(axis=axis, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_and_nll_loss_match_numpy(device):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 4))
    t = np.array([3, 0, -100, 1, 1])
    w = np.array([1.0, 2.0, 0.5, 3.0])
    x = ofl.tensor(a, device=device, requires_grad=True)
    target, weight = ofl.tensor(t, device=device), ofl.tensor(w, device=device)
    logp = _log_softmax(a, 1)
    valid = t != -100
    picked = np.where(valid, -logp[np.arange(5), np.where(valid, t, 0)], 0.0)
    wt = np.where(valid, w[np.where(valid, t, 0)], 0.0)
    np.testing.assert_allclose(ofl.cross_entropy(x, target, reduction="none").numpy(), picked,
                               rtol=1e-12)
    np.testing.assert_allclose(ofl.cross_entropy(x, target).item(), picked.sum() / valid.sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(ofl.cross_entropy(x, target, weight=weight).item(),
                               (picked * wt).sum() / wt.sum(), rtol=1e-12)
    np.testing.assert_allclose(
        ofl.nll_loss(ofl.log_softmax(x, 1), target, weight, "sum").item(), (picked * wt).sum(),
        rtol=1e-12)
    e = 0.25
    smooth = np.where(valid, -logp.sum(1), 0.0)
    want = ((1 - e) * picked + e / 4 * smooth).sum() / valid.sum()
    np.testing.assert_allclose(ofl.cross_entropy(x, target, label_smoothing=e).item(), want,
                               rtol=1e-12)
    loss = ofl.cross_entropy(x, target, reduction="sum")
    loss.backward()
    p = np.exp(logp)
    grad = p * valid[:, None]
    grad[np.arange(5)[valid], t[valid]] -= 1
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("device", DEVICES)
def test_one_hot_and_index_select(device):
    t = ofl.tensor(np.array([2, 0, 1]), device=device)
    np.testing.assert_array_equal(ofl.one_hot(t).numpy(), np.eye(3, dtype=np.int64)[[2, 0, 1]])
    assert ofl.one_hot(t, num_classes=5).shape == (3, 5)
    a = np.arange(12.0).reshape(3, 4)
    x = ofl.tensor(a, device=device)
    idx = ofl.tensor(np.array([3, 0, 3]), device=device)
    np.testing.assert_array_equal(ofl.index_select(x, 1, idx).numpy(), a[:, [3, 0, 3]])
    np.testing.assert_array_equal(x.index_select(0, ofl.tensor(np.array([2]), device=device))
                                  .numpy(), a[[2]])


def test_loss_errors():
    x = ofl.tensor(np.ones((2, 3)))
    t = ofl.tensor(np.array([0, 1]))
    with pytest.raises(ofl.InvalidArgument, match="cross_entropy: target dtype int32 is not int64"):
        ofl.cross_entropy(x, ofl.tensor(np.array([0, 1], dtype=np.int32)))
    with pytest.raises(ofl.InvalidArgument, match=r"nll_loss: weight shape \(2\) is not \(3\)"):
        ofl.nll_loss(x, t, weight=ofl.tensor(np.ones(2)))
    with pytest.raises(ofl.InvalidArgument, match="label_smoothing must be between 0.0 and 1.0"):
        ofl.cross_entropy(x, t, label_smoothing=2.0)
    with pytest.raises(ofl.InvalidArgument, match="one_hot: class values must be non-negative"):
        ofl.one_hot(ofl.tensor(np.array([-1])))
    with pytest.raises(TypeError, match="cross_entropy\\(\\): argument 'weight' must be a Tensor"):
        ofl.cross_entropy(x, t, weight=[1.0, 2.0, 3.0])
    assert ofl.cross_entropy(x, t).item() == pytest.approx(np.log(3.0))
