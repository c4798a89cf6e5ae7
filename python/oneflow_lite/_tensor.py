"""The Tensor methods written in Python, added to the extension's class: numpy and Python
conversions, printing, indexing, grad_fn."""

import builtins
import operator

import numpy as np

from . import _C
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
    prefix = "tensor("
    a = _values(self)  # a global tensor's logical values (a collective: every rank prints)
    if a.size == 0:
        body = "[]"
    else:
        body = np.array2string(a, separator=", ", prefix=prefix, threshold=1000, edgeitems=3)
    parts = [body]
    if a.size == 0 and a.ndim != 1:
        parts.append(f"size={self.shape}")
    if self.dtype not in _IMPLIED_DTYPES or (a.size == 0 and self.dtype is not _C.float32):
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
    dim = 0
    for i in items:
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
                raise _index_error(i, dim, size)
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


def __iter__(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


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
Tensor.grad_fn = property(_grad_fn)
Tensor.__getitem__ = __getitem__
Tensor.__iter__ = __iter__
