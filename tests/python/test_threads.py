"""Two Python threads issue work at once: the GIL is released inside the runtime's calls, so the
threads interleave, and each gets its own right answer."""

import threading
import time

import numpy as np

import oneflow_lite as ofl


def test_two_threads_issue_work_concurrently():
    errors = []
    results = {}
    started = threading.Barrier(2)

    def work(name, device, value):
        try:
            started.wait()
            acc = ofl.zeros(64, 64, device=device)
            for _ in range(200):
                acc += ofl.full((64, 64), value, device=device).expand(2, 64, 64).sum(0)
            results[name] = acc.numpy()
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [
        threading.Thread(target=work, args=("a", "cpu", 1.0)),
        threading.Thread(target=work, args=("b", "sim:0", 0.5)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    np.testing.assert_array_equal(results["a"], np.full((64, 64), 400.0, np.float32))
    np.testing.assert_array_equal(results["b"], np.full((64, 64), 200.0, np.float32))


def test_a_blocking_call_lets_another_thread_run():
    x = ofl.ones(1 << 21, device="sim:0")
    ofl.sync()
    stamps = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.0005)

    th = threading.Thread(target=ticker)
    th.start()
    try:
        time.sleep(0.01)
        y = x
        for _ in range(60):  # queued work: ~ a few ms each on the simulated device
            y = y * 1.0001
        t0 = time.perf_counter()
        ofl.sync()
        t1 = time.perf_counter()
    finally:
        stop.set()
        th.join()
    del y
    assert t1 - t0 > 0.02, "the queued work finished too soon to tell"
    # Had sync kept the GIL, the ticker could not have run while it waited.
    assert any(t0 < s < t1 for s in stamps)
