"""numpy operands of Tensor arithmetic: numpy scalars and arrays on either side give a Tensor that
autograd records (the Tensor wins numpy's operators through __array_ufunc__, as torch.Tensor
does); a numpy operand takes the tensor's dtype, as a Python number does. Other ufuncs and numpy's
own in-place operators work on a copy of the values."""

import numpy as np
import pytest

import oneflow_lite as ofl


@pytest.mark.parametrize(
    "expr, expected",
    [
        (lambda t: np.float64(0.5) * t, [0.5, 1.0, 1.5]),
        (lambda t: np.float32(1) + t, [2.0, 3.0, 4.0]),
        (lambda t: np.int64(6) / t, [6.0, 3.0, 2.0]),
        (lambda t: np.float64(1) - t, [0.0, -1.0, -2.0]),
        (lambda t: t + np.ones(3), [2.0, 3.0, 4.0]),
        (lambda t: np.ones(3) + t, [2.0, 3.0, 4.0]),
        (lambda t: np.full(3, 2.0) * t, [2.0, 4.0, 6.0]),
        (lambda t: t / np.array(2.0), [0.5, 1.0, 1.5]),
        (lambda t: np.arange(3) - t, [-1.0, -1.0, -1.0]),
        (lambda t: np.ones((2, 1), dtype=np.float32) * t, [[1.0, 2.0, 3.0]] * 2),
    ],
)
def test_numpy_operands_give_a_tensor_that_records_the_graph(device, expr, expected):
    t = ofl.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    out = expr(t)
    assert isinstance(out, ofl.Tensor)
    assert out.dtype is ofl.float32 and out.device == device
    assert out.tolist() == expected
    assert out.grad_fn is not None
    out.sum().backward()
    assert t.grad is not None


def test_the_gradient_flows_through_a_numpy_scalar_product():
    t = ofl.tensor([1.0, 2.0], requires_grad=True)
    (np.float64(0.1) * t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), [0.1, 0.1], rtol=1e-6)


def test_other_ufuncs_and_numpy_in_place_work_on_the_values():
    t = ofl.tensor([1.0, 2.0])
    e = np.exp(t)
    assert isinstance(e, np.ndarray)
    np.testing.assert_allclose(e, np.exp([1.0, 2.0]), rtol=1e-6)
    a = np.zeros(2, dtype=np.float32)
    a += t
    assert isinstance(a, np.ndarray) and a.tolist() == [1.0, 2.0]
    assert (np.array([1.0, 5.0]) == t).tolist() == [True, False]


def test_an_array_that_does_not_broadcast_is_the_ops_error():
    with pytest.raises(ofl.InvalidArgument, match="broadcast"):
        ofl.ones(3) + np.ones(2)
    assert (ofl.ones(3) + np.ones(3)).sum().item() == 6.0


@pytest.mark.parametrize(
    "apply, expected",
    [
        (lambda t: t.__iadd__(np.ones(3)), [2.0, 3.0, 4.0]),
        (lambda t: t.__isub__(np.arange(3)), [1.0, 1.0, 1.0]),
        (lambda t: t.__imul__(np.full(3, 2.0)), [2.0, 4.0, 6.0]),
        (lambda t: t.__itruediv__(np.array(2.0)), [0.5, 1.0, 1.5]),
    ],
)
def test_in_place_operators_take_a_numpy_array_and_write_the_same_tensor(device, apply, expected):
    t = ofl.tensor([1.0, 2.0, 3.0], device=device)
    before = t
    out = apply(t)
    assert out is before
    assert t.tolist() == expected and t.dtype is ofl.float32


def test_augmented_assignment_with_an_array_keeps_the_parameter():
    w = ofl.tensor([1.0, 2.0], requires_grad=True)
    p = w
    with ofl.no_grad():
        w -= np.array([0.5, 0.5])
    assert w is p and w.requires_grad
    assert w.tolist() == [0.5, 1.5]
    with pytest.raises(ofl.InvalidArgument, match="broadcast"):
        with ofl.no_grad():
            w += np.ones(3)
    assert w.tolist() == [0.5, 1.5]
