"""oneflow_lite: an eager deep-learning runtime with a virtual-machine instruction scheduler.

PyTorch's semantics, OneFlow's names where they differ:

    import oneflow_lite as ofl
    x = ofl.tensor([[1.0], [2.0]], device="sim:0", requires_grad=True)
    y = x.expand(2, 3).sum()
    y.backward()
    x.grad.numpy()  # array([[3.], [3.]], dtype=float32)
"""

from . import _C
from ._C import (
    Error,
    InvalidArgument,
    OutOfMemory,
    DeviceError,
    Tensor,
    dtype,
    device,
    placement,
    bool,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    bfloat16,
    float32,
    float64,
    promote_types,
    can_cast,
    empty,
    zeros,
    ones,
    full,
    gather,
    scatter_add,
    index_select,
    one_hot,
    nll_loss,
    cross_entropy,
    cat,
    concat,
    stack,
    split,
    chunk,
    arange,
    linspace,
    empty_like,
    zeros_like,
    ones_like,
    full_like,
    manual_seed,
    initial_seed,
    get_rng_state,
    set_rng_state,
    rand,
    randn,
    randint,
    randperm,
    rand_like,
    randn_like,
    bernoulli,
    dropout,
    sync,
    shutdown,
    memory_stats,
    reset_peak_memory_stats,
    empty_cache,
    set_memory_limit,
    device_count,
    is_grad_enabled,
    rank,
    world_size,
)
from . import _tensor  # adds the Python-written Tensor methods
from ._exit import init_distributed  # also installs the job's exit hook
from ._creation import tensor, from_numpy, from_dlpack
from ._functions import (
    add,
    sub,
    mul,
    div,
    memory_snapshot,
)
# The op table's module functions (ops/op_table.py): expand, repeat, reshape, permute, narrow,
# sum, ...
globals().update({_name: getattr(_C, _name) for _name in _C._op_functions})
from ._functions import clamp, clip, max, min, linear, pow, sum  # over the table's functions
from ._tensor import return_types
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode
from . import autograd, sbp, trace
from . import nn, optim
from ._serialization import save, load


def is_tensor(obj):
    """Whether obj is a oneflow_lite Tensor, as torch.is_tensor."""
    return isinstance(obj, Tensor)


# OneFlow's (and PyTorch's) aliases.
float = float32
double = float64
half = float16
int = int32
long = int64

__version__ = "0.1.0"
