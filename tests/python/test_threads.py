"""Two Python threads issue work at once: the GIL is released inside the runtime's calls, so the
threads interleave, and each gets its own right answer (that a waiting call lets another thread
run is test_gil_rule.py's)."""

import threading

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
