"""The module functions written in Python: pow, add, sub, mul and div (a tensor or a number as either
operand, through the operators), clamp/clip (optional bounds), max/min (whole, along a dim, or
pairwise), sum (with dtype=), linear and memory_snapshot. The op table's functions (ofl.expand, ofl.sum, ...) are generated
(ops/op_table.py)."""

import json

from . import _C


def _operand(a, fn):
    if not isinstance(a, _C.Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, not {type(a).__name__}")
    return a


def sum(input, *args, dtype=None, **kwargs):
    """torch.sum(input, dim=None, keepdim=False, *, dtype=None): the op table's sum; with dtype,
    input is cast to dtype first and the sum is of dtype (Tensor.sum)."""
    if dtype is None:
        return _C.sum(input, *args, **kwargs)
    return _operand(input, "sum").sum(*args, dtype=dtype, **kwargs)


def add(input, other):
    return _operand(input, "add") + other


def sub(input, other):
    return _operand(input, "sub") - other


def mul(input, other):
    return _operand(input, "mul") * other


def div(input, other):
    return _operand(input, "div") / other


def pow(input, exponent):
    """input ** exponent, as torch.pow: a tensor and a number or tensor exponent, or a number and a
    tensor exponent."""
    if not isinstance(input, _C.Tensor) and not isinstance(exponent, _C.Tensor):
        raise TypeError(
            f"pow(): expected a Tensor as input or exponent, got {type(input).__name__} and "
            f"{type(exponent).__name__}"
        )
    return input ** exponent


def clamp(input, min=None, max=None):
    return _operand(input, "clamp").clamp(min, max)


clip = clamp


def max(input, dim=None, keepdim=False):
    return _operand(input, "max").max(dim, keepdim)


def min(input, dim=None, keepdim=False):
    return _operand(input, "min").min(dim, keepdim)


def linear(input, weight, bias=None):
    """input @ weight^T + bias, as torch.nn.functional.linear: weight (out, in) or (in,); the
    transposed weight goes to the GEMM in place."""
    _operand(input, "linear")
    if not isinstance(weight, _C.Tensor):
        raise TypeError(f"linear(): argument 'weight' must be a Tensor, not {type(weight).__name__}")
    if weight.ndim not in (1, 2):
        raise _C.InvalidArgument(f"linear: weight must have 1 or 2 dims, got shape {tuple(weight.shape)}")
    y = input.matmul(weight.transpose(0, 1) if weight.ndim == 2 else weight)
    if bias is None:
        return y
    if not isinstance(bias, _C.Tensor):
        raise TypeError(f"linear(): argument 'bias' must be a Tensor or None, not {type(bias).__name__}")
    return y + bias


def memory_snapshot(device="cpu"):
    """The pool of `device` block by block, as a dict (segments, blocks, totals)."""
    return json.loads(_C._memory_snapshot_json(device))
