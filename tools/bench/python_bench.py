#!/usr/bin/env python3
"""oneflow_lite from Python against PyTorch from Python, and against its own C++ calls.

    python tools/bench/python_bench.py [--runs 5]

Run it with a Python that has oneflow_lite (pip install .), numpy and torch (PyPI's build)
installed. Each of the runs starts one child Python process that times every case; the same calls
made from C++ are timed in that process too (oneflow_lite._C._time_cpp_calls), alternating with
the Python loop, so the Python layer's cost is the median of the differences of pairs of figures
taken moments apart (and per call: divided by the number of calls the statement makes). A figure
is the median over its repetitions within a run; the table gives the median and the worst over
the runs.

Cases, per call on tiny tensors (1000 calls, then one sync; torch is synchronous and runs on one
intra-op thread, after every ofl case). Each statement is inlined in a for loop, as timeit does:
  x.expand(2, 4, 5, 3).contiguous(), x.repeat(2, 1, 2, 1) with x of shape (4, 1, 3),
  empty(4, 3), (a + b).sum().backward() with a, b of shape (4, 1, 3) requiring grad.
Reads of a finished tiny tensor (1000 calls): s.item() of a computed 0-dim tensor, b.tolist() of
12 floats, and the round trip (b + 1).sum().item(), against the same torch calls.
Copies of 64 MiB: ofl.from_numpy(a) against np.copyto into an array numpy allocated before,
t.numpy() against a.copy() (both allocate the destination); from_dlpack of 1 KiB and 64 MiB.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CALLS = 1000
REPS = 15
BIG = 64 << 20


def compile_loop(stmt, env):
    """A function running `stmt` n times in a for loop, with `env` as its globals: the statement is
    inlined in the loop as timeit does, so no call of a Python function is timed with it."""
    code = f"def _loop(_n):\n    for _ in range(_n):\n        {stmt}\n"
    local = {}
    exec(code, env, local)
    return local["_loop"]


def loop_ns(loop, sync):
    t0 = time.perf_counter_ns()
    loop(CALLS)
    sync()
    return (time.perf_counter_ns() - t0) / CALLS


def per_call_ns(loop, sync):
    """Median over REPS of (CALLS calls, then sync) in ns per call, after a warm-up."""
    loop_ns(loop, sync)
    return statistics.median(loop_ns(loop, sync) for _ in range(REPS))


def once_ns(fn, reps=REPS):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times)


def child():
    import numpy as np
    import torch

    import oneflow_lite as ofl

    # One intra-op thread, as the C++ benchmarks' libtorch baselines (tiny tensors never use more).
    torch.set_num_threads(1)
    out = {"torch_version": torch.__version__, "numpy_version": np.__version__}
    x = ofl.tensor(np.arange(12, dtype=np.float32).reshape(4, 1, 3))
    a = ofl.tensor(np.arange(12, dtype=np.float32).reshape(4, 1, 3), requires_grad=True)
    b = ofl.tensor(np.arange(12, dtype=np.float32).reshape(4, 1, 3), requires_grad=True)
    tx = torch.arange(12, dtype=torch.float32).reshape(4, 1, 3)
    ta = tx.clone().requires_grad_()
    tb = tx.clone().requires_grad_()
    ofl.sync()
    env = {"ofl": ofl, "torch": torch, "x": x, "a": a, "b": b, "tx": tx, "ta": ta, "tb": tb}
    cases = {
        name: (compile_loop(s_ofl, env), compile_loop(s_torch, env))
        for name, s_ofl, s_torch in (
            ("py_expand_contiguous", "x.expand(2, 4, 5, 3).contiguous()",
             "tx.expand(2, 4, 5, 3).contiguous()"),
            ("py_repeat", "x.repeat(2, 1, 2, 1)", "tx.repeat(2, 1, 2, 1)"),
            ("py_empty", "ofl.empty(4, 3)", "torch.empty(4, 3)"),
            ("py_add_sum_backward", "(a + b).sum().backward()", "(ta + tb).sum().backward()"),
        )
    }
    nothing = lambda: None  # noqa: E731
    # Every ofl case first, then every torch case: torch's intra-op threads may still spin after
    # its calls and would take a core from the VM's worker. Each Python loop alternates with the
    # same calls made from C++.
    for name, (f_ofl, _) in cases.items():
        loop_ns(f_ofl, ofl.sync)  # warm-up
        py, cpp = [], []
        for _ in range(REPS):
            py.append(loop_ns(f_ofl, ofl.sync))
            cpp.append(ofl._C._time_cpp_calls(name, CALLS))
        # The layer is the median of the paired differences: each pair is timed moments apart,
        # so a change of the machine's speed between repetitions does not enter it.
        layer = statistics.median(p - c for p, c in zip(py, cpp))
        out[name] = {"ofl": statistics.median(py), "cpp": statistics.median(cpp), "layer": layer}
    for name, (_, f_torch) in cases.items():
        out[name]["torch"] = per_call_ns(f_torch, nothing)

    # Reads, ofl and torch alternating per repetition (no C++ counterpart: the read is the point).
    s, ts = (b + 1).sum().detach(), (tb + 1).sum().detach()
    b12, tb12 = x.reshape(12), tx.reshape(12)
    ofl.sync()
    env.update({"s": s, "ts": ts, "b12": b12, "tb12": tb12})
    for name, s_ofl, s_torch in (
        ("read_item", "s.item()", "ts.item()"),
        ("read_tolist", "b12.tolist()", "tb12.tolist()"),
        ("read_add_sum_item", "(b12 + 1).sum().item()", "(tb12 + 1).sum().item()"),
    ):
        f_ofl, f_torch = compile_loop(s_ofl, env), compile_loop(s_torch, env)
        loop_ns(f_ofl, nothing)
        loop_ns(f_torch, nothing)
        o, t = [], []
        for _ in range(REPS):
            o.append(loop_ns(f_ofl, nothing))
            t.append(loop_ns(f_torch, nothing))
        out[name] = {"ofl": statistics.median(o), "torch": statistics.median(t)}

    src = np.random.default_rng(0).integers(0, 255, size=BIG, dtype=np.uint8).view(np.float32)
    dst = np.empty_like(src)
    t = ofl.from_numpy(src)
    out["from_numpy_64MiB"] = {
        "ofl": once_ns(lambda: ofl.from_numpy(src)),
        "numpy": once_ns(lambda: np.copyto(dst, src)),
    }
    out["numpy_64MiB"] = {"ofl": once_ns(lambda: t.numpy()), "numpy": once_ns(lambda: src.copy())}
    small = np.zeros(256, np.float32)
    out["from_dlpack"] = {
        "ofl_1KiB": once_ns(lambda: ofl.from_dlpack(small), 101),
        "ofl_64MiB": once_ns(lambda: ofl.from_dlpack(src), 101),
    }
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child()
    runs = []
    for i in range(args.runs):
        # numpy's OpenBLAS threads would spin on the cores beside the timed loops; no case uses
        # BLAS, so they get one thread.
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        r = subprocess.run([sys.executable, __file__, "--child"], check=True, capture_output=True, env=env,
                           text=True)
        runs.append({"py": json.loads(r.stdout)})
        print(f"run {i + 1}/{args.runs} done", file=sys.stderr)

    def col(get):
        v = [get(r) for r in runs]
        return statistics.median(v), max(v)

    first = runs[0]["py"]
    print(f"torch {first['torch_version']}, numpy {first['numpy_version']}; "
          f"{args.runs} runs, each the median of its repetitions; median / worst of the runs")
    print()
    print("| case | ofl from Python (ns) | same calls from C++ (ns) | Python layer (ns) | "
          "layer per call (ns) | torch from Python (ns) | torch / ofl |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    # How many calls each statement makes (the backward counts as one).
    calls = {"py_expand_contiguous": 2, "py_repeat": 1, "py_empty": 1, "py_add_sum_backward": 4}
    for name, n in calls.items():
        o = col(lambda r: r["py"][name]["ofl"])
        c = col(lambda r: r["py"][name]["cpp"])
        d = col(lambda r: r["py"][name]["layer"])
        t = col(lambda r: r["py"][name]["torch"])
        ratio = col(lambda r: r["py"][name]["torch"] / r["py"][name]["ofl"])
        # The worst ratio is the smallest one.
        ratio_worst = min(r["py"][name]["torch"] / r["py"][name]["ofl"] for r in runs)
        print(f"| {name[3:]} | {o[0]:.0f} / {o[1]:.0f} | {c[0]:.0f} / {c[1]:.0f} | "
              f"{d[0]:.0f} / {d[1]:.0f} | {d[0] / n:.0f} / {d[1] / n:.0f} | "
              f"{t[0]:.0f} / {t[1]:.0f} | "
              f"{ratio[0]:.2f}x / {ratio_worst:.2f}x |")
    print()
    print("| read (tiny, finished) | ofl from Python (ns) | torch from Python (ns) | torch / ofl |")
    print("| --- | --- | --- | --- |")
    for name, label in (("read_item", "`s.item()` of a computed 0-dim tensor"),
                        ("read_tolist", "`b.tolist()` of 12 floats"),
                        ("read_add_sum_item", "`(b + 1).sum().item()`")):
        o = col(lambda r: r["py"][name]["ofl"])
        t = col(lambda r: r["py"][name]["torch"])
        ratio = col(lambda r: r["py"][name]["torch"] / r["py"][name]["ofl"])
        ratio_worst = min(r["py"][name]["torch"] / r["py"][name]["ofl"] for r in runs)
        print(f"| {label} | {o[0]:.0f} / {o[1]:.0f} | {t[0]:.0f} / {t[1]:.0f} | "
              f"{ratio[0]:.2f}x / {ratio_worst:.2f}x |")
    print()
    print("| copy of 64 MiB | ofl (ms) | numpy (ms) | ofl / numpy |")
    print("| --- | --- | --- | --- |")
    for name, label in (("from_numpy_64MiB", "ofl.from_numpy(a) vs np.copyto(b, a)"),
                        ("numpy_64MiB", "t.numpy() vs a.copy()")):
        o = col(lambda r: r["py"][name]["ofl"] / 1e6)
        n = col(lambda r: r["py"][name]["numpy"] / 1e6)
        ratio = col(lambda r: r["py"][name]["ofl"] / r["py"][name]["numpy"])
        print(f"| {label} | {o[0]:.2f} / {o[1]:.2f} | {n[0]:.2f} / {n[1]:.2f} | "
              f"{ratio[0]:.2f} / {ratio[1]:.2f} |")
    s = col(lambda r: r["py"]["from_dlpack"]["ofl_1KiB"])
    b = col(lambda r: r["py"]["from_dlpack"]["ofl_64MiB"])
    print()
    print(f"from_dlpack of a numpy array: 1 KiB {s[0]:.0f} / {s[1]:.0f} ns, "
          f"64 MiB {b[0]:.0f} / {b[1]:.0f} ns")


if __name__ == "__main__":
    main()
