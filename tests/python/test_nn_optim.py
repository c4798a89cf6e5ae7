"""ofl.nn and ofl.optim: Module registration, parameter order and state-dict keys as PyTorch's,
train/eval, to(dtype/device), zero_grad, the layers' initialisation and outputs, the losses,
optimizer options and errors, and ofl.save / ofl.load round trips."""

import collections
import copy
import math
import pickle

import numpy as np
import pytest

import oneflow_lite as ofl
from oneflow_lite import nn

from conftest import DEVICES


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.blocks = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Dropout(0.5), nn.Linear(8, 3))
        self.scale = nn.Parameter(ofl.ones(1))
        self.register_buffer("running", ofl.zeros(3))
        self.note = "not a parameter"

    def forward(self, x):
        return self.blocks(self.act(self.fc1(x))) * self.scale + self.running


def test_registration_order_and_state_dict_keys():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "blocks.0.weight", "blocks.0.bias",
                     "blocks.3.weight", "blocks.3.bias"]
    assert list(net.state_dict()) == names[:1] + ["running"] + names[1:]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    assert isinstance(net.fc1, nn.Linear) and net.note == "not a parameter"
    assert [type(m).__name__ for m in net.blocks] == ["Linear", "GELU", "Dropout", "Linear"]
    assert len(list(net.modules())) == 8
    assert "Linear(in_features=4, out_features=8, bias=True)" in repr(net)
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'scale'"):
        net.scale = ofl.ones(1)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        net.nope


def test_linear_initialisation_is_pytorchs_bounds_and_reproducible():
    ofl.manual_seed(0)
    a = nn.Linear(100, 50)
    w, b = a.weight.numpy(), a.bias.numpy()
    assert w.shape == (50, 100) and b.shape == (50,)
    assert np.abs(w).max() <= 0.1 and np.abs(b).max() <= 0.1
    assert abs(w.std() - 0.1 / math.sqrt(3)) < 0.005
    ofl.manual_seed(0)
    np.testing.assert_array_equal(nn.Linear(100, 50).weight.numpy(), w)
    x = ofl.tensor(np.ones((2, 100), dtype=np.float32))
    np.testing.assert_allclose(a(x).numpy(), np.ones((2, 100)) @ w.T + b, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_train_eval_dropout_and_gradients(device):
    ofl.manual_seed(1)
    net = Net().to(device)
    assert all(p.device == device for p in net.parameters())
    x = ofl.randn(16, 4, device=device)
    net.eval()
    assert not net.blocks[2].training
    np.testing.assert_array_equal(net(x).numpy(), net(x).numpy())  # no dropout in eval
    net.train()
    assert net.blocks[2].training
    net(x).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net(x).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in net.parameters())


def test_to_dtype_and_load_state_dict():
    net = Net().double()
    assert all(p.dtype is ofl.float64 for p in net.parameters())
    other = Net().double()
    other.load_state_dict(net.state_dict())
    for (n, p), (_, q) in zip(net.named_parameters(), other.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=n)
    sd = net.state_dict()
    del sd["fc1.bias"]
    sd["extra"] = ofl.ones(1)
    with pytest.raises(RuntimeError, match=r'(?s)Unexpected key\(s\) in state_dict: "extra".*Missing key\(s\) in state_dict: "fc1.bias"'):
        other.load_state_dict(sd)
    res = other.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias"] and res.unexpected_keys == ["extra"]
    bad = net.state_dict()
    bad["fc1.weight"] = ofl.ones(2, 2)
    with pytest.raises(RuntimeError, match=r"size mismatch for fc1.weight"):
        other.load_state_dict(bad)


def test_losses_match_numpy():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((5, 4))
    y = np.array([0, 3, 1, 1, 2])
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    ce = nn.CrossEntropyLoss()(ofl.tensor(z), ofl.tensor(y))
    assert abs(ce.item() + logp[np.arange(5), y].mean()) < 1e-12
    nll = nn.NLLLoss(reduction="sum")(ofl.tensor(logp), ofl.tensor(y))
    assert abs(nll.item() + logp[np.arange(5), y].sum()) < 1e-12
    mse = nn.MSELoss()(ofl.tensor(z), ofl.zeros(5, 4, dtype=ofl.float64))
    assert abs(mse.item() - (z**2).mean()) < 1e-12
    np.testing.assert_allclose(nn.functional.softmax(ofl.tensor(z), 1).numpy(), np.exp(logp))


@pytest.mark.parametrize("device", DEVICES)
def test_optimizers_reduce_a_loss(device):
    for make in (
        lambda ps: ofl.optim.SGD(ps, lr=0.1, momentum=0.9),
        lambda ps: ofl.optim.Adam(ps, lr=0.05),
        lambda ps: ofl.optim.AdamW(ps, lr=0.05, amsgrad=True),
    ):
        ofl.manual_seed(3)
        model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
        opt = make(model.parameters())
        x = ofl.randn(64, 3, device=device)
        y = (x * ofl.tensor([1.0, -2.0, 0.5], device=device)).sum(1, keepdim=True)
        first = None
        for _ in range(60):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            first = first if first is not None else loss.item()
        assert loss.item() < 0.2 * first, type(opt).__name__


def test_optimizer_state_dict_and_errors():
    p = nn.Parameter(ofl.ones(3))
    opt = ofl.optim.Adam([p], lr=0.1)
    p.grad = ofl.ones(3)
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0] and sd["state"][0]["step"] == 1
    q = nn.Parameter(ofl.ones(3))
    opt2 = ofl.optim.Adam([q], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.state[q]["step"] == 1
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        ofl.optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="empty parameter list"):
        ofl.optim.Adam([])
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum"):
        ofl.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        ofl.optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        ofl.optim.SGD([p * 2], lr=0.1)


def test_save_and_load_round_trip(tmp_path):
    net = Net()
    path = tmp_path / "net.npz"
    ofl.save(net.state_dict(), path)
    back = ofl.load(path)
    assert isinstance(back, collections.OrderedDict) and list(back) == list(net.state_dict())
    fresh = Net()
    fresh.load_state_dict(back)
    for (n, p), q in zip(net.state_dict().items(), fresh.state_dict().values()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=n)
    with np.load(path) as z:  # numpy reads it without pickle
        assert z["fc1.weight"].shape == (8, 4)
    t = ofl.tensor([1.5, -2.0], dtype=ofl.bfloat16)
    ofl.save(t, tmp_path / "t.npz")
    u = ofl.load(tmp_path / "t.npz", map_location="sim:0")
    assert u.dtype is ofl.bfloat16 and u.device == "sim:0" and u.float().tolist() == [1.5, -2.0]
    with pytest.raises(TypeError, match=r"save\(\): obj must be a Tensor or a dict"):
        ofl.save([t], tmp_path / "x.npz")
    np.savez(tmp_path / "plain.npz", a=np.ones(2))
    with pytest.raises(ValueError, match="is not a file ofl.save wrote"):
        ofl.load(tmp_path / "plain.npz")


def test_parameter_copies_and_pickles():
    p = nn.Parameter(ofl.tensor([1.0, 2.0]))
    assert "Parameter containing" in repr(p)
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.tolist() == [1.0, 2.0] and q.requires_grad
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.tolist() == [1.0, 2.0]
    assert not isinstance(p * 2, nn.Parameter)
    with pytest.raises(TypeError, match=r"Parameter\(\): argument 'data' must be a Tensor"):
        nn.Parameter([1.0])
    with pytest.raises(TypeError, match=r"_make_subclass\(\): argument 'cls' must be a subclass of Tensor"):
        ofl._C._make_subclass(int, ofl.ones(1))
