"""Ctrl-C during a long wait: a wait of the main thread checks for signals while it sleeps and
raises the handler's KeyboardInterrupt at once, not when the awaited work is done; the runtime
keeps working afterwards. The wait here is for work on the simulated accelerator held up by a
delay of many minutes (OFL_SIM_MAX_DELAY_US with a fixed seed), with no hang timeout: without
the signal checks the child would sit in the wait until the test's own time limit."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent(
    """
    import os
    import oneflow_lite as ofl

    x = ofl.ones(4, device="sim:0") * 2  # held up on the device for minutes
    try:
        print("waiting", flush=True)
        {wait}
        print("the wait ended", flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
    # The runtime still works (on the cpu: every sim stream draws such delays).
    print((ofl.ones(3) + 1).tolist(), (ofl.ones(2) * 3).sum().item(), flush=True)
    os._exit(0)  # x's work is still held up on sim:0: the exit would wait for it
    """
)


@pytest.mark.parametrize("wait", ["ofl.sync()", "x.numpy()", "x.sum().item()"])
def test_sigint_ends_a_long_wait_with_keyboard_interrupt(wait):
    env = dict(os.environ, OFL_SIM_MAX_DELAY_US="2000000000", OFL_SIM_SEED="7",
               OFL_VM_TIMEOUT_SECONDS="0")
    proc = subprocess.Popen([sys.executable, "-c", CHILD.format(wait=wait)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "waiting"
        time.sleep(0.5)  # into the wait (a signal before it would be raised by Python anyway)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"Ctrl-C did not end the wait within 60 s\n{out}\n{err}")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines() == ["KeyboardInterrupt", "[2.0, 2.0, 2.0] 6.0"], out + err
