"""Random numbers from Python: seeds repeat draws, cpu and sim draw the same numbers, generator
states save and restore, the distributions' ranges and moments, randint / randperm, in-place
uniform_ / normal_, bernoulli and dropout (with its gradient), and the errors."""

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES


@pytest.mark.parametrize("device", DEVICES)
def test_seed_repeats_draws(device):
    ofl.manual_seed(5)
    a = ofl.rand(3, 4, device=device).numpy()
    b = ofl.randn((2, 2), dtype=ofl.float64, device=device).numpy()
    ofl.manual_seed(5)
    np.testing.assert_array_equal(ofl.rand(3, 4, device=device).numpy(), a)
    np.testing.assert_array_equal(ofl.randn(2, 2, dtype=ofl.float64, device=device).numpy(), b)
    assert ofl.initial_seed(device) == 5


def test_every_device_draws_the_same_numbers():
    draws = {}
    for device in DEVICES:
        ofl.manual_seed(20261129)
        draws[device] = (
            ofl.rand(100, device=device).numpy(),
            ofl.randint(0, 10, (50,), device=device).numpy(),
            ofl.randperm(30, device=device).numpy(),
        )
    for device in DEVICES[1:]:
        for got, want in zip(draws[device], draws["cpu"]):
            np.testing.assert_array_equal(got, want)


def test_rng_state_round_trip():
    ofl.manual_seed(1)
    state = ofl.get_rng_state()
    assert state.dtype is ofl.uint8 and state.shape == (16,)
    a = ofl.rand(10).numpy()
    ofl.set_rng_state(state)
    np.testing.assert_array_equal(ofl.rand(10).numpy(), a)


@pytest.mark.parametrize("device", DEVICES)
def test_distributions(device):
    ofl.manual_seed(3)
    u = ofl.rand(20000, device=device).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    z = ofl.randn(20000, device=device).numpy()
    assert abs(z.mean()) < 0.03 and abs(z.var() - 1) < 0.05
    r = ofl.randint(-2, 3, (4000,), device=device)
    assert r.dtype is ofl.int64 and set(np.unique(r.numpy())) == {-2, -1, 0, 1, 2}
    assert ofl.randint(5, (3, 2), device=device).shape == (3, 2)
    p = ofl.randperm(200, device=device).numpy()
    assert sorted(p.tolist()) == list(range(200))
    t = ofl.zeros(1000, dtype=ofl.float64, device=device)
    assert t.uniform_(2, 3) is t
    assert 2 <= t.numpy().min() and t.numpy().max() < 3
    t.normal_(mean=-4, std=0.1)
    assert abs(t.numpy().mean() + 4) < 0.05
    assert ofl.rand_like(t).dtype is ofl.float64
    assert ofl.randn_like(t, dtype=ofl.float32).dtype is ofl.float32


@pytest.mark.parametrize("device", DEVICES)
def test_bernoulli_and_dropout(device):
    ofl.manual_seed(8)
    p = ofl.full((10000,), 0.2, device=device)
    b = ofl.bernoulli(p).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.2) < 0.02
    assert abs(p.bernoulli(0.7).numpy().mean() - 0.7) < 0.02
    x = ofl.ones(4000, dtype=ofl.float64, device=device, requires_grad=True)
    y = ofl.dropout(x, 0.5)
    yv = y.numpy()
    assert set(np.unique(yv)) == {0.0, 2.0} and abs((yv == 0).mean() - 0.5) < 0.04
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), yv)
    assert ofl.dropout(x, 0.5, training=False) is not None
    np.testing.assert_array_equal(ofl.dropout(x, 0.3, False).numpy(), x.numpy())


def test_errors():
    with pytest.raises(ofl.InvalidArgument, match=r"rand: dtype int32 is not supported"):
        ofl.rand(2, dtype=ofl.int32)
    with pytest.raises(ofl.InvalidArgument, match=r"randint: high 1 must be above low 4"):
        ofl.randint(4, 1, (2,))
    with pytest.raises(TypeError, match=r"randint\(\): takes \(high, size\) or \(low, high, size\)"):
        ofl.randint(4)
    with pytest.raises(TypeError, match=r"randint\(\): argument 'size' must be a tuple of ints, not int"):
        ofl.randint(0, 4, 3)
    with pytest.raises(ofl.InvalidArgument, match=r"randperm: n 257 is too large for dtype uint8"):
        ofl.randperm(257, dtype=ofl.uint8)
    with pytest.raises(ofl.InvalidArgument, match=r"dropout: probability has to be between 0 and 1"):
        ofl.dropout(ofl.ones(2), 2.0)
    with pytest.raises(ofl.InvalidArgument, match=r"set_rng_state: the state must be a uint8 tensor of 16 bytes"):
        ofl.set_rng_state(ofl.zeros(3))
    with pytest.raises(ofl.InvalidArgument, match=r"uniform_: a leaf that requires grad"):
        ofl.ones(2, requires_grad=True).uniform_()
    with ofl.no_grad():
        ofl.ones(2, requires_grad=True).uniform_()
