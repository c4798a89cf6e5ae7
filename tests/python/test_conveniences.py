"""What a PyTorch user reaches for in the first hour, with PyTorch's behaviour: copy, deepcopy and
pickle of tensors, devices and dtypes; devices as dict keys; tensor() of a range and of numpy
scalars; the grad-mode switches as context managers and decorators; is_tensor, .T, .t(), .data and
element_size()."""

import copy
import pickle

import numpy as np
import pytest

import oneflow_lite as ofl


@pytest.mark.parametrize("dtype", [ofl.float32, ofl.float64, ofl.int32, ofl.bool, ofl.bfloat16, ofl.float16])
def test_pickle_keeps_dtype_shape_values_device_and_requires_grad(device, dtype):
    t = ofl.tensor([[1.0, 0.0, 3.0], [4.0, 5.0, 0.0]], dtype=dtype, device=device)
    if dtype.is_floating_point:
        t.requires_grad_(True)
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is dtype and u.shape == (2, 3) and u.device == device
    assert u.tolist() == t.tolist()
    assert u.requires_grad == dtype.is_floating_point and u.is_leaf
    view = ofl.tensor(np.arange(12.0).reshape(3, 4), device=device).permute(1, 0)[1:3]
    assert pickle.loads(pickle.dumps(view)).tolist() == view.tolist()
    assert pickle.loads(pickle.dumps(ofl.ones(0, 2))).shape == (0, 2)


def test_copy_shares_storage_and_deepcopy_copies_a_leaf():
    t = ofl.tensor([1.0, 2.0], requires_grad=True)
    c = copy.copy(t)
    assert c.requires_grad and c.is_leaf
    with ofl.no_grad():
        t[0] = 9.0
    assert c.tolist() == [9.0, 2.0]  # shares t's storage, as torch's copy.copy
    t.sum().backward()
    d = copy.deepcopy(t)
    assert d.requires_grad and d.is_leaf and d.grad.tolist() == [1.0, 1.0]
    with ofl.no_grad():
        t[1] = -1.0
    assert d.tolist() == [9.0, 2.0]
    pair = copy.deepcopy([t, t])
    assert pair[0] is pair[1]  # the memo
    with pytest.raises(ofl.InvalidArgument, match="deepcopy: only leaves .* MulBackward"):
        copy.deepcopy(t * 2)
    assert copy.deepcopy(ofl.ones(2, device="sim:0")).device == "sim:0"


def test_devices_and_dtypes_copy_pickle_and_hash():
    for d in (ofl.device("cpu"), ofl.device("sim:1"), ofl.device("sim", 0)):
        assert pickle.loads(pickle.dumps(d)) == d
        assert copy.copy(d) == d and copy.deepcopy(d) == d
        assert d == str(d) and hash(d) == hash(str(d))
        assert {str(d): 1}[d] == 1 and d in {str(d)}
    assert str(ofl.device("cpu:0")) == "cpu" and ofl.device("cpu") == "cpu"
    assert ofl.device("sim") == "sim:0" and ofl.device("sim") != "sim"  # one spelling: str(d)
    for dt in (ofl.float32, ofl.bfloat16, ofl.int64, ofl.bool):
        assert pickle.loads(pickle.dumps(dt)) is dt
        assert copy.copy(dt) is dt and copy.deepcopy(dt) is dt


def test_tensor_of_a_range_and_of_numpy_scalars():
    t = ofl.tensor(range(3))
    assert t.dtype is ofl.int64 and t.tolist() == [0, 1, 2]
    assert ofl.tensor(range(1, 7, 2), dtype=ofl.float32).tolist() == [1.0, 3.0, 5.0]
    for value, dtype in [(np.float64(1.5), ofl.float64), (np.float32(1.5), ofl.float32),
                         (np.int32(3), ofl.int32), (np.bool_(True), ofl.bool),
                         (np.float16(0.5), ofl.float16)]:
        t = ofl.tensor(value)
        assert t.dtype is dtype and t.shape == () and t.item() == value
    assert ofl.tensor(np.float64(1.5), dtype=ofl.float32).dtype is ofl.float32
    # In a list, numpy scalars promote with the Python values, as torch's.
    assert ofl.tensor([1.0, np.float64(2.0)]).dtype is ofl.float64
    assert ofl.tensor([1, np.int32(2)]).dtype is ofl.int64
    assert ofl.tensor([np.int8(1), np.int16(2)]).dtype is ofl.int16
    assert ofl.tensor([1, np.float16(2.0)]).dtype is ofl.float16
    assert ofl.tensor([True, np.bool_(False)]).dtype is ofl.bool


def test_grad_mode_switches_as_context_managers_and_decorators():
    x = ofl.ones(2, requires_grad=True)

    @ofl.no_grad()
    def f():
        return x * 2

    @ofl.no_grad
    def g():
        return x * 2

    assert not f().requires_grad and not g().requires_grad and ofl.is_grad_enabled()
    assert f.__name__ == "f"
    with ofl.no_grad():
        assert (ofl.enable_grad()(lambda: x * 2))().requires_grad
        with ofl.enable_grad():
            assert (x * 2).requires_grad
        with ofl.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    ofl.set_grad_enabled(False)  # as a call: at once, until set again
    try:
        assert not ofl.is_grad_enabled() and not (x * 2).requires_grad
    finally:
        ofl.set_grad_enabled(True)
    with ofl.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ofl.is_grad_enabled()

    @ofl.set_grad_enabled(False)
    def h():
        return x * 2

    assert ofl.is_grad_enabled() and not h().requires_grad and ofl.is_grad_enabled()
    with ofl.inference_mode():
        assert not (x * 2).requires_grad
    with ofl.inference_mode(False):
        assert (x * 2).requires_grad
    assert not ofl.inference_mode()(lambda: x * 2)().requires_grad
    assert ofl.is_grad_enabled()
    with pytest.raises(TypeError, match="set_grad_enabled.*bool"):
        ofl.set_grad_enabled("no")
    scope = ofl.no_grad()  # one object entered twice, nested
    with scope:
        with scope:
            pass
        assert not ofl.is_grad_enabled()
    assert ofl.is_grad_enabled()


def test_is_tensor_T_data_and_element_size(device):
    t = ofl.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3), device=device, requires_grad=True)
    assert ofl.is_tensor(t) and not ofl.is_tensor(t.numpy()) and not ofl.is_tensor(1.0)
    assert t.T.shape == (3, 2) and t.T.tolist() == t.numpy().T.tolist()
    assert ofl.ones(2, 3, 4).T.shape == (4, 3, 2) and ofl.tensor(1.0).T.shape == ()
    assert t.t().tolist() == t.numpy().T.tolist() and not t.t().is_contiguous()
    assert ofl.ones(3).t().shape == (3,) and ofl.tensor(2.0).t().shape == ()
    with pytest.raises(ValueError, match=r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        ofl.ones(2, 3, 4).t()
    d = t.data
    assert not d.requires_grad and d.is_leaf and d.tolist() == t.tolist()
    d.fill_(1.0)  # shares the storage
    assert t.tolist() == [[1.0] * 3] * 2
    assert t.element_size() == 4
    assert ofl.ones(1, dtype=ofl.bfloat16).element_size() == 2
    assert ofl.ones(1, dtype=ofl.float64).element_size() == 8
