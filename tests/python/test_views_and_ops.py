"""Tensor methods against numpy on every device: geometry, expand/repeat/reshape/view/permute/
transpose/narrow/contiguous/clone/to, indexing, arithmetic with tensors and numbers, in-place
ops, sum, and the module functions; plus the cases of OneFlow's own expand and repeat tests."""

import numpy as np
import pytest

import oneflow_lite as ofl


def arange(shape, device, dtype=np.float32):
    a = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return a, ofl.tensor(a, device=device)


def test_geometry(device):
    a, t = arange((2, 3, 4), device)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
    assert t.stride() == (12, 4, 1) and t.storage_offset() == 0
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.is_contiguous()
    p = t.permute(2, 0, 1)
    assert p.stride() == (1, 12, 4) and not p.is_contiguous()
    n = t.narrow(2, 1, 2)
    assert n.storage_offset() == 1


def test_expand_cases_of_oneflow(device):
    a, t = arange((1, 4, 1, 32), device)
    np.testing.assert_array_equal(t.expand(2, 1, 2, 4, 2, 32).numpy(), np.broadcast_to(a, (2, 1, 2, 4, 2, 32)))
    for dt in (np.float32, np.int32):
        a, t = arange((2, 4, 1, 32), device, dt)
        e = t.expand(2, 4, 2, 32)
        assert e.stride()[2] == 0
        np.testing.assert_array_equal(e.numpy(), np.broadcast_to(a, (2, 4, 2, 32)))
    a, t = arange((1, 6, 5, 3), device)
    np.testing.assert_array_equal(t.expand(4, -1, 5, 3).numpy(), np.broadcast_to(a, (4, 6, 5, 3)))
    np.testing.assert_array_equal(ofl.expand(t, (4, 6, 5, 3)).numpy(), np.broadcast_to(a, (4, 6, 5, 3)))
    other = ofl.zeros(4, 6, 5, 3)
    assert t.expand_as(other).shape == (4, 6, 5, 3)


def test_repeat_cases(device):
    a, t = arange((1, 4, 1, 3), device)
    np.testing.assert_array_equal(t.repeat(2, 1, 2, 1).numpy(), np.tile(a, (2, 1, 2, 1)))
    np.testing.assert_array_equal(t.repeat(2, 2, 1, 1, 2).numpy(), np.tile(a, (2, 2, 1, 1, 2)))
    for dt in (np.float64, np.int32, np.int8):
        a, t = arange((2, 3), device, dt)
        np.testing.assert_array_equal(ofl.repeat(t, 3, 2).numpy(), np.tile(a, (3, 2)))
    a, t = arange((0, 3), device)
    assert t.repeat(2, 2).shape == (0, 6)


def test_reshape_view_permute_transpose(device):
    a, t = arange((2, 3, 4), device)
    np.testing.assert_array_equal(t.reshape(4, -1).numpy(), a.reshape(4, -1))
    np.testing.assert_array_equal(ofl.reshape(t, (6, 4)).numpy(), a.reshape(6, 4))
    np.testing.assert_array_equal(t.view(3, 8).numpy(), a.reshape(3, 8))
    p = t.permute(2, 0, 1)
    np.testing.assert_array_equal(p.numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(ofl.permute(t, (1, 0, 2)).numpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(t.transpose(0, 2).numpy(), a.swapaxes(0, 2))
    np.testing.assert_array_equal(t.transpose(-1, 1).numpy(), a.swapaxes(-1, 1))
    np.testing.assert_array_equal(p.reshape(-1).numpy(), a.transpose(2, 0, 1).reshape(-1))
    with pytest.raises(ofl.InvalidArgument, match="view.*reshape"):
        p.view(24)


def test_narrow_contiguous_clone(device):
    a, t = arange((4, 5), device)
    n = t.narrow(1, 1, 3)
    np.testing.assert_array_equal(n.numpy(), a[:, 1:4])
    c = n.contiguous()
    assert c.is_contiguous() and c.stride() == (3, 1)
    assert t.contiguous() is not None
    k = t.clone()
    t.fill_(0)
    np.testing.assert_array_equal(k.numpy(), a)


def test_indexing(device):
    a, t = arange((3, 4, 5), device)
    for index in [1, -1, (0, 2), (slice(None), 1), slice(1, 3), (2, slice(1, None), 3), (slice(-2, None), -3, slice(0, 5))]:
        np.testing.assert_array_equal(t[index].numpy(), a[index])
    assert t[1, 2, 3].item() == a[1, 2, 3]
    assert t[5:].shape == (0, 4, 5)
    rows = [r.tolist() for r in t[0]]
    assert rows == a[0].tolist()
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        t[3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step"):
        t[::2]
    with pytest.raises(TypeError, match="str"):
        t["a"]
    # The dimension named is the tensor's, not the view's after the ints before it.
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 2 with size 5"):
        t[0, 1, 9]
    with pytest.raises(IndexError, match="index -5 is out of bounds for dimension 1 with size 4"):
        t[1:, -5]


def test_setitem_writes_the_view_once(device):
    a, t = arange((3, 4), device)
    t[0] = 7.0
    a[0] = 7.0
    t[1, 1:3] = ofl.tensor([-1.0, -2.0], device=device)
    a[1, 1:3] = [-1.0, -2.0]
    t[2] = ofl.tensor([5.0], device="cpu")  # broadcast, from another device
    a[2] = 5.0
    t[0, :2] = np.array([8, 9])
    a[0, :2] = [8, 9]
    np.testing.assert_array_equal(t.numpy(), a)
    v = t._version()
    t[1] += 1  # a view's in-place add, then the view assigned to itself: one write
    a[1] += 1
    np.testing.assert_array_equal(t.numpy(), a)
    assert t._version() == v + 1
    t[2, 1:] *= 2
    a[2, 1:] *= 2
    t[0, 3] -= 10
    a[0, 3] -= 10
    np.testing.assert_array_equal(t.numpy(), a)
    t[0] = t[1]  # another view of the same storage is copied
    a[0] = a[1]
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(TypeError, match="__setitem__"):
        t[0] = "x"
    with pytest.raises(IndexError, match="dimension 0"):
        t[5] = 1.0


def test_arithmetic(device, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32) + 3
    x, y = ofl.tensor(a, device=device), ofl.tensor(b, device=device)
    cases = [
        (x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
        (x + 2, a + 2), (2 + x, 2 + a), (x - 1.5, a - 1.5), (1.5 - x, 1.5 - a),
        (x * 3, a * 3), (3 * x, 3 * a), (x / 4, a / 4), (4 / y, 4 / b), (-x, -a),
        (ofl.add(x, y), a + b), (ofl.sub(x, 1), a - 1), (ofl.mul(x, y), a * b), (ofl.div(x, y), a / b),
        (x + np.float32(2), a + 2),
    ]
    for got, want in cases:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    i = ofl.tensor([1, 2, 3], dtype=ofl.int32, device=device)
    assert (i + 1).tolist() == [2, 3, 4] and (i + 1).dtype is ofl.int32
    with pytest.raises(TypeError):
        x + "a"


def test_in_place(device):
    a, t = arange((2, 3), device)
    v0 = t._version()
    t += 1
    t -= ofl.ones(3, device=device)
    t *= 2
    t *= ofl.full((3,), 0.5, device=device)
    np.testing.assert_array_equal(t.numpy(), a)
    assert t._version() > v0
    assert t.add_(1) is t and t.add_(ofl.ones(2, 3, device=device)) is t
    np.testing.assert_array_equal(t.numpy(), a + 2)
    assert t.fill_(7) is t and t.tolist() == [[7.0] * 3] * 2
    assert t.zero_() is t and t.tolist() == [[0.0] * 3] * 2
    src = ofl.tensor(a.T.copy()).permute(1, 0)  # a strided source on the cpu
    assert t.copy_(src) is t
    np.testing.assert_array_equal(t.numpy(), a)
    t.copy_(ofl.tensor([1.0, 2.0, 3.0]))  # broadcast
    assert t.tolist() == [[1.0, 2.0, 3.0]] * 2


def test_sum(device, rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float64)
    t = ofl.tensor(a, device=device)
    np.testing.assert_allclose(t.sum().item(), a.sum())
    assert t.sum().shape == ()
    np.testing.assert_allclose(t.sum(1).numpy(), a.sum(1))
    np.testing.assert_allclose(t.sum(dim=(0, 2)).numpy(), a.sum((0, 2)))
    np.testing.assert_allclose(t.sum(-1, keepdim=True).numpy(), a.sum(-1, keepdims=True))
    np.testing.assert_allclose(ofl.sum(t, dim=[0]).numpy(), a.sum(0))
    assert t.sum(keepdim=True).shape == (1, 1, 1)


def test_to_and_cpu(device):
    a, t = arange((2, 3), "cpu")
    d = t.to(device)
    assert d.device == device
    assert d.cpu().device == "cpu"
    np.testing.assert_array_equal(d.cpu().numpy(), a)
    assert t.to(ofl.device("cpu")) is not None


def test_conversions(device):
    t = ofl.tensor([[1.5, 2.0]], device=device)
    assert t.tolist() == [[1.5, 2.0]]
    np.testing.assert_array_equal(np.asarray(t), np.array([[1.5, 2.0]], np.float32))
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert float(ofl.tensor(2.5)) == 2.5 and int(ofl.tensor(3)) == 3
    assert bool(ofl.tensor([True]))
    with pytest.raises(ofl.InvalidArgument, match="2 elements"):
        t.item()
    with pytest.raises(TypeError, match="0-d"):
        len(ofl.tensor(1.0))


def test_repr(device):
    t = ofl.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    r = repr(t)
    assert r.startswith("tensor([[1., 2.],\n        [3., 4.]]")
    assert ("device='sim:0'" in r) == (device == "sim:0")
    assert "dtype" not in r
    assert "dtype=oneflow_lite.int32" in repr(ofl.tensor([1], dtype=ofl.int32))
    assert "requires_grad=True" in repr(ofl.tensor([1.0], requires_grad=True))
    assert "grad_fn=<MulBackward>" in repr(ofl.tensor([1.0], requires_grad=True) * 2)
