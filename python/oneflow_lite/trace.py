"""oneflow_lite.trace: the VM's Chrome trace (chrome://tracing, Perfetto).

    ofl.trace.start(); ...; ofl.trace.stop("trace.json")
    with ofl.trace.tracing("trace.json"): ...
"""

import contextlib

from . import _C

start = _C.trace.start
stop = _C.trace.stop
is_tracing = _C.trace.is_tracing


@contextlib.contextmanager
def tracing(path):
    """Records the instructions issued inside the block and writes them to ``path`` on exit
    (also when the block raises)."""
    start()
    try:
        yield
    finally:
        stop(str(path))
