"""In-place ops and Python numbers: a source overlapping the tensor it writes is read as it was
before (cpu, sim:0, sim:1), div_ and /= write in place, arithmetic whose result the tensor's dtype
cannot hold is refused at the call with the tensor intact, Python ints reach integer tensors
exactly, a value the dtype cannot hold is refused (PyTorch's "value cannot be converted to type
... without overflow"), and the calls built on a number name themselves."""

import math

import numpy as np
import pytest

import oneflow_lite as ofl

OVERLAP_DEVICES = ["cpu", "sim:0", "sim:1"] + (["cuda:0"] if ofl.device_count("cuda") > 0 else [])


def still_works(device="cpu"):
    assert (ofl.ones(2, 3, device=device).expand(4, 2, 3).sum()).item() == 24.0


def no_error_lines(capfd):
    ofl.sync()
    err = capfd.readouterr().err
    assert "[ofl] [error]" not in err, err


@pytest.mark.parametrize("device", OVERLAP_DEVICES)
def test_an_overlapping_source_is_read_as_it_was_before_the_write(device):
    x = ofl.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    x.add_(x.transpose(0, 1))
    assert x.tolist() == [[2.0, 5.0], [5.0, 8.0]]
    y = ofl.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    y.copy_(y.transpose(0, 1))
    assert y.tolist() == [[1.0, 3.0], [2.0, 4.0]]
    z = ofl.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    z -= z.transpose(0, 1)
    z *= z.transpose(0, 1) + 0  # a fresh tensor: no overlap
    assert z.tolist() == [[0.0, -1.0], [-1.0, 0.0]]
    w = ofl.tensor([[2.0, 4.0], [8.0, 16.0]], device=device)
    w /= w.transpose(0, 1)
    assert w.tolist() == [[1.0, 0.5], [2.0, 1.0]]

    n = 1 << 21
    a = np.arange(n, dtype=np.float32)
    t = ofl.tensor(a, device=device)
    t[1:].add_(t[:-1])
    want = a.copy()
    want[1:] += a[:-1]
    np.testing.assert_array_equal(t.numpy(), want)


def test_the_tensors_own_view_stays_in_place_without_a_copy():
    x = ofl.tensor(np.arange(4096, dtype=np.float32).reshape(64, 64))
    ofl.sync()
    before = ofl.memory_stats("cpu")["alloc_requests"]
    x += x
    x.mul_(x)
    ofl.sync()
    assert ofl.memory_stats("cpu")["alloc_requests"] == before
    np.testing.assert_array_equal(x.numpy(), (2 * np.arange(4096, dtype=np.float32).reshape(64, 64)) ** 2)


@pytest.mark.parametrize("device", OVERLAP_DEVICES)
def test_div_and_itruediv_are_in_place(device):
    t = ofl.tensor([2.0, 4.0], device=device)
    alias = t
    v0 = t._version()
    t /= 2
    assert t is alias and t.tolist() == [1.0, 2.0]
    assert t.div_(ofl.tensor([1.0, 4.0], device=device)) is t and t.tolist() == [1.0, 0.5]
    assert t._version() == v0 + 2
    assert t.mul_(ofl.tensor([4.0, 4.0], device=device)) is t and t.tolist() == [4.0, 2.0]

    # A hand-written optimizer step: the parameter stays the same tensor and keeps requiring grad.
    w = ofl.tensor([2.0, 6.0], requires_grad=True, device=device)
    (w * w).sum().backward()
    param = w
    with ofl.no_grad():
        w /= 2
        w -= w.grad * 0.25
    assert w is param and w.requires_grad and w.is_leaf
    assert w.tolist() == [0.0, 0.0]
    with pytest.raises(ofl.InvalidArgument, match="div_"):
        w /= 2  # grad mode on: an in-place op on a leaf that requires grad


def test_arithmetic_on_a_bool_tensor_is_refused_and_the_tensor_keeps_its_data(capfd):
    b = ofl.tensor([True, False, True])
    view = b[1:]
    calls = [
        ("add_", lambda: b.__iadd__(1)),
        ("add_", lambda: b.add_(True)),
        ("mul_", lambda: b.mul_(2)),
        ("sub_", lambda: b.sub_(b)),
        ("div_", lambda: b.div_(2)),
        ("mul_", lambda: b.__imul__(b)),
        ("add_", lambda: view.add_(1)),
    ]
    for name, call in calls:
        # "the tensor's dtype is bool", or (div_, whose result type is float32) "... cannot be
        # cast to the tensor's dtype bool".
        with pytest.raises(ofl.InvalidArgument, match=f"{name}: the (tensor's|result type).*bool"):
            call()
    with pytest.raises(ofl.InvalidArgument, match="add_: the tensor's dtype is bool"):
        b += 1
    assert b.tolist() == [True, False, True]
    assert view.tolist() == [False, True]
    assert b.clone().tolist() == [True, False, True]
    no_error_lines(capfd)
    still_works()


def test_an_integer_tensor_refuses_true_division_and_floats_in_place(capfd):
    i = ofl.tensor([4, 6])
    with pytest.raises(ofl.InvalidArgument, match="div_: the result type float32 cannot be cast to the tensor's dtype int64"):
        i /= 2
    with pytest.raises(ofl.InvalidArgument, match="div_"):
        i.div_(i)
    with pytest.raises(ofl.InvalidArgument, match="add_: value 2.5 is a floating-point number"):
        i += 2.5
    with pytest.raises(ofl.InvalidArgument, match="mul_: value 2.0 is a floating-point number"):
        i *= 2.0
    assert i.tolist() == [4, 6]
    i += True
    assert i.tolist() == [5, 7]
    no_error_lines(capfd)


def test_python_ints_reach_integer_tensors_exactly():
    big = 2**53 + 1
    assert (ofl.tensor([0, 1]) + big).tolist() == [big, big + 1]
    assert (big - ofl.tensor([0])).tolist() == [big]
    assert ofl.full((2,), 2**62 + 1).tolist() == [2**62 + 1] * 2
    assert ofl.full((1,), 2**62 + 1).dtype is ofl.int64
    t = ofl.zeros(2, dtype=ofl.int64)
    t.fill_(2**62 + 1)
    assert t.tolist() == [2**62 + 1] * 2
    t += big
    t -= np.int64(2**62)
    assert t.tolist() == [big + 1] * 2
    assert ofl.full((1,), -(2**63)).tolist() == [-(2**63)]
    assert ofl.full((1,), np.int64(2**62 + 3)).tolist() == [2**62 + 3]
    assert ofl.full((1,), 2**64 - 1, dtype=ofl.float32).tolist() == [2.0**64]
    assert ofl.full((1,), -1, dtype=ofl.uint8).tolist() == [255]  # as PyTorch
    assert ofl.full((1,), 2.7, dtype=ofl.int32).tolist() == [2]
    # numpy's bool is a bool (not its deprecated __index__), numpy's ints are ints.
    assert ofl.full((1,), np.True_).dtype is ofl.bool
    assert ofl.full((1,), np.int8(-3)).dtype is ofl.int64
    i = ofl.tensor([1, 2])
    i += np.True_
    assert i.tolist() == [2, 3]


@pytest.mark.parametrize(
    "call,pieces",
    [
        (lambda: ofl.full((2,), 300, dtype=ofl.uint8), "full: value 300 cannot be converted to type uint8 without overflow"),
        (lambda: ofl.full((2,), math.nan, dtype=ofl.int32), "full: value nan cannot be converted to type int32"),
        (lambda: ofl.full((2,), math.inf, dtype=ofl.int64), "full: value inf cannot be converted to type int64"),
        (lambda: ofl.full((2,), 2**63, dtype=ofl.int64), "full: value 9223372036854775808 cannot be converted"),
        (lambda: ofl.tensor([1]) + 2**63, "add: value 9223372036854775808 cannot be converted to type int64"),
        (lambda: 2**63 - ofl.tensor([1]), "sub: value 9223372036854775808"),
        (lambda: ofl.tensor([1], dtype=ofl.int8) * 200, "mul: value 200 cannot be converted to type int8"),
        (lambda: ofl.zeros(2, dtype=ofl.uint8).fill_(256), "fill_: value 256 cannot be converted to type uint8"),
        (lambda: ofl.zeros(2, dtype=ofl.int32).add_(2**40), "add_: value 1099511627776"),
    ],
)
def test_a_value_the_dtype_cannot_hold_is_refused(call, pieces, capfd):
    with pytest.raises(ofl.InvalidArgument) as info:
        call()
    assert pieces in str(info.value)
    assert isinstance(info.value, RuntimeError)  # as PyTorch's RuntimeError
    no_error_lines(capfd)
    still_works()


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: ofl.tensor([1]) + 2**64, "add"),
        (lambda: ofl.ones(2) * 2**64, "mul"),
        (lambda: ofl.ones(2).fill_(-(2**63) - 1), "fill_"),
        (lambda: ofl.full((1,), 2**70, dtype=ofl.float64), "full"),
        (lambda: ofl.ones(2).add_(2**64), "add_"),
    ],
)
def test_an_int_beyond_64_bits_is_an_overflow_error(call, name):
    with pytest.raises(OverflowError, match=rf"{name}\(\): argument '\w+': the int does not fit in 64 bits"):
        call()
    still_works()


def test_calls_built_on_a_number_name_themselves(capfd):
    with pytest.raises(ofl.InvalidArgument, match="neg: negation, the `-` operator, on a bool tensor is not supported"):
        -ofl.tensor([True])
    with pytest.raises(ofl.InvalidArgument, match="zeros"):
        ofl.zeros(-1)
    with pytest.raises(ofl.InvalidArgument, match="ones"):
        ofl.ones(2, -3)
    assert (-ofl.tensor([1, 0], dtype=ofl.uint8)).tolist() == [255, 0]
    no_error_lines(capfd)
    still_works()
