"""The numpy dtype of each oneflow_lite dtype, and back."""

import numpy as np

from . import _C

# bfloat16 has no numpy dtype: its bits travel as uint16.
TO_NUMPY = {
    _C.bool: np.dtype(np.bool_),
    _C.uint8: np.dtype(np.uint8),
    _C.int8: np.dtype(np.int8),
    _C.int16: np.dtype(np.int16),
    _C.int32: np.dtype(np.int32),
    _C.int64: np.dtype(np.int64),
    _C.float16: np.dtype(np.float16),
    _C.bfloat16: np.dtype(np.uint16),
    _C.float32: np.dtype(np.float32),
    _C.float64: np.dtype(np.float64),
}
FROM_NUMPY = {v: k for k, v in TO_NUMPY.items() if k is not _C.bfloat16}


def from_numpy_dtype(np_dtype, fn, arg):
    """The oneflow_lite dtype of a numpy dtype; a TypeError naming fn and arg for one it lacks."""
    d = FROM_NUMPY.get(np.dtype(np_dtype).newbyteorder("="))
    if d is None:
        names = ", ".join(str(k) for k in FROM_NUMPY)
        raise TypeError(
            f"{fn}(): argument '{arg}' has numpy dtype {np.dtype(np_dtype)}, which oneflow_lite "
            f"has no dtype for (it has {names})"
        )
    return d


def float32_to_bfloat16_bits(a):
    """Rounds float32 values to bfloat16 (to nearest, ties to even; NaN stays NaN) as uint16."""
    a = np.asarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), rounded)


def bfloat16_bits_to_float32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)
