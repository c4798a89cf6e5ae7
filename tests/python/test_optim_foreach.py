"""ofl.optim's multi-tensor step (_C._adam_step, _C._sgd_step): the default step gives the
values of the per-op step (foreach=False) for every option, a parameter the kernel cannot take
(not contiguous) goes op by op inside the same step, and the foreach flag sits in the group."""

import numpy as np
import pytest

import oneflow_lite as ofl
from oneflow_lite import optim


def params(device, contiguous=True, dtype=ofl.float64):
    rng = np.random.default_rng(3)
    out = []
    for shape in [(3, 4), (5, 2), (6,)]:
        a = rng.standard_normal(shape[::-1]).T.copy()
        t = ofl.tensor(a, dtype=dtype, device=device)
        if not contiguous and len(shape) == 2:
            t = ofl.tensor(a.T.copy(), dtype=dtype, device=device).permute(1, 0)
            assert not t.is_contiguous()
        out.append(t.detach().requires_grad_())
    return out


def backward(ps, skip=None):
    loss = None
    for i, p in enumerate(ps):
        if i == skip:
            continue
        term = ((0.5 + i) * p * p).sum() + p.sum()
        loss = term if loss is None else loss + term
    loss.backward()


OPTIMIZERS = {
    "sgd": lambda p, **kw: optim.SGD(p, lr=0.1, **kw),
    "sgd momentum nesterov wd": lambda p, **kw: optim.SGD(p, lr=0.1, momentum=0.9,
                                                         nesterov=True, weight_decay=0.01, **kw),
    "sgd dampening maximize": lambda p, **kw: optim.SGD(p, lr=0.1, momentum=0.8, dampening=0.3,
                                                       maximize=True, **kw),
    "adam amsgrad wd maximize": lambda p, **kw: optim.Adam(p, lr=0.05, amsgrad=True,
                                                          weight_decay=0.1, maximize=True, **kw),
    "adamw": lambda p, **kw: optim.AdamW(p, lr=0.05, weight_decay=0.1, **kw),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_the_multi_tensor_step_gives_the_per_op_values(device, name):
    make = OPTIMIZERS[name]
    fused, per_op, strided = params(device), params(device), params(device, contiguous=False)
    a, b, c = make(fused), make(per_op, foreach=False), make(strided)
    assert a.param_groups[0]["foreach"] is None and b.param_groups[0]["foreach"] is False
    for step in range(4):
        for opt, ps in ((a, fused), (b, per_op), (c, strided)):
            opt.zero_grad()
            backward(ps, skip=1 if step == 1 else None)
            opt.step()
    for x, y, z in zip(fused, per_op, strided):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(z.numpy(), y.numpy(), rtol=1e-13, atol=1e-13)


def test_float32_steps_follow_the_float64_steps(device):
    for name, make in OPTIMIZERS.items():
        wide, narrow = params(device), params(device, dtype=ofl.float32)
        a, b = make(wide), make(narrow)
        for _ in range(3):
            for opt, ps in ((a, wide), (b, narrow)):
                opt.zero_grad()
                backward(ps)
                opt.step()
        for x, y in zip(narrow, wide):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-5, atol=1e-5, err_msg=name)


def test_the_step_calls_check_their_lists():
    p = params("cpu")
    with pytest.raises(TypeError,
                       match="_sgd_step.*'bufs' must be a Tensor or a sequence of Tensors"):
        ofl._C._sgd_step(p, p, 3, [], 0.1, 0.0, 0.0, 0.0, False, False)
    with pytest.raises(ValueError, match="adam_step: grads has 1 entries for 3 parameters"):
        ofl._C._adam_step(p, p[:1], p, p, [], [1, 1, 1], 0.1, 0.9, 0.999, 1e-8, 0.0, False,
                          False, False)
