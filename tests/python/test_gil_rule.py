"""The package's one GIL rule (python/src/bindings.h, ReleaseIfGlobal), call by call: an op call on
local tensors keeps the GIL (a wait inside the runtime gives it up through the wait hooks, which
this count leaves out); the calls that always wait or work long give it up outright, and another
Python thread runs while they wait. _C._gil_releases() counts the outright releases."""

import threading
import time

import numpy as np
import pytest

import oneflow_lite as ofl
from oneflow_lite import _C


def releases_of(call):
    before = _C._gil_releases()
    call()
    return _C._gil_releases() - before


def op_calls(device):
    """Every way Python issues an op on local tensors: the table's functions and methods, the
    hand-written methods, the operators, the in-place methods and operators, the factories."""
    x = ofl.ones(4, 3, device=device)
    y = ofl.full((4, 3), 2.0, device=device)
    w = ofl.ones(4, 3, device=device, requires_grad=True)

    def inplace_operators():
        z = x.clone()
        z += y
        z -= 1
        z *= 2
        z /= y

    return {
        "ofl.add": lambda: ofl.add(x, y),
        "ofl.expand": lambda: ofl.expand(x[0], 2, 3),
        "ofl.sum": lambda: ofl.sum(x, dim=0),
        "ofl.full": lambda: ofl.full((2, 2), 1.5, device=device),
        "ofl.zeros": lambda: ofl.zeros(2, 2, device=device),
        "ofl.ones": lambda: ofl.ones(2, 2, device=device),
        "ofl.empty": lambda: ofl.empty(2, 2, device=device),
        "Tensor.reshape": lambda: x.reshape(3, 4),
        "Tensor.view": lambda: x.view(12),
        "Tensor.permute": lambda: x.permute(1, 0),
        "Tensor.narrow": lambda: x.narrow(0, 1, 2),
        "Tensor.repeat": lambda: x.repeat(2, 1),
        "Tensor.contiguous": lambda: x.permute(1, 0).contiguous(),
        "Tensor.clone": lambda: x.clone(),
        "Tensor.sum": lambda: x.sum(),
        "Tensor.transpose": lambda: x.transpose(0, 1),
        "Tensor.expand_as": lambda: x[0].expand_as(x),
        "Tensor.detach": lambda: w.detach(),
        "Tensor.to": lambda: x.to("cpu"),
        "Tensor.cpu": lambda: x.cpu(),
        "operators": lambda: (x + y, x - 1, x * y, x / 2, -x),
        "recorded ops": lambda: (w * y).sum(),
        "Tensor.add_": lambda: x.clone().add_(y),
        "Tensor.sub_": lambda: x.clone().sub_(1),
        "Tensor.mul_": lambda: x.clone().mul_(y),
        "Tensor.div_": lambda: x.clone().div_(2),
        "Tensor.fill_": lambda: x.clone().fill_(3),
        "Tensor.zero_": lambda: x.clone().zero_(),
        "Tensor.copy_": lambda: x.clone().copy_(y),
        "in-place operators": inplace_operators,
        "getitem": lambda: x[1:3, 0],
        "properties": lambda: (x.shape, x.dtype, x.device, w.grad, w.requires_grad, x.is_leaf),
    }


@pytest.mark.parametrize("device", ["cpu", "sim:0"])
def test_an_op_call_on_local_tensors_keeps_the_gil(device):
    calls = op_calls(device)
    ofl.sync()
    for name, call in calls.items():
        assert releases_of(call) == 0, f"{name} on {device} gave the GIL up"
    ofl.sync()


@pytest.mark.parametrize("device", ["cpu", "sim:0"])
def test_the_calls_that_wait_give_the_gil_up(device):
    x = ofl.ones(4, 3, device=device)
    w = ofl.ones(4, 3, device=device, requires_grad=True)
    waits = {
        "ofl.sync": lambda: ofl.sync(),
        "Tensor.numpy": lambda: x.numpy(),
        "Tensor.backward": lambda: (w * 2).sum().backward(),
        "autograd.grad": lambda: ofl.autograd.grad([(w * 3).sum()], [w]),
        "ofl.tensor": lambda: ofl.tensor(np.ones((2, 2), np.float32), device=device),
    }
    for name, call in waits.items():
        assert releases_of(call) >= 1, f"{name} on {device} kept the GIL"


@pytest.mark.parametrize("read", ["sync", "item", "numpy", "backward"])
def test_another_thread_runs_while_a_read_waits(read):
    x = ofl.ones(1 << 21, device="sim:0")
    ofl.sync()
    stamps = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)

    th = threading.Thread(target=ticker)
    th.start()
    try:
        time.sleep(0.01)
        y = x.clone().requires_grad_() if read == "backward" else x
        z = y
        for _ in range(60):  # queued work: a few ms each on the simulated device
            z = z * 1.0001
        t0 = time.perf_counter()
        if read == "sync":
            ofl.sync()
        elif read == "item":
            z.sum().item()
        elif read == "numpy":
            z.numpy()
        else:
            z.sum().backward()
            y.grad.sum().item()
        t1 = time.perf_counter()
    finally:
        stop.set()
        th.join()
    assert t1 - t0 > 0.02, "the queued work finished too soon to tell"
    assert any(t0 < s < t1 for s in stamps), f"{read} kept the GIL while it waited"
