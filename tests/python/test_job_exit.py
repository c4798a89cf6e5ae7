"""A rank that ends with an uncaught exception under mpiexec ends the whole job at once (the
package's exit hook: ofl::abort_job, MPI_Abort), with the exception printed, and the other ranks
say which rank failed, instead of the job waiting in MPI_Finalize until the hang timeout (or
forever, as here with OFL_VM_TIMEOUT_SECONDS=0)."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(shutil.which("mpiexec") is None, reason="mpiexec is not installed")

CHILD = textwrap.dedent(
    """
    import numpy as np
    import oneflow_lite as ofl

    ofl.init_distributed()
    p = ofl.placement("cpu", ranks=list(range(ofl.world_size())))
    t = ofl.tensor(np.arange(4, dtype=np.float32)).to_global(placement=p, sbp=ofl.sbp.split(0))
    if ofl.rank() == 0:
        raise ValueError("boom on rank 0")
    # The other ranks wait for rank 0 inside the all-gather; rank 0's exit, without the hook,
    # waits for them in MPI_Finalize.
    print("rank", ofl.rank(), "got", t.to_global(placement=p, sbp=ofl.sbp.broadcast).numpy(),
          flush=True)
    """
)


def run_job(code, n, extra_env, timeout=120):
    """Runs `code` on n ranks; the whole launch is killed (its process group) if it outlives
    `timeout`, so that a hang fails the test instead of hanging the suite."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "PMI_"))}
    env.update(extra_env)
    proc = subprocess.Popen(
        ["mpiexec", "--allow-run-as-root", "--oversubscribe", "-n", str(n), sys.executable, "-c",
         code],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"the job did not end within {timeout} s:\n{out}")
    return proc.returncode, out


@pytest.mark.parametrize("n", [2, 3])
def test_an_uncaught_exception_on_one_rank_ends_the_job(n):
    code, out = run_job(CHILD, n, {"OFL_VM_TIMEOUT_SECONDS": "0"})
    assert code != 0, out
    assert "Traceback" in out and "ValueError: boom on rank 0" in out, out
    assert "rank 0 ends the job (MPI_Abort): an uncaught exception: ValueError: boom on rank 0" in out
    for r in range(1, n):
        assert f"rank {r}: rank 0 ends the job (MPI_Abort): an uncaught exception: " in out, out
    assert " got " not in out, out


def test_a_job_that_ends_normally_is_not_aborted():
    code, out = run_job(CHILD.replace('raise ValueError("boom on rank 0")', "pass"), 2, {})
    assert code == 0, out
    assert "MPI_Abort" not in out, out
    assert out.count(" got ") == 2, out
