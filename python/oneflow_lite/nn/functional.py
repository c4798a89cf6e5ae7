"""nn.functional: the stateless functions the layers call, with torch.nn.functional's names and
argument order."""

from .. import _C
from .._functions import linear  # noqa: F401 (re-exported)


def relu(input, inplace=False):
    if inplace:
        raise NotImplementedError("relu(inplace=True) is not supported; use relu(x)")
    return _C.relu(input)


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    if inplace:
        raise NotImplementedError("silu(inplace=True) is not supported; use silu(x)")
    return _C.silu(input)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def softmax(input, dim):
    return _C.softmax(input, dim)


def log_softmax(input, dim):
    return _C.log_softmax(input, dim)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    return _C.cross_entropy(
        input, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
        label_smoothing=label_smoothing,
    )


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    return _C.nll_loss(input, target, weight=weight, reduction=reduction, ignore_index=ignore_index)


def mse_loss(input, target, reduction="mean"):
    return _C.mse_loss(input, target, reduction=reduction)


def dropout(input, p=0.5, training=True, inplace=False):
    if inplace:
        raise NotImplementedError("dropout(inplace=True) is not supported; use dropout(x)")
    return _C.dropout(input, p, training)


def one_hot(tensor, num_classes=-1):
    return _C.one_hot(tensor, num_classes)
