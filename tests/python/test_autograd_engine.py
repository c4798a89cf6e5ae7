"""The backward engine's rules as a PyTorch user meets them from Python: an output named twice in
autograd.grad counts twice, autograd.grad runs only the part of the graph it needs, mul saves only
what its wanted gradient reads, ``w.grad = w`` is refused and a grad with history is detached, a
leaf that stopped requiring grad gets no gradient, and threads sharing a leaf lose no gradient."""

import gc
import threading

import numpy as np
import pytest

import oneflow_lite as ofl


def test_the_same_output_twice_counts_twice(device):
    x = ofl.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = (x * x).sum()
    (g,) = ofl.autograd.grad([y, y], [x], retain_graph=True)
    np.testing.assert_array_equal(g.numpy(), [4.0, 8.0, 12.0])
    (g,) = ofl.autograd.grad([y, y.contiguous()], [x])
    np.testing.assert_array_equal(g.numpy(), [4.0, 8.0, 12.0])


def test_grad_leaves_the_rest_of_the_graph(device):
    x = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = x * x
    y = (h * 3).sum()
    (g,) = ofl.autograd.grad(y, [h])
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])
    assert x.grad is None
    h.sum().backward()  # h's node did not run, so it still has what it saved
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


def test_an_optimizer_step_before_backward(device):
    w = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    x = ofl.tensor([3.0, 4.0], device=device)
    loss = (w * x).sum()
    with ofl.no_grad():
        w -= 1  # w is not needed by its own gradient
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 4.0])


def test_a_grad_is_never_the_tensor_itself(device):
    w = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(ofl.InvalidArgument, match="its own gradient"):
        w.grad = w
    assert w.grad is None
    ofl.sync()
    base = ofl.memory_stats(device)["allocated_bytes"]
    v = ofl.ones(1 << 18, device=device, requires_grad=True)
    v.grad = v * 2
    assert not v.grad.requires_grad
    assert v.grad.sum().item() == 2 << 18
    del v  # with the grad holding v's graph, v (and its grad) would never be freed
    gc.collect()
    ofl.sync()
    assert ofl.memory_stats(device)["allocated_bytes"] == base


def test_a_leaf_that_stopped_requiring_grad(device):
    x = ofl.tensor([1.0, 2.0], device=device, requires_grad=True)
    k = ofl.tensor([3.0, 4.0], device=device, requires_grad=True)
    y = (x * k).sum()
    x.requires_grad = False
    y.backward()
    assert x.grad is None
    np.testing.assert_array_equal(k.grad.numpy(), [1.0, 2.0])


def test_threads_sharing_a_leaf(device):
    w = ofl.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True)
    steps = 20

    def train(scale):
        k = ofl.ones(4, device=device) * scale
        for _ in range(steps):
            (w * k).sum().backward()

    threads = [threading.Thread(target=train, args=(s,)) for s in (1.0, 2.0, 3.0, 4.0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(4, steps * 10.0, np.float32))
