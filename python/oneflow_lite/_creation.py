"""ofl.tensor, ofl.from_numpy and ofl.from_dlpack: tensors from Python data, numpy arrays and
DLPack producers."""

import builtins

import numpy as np

from . import _C, _tensor
from ._dtypes import TO_NUMPY, from_numpy_dtype, float32_to_bfloat16_bits


# The dtype a Python value gives (torch's defaults); a numpy scalar or a tensor gives its own.
_BOOL, _INT, _FLOAT = np.dtype(np.bool_), np.dtype(np.int64), np.dtype(np.float32)


def _kind_rank(d):
    return "biuf".index(d.kind) if d.kind in "biuf" else -1


def _infer_list_dtype(data):
    """PyTorch's rule for Python data: the values' dtypes promoted, Python bools as bool, ints as
    int64, floats as float32, a numpy scalar or a tensor as its own dtype; the highest kind (bool,
    integer, floating) wins, and within it the larger type (numpy's promotion)."""
    seen = []

    def walk(x):
        if isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, np.generic) and x.dtype.kind in "biuf":
            seen.append(x.dtype)
        elif isinstance(x, builtins.bool):
            seen.append(_BOOL)
        elif isinstance(x, builtins.int):
            seen.append(_INT)
        elif isinstance(x, builtins.float):
            seen.append(_FLOAT)
        elif isinstance(x, _C.Tensor):
            seen.append(_FLOAT if x.dtype is _C.bfloat16 else TO_NUMPY[x.dtype])
        else:
            raise TypeError(
                f"tensor(): argument 'data' holds a {type(x).__name__} ({x!r}); expected "
                "numbers, bools and nested lists or tuples of them"
            )

    walk(data)
    if not seen:
        return _C.float32  # an empty list
    top = builtins.max(_kind_rank(d) for d in seen)
    result = None
    for d in seen:
        if _kind_rank(d) == top:
            result = d if result is None else np.promote_types(result, d)
    if result.kind == "f" and result.itemsize > 8:
        result = np.dtype(np.float64)
    return from_numpy_dtype(result, "tensor", "data")


def _check_dtype_arg(dtype, fn):
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise TypeError(
            f"{fn}(): argument 'dtype' must be an oneflow_lite dtype (ofl.float32, ...), "
            f"not {type(dtype).__name__}"
        )


def _from_array(a, dtype, device, fn):
    """A copy of numpy array `a` (any strides) as a tensor of `dtype` (a's own when None)."""
    if a.dtype.hasobject or a.dtype.kind not in "biuf":
        raise TypeError(
            f"{fn}(): argument 'data' is a numpy array of dtype {a.dtype}; expected bool, "
            "integer or floating-point values"
        )
    if dtype is None:
        dtype = from_numpy_dtype(a.dtype, fn, "data")
    if dtype is _C.bfloat16:
        a = float32_to_bfloat16_bits(a.astype(np.float32, copy=False))
    else:
        a = np.asarray(a, dtype=TO_NUMPY[dtype])  # (ascontiguousarray would make 0-dim 1-dim)
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
    return _C._from_buffer(a, dtype, device)


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of `data`: nested lists or tuples, a Python number, a numpy
    array (any dtype oneflow_lite has, any strides), a Tensor, or an object with __dlpack__."""
    _check_dtype_arg(dtype, "tensor")
    if isinstance(data, range):
        data = list(data)
    if isinstance(data, _C.Tensor):
        t = data.detach().clone()
        if dtype is not None and dtype is not t.dtype:
            # No cast op: through the host, then back to the data's device unless told another.
            t = _from_array(_host_values(t), dtype, t.device if device is None else device, "tensor")
        elif device is not None:
            t = t.to(device)
    elif isinstance(data, np.ndarray):
        t = _from_array(data, dtype, device, "tensor")
    elif hasattr(data, "__dlpack__"):
        src = from_dlpack(data)
        t = src.clone() if device is None or src.device == device else src.to(device)
        # The copy reads the producer's memory asynchronously: done before that memory is free to
        # change again, as tensor() promises.
        _C.sync()
        if dtype is not None and dtype is not t.dtype:
            t = _from_array(_host_values(t), dtype, t.device, "tensor")
    elif isinstance(data, np.generic):
        # A numpy scalar keeps its dtype (ofl.tensor(np.float64(1.5)) is float64), as in torch.
        t = _from_array(np.asarray(data), dtype, device, "tensor")
    elif isinstance(data, (list, tuple, builtins.int, builtins.float, builtins.bool)):
        if dtype is None:
            dtype = _infer_list_dtype(data)
        if isinstance(data, (list, tuple)) and any(isinstance(x, _C.Tensor) for x in data):
            data = [_host_values(x) if isinstance(x, _C.Tensor) else x for x in data]
        np_dtype = np.float32 if dtype is _C.bfloat16 else TO_NUMPY[dtype]
        try:
            a = np.array(data, dtype=np_dtype)
        except (ValueError, TypeError, OverflowError) as e:
            raise _C.InvalidArgument(f"tensor: data cannot be made a {dtype} array: {e}") from None
        t = _from_array(a, dtype, device, "tensor")
    else:
        raise TypeError(
            "tensor(): argument 'data' must be a list, tuple, number, numpy array, Tensor or an "
            f"object with __dlpack__, not {type(data).__name__}"
        )
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(a):
    """A tensor holding a copy of numpy array `a` (any strides): `a` may change afterwards."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"from_numpy(): argument 'a' must be a numpy.ndarray, not {type(a).__name__}")
    return _from_array(a, None, None, "from_numpy")


def _host_values(t):
    """t's values as a numpy array, bfloat16 as float32 (numpy has none)."""
    return _tensor._values(t)


def from_dlpack(x):
    """A tensor on the memory of `x` (an object with __dlpack__, or a DLPack capsule) with no copy,
    as torch.from_dlpack; the capsule's owner keeps that memory alive while any view of it lives.
    Writes through either side are seen by the other; ops run asynchronously, so an op issued on the
    tensor may see a later write to x unless ofl.sync() comes between."""
    if hasattr(x, "__dlpack__"):
        # Asked here, so that the producer's own refusal (a sim tensor, a byte-swapped array)
        # reaches the caller as it said it; the capsule alone holds the memory from then on.
        try:
            capsule = x.__dlpack__()
        except Exception as e:
            raise BufferError(
                f"from_dlpack(): the producer ({type(x).__module__}.{type(x).__name__}) refused "
                f"to export its memory: {type(e).__name__}: {e}"
            ) from e
        return _C.from_dlpack(capsule)
    return _C.from_dlpack(x)
