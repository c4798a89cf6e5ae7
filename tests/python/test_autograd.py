"""Autograd from Python: requires_grad, grad, is_leaf, grad_fn, retain_grad, backward with and
without a gradient, retain_graph, autograd.grad, no_grad, and the backward cases of OneFlow's
expand and repeat tests."""

import numpy as np
import pytest

import oneflow_lite as ofl


def test_expand_backward_cases(device):
    x = ofl.ones(2, 4, 1, 1, device=device, requires_grad=True)
    x.expand(2, 4, 2, 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 4, 1, 1), 2.0, np.float32))
    x = ofl.ones(1, 4, 1, 2, device=device, requires_grad=True)
    x.expand(2, 1, 2, 4, 2, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((1, 4, 1, 2), 8.0, np.float32))


def test_repeat_backward_cases(device):
    x = ofl.ones(2, 1, 3, device=device, requires_grad=True)
    y = x.repeat(2, 4, 1)
    assert y.shape == (4, 4, 3)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 1, 3), 8.0, np.float32))
    x = ofl.tensor(np.arange(6, dtype=np.float64).reshape(2, 3), device=device, requires_grad=True)
    w = np.arange(48, dtype=np.float64).reshape(2, 4, 6)
    (x.repeat(2, 2, 2) * ofl.tensor(w, device=device)).sum().backward()
    # Output [a, rb*2 + b, rc*3 + c] holds x[b, c].
    want = w.reshape(2, 2, 2, 2, 3).sum(axis=(0, 1, 3))
    np.testing.assert_array_equal(x.grad.numpy(), want)


def test_leaves_and_nodes(device):
    x = ofl.tensor([1.0, 2.0, 3.0], device=device)
    assert not x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    x.requires_grad = True
    assert x.requires_grad
    y = x * x
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward"
    assert x.requires_grad_(False) is x and not x.requires_grad


def test_backward_gradient_and_accumulation(device):
    a = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = ofl.tensor([3.0, 4.0], device=device, requires_grad=True)
    (a + b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [1.0, 1.0]
    (a * b).backward(ofl.tensor([1.0, 10.0], device=device))
    assert a.grad.tolist() == [4.0, 41.0]
    a.grad = None
    assert a.grad is None
    a.grad = ofl.zeros(2, device=device)
    assert a.grad.tolist() == [0.0, 0.0]


def test_retain_grad_and_retain_graph(device):
    x = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    y.retain_grad()
    z = (y * y).sum()
    z.backward(retain_graph=True)
    assert y.grad.tolist() == [6.0, 12.0]
    z.backward()
    assert x.grad.tolist() == [36.0, 72.0]
    with pytest.raises(ofl.Error):
        z.backward()


def test_autograd_grad(device):
    x = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    u = ofl.tensor([5.0], device=device, requires_grad=True)
    y = (x * x).sum()
    (gx,) = ofl.autograd.grad(y, x, retain_graph=True)
    assert gx.tolist() == [2.0, 4.0] and x.grad is None
    gx, gu = ofl.autograd.grad([y], [x, u], allow_unused=True)
    assert gu is None
    with pytest.raises(ofl.InvalidArgument):
        ofl.autograd.grad([(x * 2).sum()], [u])


def test_no_grad(device):
    x = ofl.tensor([1.0], device=device, requires_grad=True)
    assert ofl.is_grad_enabled()
    with ofl.no_grad():
        assert not ofl.is_grad_enabled()
        y = x * 2
        with ofl.no_grad():
            pass
        assert not ofl.is_grad_enabled()
    assert ofl.is_grad_enabled()
    assert not y.requires_grad

    @ofl.no_grad()
    def f():
        return x * 2

    assert not f().requires_grad


def test_detach_and_in_place_rules(device):
    x = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad
    with pytest.raises(ofl.InvalidArgument, match="requires grad"):
        x.add_(1)
    with ofl.no_grad():
        x.add_(1)
    assert x.tolist() == [2.0, 3.0]


def test_in_place_ops_on_non_leaves_are_recorded(device):
    x = ofl.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * 2
    y += 1  # __iadd__ writes y's own storage and becomes its history
    assert y.grad_fn is not None and not y.is_leaf
    y.mul_(ofl.tensor([3.0, 5.0, 7.0], device=device))
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 10.0, 14.0]

    z = ofl.zeros(3, device=device)
    z.copy_(x)  # a plain tensor written from one that requires grad now requires it
    assert z.requires_grad
    x.grad = None
    (z * z).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]

    v = (x * 1)[0:2]
    with pytest.raises(ofl.InvalidArgument, match="view"):
        v.add_(1)
