"""Global tensors from Python, under 1 rank (the plain pytest run) and under mpiexec with 2 and
4 ranks (tools/ofl.sh): every boxing pair between split(0), split(1), broadcast and partial_sum on
cpu and sim placements, to_local, the placement and sbp objects, elementwise ops, reductions and
backward on global tensors, with the C++ messages on every rank alike."""

import os

import numpy as np
import pytest

import oneflow_lite as ofl

ofl.init_distributed()
N = ofl.world_size()
R = ofl.rank()
PLACEMENT = ofl.placement("cpu", ranks=list(range(N)))
SIM_PLACEMENT = ofl.placement("sim", ranks=list(range(N)))
# A sim placement's shards live on the sim device of each rank's node-local rank.
LOCAL_RANK = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", R))
MY_SIM = ofl.device("sim", LOCAL_RANK % ofl.device_count("sim"))
SBPS = [ofl.sbp.split(0), ofl.sbp.split(1), ofl.sbp.broadcast, ofl.sbp.partial_sum]


def logical():
    return np.arange(4 * N * 3, dtype=np.float32).reshape(4 * N, 3) + 1


def make_global(sbp, placement=PLACEMENT):
    """A global tensor of logical() laid out as `sbp`: built from broadcast, so every rank holds
    the same values before the layout."""
    device = MY_SIM if placement == SIM_PLACEMENT else "cpu"
    return ofl.tensor(logical(), device=device).to_global(
        placement=placement, sbp=ofl.sbp.broadcast
    ).to_global(placement=placement, sbp=sbp)


def test_rank_and_world():
    assert 0 <= R < N


def test_placement_and_sbp_objects():
    assert PLACEMENT.type == "cpu" and PLACEMENT.ranks == list(range(N))
    assert PLACEMENT == ofl.placement("cpu", ranks=list(range(N)))
    assert repr(ofl.sbp.split(1)) == "oneflow_lite.sbp.split(dim=1)"
    assert ofl.sbp.split(0) == ofl.sbp.split(0) and ofl.sbp.split(0) != ofl.sbp.broadcast
    assert repr(ofl.sbp.broadcast) == "oneflow_lite.sbp.broadcast"


@pytest.mark.parametrize("placement", [PLACEMENT, SIM_PLACEMENT], ids=["cpu", "sim"])
@pytest.mark.parametrize("src", SBPS, ids=repr)
@pytest.mark.parametrize("dst", SBPS, ids=repr)
def test_boxing_pairs(src, dst, placement):
    t = make_global(src, placement)
    assert t.is_global and t.sbp == (src,) and t.placement == placement
    assert t.shape == (4 * N, 3)
    u = t.to_global(placement=placement, sbp=dst)
    assert u.sbp == (dst,)
    np.testing.assert_array_equal(u.numpy(), logical())
    local = u.to_local()
    assert not local.is_global
    assert local.device == (MY_SIM if placement == SIM_PLACEMENT else ofl.device("cpu"))
    if dst == ofl.sbp.split(0):
        np.testing.assert_array_equal(local.numpy(), logical()[4 * R : 4 * R + 4])
    elif dst == ofl.sbp.broadcast:
        np.testing.assert_array_equal(local.numpy(), logical())


def test_ops_on_global_tensors():
    t = make_global(ofl.sbp.split(0))
    e = t.reshape(2 * N, 6).expand(2, 2 * N, 6)
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(logical().reshape(2 * N, 6), (2, 2 * N, 6)))
    r = t.repeat(1, 2)
    np.testing.assert_array_equal(r.numpy(), np.tile(logical(), (1, 2)))
    c = t.clone()  # every SBP passes: each rank copies its shard
    assert c.sbp == (ofl.sbp.split(0),)
    np.testing.assert_array_equal(c.to_local().numpy(), t.to_local().numpy())


def test_an_op_on_a_global_tensor_gives_the_gil_up_for_the_call():
    # The GIL rule (python/src/bindings.h): a global op may exchange with the other ranks on this
    # thread, so it releases the GIL once; the same op on a local tensor keeps it.
    from oneflow_lite import _C

    g = make_global(ofl.sbp.split(0))
    local = ofl.tensor(logical())
    for name, call in {
        "reshape": lambda t: t.reshape(2 * N, 6),
        "repeat": lambda t: t.repeat(1, 2),
        "clone": lambda t: t.clone(),
        "expand": lambda t: t.reshape(1, 4 * N, 3).expand(2, 4 * N, 3),
    }.items():
        before = _C._gil_releases()
        call(local)
        assert _C._gil_releases() == before, f"{name} on a local tensor gave the GIL up"
        call(g)
        assert _C._gil_releases() > before, f"{name} on a global tensor kept the GIL"


@pytest.mark.parametrize("placement", [PLACEMENT, SIM_PLACEMENT], ids=["cpu", "sim"])
@pytest.mark.parametrize("sbp", SBPS, ids=repr)
def test_elementwise_ops_and_casts_on_global_tensors_give_the_logical_value(sbp, placement):
    # Each rank computes its shard under the op's SBP signature (ops/sbp_rules.h); the logical
    # value is numpy's on the whole tensor.
    g = make_global(sbp, placement)
    s0 = make_global(ofl.sbp.split(0), placement)
    device = MY_SIM if placement == SIM_PLACEMENT else "cpu"
    bias = ofl.ones(3, device=device).to_global(placement=placement, sbp=ofl.sbp.broadcast)
    x = logical()
    for call, want in (
        (ofl.exp, np.exp(x)),
        (lambda t: ofl.relu(t - 5) + 5, np.maximum(x - 5, 0) + 5),
        (lambda t: t.double(), x.astype(np.float64)),
        (lambda t: t > 6, x > 6),
        (lambda t: ofl.maximum(t, s0 * 0.5), np.maximum(x, x * 0.5)),
        (lambda t: t.clamp(2, 5), np.clip(x, 2, 5)),
        (lambda t: t.clamp(max=4), np.minimum(x, 4)),
        (lambda t: 2 * t - t / 4 + 1, 2 * x - x / 4 + 1),
        (lambda t: t * s0, x * x),
        (lambda t: t + bias, x + 1),
    ):
        got = call(g)
        assert got.is_global and got.placement == placement
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("sbp", SBPS, ids=repr)
def test_reductions_and_softmax_on_global_tensors_give_the_logical_value(sbp):
    g = make_global(sbp)
    x = logical()
    for call, want in (
        (lambda t: t.sum(), x.sum()),
        (lambda t: t.sum(0), x.sum(0)),
        (lambda t: t.mean(1, keepdim=True), x.mean(1, keepdims=True)),
        (lambda t: ofl.amax(t, 0), x.max(0)),
        (lambda t: ofl.softmax(t * 0.1, 1), np.exp(x * 0.1) / np.exp(x * 0.1).sum(1, keepdims=True)),
    ):
        got = call(g)
        assert got.is_global
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_elementwise_ops_refuse_local_and_global_inputs_together_on_every_rank():
    g = make_global(ofl.sbp.split(0))
    with pytest.raises(ofl.InvalidArgument, match=r"add: input 1 is a local tensor but input 0 is global"):
        g + ofl.tensor(logical())
    # The ranks are still in step.
    np.testing.assert_array_equal((g + g).numpy(), 2 * logical())


@pytest.mark.parametrize("sbp", SBPS, ids=repr)
def test_backward_through_global_ops_gives_the_local_gradient(sbp):
    # A data-parallel step's pieces: a batch split, a broadcast weight whose gradient the SBP rules
    # reduce across the ranks; the leaf's gradient keeps its SBP (a partial_sum leaf's: broadcast).
    x = make_global(sbp).requires_grad_()
    w = ofl.tensor(np.arange(6, dtype=np.float32).reshape(3, 2) / 10).to_global(
        placement=PLACEMENT, sbp=ofl.sbp.broadcast).requires_grad_()
    y = (x @ w).tanh()
    (y * y).mean().backward()
    assert x.grad.is_global and w.grad.is_global
    assert w.grad.sbp == (ofl.sbp.broadcast,)
    assert x.grad.sbp == ((ofl.sbp.broadcast,) if sbp == ofl.sbp.partial_sum else (sbp,))
    lx = ofl.tensor(logical(), requires_grad=True)
    lw = ofl.tensor(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, requires_grad=True)
    ly = (lx @ lw).tanh()
    (ly * ly).mean().backward()
    np.testing.assert_allclose(x.grad.numpy(), lx.grad.numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(w.grad.numpy(), lw.grad.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("parallel", ["data", "tensor"])
def test_training_on_global_tensors_gives_the_one_process_losses(parallel):
    # A 3-6-2 MLP, cross-entropy and Adam, data parallel (parameters broadcast, the batch split)
    # or tensor parallel (the first Linear split on its outputs, the second on its inputs).
    from oneflow_lite import nn

    def make():
        ofl.manual_seed(5 + R)  # each rank its own initialisation: to_global takes rank 0's
        return nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2)).double()

    x = np.sin(np.arange(4 * N * 3, dtype=np.float64)).reshape(4 * N, 3)
    t = np.arange(4 * N, dtype=np.int64) % 2

    def train(model, xs, ts):
        opt = ofl.optim.Adam(model.parameters(), lr=0.05)
        losses = []
        for _ in range(6):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xs), ts)
            loss.backward()
            opt.step()
            losses.append(float(loss.to_global(placement=PLACEMENT, sbp=ofl.sbp.broadcast).numpy())
                          if loss.is_global else float(loss))
        return losses

    model = make()
    if parallel == "data":
        model.to_global(PLACEMENT, ofl.sbp.broadcast)
        split = ofl.sbp.split(0)
    else:
        model.to_global(PLACEMENT, lambda name, p: ofl.sbp.split(0) if name.startswith("0.")
                        else ofl.sbp.split(1) if name == "2.weight" else ofl.sbp.broadcast)
        split = ofl.sbp.broadcast
    state = {k: v.to_global(placement=PLACEMENT, sbp=ofl.sbp.broadcast).to_local().numpy()
             for k, v in model.state_dict().items()}
    gx = ofl.tensor(x).to_global(placement=PLACEMENT, sbp=ofl.sbp.broadcast).to_global(
        placement=PLACEMENT, sbp=split)
    gt = ofl.tensor(t).to_global(placement=PLACEMENT, sbp=ofl.sbp.broadcast).to_global(
        placement=PLACEMENT, sbp=split)
    global_losses = train(model, gx, gt)
    local = make()
    local.load_state_dict({k: ofl.tensor(v) for k, v in state.items()})
    local_losses = train(local, ofl.tensor(x), ofl.tensor(t))
    np.testing.assert_allclose(global_losses, local_losses, rtol=1e-6)


@pytest.mark.parametrize("sbp", SBPS, ids=repr)
def test_creation_functions_take_a_placement_and_an_sbp(sbp):
    # As OneFlow's: a global tensor of that logical size; random numbers equal the local draws of
    # the same seed whatever the layout (a partial_sum draw is refused).
    for make, want in ((ofl.zeros, 0.0), (ofl.ones, 1.0), (lambda *s, **k: ofl.full(s, 2.5, **k), 2.5)):
        t = make(4, 3, placement=PLACEMENT, sbp=sbp)
        assert t.is_global and t.sbp == (sbp,) and t.shape == (4, 3)
        np.testing.assert_array_equal(t.numpy(), np.full((4, 3), want, dtype=np.float32))
    assert ofl.empty(4, 3, placement=PLACEMENT, sbp=sbp).shape == (4, 3)
    if sbp == ofl.sbp.partial_sum:
        with pytest.raises(ofl.InvalidArgument, match="randn: sbp P"):
            ofl.randn(4, 3, placement=PLACEMENT, sbp=sbp)
        return
    ofl.manual_seed(9)
    want = ofl.randn(4, 3).numpy()
    ofl.manual_seed(9)
    np.testing.assert_array_equal(ofl.randn(4, 3, placement=PLACEMENT, sbp=sbp).numpy(), want)
    with pytest.raises(TypeError, match="placement and sbp are given together"):
        ofl.rand(2, placement=PLACEMENT)
    with pytest.raises(TypeError, match="device cannot be given with placement"):
        ofl.zeros(2, device="cpu", placement=PLACEMENT, sbp=sbp)


def test_gradients_that_would_put_the_ranks_out_of_step_are_refused_on_every_rank():
    x = ofl.tensor([1.0, 2.0], requires_grad=(R == 0))
    if N > 1:
        with pytest.raises(ofl.InvalidArgument, match="require grad on rank"):
            x.to_global(placement=PLACEMENT, sbp=ofl.sbp.broadcast)
    # The ranks are still in step: a collective after the errors completes.
    np.testing.assert_array_equal(make_global(ofl.sbp.split(0)).numpy(), logical())


def test_bad_sbp_types():
    with pytest.raises(TypeError, match="sbp"):
        ofl.ones(2).to_global(placement=PLACEMENT, sbp="B")
    with pytest.raises(TypeError, match="ranks"):
        ofl.placement("cpu", ranks=0)


def test_a_sim_placement_needs_each_ranks_own_sim_device():
    other = ofl.device("sim", (MY_SIM.index + 1) % ofl.device_count("sim"))
    if other == MY_SIM:
        pytest.skip("one sim device")
    with pytest.raises(ofl.InvalidArgument, match="needs this rank's tensors on sim:"):
        ofl.tensor([1.0], device=other).to_global(placement=SIM_PLACEMENT, sbp=ofl.sbp.broadcast)
    np.testing.assert_array_equal(make_global(ofl.sbp.split(0), SIM_PLACEMENT).numpy(), logical())


@pytest.mark.parametrize("placement", [PLACEMENT, SIM_PLACEMENT], ids=["cpu", "sim"])
def test_printing_a_global_tensor_on_one_rank_runs_no_collective(placement):
    t = make_global(ofl.sbp.split(0), placement)
    if R == 0:  # the others go on to the next collective at once
        r = repr(t)
        local = np.array2string(logical()[:4], separator=", ", prefix="tensor(local=")
        assert r.startswith("tensor(local=" + local + f", size=({4 * N}, 3), ")
        assert repr(placement) in r and "sbp=(oneflow_lite.sbp.split(dim=0),)" in r
        assert str(t) == r
    # Were the repr a collective, rank 0's would pair with the other ranks' to_global here.
    u = make_global(ofl.sbp.broadcast, placement).to_global(placement=placement, sbp=ofl.sbp.split(1))
    np.testing.assert_array_equal(u.numpy(), logical())
    np.testing.assert_array_equal(t.numpy(), logical())
