"""What the package does when the interpreter exits.

- atexit: before Python finalizes, threads that would take the GIL back after a wait (a daemon
  thread inside ``numpy()`` or ``item()``) are told to wait for the process's end instead, since
  Python would end them inside a C++ frame that cannot be unwound (``terminate called without an
  active exception``); see python/src/gil.cpp.
- ``init_distributed`` installs a ``sys.excepthook`` for the job: a rank that ends with an uncaught
  exception prints it as usual and then ends every rank (``ofl::abort_job``: MPI_Abort, after the
  other ranks logged which rank failed), instead of waiting in MPI_Finalize for ranks that wait for
  it inside a collective.
"""

import atexit
import sys
import threading
import traceback

from . import _C


def _at_exit():
    daemons = any(
        t.daemon and t.is_alive() for t in threading.enumerate() if t is not threading.current_thread()
    )
    _C._at_exit(daemons)


atexit.register(_at_exit)

_previous_excepthook = None


def _excepthook(exc_type, exc, tb):
    (_previous_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    # An interactive session goes on after an uncaught exception: there is nothing to end.
    if sys.flags.interactive or hasattr(sys, "ps1"):
        return
    try:
        sys.stderr.flush()
    except Exception:
        pass
    why = "".join(traceback.format_exception_only(exc_type, exc)).strip()
    _C._abort_job("an uncaught exception: " + why)  # returns only without a job to end


def init_distributed():
    """Reads the MPI environment (initialises MPI unless the program did); idempotent. Under
    mpiexec with more than one process, an uncaught exception on any rank then ends the whole job
    (MPI_Abort) once it is printed, and every other rank logs which rank failed."""
    global _previous_excepthook
    _C.init_distributed()
    if _C.world_size() > 1 and sys.excepthook is not _excepthook:
        _previous_excepthook = sys.excepthook
        sys.excepthook = _excepthook
