"""The Tensor methods written in Python, added to the extension's class: numpy and Python
conversions, printing, indexing and assignment, numpy's operators, copy and pickle, grad_fn."""

import builtins
import collections
import numbers
import operator

import numpy as np

from . import _C, _creation, _printing
from ._dtypes import TO_NUMPY, bfloat16_bits_to_float32

Tensor = _C.Tensor


def _host_array(self):
    """The values as a new numpy array (bfloat16 as its uint16 bits); waits for the writers."""
    if self.numel() == 0:
        return np.empty(self.shape, dtype=TO_NUMPY[self.dtype])
    return _C._to_numpy(self)


def numpy(self):
    """A numpy array holding a copy of the values (waits for the instructions writing them)."""
    if self.dtype is _C.bfloat16:
        raise TypeError(
            "numpy(): numpy has no bfloat16; convert the values with tolist() or item(), or make "
            "a float32 tensor"
        )
    return _host_array(self)


def __array__(self, dtype=None, copy=None):
    if copy is False:
        raise ValueError("__array__: a oneflow_lite tensor always gives numpy a copy")
    a = numpy(self)
    return a if dtype is None else a.astype(dtype, copy=False)


def _values(self):
    a = _host_array(self)
    return bfloat16_bits_to_float32(a) if self.dtype is _C.bfloat16 else a


# item() and tolist() are the extension's (python/src/host_reads.cpp): they make Python numbers
# straight from the elements, with no numpy array in between.


def __bool__(self):
    if self.numel() != 1:
        raise _C.InvalidArgument(
            f"bool: the truth value of a tensor with {self.numel()} elements is ambiguous"
        )
    return builtins.bool(self.item())


def __float__(self):
    return builtins.float(self.item())


def __int__(self):
    return builtins.int(self.item())


def __index__(self):
    if self.dtype.is_floating_point or self.dtype is _C.bool:
        raise TypeError(f"only integer tensors of a single element can be an index, not {self.dtype}")
    return builtins.int(self.item())


# PyTorch prints its default dtypes without naming them.
_IMPLIED_DTYPES = (_C.float32, _C.int64, _C.bool)


def __repr__(self):
    """PyTorch's form. A global tensor shows this rank's shard (local=...) with the placement, sbp
    and logical size, as DTensor's repr: printing runs no collective, so one rank may print alone.
    A large tensor is summarised, reading only the printed elements (_printing.py)."""
    if self.is_global:
        prefix, local = "tensor(local=", self.to_local()
    else:
        prefix, local = "tensor(", self
    parts = [_printing.values_str(local, len(prefix), _values)]
    n = self.numel()
    if self.is_global or (n == 0 and self.ndim != 1):
        parts.append(f"size={self.shape}")
    if self.dtype not in _IMPLIED_DTYPES or (n == 0 and self.dtype is not _C.float32):
        parts.append(f"dtype={self.dtype!r}")
    if self.is_global:
        parts.append(f"placement={self.placement!r}")
        parts.append(f"sbp={self.sbp!r}")
    elif self.device != "cpu":
        parts.append(f"device='{self.device}'")
    name = self._grad_fn_name
    if name:
        parts.append(f"grad_fn=<{name}>")
    elif self.requires_grad:
        parts.append("requires_grad=True")
    return prefix + ", ".join(parts) + ")"


def __format__(self, spec):
    """A 0-dim tensor formats as its number (f"{loss:.4f}"), as torch.Tensor.__format__."""
    if self.ndim == 0:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


class GradFn:
    """The node that made a tensor (``t.grad_fn``); ``name()`` is its class name, as PyTorch's."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name

    def __repr__(self):
        return f"<{self._name} object>"


def _grad_fn(self):
    name = self._grad_fn_name
    return GradFn(name) if name else None


def _index_error(i, dim, size):
    return IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


def __getitem__(self, index):
    """Ints and slices of step 1 (and tuples of them), each a view of the same storage."""
    items = index if isinstance(index, tuple) else (index,)
    if len(items) > self.ndim:
        raise IndexError(f"too many indices for a tensor of dimension {self.ndim}")
    t = self
    dim = 0  # the dim of t the next index applies to (an int index removes one)
    for source_dim, i in enumerate(items):
        if isinstance(i, slice):
            size = t.shape[dim]
            start, stop, step = i.indices(size)
            if step != 1:
                raise ValueError(f"__getitem__: slices take step 1 only, got step {i.step}")
            t = t.narrow(dim, start, builtins.max(0, stop - start))
            dim += 1
        elif isinstance(i, (builtins.int, np.integer)) and not isinstance(i, (builtins.bool, np.bool_)):
            i = operator.index(i)
            size = t.shape[dim]
            if i < -size or i >= size:
                raise _index_error(i, source_dim, size)
            if i < 0:
                i += size
            shape = t.shape[:dim] + t.shape[dim + 1 :]
            t = t.narrow(dim, i, 1).view(shape)
        else:
            raise TypeError(
                "__getitem__: indices must be ints or slices (or a tuple of them), not "
                f"{type(i).__name__}"
            )
    return t


def __setitem__(self, index, value):
    """t[index] = value for the indices __getitem__ takes: a tensor (broadcast to the view, any
    device) or a number written into the view in place. `t[i] += v` writes through the view t[i]
    and then assigns that same view back: an assignment of a view to itself writes nothing, so the
    addition lands once."""
    view = __getitem__(self, index)
    if isinstance(value, Tensor):
        if not view.is_set_to(value):
            view.copy_(value)
    elif isinstance(value, (builtins.bool, builtins.int, builtins.float, np.number, np.bool_)):
        view.fill_(value)
    elif isinstance(value, (np.ndarray, builtins.list, builtins.tuple)):
        view.copy_(_creation.tensor(value, dtype=view.dtype, device=view.device))
    else:
        raise TypeError(
            "__setitem__: the value must be a Tensor, a number, a numpy array or a list, not "
            f"{type(value).__name__}"
        )


def __iter__(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


# The ufuncs that are Tensor arithmetic: with a numpy operand the result is a Tensor, recorded by
# autograd, as the operator with a Tensor on both sides gives.
_UFUNC_OPERATORS = {
    np.add: operator.add,
    np.subtract: operator.sub,
    np.multiply: operator.mul,
    np.true_divide: operator.truediv,
    np.equal: operator.eq,
    np.not_equal: operator.ne,
    np.less: operator.lt,
    np.less_equal: operator.le,
    np.greater: operator.gt,
    np.greater_equal: operator.ge,
    np.bitwise_and: operator.and_,
    np.bitwise_or: operator.or_,
    np.bitwise_xor: operator.xor,
}


def _tensor_operand(x, like):
    """A numpy operand of arithmetic with tensor `like` as what the operators take: a number for
    a numpy scalar or 0-dim array, and for an array a tensor of like's dtype and device (a numpy
    operand takes the tensor's dtype, as a Python number does)."""
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return x.item()
    if isinstance(x, np.ndarray):
        return _creation.tensor(x, dtype=like.dtype, device=like.device)
    return x


def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
    """numpy hands its operators to the Tensor: `np.float64(0.1) * t` and `np.ones(3) + t` are
    Tensor arithmetic (a Tensor, with autograd), as for torch.Tensor. Other ufuncs (np.exp(t)),
    and numpy writing into an array of its own (`a += t`), work on a copy of the values."""
    op = _UFUNC_OPERATORS.get(ufunc)
    if op is not None and method == "__call__" and not kwargs and len(inputs) == 2:
        like = next(x for x in inputs if isinstance(x, Tensor))
        a, b = (_tensor_operand(x, like) for x in inputs)
        return op(a, b)
    if any(isinstance(o, Tensor) for o in kwargs.get("out", ())):
        return NotImplemented
    values = [numpy(x) if isinstance(x, Tensor) else x for x in inputs]
    return getattr(ufunc, method)(*values, **kwargs)


def _rebuild(values, dtype_name, device, requires_grad):
    """A tensor from what __reduce__ saved (pickle)."""
    dtype = getattr(_C, dtype_name)
    if not values.flags.c_contiguous:
        values = values.copy(order="C")
    t = _C._from_buffer(values, dtype, device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def __reduce__(self):
    """pickle keeps the dtype, shape, values, device and requires_grad (a leaf comes back, as
    from torch)."""
    if self.is_global:
        raise TypeError(
            "pickle: a global tensor cannot be pickled (its values are spread over the ranks); "
            "pickle to_local(), this rank's shard"
        )
    return (_rebuild, (_host_array(self), self.dtype.name, str(self.device), self.requires_grad))


def __copy__(self):
    """copy.copy: a new tensor on the same storage, requiring grad as this one does (torch's)."""
    t = self.detach()
    if self.requires_grad:
        t.requires_grad_(True)
    return t


def __deepcopy__(self, memo):
    """copy.deepcopy of a leaf: its values copied, requires_grad and grad kept, as torch's."""
    if not self.is_leaf:
        raise _C.InvalidArgument(
            f"deepcopy: only leaves (tensors no recorded op made) can be deep-copied; this tensor "
            f"was made by {self._grad_fn_name} (deep-copy detach() for its values)"
        )
    if id(self) in memo:
        return memo[id(self)]
    t = self.detach().clone()
    if self.requires_grad:
        t.requires_grad_(True)
        if self.grad is not None:
            t.grad = __deepcopy__(self.grad, memo)
    memo[id(self)] = t
    return t


def _T(self):
    """The dims reversed (a view), as torch's Tensor.T."""
    return self.permute(*range(self.ndim - 1, -1, -1))


def t(self):
    """torch's Tensor.t(): a 2-dim tensor transposed (a view); a 0- or 1-dim one as it is;
    ValueError naming the dims for more."""
    if self.ndim > 2:
        raise ValueError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return self if self.ndim < 2 else self.permute(1, 0)


def _data(self):
    """A tensor on the same storage with no history (detach()), as torch's Tensor.data."""
    return self.detach()


def element_size(self):
    """The bytes of one element."""
    return self.dtype.itemsize


_DLPACK_CPU = 1
_DLPACK_CUDA = 2


def __dlpack_device__(self):
    """(DLPack device type, index): (1, 0) for cpu, (2, i) for cuda:i."""
    d = self.device
    if d.type == "cpu":
        return (_DLPACK_CPU, 0)
    if d.type == "cuda":
        return (_DLPACK_CUDA, d.index)
    raise BufferError(f"__dlpack_device__: {d} memory has no DLPack device type; call .cpu() first")


def __dlpack__(self, stream=None, *, max_version=None, dl_device=None, copy=None):
    """The tensor's memory as a DLPack capsule, once every instruction writing it completed (so
    any consumer stream may read it at once); the capsule keeps the storage alive. copy=True
    exports a copy; dl_device=(1, 0) a copy on the cpu."""
    if self.is_global:
        raise BufferError("__dlpack__: the tensor is global; call to_local() first")
    t = self
    if dl_device is not None:
        want = tuple(dl_device)
        here = __dlpack_device__(self) if self.device.type in ("cpu", "cuda") else None
        if want != here:
            if copy is False:
                raise BufferError(f"__dlpack__: dl_device {want} needs a copy, but copy=False")
            if want != (_DLPACK_CPU, 0):
                raise BufferError(f"__dlpack__: cannot export to DLPack device {want}")
            t, copy = self.cpu(), False
    kind, _ = __dlpack_device__(t)
    if kind == _DLPACK_CPU and stream is not None:
        raise BufferError(f"__dlpack__: a cpu tensor takes stream=None, got {stream!r}")
    if copy:
        t = t.clone()
    try:
        capsule = _C._dlpack_export(t)
    except _C.InvalidArgument as e:
        raise BufferError(str(e)) from None
    return capsule


Tensor.__dlpack__ = __dlpack__
Tensor.__dlpack_device__ = __dlpack_device__
Tensor.numpy = numpy
Tensor.__array__ = __array__
Tensor.__bool__ = __bool__
Tensor.__float__ = __float__
Tensor.__int__ = __int__
Tensor.__index__ = __index__
Tensor.__repr__ = __repr__
Tensor.__str__ = __repr__
Tensor.__format__ = __format__
Tensor.grad_fn = property(_grad_fn)
Tensor.__getitem__ = __getitem__
Tensor.__setitem__ = __setitem__
Tensor.__array_ufunc__ = __array_ufunc__
Tensor.__reduce__ = __reduce__
Tensor.__copy__ = __copy__
Tensor.__deepcopy__ = __deepcopy__
Tensor.T = property(_T)
Tensor.t = t
Tensor.data = property(_data)
Tensor.element_size = element_size
Tensor.__iter__ = __iter__


# torch.return_types.max / min: the (values, indices) of a max or min along a dim.
class return_types:  # noqa: N801 (torch's name)
    max = collections.namedtuple("max", ["values", "indices"])
    min = collections.namedtuple("min", ["values", "indices"])


def _extreme(self, dim, keepdim, name, whole, pairwise, along):
    if isinstance(dim, Tensor):
        if keepdim:
            raise TypeError(f"{name}(): keepdim is not taken with a tensor 'other'")
        return pairwise(self, dim)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}(): keepdim needs a dim")
        return whole(self)
    return getattr(return_types, name)(*along(self, dim, keepdim))


def max(self, dim=None, keepdim=False):
    """torch's Tensor.max: of the whole tensor (amax); along dim, the named tuple (values,
    indices) (the first index among ties; a NaN wins); with a tensor, maximum(self, other)."""
    return _extreme(self, dim, keepdim, "max", Tensor.amax, Tensor.maximum, _C._max_dim)


def min(self, dim=None, keepdim=False):
    """torch's Tensor.min, as max."""
    return _extreme(self, dim, keepdim, "min", Tensor.amin, Tensor.minimum, _C._min_dim)


Tensor.max = max
Tensor.min = min


def gather(self, dim, index):
    """torch's Tensor.gather: ofl.gather(self, dim, index)."""
    return _C.gather(self, dim, index)


def scatter_add(self, dim, index, src):
    """torch's Tensor.scatter_add (a copy; self is unchanged): ofl.scatter_add(self, dim, index,
    src)."""
    return _C.scatter_add(self, dim, index, src)


def index_select(self, dim, index):
    """torch's Tensor.index_select: ofl.index_select(self, dim, index)."""
    return _C.index_select(self, dim, index)


Tensor.gather = gather
Tensor.scatter_add = scatter_add
Tensor.index_select = index_select


def split(self, split_size_or_sections, dim=0):
    """torch's Tensor.split: views of self along dim (ofl.split)."""
    return _C.split(self, split_size_or_sections, dim)


def chunk(self, chunks, dim=0):
    """torch's Tensor.chunk: at most `chunks` views of self along dim (ofl.chunk)."""
    return _C.chunk(self, chunks, dim)


def pow(self, exponent):
    """self ** exponent: a number exponent (pow_scalar, a float result) or a tensor one (promoted
    dtypes, broadcast)."""
    if isinstance(exponent, bool) or not isinstance(exponent, (Tensor, numbers.Real)):
        raise TypeError(
            "pow(): argument 'exponent' must be a number or a Tensor, not "
            f"{type(exponent).__name__}"
        )
    return self ** exponent


_table_sum = Tensor.sum  # the op table's method


def sum(self, *args, dtype=None, **kwargs):
    """torch's Tensor.sum(dim=None, keepdim=False, *, dtype=None): the op table's sum; with dtype,
    self is cast to dtype first and the sum is of dtype (an integer sum wraps at its width)."""
    if dtype is None:
        return _table_sum(self, *args, **kwargs)
    out = _table_sum(self.to(dtype), *args, **kwargs)
    return out if out.dtype == dtype else out.to(dtype)


Tensor.split = split
Tensor.chunk = chunk
Tensor.pow = pow
Tensor.sum = sum


_clamp_both = Tensor.clamp  # the op table's clamp(min, max): both bounds numbers


def clamp(self, min=None, max=None):
    """Each element limited to [min, max] (torch's Tensor.clamp): numbers go to the clamp ops
    (clamp, clamp_min, clamp_max; gradient g where min <= x <= max); a tensor bound is
    maximum(x, min) / minimum(x, max), broadcast."""
    if min is None and max is None:
        raise TypeError("clamp(): at least one of 'min' and 'max' must not be None")
    tensor_bound = isinstance(min, Tensor) or isinstance(max, Tensor)
    if tensor_bound:
        out = self
        if min is not None:
            out = out.maximum(min)
        if max is not None:
            out = out.minimum(max)
        return out
    if min is None:
        return self.clamp_max(max)
    if max is None:
        return self.clamp_min(min)
    return _clamp_both(self, min, max)


Tensor.clamp = clamp
Tensor.clip = clamp


def _dtype_method(name, dtype):
    def convert(self):
        return self.to(dtype)

    convert.__name__ = name
    convert.__doc__ = f"self.to(oneflow_lite.{dtype.name}): self itself when it has that dtype."
    return convert


# The dtype conversions of torch.Tensor (float(), long(), ...), each a cast.
for _name, _dtype in {
    "float": _C.float32,
    "double": _C.float64,
    "half": _C.float16,
    "bfloat16": _C.bfloat16,
    "long": _C.int64,
    "int": _C.int32,
    "short": _C.int16,
    "char": _C.int8,
    "byte": _C.uint8,
    "bool": _C.bool,
}.items():
    setattr(Tensor, _name, _dtype_method(_name, _dtype))
