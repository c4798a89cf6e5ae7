"""Higher-order gradients from Python: autograd.grad(create_graph=True) and
backward(create_graph=True) record the backward itself, so a gradient of a gradient works."""

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES


@pytest.mark.parametrize("device", DEVICES)
def test_grad_of_a_grad(device):
    x = ofl.tensor([1.5, -2.0, 0.5], dtype=ofl.float64, device=device, requires_grad=True)
    (g,) = ofl.autograd.grad((x**3).sum(), [x], create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(g.numpy(), 3 * x.detach().numpy() ** 2)
    (gg,) = ofl.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy())
    (plain,) = ofl.autograd.grad((x**3).sum(), [x])
    assert not plain.requires_grad


@pytest.mark.parametrize("device", DEVICES)
def test_backward_create_graph_keeps_the_grads_history(device):
    x = ofl.tensor([1.5, -2.0], dtype=ofl.float64, device=device, requires_grad=True)
    (x * x * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    (g * g).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 36 * x.detach().numpy() ** 3)


def test_gradient_penalty_through_a_model():
    # A WGAN-GP style penalty: the norm of d out / d input, differentiated w.r.t. the weights.
    ofl.manual_seed(0)
    model = ofl.nn.Sequential(ofl.nn.Linear(3, 4), ofl.nn.Tanh(), ofl.nn.Linear(4, 1)).double()
    x = ofl.randn(5, 3, dtype=ofl.float64, requires_grad=True)
    (gx,) = ofl.autograd.grad(model(x).sum(), [x], create_graph=True)
    penalty = ((gx * gx).sum(1) - 1.0).pow(2).mean()
    penalty.backward()
    # The last bias does not change d out / d input: no gradient reaches it, as in PyTorch.
    assert [p.grad is None for p in model.parameters()] == [False, False, False, True]
    w = model[0].weight
    # Central differences of the penalty in one weight element.
    def value(delta):
        with ofl.no_grad():
            w[0, 0] += delta
        xx = x.detach().requires_grad_()
        (g,) = ofl.autograd.grad(model(xx).sum(), [xx])
        with ofl.no_grad():
            w[0, 0] -= delta
        return float((((g * g).sum(1) - 1.0) ** 2).mean())

    numeric = (value(1e-6) - value(-1e-6)) / 2e-6
    assert abs(w.grad[0, 0].item() - numeric) < 1e-6 * max(1.0, abs(numeric))
