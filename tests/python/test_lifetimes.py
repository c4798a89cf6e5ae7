"""Lifetimes: the runtime after ofl.shutdown() (in a child process, since shutdown is for the
whole process) and the interpreter's exit with tensors and queued work still alive."""

import os
import subprocess
import sys
import textwrap

import pytest


def run_child(code, **env):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
        env=dict(os.environ, **env),
    )


def test_use_after_shutdown_raises_error():
    r = run_child(
        """
        import oneflow_lite as ofl
        x = ofl.ones(2, 3, device="sim:0")
        ofl.shutdown()
        for f in (x.numpy, lambda: ofl.ones(2), lambda: x + 1, ofl.sync):
            try:
                f()
                print("no error")
            except ofl.Error as e:
                print("Error:", e)
        """
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 4 and all(l.startswith("Error:") for l in lines), r.stdout
    assert all("shut down" in l for l in lines)


def test_exit_with_live_tensors_and_queued_work():
    r = run_child(
        """
        import oneflow_lite as ofl
        keep = [ofl.ones(256, 256, device=d).expand(4, 256, 256).contiguous() for d in ("cpu", "sim:0")]
        x = ofl.ones(3, requires_grad=True)
        y = (x * 2).sum()   # a graph still alive at exit
        print("ok")
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_numpy_arrays_outlive_shutdown_and_exit():
    # numpy() hands out memory of the cpu pool, owned by the array: the array stays valid after
    # shutdown (and after every tensor died), and the interpreter's exit frees it cleanly.
    r = run_child(
        """
        import oneflow_lite as ofl
        t = ofl.ones(1 << 18) * 3
        a, b = t.numpy(), (t + 1).numpy()
        del t
        ofl.shutdown()
        a[0] = 7.0
        print(float(a[0]), float(a[1]), float(b.sum()), a.flags.writeable)
        del a
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"7.0 3.0 {4.0 * (1 << 18)} True"


@pytest.mark.parametrize("read", ["x.numpy()", "x.sum().item()", "ofl.sync()"])
def test_a_daemon_thread_waiting_in_a_read_at_exit(read):
    # The main thread returns while a daemon thread waits for work on the simulated accelerator;
    # that wait ends while Python finalizes. Python used to end the thread as it took the GIL back,
    # inside a C++ frame that may not throw: "terminate called without an active exception",
    # SIGABRT, after nanobind's report of objects the thread's frames still held.
    r = run_child(
        f"""
        import threading
        import oneflow_lite as ofl
        x = ofl.ones(1 << 16, device="sim:0")
        for _ in range(20):
            x = x * 1.0001
        started = threading.Event()
        def reader():
            started.set()
            {read}
            print("the read returned")
        threading.Thread(target=reader, daemon=True).start()
        started.wait()
        print("main returns")
        """,
        OFL_SIM_MAX_DELAY_US="50000",
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "main returns", r.stdout
    assert "terminate called" not in r.stderr, r.stderr
    assert "nanobind: leaked" not in r.stderr, r.stderr


def test_dlpack_arrays_outlive_shutdown():
    # np.from_dlpack shares the tensor's own pool memory (no copy): shutdown keeps the memory that a
    # tensor, a view or a capsule still holds, so the arrays read it afterwards, small (a slot of a
    # slab) and 16 MiB (a segment of its own) alike, and dying after shutdown ends nothing badly.
    r = run_child(
        """
        import numpy as np
        import oneflow_lite as ofl
        small = ofl.tensor(np.arange(8, dtype=np.float32)) * 2
        big = ofl.ones(1 << 22) * 3
        n, m = np.from_dlpack(small), np.from_dlpack(big)
        v = np.from_dlpack(big[(1 << 22) - 4:])  # a view's capsule
        t = np.from_dlpack(ofl.ones(5) + 4)      # only the capsule holds this tensor
        ofl.shutdown()
        print(n[:3].tolist(), n.tolist()[-1], float(m[0]), float(m[-1]), float(m.sum()))
        print(v.tolist(), t.tolist())
        del small, big, n, m, v, t
        """
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"[0.0, 2.0, 4.0] 14.0 3.0 3.0 {3.0 * (1 << 22)}", r.stdout
    assert lines[1] == "[3.0, 3.0, 3.0, 3.0] [5.0, 5.0, 5.0, 5.0, 5.0]", r.stdout
