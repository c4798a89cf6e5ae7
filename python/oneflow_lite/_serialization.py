"""ofl.save and ofl.load: a tensor or a state dict (str -> tensor, as Module.state_dict gives) in
numpy's .npz format (docs/nn_optim.md, "Saving"): one array per entry under its key, plus the entry
"__oneflow_lite__" holding JSON metadata (the format version, whether a single tensor was saved,
each entry's dtype; bfloat16 values are stored as their uint16 bits). numpy reads the file
(numpy.load) without pickle, and load never unpickles."""

import collections
import json
import os

import numpy as np

from . import _C
from ._dtypes import float32_to_bfloat16_bits

_META = "__oneflow_lite__"
_FORMAT = 1


def _array_of(t, what):
    if not isinstance(t, _C.Tensor):
        raise TypeError(f"save(): {what} must be a Tensor, not {type(t).__name__}")
    if t.is_global:
        raise TypeError(f"save(): {what} is a global tensor; save to_local(), this rank's shard")
    t = t.detach().cpu()
    if t.dtype is _C.bfloat16:
        # bfloat16 to float32 is exact, and back rounds to the same bits.
        return float32_to_bfloat16_bits(t.float().numpy())
    return t.numpy()


def save(obj, f):
    """Writes a tensor, or a dict of str -> tensor (a state dict), to the path `f` (.npz)."""
    if isinstance(obj, _C.Tensor):
        entries, single = {"tensor": obj}, True
    elif isinstance(obj, dict):
        entries, single = obj, False
        for k in entries:
            if not isinstance(k, str):
                raise TypeError(f"save(): a state dict's keys must be str, got {type(k).__name__}")
            if k == _META:
                raise ValueError(f"save(): the key '{_META}' is reserved")
    else:
        raise TypeError(
            f"save(): obj must be a Tensor or a dict of str -> Tensor (a state dict), not {type(obj).__name__}"
        )
    arrays = {k: _array_of(v, f"the value of '{k}'" if not single else "obj") for k, v in entries.items()}
    meta = {
        "format": _FORMAT,
        "single": single,
        "keys": list(entries),
        "dtypes": {k: v.dtype.name for k, v in entries.items()},
    }
    arrays[_META] = np.array(json.dumps(meta))
    path = os.fspath(f)
    with open(path, "wb") as out:
        np.savez(out, **arrays)


def load(f, map_location=None):
    """What save wrote: the tensor, or an OrderedDict of the entries in their saved order, on
    the cpu or on map_location (a device or its name)."""
    path = os.fspath(f)
    with np.load(path, allow_pickle=False) as z:
        if _META not in z.files:
            raise ValueError(f"load(): {path} is not a file ofl.save wrote (no '{_META}' entry)")
        meta = json.loads(str(z[_META]))
        if meta.get("format") != _FORMAT:
            raise ValueError(f"load(): {path} has format {meta.get('format')}; this version reads {_FORMAT}")
        out = collections.OrderedDict()
        for k in meta["keys"]:
            a = z[k]
            dtype = getattr(_C, meta["dtypes"][k])
            if dtype is _C.bfloat16:
                t = _C._from_buffer(np.ascontiguousarray(a), _C.bfloat16, None)
            else:
                from ._creation import tensor

                t = tensor(a, dtype=dtype)
            if map_location is not None:
                t = t.to(map_location)
            out[k] = t
    return out["tensor"] if meta["single"] else out
