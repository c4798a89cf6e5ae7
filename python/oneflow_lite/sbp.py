"""oneflow_lite.sbp: how a global tensor lies on the ranks of its placement."""

from . import _C

sbp = _C.Sbp
split = _C.Sbp.split
broadcast = _C.Sbp._broadcast()
partial_sum = _C.Sbp._partial_sum()
