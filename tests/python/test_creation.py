"""Creation: ofl.tensor from Python data and numpy arrays of every dtype (strided ones too),
from_numpy, empty/zeros/ones/full, and the dtype and device objects."""

import numpy as np
import pytest

import oneflow_lite as ofl

NUMPY_DTYPES = [
    (np.bool_, ofl.bool),
    (np.uint8, ofl.uint8),
    (np.int8, ofl.int8),
    (np.int16, ofl.int16),
    (np.int32, ofl.int32),
    (np.int64, ofl.int64),
    (np.float16, ofl.float16),
    (np.float32, ofl.float32),
    (np.float64, ofl.float64),
]


@pytest.mark.parametrize("np_dtype,dtype", NUMPY_DTYPES)
def test_tensor_from_numpy_every_dtype(device, rng, np_dtype, dtype):
    a = (rng.integers(0, 100, size=(3, 4, 5)) % (2 if np_dtype is np.bool_ else 100)).astype(np_dtype)
    t = ofl.tensor(a, device=device)
    assert t.dtype is dtype
    assert t.shape == (3, 4, 5)
    assert t.device == device
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.numpy().dtype == a.dtype


@pytest.mark.parametrize("np_dtype,dtype", NUMPY_DTYPES)
def test_non_contiguous_arrays(device, np_dtype, dtype):
    base = (np.arange(4 * 6 * 5) % 7).astype(np_dtype).reshape(4, 6, 5)
    for a in (base[:, ::2, 1:4], base.transpose(2, 0, 1), base[::-1], np.broadcast_to(base[:1], (3, 6, 5))):
        t = ofl.from_numpy(a) if device == "cpu" else ofl.tensor(a, device=device)
        assert t.is_contiguous()
        np.testing.assert_array_equal(t.numpy(), a)


def test_from_numpy_copies():
    a = np.arange(6, dtype=np.float32)
    t = ofl.from_numpy(a)
    a[:] = -1
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype=np.float32))
    big = np.arange(1 << 20, dtype=np.int32)  # past the staging limit: a waited copy
    t = ofl.from_numpy(big)
    big[:] = 0
    assert t[12345].item() == 12345


def test_tensor_from_python_data(device):
    t = ofl.tensor([[1, 2], [3, 4]], device=device)
    assert t.dtype is ofl.int64 and t.shape == (2, 2)
    assert t.tolist() == [[1, 2], [3, 4]]
    f = ofl.tensor([1, 2.5], device=device)
    assert f.dtype is ofl.float32 and f.tolist() == [1.0, 2.5]
    b = ofl.tensor([True, False], device=device)
    assert b.dtype is ofl.bool and b.tolist() == [True, False]
    s = ofl.tensor(3.5, device=device)
    assert s.shape == () and s.item() == 3.5
    assert ofl.tensor(7).item() == 7
    assert ofl.tensor([]).shape == (0,)
    assert ofl.tensor([[1, 2]], dtype=ofl.float64).dtype is ofl.float64


def test_tensor_of_a_tensor_copies(device):
    x = ofl.tensor([1.0, 2.0], device=device)
    y = ofl.tensor(x)
    x.fill_(0)
    assert y.tolist() == [1.0, 2.0]
    assert ofl.tensor(x, dtype=ofl.int32).dtype is ofl.int32


def test_bfloat16(device):
    t = ofl.tensor([1.0, -2.5, 3.140625], dtype=ofl.bfloat16, device=device)
    assert t.dtype is ofl.bfloat16
    assert t.tolist() == [1.0, -2.5, 3.140625]
    rounded = ofl.tensor([1.00390625], dtype=ofl.bfloat16).item()  # halfway: ties to even
    assert rounded == 1.0
    with pytest.raises(TypeError, match="bfloat16"):
        t.numpy()


def test_requires_grad_at_creation():
    t = ofl.tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert ofl.zeros(2, requires_grad=True).requires_grad


@pytest.mark.parametrize("make", [ofl.empty, ofl.zeros, ofl.ones])
def test_sized_factories(device, make):
    for t in (make(4, 3, device=device), make((4, 3), device=device), make([4, 3], device=device)):
        assert t.shape == (4, 3) and t.dtype is ofl.float32 and t.device == device
    assert make(2, dtype=ofl.int16).dtype is ofl.int16
    assert make().shape == ()
    if make is not ofl.empty:
        np.testing.assert_array_equal(make(2, 3, device=device).numpy(), np.full((2, 3), 1.0 if make is ofl.ones else 0.0))


def test_full(device):
    t = ofl.full((2, 3), 1.5, device=device)
    assert t.dtype is ofl.float32
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 1.5, np.float32))
    assert ofl.full((2,), 7).dtype is ofl.int64
    assert ofl.full((2,), True).dtype is ofl.bool
    assert ofl.full(3, 2.0, dtype=ofl.float64).tolist() == [2.0, 2.0, 2.0]


def test_dtype_objects():
    assert ofl.float is ofl.float32 and ofl.double is ofl.float64
    assert ofl.int is ofl.int32 and ofl.long is ofl.int64
    assert repr(ofl.float16) == "oneflow_lite.float16"
    assert ofl.bfloat16.itemsize == 2 and ofl.float64.is_floating_point
    assert not ofl.int8.is_floating_point
    assert ofl.tensor([1.0]).dtype is ofl.float32


def test_device_objects():
    d = ofl.device("sim:0")
    assert d == "sim:0" and d == ofl.device("sim", 0)
    assert d.type == "sim" and d.index == 0
    assert str(d) == "sim:0" and repr(d) == "device(type='sim', index=0)"
    assert ofl.device("cpu") != "sim:0"
    assert ofl.zeros(2, device=d).device == "sim:0"
    assert ofl.device_count("cpu") >= 1


def test_dtypes_pickle_to_themselves():
    import pickle

    for d in (ofl.float32, ofl.bfloat16, ofl.bool):
        assert pickle.loads(pickle.dumps(d)) is d


def test_tensor_of_a_list_holding_tensors():
    t = ofl.tensor([ofl.tensor(1.5), 2.0, ofl.tensor(3.0)])
    assert t.dtype is ofl.float32 and t.tolist() == [1.5, 2.0, 3.0]


def test_tensor_objects_are_reused_without_mixing_up_their_tensors():
    # Freed tensor objects go back to a free list; a reused one must hold only its new tensor.
    keep = []
    for i in range(300):
        t = ofl.full((2,), float(i))
        if i % 3 == 0:
            keep.append((i, t))
        del t
    for i, t in keep:
        assert t.tolist() == [float(i), float(i)]
    a = ofl.ones(3, requires_grad=True)
    b = a * 2  # results of nanobind functions and of the fast paths alike
    c = b.sum()
    c.backward()
    del b, c
    assert a.grad.tolist() == [2.0, 2.0, 2.0]
    x = ofl.zeros(2)
    y = x.add_(1)  # an in-place method returns the object itself
    assert y is x and x.tolist() == [1.0, 1.0]
