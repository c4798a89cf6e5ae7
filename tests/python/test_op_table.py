"""The op table's Python bindings (ops/op_table.py, generated): every row with "python" is a
Tensor method and/or a module function taking its arguments positionally or by keyword, with
PyTorch's TypeErrors for a missing, unknown or repeated argument; an int list alone after the
tensor is *ints or one sequence."""

import pytest

import oneflow_lite as ofl


def test_module_functions_of_the_table_are_exported():
    for name in ("expand", "repeat", "reshape", "permute", "narrow", "sum"):
        assert callable(getattr(ofl, name)), name
        assert name in ofl._C._op_functions
    # Rows without a Python binding, and Tensor-only ones, are not module functions.
    assert not hasattr(ofl, "expand_backward")
    assert not hasattr(ofl, "contiguous")


def test_arguments_by_position_or_keyword():
    t = ofl.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    want = [[2.0, 3.0], [5.0, 6.0]]
    assert t.narrow(1, 1, 2).tolist() == want
    assert t.narrow(dim=1, start=1, length=2).tolist() == want
    assert t.narrow(1, length=2, start=1).tolist() == want
    assert ofl.narrow(t, 1, 1, 2).tolist() == want
    assert ofl.narrow(input=t, dim=-1, start=1, length=2).tolist() == want
    assert t.sum(dim=1).tolist() == [6.0, 15.0]
    assert t.sum(1, True).shape == (2, 1)
    assert t.sum(dim=(0, 1)).item() == 21.0
    assert t.sum(dim=None, keepdim=True).shape == (1, 1)
    assert ofl.sum(t, dim=0).tolist() == [5.0, 7.0, 9.0]
    assert ofl.expand(ofl.ones(1, 3), 2, 3).shape == (2, 3)
    assert ofl.expand(ofl.ones(1, 3), (2, 3)).shape == (2, 3)
    assert ofl.permute(t, 1, 0).shape == (3, 2)


@pytest.mark.parametrize(
    "call, parts",
    [
        (lambda t: t.narrow(1, 0), ["narrow() missing required argument 'length' (pos 3)"]),
        (lambda t: ofl.narrow(dim=0, start=0, length=1), ["narrow() missing required argument 'input'"]),
        (lambda t: t.narrow(1, 0, 1, 2), ["narrow() takes at most 3 arguments (4 given)"]),
        (lambda t: t.narrow(1, 0, 1, size=2), ["narrow() got an unexpected keyword argument 'size'"]),
        (lambda t: t.narrow(1, 0, 1, dim=0), ["narrow() got multiple values for argument 'dim'"]),
        (lambda t: t.sum(keepdim=1), ["sum(): argument 'keepdim' must be a bool, not int"]),
        (lambda t: t.sum(dim="0"), ["sum(): argument 'dim'", "str"]),
        (lambda t: ofl.sum([1, 2]), ["sum(): argument 'input' must be a Tensor, not list"]),
        (lambda t: ofl.expand(), ["expand() missing required argument 'input'"]),
        (lambda t: ofl.expand(3, 2), ["expand(): argument 'input' must be a Tensor, not int"]),
        (lambda t: t.contiguous(1), ["contiguous() takes no arguments (1 given)"]),
    ],
)
def test_bad_arguments_are_type_errors_naming_the_call_and_argument(call, parts):
    t = ofl.ones(2, 3)
    with pytest.raises(TypeError) as e:
        call(t)
    for p in parts:
        assert p in str(e.value)
    assert ofl.ones(2, 3).sum().item() == 6.0


def test_the_same_tensor_is_the_same_python_object_where_pytorch_returns_one():
    x = ofl.ones(2, 3, requires_grad=True)
    x.sum().backward()
    g = x.grad
    assert g is x.grad  # torch: t.grad is t.grad
    assert x.grad is g
    # A gradient the program sets is the object it gave.
    w = ofl.ones(2, requires_grad=True)
    mine = ofl.zeros(2)
    w.grad = mine
    assert w.grad is mine
    # A method returning the tensor itself returns the object itself.
    c = ofl.ones(2, 3)
    assert c.contiguous() is c
    assert c.to("cpu") is c and c.cpu() is c
    assert c.add_(1) is c
    assert c.T.contiguous() is not c  # a copy is a new object
    # An object dies with its last reference; the next read makes a working one.
    del g
    assert x.grad.tolist() == [[1.0] * 3] * 2
    assert x.grad is x.grad
    x.grad = None
    assert x.grad is None
