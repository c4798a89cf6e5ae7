"""Nothing a Python program passes may crash the process: every public function and Tensor method
called with odd arguments (None, strings, floats, huge and negative ints, empty and nested
sequences, arbitrary objects, arrays) raises a Python exception or returns, and the runtime keeps
working afterwards."""

import itertools

import numpy as np
import pytest

import oneflow_lite as ofl

ODD = [None, "x", 1.5, -1, 0, 2**63, 2**70, -(2**63) - 1, [], (), [None], [[1]], object(),
       np.array([1, 2]), np.int64(2), True, ofl.float32, "sim:0", ofl.ones(2)]

METHODS = ["expand", "repeat", "reshape", "view", "permute", "transpose", "narrow", "sum", "to",
           "add_", "sub_", "mul_", "div_", "fill_", "copy_", "expand_as", "backward", "requires_grad_",
           "to_global", "size", "__getitem__", "__add__", "__rtruediv__", "__imul__", "__itruediv__"]
FUNCTIONS = [ofl.tensor, ofl.from_numpy, ofl.empty, ofl.zeros, ofl.ones, ofl.full, ofl.expand,
             ofl.repeat, ofl.sum, ofl.add, ofl.div, ofl.memory_stats, ofl.set_memory_limit,
             ofl.device_count, ofl.device, ofl.placement, ofl.sbp.split, ofl.autograd.grad,
             ofl.memory_snapshot]


def call_quietly(fn, *args):
    try:
        fn(*args)
    except (Exception,) as e:  # any Python exception is fine; a crash is not
        assert isinstance(e, Exception)


@pytest.mark.parametrize("name", METHODS)
def test_methods_with_odd_arguments(name):
    for nargs in (0, 1, 2, 3):
        for args in itertools.islice(itertools.product(ODD, repeat=nargs), 400):
            t = ofl.ones(2, 3)
            call_quietly(getattr(t, name), *args)
    ofl.set_memory_limit("cpu", 0)
    assert ofl.ones(2, 3).sum().item() == 6.0


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: getattr(f, "__name__", repr(f)))
def test_functions_with_odd_arguments(fn):
    for nargs in (0, 1, 2):
        for args in itertools.islice(itertools.product(ODD, repeat=nargs), 400):
            call_quietly(fn, *args)
    for d in ("cpu", "sim:0"):
        ofl.set_memory_limit(d, 0)
    ofl.sync()
    assert ofl.ones(2, 3).sum().item() == 6.0


class CallsBack:
    """A size whose __index__ runs oneflow_lite calls that parse sizes of their own."""

    def __init__(self, value, inner):
        self.value, self.inner = value, inner

    def __index__(self):
        self.inner()
        return self.value


@pytest.mark.parametrize(
    "inner",
    [
        lambda: ofl.ones(7, 7, 7).expand(2, 7, 7, 7),
        lambda: ofl.ones(1).expand([9, 9, 9, 9, 9, 9, 9, 9, 9, 9]),
        lambda: ofl.zeros(4, 4).reshape(2, 2, 2, 2, 1, 1, 1, 1, 1, 1),
        lambda: ofl.ones(1).expand(*[1] * 12),
    ],
)
def test_a_size_whose_index_calls_back_into_oneflow_lite(inner):
    t = ofl.ones(1, 4)
    assert t.expand(2, CallsBack(3, inner), 4).shape == (2, 3, 4)
    assert t.expand([2, CallsBack(3, inner), 4]).shape == (2, 3, 4)
    assert ofl.ones(2, CallsBack(3, inner)).shape == (2, 3)
    assert t.reshape(CallsBack(2, inner), 2).shape == (2, 2)
    many = [1] * 10 + [CallsBack(1, inner), 4]
    assert t.expand(*many).shape == (1,) * 11 + (4,)
    assert ofl.ones(2, 3).sum().item() == 6.0
