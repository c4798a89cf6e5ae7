"""The values part of a tensor's repr: every value of a tensor of at most 1000 elements (numpy's
layout), and of a larger one the 3 first and last along each dim longer than 6 with `...` between
them, as PyTorch and numpy summarise. Only the printed elements leave the device: they are gathered
there into one small tensor (narrow views copied into it) and read once, so printing a large tensor,
or an expanded view of terabytes, reads a few hundred values."""

import itertools
import sys

import numpy as np

from . import _C

THRESHOLD = 1000
EDGE_ITEMS = 3
LINE_WIDTH = 75  # numpy's, so that small and summarised tensors wrap alike


def _gather_edges(t, cut):
    """The elements printed of `t` (local, no grad): along each dim with cut[d] its first and last
    EDGE_ITEMS, as one small tensor on t's device. One copy per corner (2 ** dims cut), never more
    than the elements printed."""
    shape = t.shape
    small = [2 * EDGE_ITEMS if c else n for n, c in zip(shape, cut)]
    out = _C.empty(*small, dtype=t.dtype, device=t.device)
    cut_dims = [d for d, c in enumerate(cut) if c]
    for corner in itertools.product((False, True), repeat=len(cut_dims)):
        src, dst = t, out
        for d, tail in zip(cut_dims, corner):
            src = src.narrow(d, shape[d] - EDGE_ITEMS if tail else 0, EDGE_ITEMS)
            dst = dst.narrow(d, EDGE_ITEMS if tail else 0, EDGE_ITEMS)
        dst.copy_(src)
    return out


def _element_strings(a):
    """numpy's strings for the elements of `a`, padded to one width as numpy pads them."""
    flat = a.reshape(-1)
    text = np.array2string(
        flat, separator=", ", threshold=sys.maxsize, max_line_width=sys.maxsize
    )
    return np.array(text[1:-1].split(", "), dtype=object).reshape(a.shape)


def _row(words, column):
    """A 1-dim row `[w, w, ...]` whose first element is at `column`, wrapped at LINE_WIDTH with
    the continuation lines starting at that column."""
    lines, line = [], "["
    for k, w in enumerate(words):
        piece = w + ("," if k < len(words) - 1 else "]")
        if len(line) > 1 and column - 1 + len(line) + len(piece) > LINE_WIDTH:
            lines.append(line.rstrip())
            line = " "
        line += piece + " "
    lines.append(line.rstrip())
    return ("\n" + " " * (column - 1)).join(lines)


def _layout(s, cut, dim, indent):
    """The nested rows of the element strings `s` (the dims from `dim` on), with `...` where a dim
    was cut; `indent`: the column of the outermost `[`."""
    n = s.shape[0]
    items = list(range(n))
    if cut[dim]:
        items = items[:EDGE_ITEMS] + [None] + items[EDGE_ITEMS:]
    column = indent + dim + 1
    if s.ndim == 1:
        return _row(["..." if i is None else s[i] for i in items], column)
    sep = "," + "\n" * (s.ndim - 1) + " " * column
    rows = ["..." if i is None else _layout(s[i], cut, dim + 1, indent) for i in items]
    return "[" + sep.join(rows) + "]"


def values_str(t, indent, to_numpy):
    """The values of local tensor `t` as the repr shows them, the outermost `[` at column `indent`;
    `to_numpy` reads a tensor's values (bfloat16 as float32)."""
    n = t.numel()
    if n == 0:
        return "[]"
    t = t.detach()
    if n <= THRESHOLD:
        return np.array2string(
            to_numpy(t), separator=", ", prefix=" " * indent, threshold=THRESHOLD, edgeitems=EDGE_ITEMS
        )
    cut = [size > 2 * EDGE_ITEMS for size in t.shape]
    a = to_numpy(_gather_edges(t, cut))
    return _layout(_element_strings(a), cut, 0, indent)
