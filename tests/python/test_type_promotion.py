"""Type promotion by PyTorch's result_type rules from Python: mixed-dtype tensors, Python numbers
as wrapped numbers (an int tensor + 2.5 is float32, an int32 tensor + 5 stays int32), true
division of integers, sums of integers in int64, the in-place ops' cast back (and refusal), copy_
across dtypes, numpy operands."""

import numpy as np
import pytest

import oneflow_lite as ofl


def test_promote_types_and_can_cast():
    assert ofl.promote_types(ofl.int32, ofl.int64) is ofl.int64
    assert ofl.promote_types(ofl.uint8, ofl.int8) is ofl.int16
    assert ofl.promote_types(ofl.float16, ofl.bfloat16) is ofl.float32
    assert ofl.can_cast(ofl.int64, ofl.float16)
    assert not ofl.can_cast(ofl.float32, ofl.int32)


def test_mixed_dtype_tensors():
    i32 = ofl.tensor([1, 2, 3], dtype=ofl.int32)
    i64 = ofl.tensor([10, 20, 30], dtype=ofl.int64)
    assert (i32 + i64).dtype is ofl.int64
    assert (i32 + i64).tolist() == [11, 22, 33]
    f16 = ofl.tensor([0.5, 1.5, 2.5], dtype=ofl.float16)
    assert (f16 * ofl.tensor([1.0, 2.0, 3.0])).dtype is ofl.float32
    assert (ofl.tensor([True, False, True]) + i32).dtype is ofl.int32
    # A 0-dim tensor joins only when of a higher kind.
    assert (i32 + ofl.tensor(5, dtype=ofl.int64)).dtype is ofl.int32
    assert (i32 + ofl.tensor(0.5, dtype=ofl.float64)).dtype is ofl.float64


def test_numbers_are_wrapped_numbers():
    i = ofl.tensor([1, 2, 3])
    assert i.dtype is ofl.int64
    assert (i + 2.5).dtype is ofl.float32 and (i + 2.5).tolist() == [3.5, 4.5, 5.5]
    assert (2.5 - i).tolist() == [1.5, 0.5, -0.5]
    assert (ofl.tensor([1, 2], dtype=ofl.int32) * 3).dtype is ofl.int32
    assert (ofl.tensor([1.0], dtype=ofl.float16) + 2.5).dtype is ofl.float16
    assert (ofl.tensor([True]) + 1).dtype is ofl.int64
    with pytest.raises(ofl.InvalidArgument, match=r"add: value 300 cannot be converted to type uint8"):
        ofl.tensor([1], dtype=ofl.uint8) + 300


def test_true_division_and_integer_sums():
    a = ofl.tensor([7, -7, 1], dtype=ofl.int32)
    assert (a / 2).dtype is ofl.float32
    assert (a / 2).tolist() == [3.5, -3.5, 0.5]
    assert (a / ofl.tensor([2, 2, 4])).tolist() == [3.5, -3.5, 0.25]
    big = ofl.tensor([2**31 - 1] * 3, dtype=ofl.int32)
    assert big.sum().dtype is ofl.int64 and big.sum().item() == 3 * (2**31 - 1)
    assert ofl.tensor([[True, False], [True, True]]).sum(dim=0).tolist() == [2, 1]


def test_in_place_casts_back_or_refuses():
    f = ofl.tensor([1.0, 2.0])
    f += ofl.tensor([0.5, 0.25], dtype=ofl.float64)
    assert f.dtype is ofl.float32 and f.tolist() == [1.5, 2.25]
    i = ofl.tensor([1, 2], dtype=ofl.int32)
    i *= ofl.tensor([3, 4])
    assert i.dtype is ofl.int32 and i.tolist() == [3, 8]
    with pytest.raises(ofl.InvalidArgument, match=r"add_: the result type float32 cannot be cast to the tensor's dtype int32"):
        i += ofl.tensor([0.5, 0.5])
    with pytest.raises(ofl.InvalidArgument, match=r"div_: the result type float32 cannot be cast"):
        i /= 2
    assert i.tolist() == [3, 8]
    c = ofl.zeros(2, dtype=ofl.int64)
    c.copy_(ofl.tensor([2.75, -1.5]))
    assert c.tolist() == [2, -1]


def test_gradients_keep_their_dtypes():
    x = ofl.tensor([1.5, -2.0], requires_grad=True)
    y = ofl.tensor([2.0, 3.0], dtype=ofl.float64, requires_grad=True)
    z = x * y
    assert z.dtype is ofl.float64
    z.sum().backward()
    assert x.grad.dtype is ofl.float32 and x.grad.tolist() == [2.0, 3.0]
    assert y.grad.dtype is ofl.float64 and y.grad.tolist() == [1.5, -2.0]


def test_numpy_operands():
    i = ofl.tensor([1, 2, 3])
    r = i * np.float32(0.5)
    assert r.dtype is ofl.float32
    np.testing.assert_allclose(r.numpy(), [0.5, 1.0, 1.5])
