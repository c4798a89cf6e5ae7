"""The module functions that take a tensor first (ofl.expand(x, ...), ofl.add(a, b), ...) and
memory_snapshot."""

import json

from . import _C


def expand(x, *sizes):
    return _operand(x, "expand").expand(*sizes)


def repeat(x, *sizes):
    return _operand(x, "repeat").repeat(*sizes)


def reshape(x, *shape):
    return _operand(x, "reshape").reshape(*shape)


def permute(x, *dims):
    return _operand(x, "permute").permute(*dims)


def sum(x, dim=None, keepdim=False):
    return _operand(x, "sum").sum(dim=dim, keepdim=keepdim)


def _operand(a, fn):
    if not isinstance(a, _C.Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, not {type(a).__name__}")
    return a


def add(input, other):
    return _operand(input, "add") + other


def sub(input, other):
    return _operand(input, "sub") - other


def mul(input, other):
    return _operand(input, "mul") * other


def div(input, other):
    return _operand(input, "div") / other


def memory_snapshot(device="cpu"):
    """The pool of `device` block by block, as a dict (segments, blocks, totals)."""
    return json.loads(_C._memory_snapshot_json(device))
