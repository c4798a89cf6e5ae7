"""ofl.init_distributed() in a program whose MPI mpi4py initialised first: two ranks under
mpiexec agree with mpi4py on rank and world size, and a global tensor's boxing works."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mpi4py")

CHILD = textwrap.dedent(
    """
    import pathlib
    import sys

    from mpi4py import MPI
    import numpy as np
    import oneflow_lite as ofl

    assert MPI.Is_initialized()
    ofl.init_distributed()
    comm = MPI.COMM_WORLD
    assert (ofl.rank(), ofl.world_size()) == (comm.Get_rank(), comm.Get_size())
    p = ofl.placement("cpu", ranks=list(range(ofl.world_size())))
    t = ofl.tensor(np.arange(4, dtype=np.float32)).to_global(placement=p, sbp=ofl.sbp.broadcast)
    local = t.to_global(placement=p, sbp=ofl.sbp.split(0)).to_local().tolist()
    assert local == [2.0 * ofl.rank(), 2.0 * ofl.rank() + 1], local
    assert comm.allreduce(1) == 2  # mpi4py's own collectives still work
    # One file per rank: the ranks' printed lines may interleave.
    (pathlib.Path(sys.argv[1]) / f"rank{ofl.rank()}.ok").write_text("ok")
    """
)


@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="mpiexec is not installed")
def test_init_distributed_after_mpi4py(tmp_path):
    # A clean environment for the launcher: this process may be an MPI singleton itself.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "PMI_"))}
    r = subprocess.run(
        ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", "2", sys.executable, "-c", CHILD,
         str(tmp_path)],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rank0.ok", "rank1.ok"]
