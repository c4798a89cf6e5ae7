"""The pointwise ops from Python, against numpy: comparisons (functions, methods, the operators with
a number on either side) giving bool tensors compared in the promoted type, maximum/minimum,
where (numbers, broadcasting, gradients), clamp/clip with optional and tensor bounds, the logical
and bitwise ops and & | ^ ~, numpy arrays on the left of an operator, identity hashing kept, and the
errors."""

import operator

import numpy as np
import pytest

import oneflow_lite as ofl

from conftest import DEVICES

A = np.array([[1.0, 2.0, 3.0], [4.0, np.nan, 6.0]])
B = np.array([2.0, 2.0, 7.0])

COMPARISONS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_match_numpy(name, device):
    op = COMPARISONS[name]
    a = ofl.tensor(A, device=device)
    b = ofl.tensor(B, device=device)
    for got in (op(a, b), getattr(ofl, name)(a, b), getattr(a, name)(b)):
        assert got.dtype is ofl.bool
        assert got.shape == (2, 3)
        np.testing.assert_array_equal(got.numpy(), op(A, B))
    # A number on either side, and as the method's argument.
    np.testing.assert_array_equal(op(a, 2).numpy(), op(A, 2))
    np.testing.assert_array_equal(op(2, a).numpy(), op(2, A))
    np.testing.assert_array_equal(getattr(a, name)(2.5).numpy(), op(A, 2.5))


@pytest.mark.parametrize("device", DEVICES)
def test_comparisons_promote(device):
    i = ofl.tensor([1, 2, 3], dtype=ofl.int32, device=device)
    assert (i < 2.5).tolist() == [True, True, False]
    assert (i == ofl.tensor([1.0, 2.5, 3.0], device=device)).tolist() == [True, False, True]
    assert (ofl.tensor([True, False], device=device) == ofl.tensor([1, 0], device=device)).tolist() == [
        True,
        True,
    ]
    with pytest.raises(ofl.InvalidArgument, match="eq: value 300 cannot be converted to type uint8"):
        ofl.tensor([1], dtype=ofl.uint8, device=device) == 300


def test_numpy_on_the_left_and_hashing():
    t = ofl.tensor([1.0, 5.0])
    got = np.array([2.0, 2.0]) < t
    assert isinstance(got, ofl.Tensor)
    assert got.tolist() == [False, True]
    # == is elementwise, and tensors still hash by identity (dict keys, sets), as torch's.
    d = {t: "t"}
    assert d[t] == "t"
    assert len({t, ofl.tensor([1.0, 5.0])}) == 2
    assert (t == t).tolist() == [True, True]


@pytest.mark.parametrize("device", DEVICES)
def test_maximum_minimum(device):
    a = ofl.tensor(A, device=device)
    b = ofl.tensor(B, device=device)
    np.testing.assert_array_equal(ofl.maximum(a, b).numpy(), np.maximum(A, B))
    np.testing.assert_array_equal(a.minimum(b).numpy(), np.minimum(A, B))
    m = ofl.maximum(ofl.tensor([1, 5], dtype=ofl.int32, device=device), ofl.tensor([2.5, 2.5], device=device))
    assert m.dtype is ofl.float32
    assert m.tolist() == [2.5, 5.0]
    x = ofl.tensor([1.0, 2.0, 3.0], dtype=ofl.float64, device=device, requires_grad=True)
    ofl.maximum(x, ofl.tensor([2.0], dtype=ofl.float64, device=device)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.5, 1.0]


@pytest.mark.parametrize("device", DEVICES)
def test_where(device):
    c = ofl.tensor([True, False, True], device=device)
    x = ofl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ofl.float64, device=device, requires_grad=True)
    y = ofl.tensor([-1.0], dtype=ofl.float64, device=device, requires_grad=True)
    w = ofl.where(c, x, y)
    np.testing.assert_array_equal(w.numpy(), np.where([True, False, True], x.numpy(), -1.0))
    w.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
    assert y.grad.tolist() == [2.0]
    # Numbers, keyword names, promotion.
    assert ofl.where(c, input=x.detach(), other=0.0).tolist() == [[1.0, 0.0, 3.0], [4.0, 0.0, 6.0]]
    wi = ofl.where(condition=c, input=ofl.tensor([1, 2, 3], dtype=ofl.int32, device=device), other=0.5)
    assert wi.dtype is ofl.float32
    assert wi.tolist() == [1.0, 0.5, 3.0]
    t = ofl.tensor([-2.0, 3.0], device=device)
    assert ofl.where(t > 0, t, 0.0).tolist() == [0.0, 3.0]
    with pytest.raises(ofl.InvalidArgument, match="where: the condition's dtype is float32; expected bool"):
        ofl.where(t, t, t)


@pytest.mark.parametrize("device", DEVICES)
def test_clamp(device):
    xs = np.array([-2.0, -0.5, 0.5, 2.0])
    x = ofl.tensor(xs, device=device)
    np.testing.assert_array_equal(x.clamp(-1, 1).numpy(), np.clip(xs, -1, 1))
    np.testing.assert_array_equal(ofl.clamp(x, min=0).numpy(), np.maximum(xs, 0))
    np.testing.assert_array_equal(x.clamp(max=0).numpy(), np.minimum(xs, 0))
    np.testing.assert_array_equal(ofl.clip(x, -1, 1).numpy(), np.clip(xs, -1, 1))
    np.testing.assert_array_equal(x.clamp_min(0.0).numpy(), np.maximum(xs, 0))
    i = ofl.tensor([-5, 0, 5], device=device)
    assert i.clamp(-2, 3).dtype is ofl.int64
    assert i.clamp(-2, 3).tolist() == [-2, 0, 3]
    assert i.clamp(max=2.5).dtype is ofl.float32
    # Tensor bounds: maximum/minimum, broadcast.
    lo = ofl.tensor([0.0, 1.0, 0.0, 0.0], device=device)
    assert x.clamp(min=lo, max=1.5).tolist() == [0.0, 1.0, 0.5, 1.5]
    g = ofl.tensor([-2.0, -1.0, 0.0, 1.0, 2.0], dtype=ofl.float64, device=device, requires_grad=True)
    g.clamp(-1, 1).sum().backward()
    assert g.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    with pytest.raises(TypeError, match="at least one of 'min' and 'max'"):
        x.clamp()
    with pytest.raises(ofl.InvalidArgument, match="clamp: dtype bool is not supported"):
        ofl.tensor([True], device=device).clamp(0, 1)
    with pytest.raises(TypeError, match="clamp_min\\(\\): argument 'min' must be a number, not str"):
        x.clamp(min="a")


@pytest.mark.parametrize("device", DEVICES)
def test_logical_and_bitwise(device):
    p = ofl.tensor([True, True, False, False], device=device)
    q = ofl.tensor([True, False, True, False], device=device)
    pn, qn = p.numpy(), q.numpy()
    np.testing.assert_array_equal((p & q).numpy(), pn & qn)
    np.testing.assert_array_equal((p | q).numpy(), pn | qn)
    np.testing.assert_array_equal((p ^ q).numpy(), pn ^ qn)
    np.testing.assert_array_equal((~p).numpy(), ~pn)
    i = ofl.tensor([12, -1, 0, 5], dtype=ofl.int32, device=device)
    j = ofl.tensor([10, 7, 3, 5], dtype=ofl.int32, device=device)
    inp, jn = i.numpy(), j.numpy()
    np.testing.assert_array_equal((i & j).numpy(), inp & jn)
    np.testing.assert_array_equal(ofl.bitwise_or(i, j).numpy(), inp | jn)
    np.testing.assert_array_equal(i.bitwise_xor(j).numpy(), inp ^ jn)
    np.testing.assert_array_equal((~i).numpy(), ~inp)
    np.testing.assert_array_equal((i & 6).numpy(), inp & 6)
    f = ofl.tensor([0.0, float("nan"), 2.0, 0.0], device=device)
    assert ofl.logical_and(f, i).tolist() == [False, True, False, False]
    assert f.logical_or(q).tolist() == [True, True, True, False]
    assert ofl.logical_xor(f, q).tolist() == [True, True, False, False]
    assert ofl.logical_not(f).tolist() == [True, False, False, True]
    with pytest.raises(ofl.InvalidArgument, match="bitwise_and: dtype float32 is not supported"):
        f & f
    with pytest.raises(TypeError):
        p & "x"
