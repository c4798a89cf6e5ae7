"""Bad input from Python: the C++ errors as ofl.Error and its subclasses with the C++ message,
wrong Python types as TypeErrors naming the argument, and the runtime still working after each."""

import numpy as np
import pytest

import oneflow_lite as ofl


def still_works(device="cpu"):
    assert (ofl.ones(2, 3, device=device).expand(4, 2, 3).sum()).item() == 24.0


def test_error_classes():
    assert issubclass(ofl.Error, RuntimeError)
    assert issubclass(ofl.InvalidArgument, ofl.Error) and issubclass(ofl.InvalidArgument, ValueError)
    assert issubclass(ofl.OutOfMemory, ofl.Error) and issubclass(ofl.OutOfMemory, MemoryError)
    assert issubclass(ofl.DeviceError, ofl.Error)


@pytest.mark.parametrize(
    "call,cls,pieces",
    [
        (lambda d: ofl.ones(2, 3, device=d).expand(3, 3), ofl.InvalidArgument, ["expand", "3"]),
        (lambda d: ofl.ones(2, 3, device=d).repeat(2), ofl.InvalidArgument, ["repeat"]),
        (lambda d: ofl.ones(2, 3, device=d).reshape(4, -1), ofl.InvalidArgument, ["reshape", "6"]),
        (lambda d: ofl.ones(2, 3, device=d).permute(0, 0), ofl.InvalidArgument, ["permute"]),
        (lambda d: ofl.ones(2, 3, device=d).narrow(1, 2, 5), ofl.InvalidArgument, ["narrow"]),
        (lambda d: ofl.ones(2, 3, device=d).transpose(0, 5), ofl.InvalidArgument, ["transpose", "5"]),
        (lambda d: ofl.ones(2, 3, device=d).sum(4), ofl.InvalidArgument, ["sum", "dim 4"]),
        (lambda d: ofl.ones(2, 3, device=d) + ofl.ones(4, device=d), ofl.InvalidArgument, ["add"]),
        (lambda d: ofl.ones(2, dtype=ofl.int32, device=d).add_(ofl.ones(2, device=d)), ofl.InvalidArgument,
         ["add_", "float32", "int32", "cannot be cast"]),
        (lambda d: ofl.ones(2, dtype=ofl.bool, device=d) + ofl.ones(2, dtype=ofl.bool, device=d), ofl.InvalidArgument,
         ["add", "bool"]),
        (lambda d: ofl.empty(-1, device=d), ofl.InvalidArgument, ["empty", "-1"]),
        (lambda d: ofl.zeros(-1, device=d), ofl.InvalidArgument, ["zeros: shape (-1) has negative size -1 at dim 0"]),
        (lambda d: ofl.ones(2, -3, device=d), ofl.InvalidArgument, ["ones: shape (2,-3) has negative size -3 at dim 1"]),
        (lambda d: ofl.ones(2, device=d).expand(2, 2).add_(1), ofl.InvalidArgument, ["add_"]),
        (lambda d: ofl.ones(2, dtype=ofl.int32, device=d).requires_grad_(), ofl.InvalidArgument, ["requires_grad_", "int32"]),
        (lambda d: ofl.ones(2, device=d).backward(), ofl.InvalidArgument, ["backward"]),
        (lambda d: ofl.ones(2, device=d).placement, ofl.InvalidArgument, ["placement", "local"]),
    ],
)
def test_bad_arguments(device, call, cls, pieces):
    with pytest.raises(cls) as e:
        call(device)
    for p in pieces:
        assert p in str(e.value), str(e.value)
    still_works(device)


def test_device_errors():
    with pytest.raises(ofl.Error, match="nope"):
        ofl.device("nope:0")
    with pytest.raises(ofl.DeviceError):
        ofl.zeros(2, device="sim:99")
    if ofl.device_count("cuda") == 0:
        with pytest.raises(ofl.DeviceError, match="cuda"):
            ofl.zeros(2, device="cuda:0")
    still_works()


@pytest.mark.parametrize(
    "call,pieces",
    [
        (lambda: ofl.ones(2, 3).expand("a", 3), ["expand", "sizes", "str"]),
        (lambda: ofl.ones(2, 3).expand(2.0, 3), ["expand", "sizes", "float"]),
        (lambda: ofl.ones(2, 3).narrow(1.0, 0, 1), ["narrow", "dim", "float"]),
        (lambda: ofl.ones(2, 3).narrow(1, "0", 1), ["narrow", "start", "str"]),
        (lambda: ofl.ones(2, 3).permute(0, None), ["permute", "dims", "NoneType"]),
        (lambda: ofl.ones(2, 3).sum(dim=1.5), ["sum", "dim", "float"]),
        (lambda: ofl.empty("3"), ["empty", "size", "str"]),
        (lambda: ofl.zeros(2, dtype="float32"), ["zeros", "dtype", "str"]),
        (lambda: ofl.zeros(2, device=3), ["zeros", "device", "int"]),
        (lambda: ofl.full((2,), "x"), ["full", "fill_value", "str"]),
        (lambda: ofl.tensor(np.array([object()], dtype=object)), ["tensor", "data", "object"]),
        (lambda: ofl.tensor(np.array([1 + 2j])), ["tensor", "data", "complex"]),
        (lambda: ofl.tensor(["a", "b"]), ["tensor", "data", "str"]),
        (lambda: ofl.tensor({1: 2}), ["tensor", "data", "dict"]),
        (lambda: ofl.tensor(np.arange(3, dtype=np.uint32)), ["tensor", "data", "uint32"]),
        (lambda: ofl.from_numpy([1, 2]), ["from_numpy", "list"]),
        (lambda: ofl.ones(2).fill_("x"), ["fill_", "value", "str"]),
        (lambda: ofl.ones(2).backward(gradient=3), ["backward", "gradient", "int"]),
        (lambda: ofl.autograd.grad(3, []), ["grad", "outputs", "int"]),
        (lambda: ofl.expand([1], 2), ["expand", "Tensor", "list"]),
    ],
)
def test_wrong_python_types(call, pieces):
    with pytest.raises(TypeError) as e:
        call()
    for p in pieces:
        assert p in str(e.value), str(e.value)
    still_works()


def test_ragged_data():
    with pytest.raises(ofl.InvalidArgument, match="tensor"):
        ofl.tensor([[1, 2], [3]])
    still_works()


def test_huge_sizes_do_not_crash():
    with pytest.raises((ofl.InvalidArgument, ofl.OutOfMemory)):
        ofl.empty(1 << 62, 1 << 62)
    with pytest.raises(TypeError, match="int64"):
        ofl.empty(1 << 70)
    still_works()


def test_errors_inside_the_vm_surface_at_the_next_wait():
    ofl.sync()
    ofl.empty_cache("sim:0")
    ofl.set_memory_limit("sim:0", 1 << 16)
    try:
        with pytest.raises(ofl.OutOfMemory):
            t = ofl.ones(1 << 10, device="sim:0")
            u = t.expand(64, 1 << 10).contiguous()  # 256 KiB: allocated inside the VM
            u.numpy()
    finally:
        ofl.set_memory_limit("sim:0", 0)
    still_works("sim:0")


def test_python_layer_messages():
    t = ofl.ones(2, 3)
    with pytest.raises(IndexError, match=r"size\(\): dim 2 is out of range for a 2-dim tensor"):
        t.size(2)
    with pytest.raises(TypeError, match="grad must be a Tensor or None, not int"):
        t.grad = 3
    with pytest.raises(TypeError, match=r"mul_\(\): argument 'other' must be a Tensor or a number, not str"):
        t.mul_("x")
    with pytest.raises(TypeError, match="only integer tensors of a single element can be an index"):
        [1, 2][ofl.tensor(1.0)]
    assert [1, 2][ofl.tensor(1)] == 2
    with pytest.raises(ValueError, match="always gives numpy a copy"):
        t.__array__(copy=False)
    with pytest.raises(ofl.InvalidArgument, match="unknown device type 'nope'"):
        ofl.device("nope", 0)
    with pytest.raises(TypeError, match=r"empty\(\): argument 'requires_grad' must be a bool, not str"):
        ofl.empty(2, requires_grad="yes")
    with pytest.raises(TypeError, match=r"zeros\(\) got an unexpected keyword argument 'shape'"):
        ofl.zeros(2, shape=3)
    with pytest.raises(ofl.InvalidArgument, match="truth value of a tensor with 6 elements"):
        bool(t)
    with pytest.raises(TypeError, match="has no oneflow_lite dtype"):
        ofl.from_dlpack(np.array([1 + 2j]))
    still_works()


def test_the_tensor_class_is_made_by_the_factories_only():
    with pytest.raises(TypeError, match=r"cannot be constructed directly; use oneflow_lite.tensor"):
        ofl.Tensor()
    with pytest.raises(TypeError, match=r"cannot be constructed directly"):
        ofl.Tensor([1.0, 2.0])
    t = ofl.ones(2)
    with pytest.raises(TypeError, match=r"requires_grad must be a bool, not str"):
        t.requires_grad = "yes"
    assert not t.requires_grad
    with pytest.raises(AttributeError):
        t.shape = (3,)
    with pytest.raises(TypeError, match=r"expand_as\(\): argument 'other' must be a Tensor, not list"):
        t.expand_as([1, 2])
    still_works()


def test_keyword_and_count_errors_of_the_vectorcall_calls():
    t = ofl.ones(2, 3)
    with pytest.raises(TypeError, match=r"sum\(\) got an unexpected keyword argument 'axis'"):
        t.sum(axis=0)
    with pytest.raises(TypeError, match=r"sum\(\) got multiple values for argument 'dim'"):
        t.sum(0, dim=1)
    with pytest.raises(TypeError, match=r"sum\(\) takes at most 2 arguments \(3 given\)"):
        t.sum(0, True, 1)
    with pytest.raises(TypeError, match=r"sum\(\): argument 'keepdim' must be a bool, not int"):
        t.sum(0, 1)
    s = ofl.ones(2, requires_grad=True).sum()
    with pytest.raises(TypeError, match=r"backward\(\): argument 'retain_graph' must be a bool, not str"):
        s.backward(retain_graph="yes")
    with pytest.raises(TypeError, match=r"backward\(\): argument 'gradient' must be a Tensor or None, not int"):
        s.backward(1)
    with pytest.raises(TypeError, match=r"backward\(\) got an unexpected keyword argument 'inputs'"):
        s.backward(inputs=[s])
    with pytest.raises(TypeError, match="takes no arguments"):
        t.contiguous(1)
    with pytest.raises(TypeError, match=r"__iadd__\(\): argument 'other' must be a Tensor or a number, not str"):
        t += "x"
    s.backward()  # the refused calls left the graph as it was
    still_works()


def test_ints_out_of_the_runtimes_range_are_refused_naming_the_argument():
    cases = [
        (lambda: ofl.placement("cpu", ranks=[2**32]), "placement: argument 'ranks' is 4294967296"),
        (lambda: ofl.placement("cpu", ranks=[0, -1]), "placement: argument 'ranks' is -1"),
        (lambda: ofl.sbp.split(2**32), "split: argument 'dim' is 4294967296"),
        (lambda: ofl.sbp.split(2**31), "split: argument 'dim' is 2147483648"),
        (lambda: ofl.device("sim", 2**32 + 1), "device: argument 'index' is 4294967297"),
        (lambda: ofl.device("sim", -1), "device: argument 'index' is -1"),
    ]
    for call, message in cases:
        with pytest.raises(ofl.InvalidArgument) as e:
            call()
        assert message in str(e.value) and "out of range" in str(e.value), str(e.value)
    assert ofl.sbp.split(2**31 - 1).dim == 2**31 - 1
    with pytest.raises(ofl.InvalidArgument, match="'sim:4294967297'"):
        ofl.device("sim:4294967297")
    still_works()


def test_tensor_of_a_tensor_with_another_dtype_converts_on_its_device():
    b = ofl.tensor([1.5, -2.0], dtype=ofl.bfloat16)
    f = ofl.tensor(b, dtype=ofl.float32)  # numpy has no bfloat16: converted without numpy()
    assert f.dtype is ofl.float32 and f.tolist() == [1.5, -2.0]
    s = ofl.tensor([1.0, 2.5], device="sim:0")
    d = ofl.tensor(s, dtype=ofl.float64)
    assert d.device == "sim:0" and d.dtype is ofl.float64 and d.tolist() == [1.0, 2.5]
    assert ofl.tensor(s, dtype=ofl.int32, device="cpu").device == "cpu"
    assert ofl.tensor([b, b]).dtype is ofl.float32 and ofl.tensor([b]).tolist() == [[1.5, -2.0]]
