"""oneflow_lite.nn: Module, Parameter, the layers, containers and losses, functional and init,
with torch.nn's names and semantics (docs/nn_optim.md)."""

from . import functional, init
from .layers import (
    CrossEntropyLoss,
    Dropout,
    Flatten,
    GELU,
    Identity,
    Linear,
    LogSoftmax,
    ModuleList,
    MSELoss,
    NLLLoss,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .module import Module
from .parameter import Parameter
