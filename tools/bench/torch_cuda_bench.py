#!/usr/bin/env python3
"""PyTorch on cuda:0: the cases of ofl_bench_cuda (tools/bench/cuda_bench.cu), for comparison.

Timing is ofl_bench_cuda's, so that the two compare like with like: every figure is wall clock
(time.perf_counter, as ofl_bench::LoopClock's steady clock) around whole iterations, an iteration
being a batch of ops issued back to back and then one torch.cuda.synchronize() (ofl::sync() there);
one untimed batch and a synchronize come first; the iteration count is chosen as Google Benchmark
chooses it for --benchmark_min_time (runs of 1, then more iterations, until one run lasts
min_time; that run is reported, and later repetitions reuse its count). The batch sizes and the
bytes counted are ofl_bench_cuda's too.
No CUDA events: they would time the stream alone, without the host's issue cost and the wait,
which ofl's figures include.

Large copies report "GB/s" = (bytes written + unique bytes read) / wall time, a batch being
max(8, min(256, 8 GiB / bytes per op)) ops (BatchOf in cuda_bench.cu). Implementations:
  torch        the op as users write it, a fresh output from PyTorch's caching allocator
               (x.expand(...).contiguous(), x.repeat(...), dy.sum_to_size(...): what autograd
               runs for expand's backward);
  torch_into   PyTorch's copy kernel into an output allocated once (out.copy_(x.expand(...)); for
               repeat, the expanded view that torch.repeat itself copies through);
  torch_copy   out.copy_(src) of the large tensor, counted as 2x its bytes: PyTorch's own
               device-to-device copy, to hold against ofl_bench_cuda's cudaMemcpy.
Tiny ops report "ns_per_op": batches of 1000 ops (kTinyOps), and "caller_cpu_ns_per_op", the
calling thread's CPU time per op (time.thread_time, as LoopClock's CLOCK_THREAD_CPUTIME_ID).

Prints a table and writes JSON shaped like Google Benchmark's (names "<case>/<impl>", one entry
per repetition), so that tools/bench/ratios.py reads it next to ofl_bench_cuda's:

  python3 tools/bench/torch_cuda_bench.py --out torch_cuda.json
  build/tools/bench/ofl_bench_cuda --benchmark_repetitions=3 --benchmark_format=json > ofl_cuda.json
  python3 tools/bench/ratios.py ofl_cuda.json torch_cuda.json

Without PyTorch ("torch not importable: ...") or without a CUDA device ("no CUDA device: ...") it
says why and exits 0 (writing JSON with no benchmarks and the reason in its context).
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import time

KIB = 1024
BATCH_BYTES = 8 << 30  # kBatchBytes: effective bytes per timed batch, a few ms of HBM traffic
TINY_OPS = 1000  # kTinyOps

# (case, kind, input shape, expand sizes / repeats, output shape); for the backward the input is dy
# and the output the forward input's shape. Mirrors Cases() in cuda_bench.cu.
LARGE_CASES = [
    ("cuda_expand_rows", "expand", (1, 4096), (8192, 4096), (8192, 4096)),
    ("cuda_expand_cols", "expand", (4096, 1), (4096, 8192), (4096, 8192)),
    ("cuda_repeat_2d", "repeat", (1024, 1024), (8, 2), (8192, 2048)),
    ("cuda_repeat_4d", "repeat", (16, 1, 1024, 64), (1, 8, 1, 1), (16, 8, 1024, 64)),
    ("cuda_expand_rows_bwd", "expand_bwd", (8192, 4096), None, (1, 4096)),
]
TINY_CASES = ["cuda_tiny_expand_contiguous", "cuda_tiny_repeat", "cuda_tiny_empty"]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def nbytes(shape):
    return numel(shape) * 4  # float32


def batch_of(bytes_per_op):
    """BatchOf in cuda_bench.cu: ops per iteration."""
    return max(8, min(256, BATCH_BYTES // max(bytes_per_op, 1)))


def skip(args, reason, context):
    print(reason)
    if args.out:
        context["skipped"] = reason
        with open(args.out, "w") as f:
            json.dump({"context": context, "benchmarks": []}, f, indent=1)
    return 0


def large_ops(torch, case):
    """{impl: (fn, effective bytes per call)} for one large case."""
    name, kind, in_shape, arg, out_shape = case
    dev = "cuda"
    effective = nbytes(in_shape) + nbytes(out_shape)
    large = max(nbytes(in_shape), nbytes(out_shape))
    x = (torch.arange(numel(in_shape), device=dev, dtype=torch.float32) % 7).reshape(in_shape)
    ops = {}
    if kind == "expand":
        ops["torch"] = (lambda: x.expand(*arg).contiguous(), effective)
        out = torch.empty(out_shape, device=dev)
        src = x.expand(*arg)
        ops["torch_into"] = (lambda: out.copy_(src), effective)
    elif kind == "repeat":
        ops["torch"] = (lambda: x.repeat(*arg), effective)
        # The output seen as (r0, s0, r1, s1, ...) receives x seen as (1, s0, 1, s1, ...).
        lead = len(arg) - len(in_shape)
        padded_in = (1,) * lead + tuple(in_shape)
        unfolded = [v for r, s in zip(arg, padded_in) for v in (r, s)]
        ones = [v for s in padded_in for v in (1, s)]
        out = torch.empty(out_shape, device=dev)
        dst = out.view(unfolded)
        src = x.reshape(ones).expand(unfolded)
        ops["torch_into"] = (lambda: dst.copy_(src), effective)
    else:
        ops["torch"] = (lambda: x.sum_to_size(*out_shape), effective)
    a = torch.ones(large // 4, device=dev)
    b = torch.empty_like(a)
    ops["torch_copy"] = (lambda: b.copy_(a), 2 * large)
    return ops


def tiny_op(torch, case):
    x = torch.arange(12, device="cuda", dtype=torch.float32).reshape(4, 1, 3)
    if case == "cuda_tiny_expand_contiguous":
        return lambda: x.expand(4, 5, 3).contiguous()
    if case == "cuda_tiny_repeat":
        return lambda: x.repeat(2, 1, 2)
    return lambda: torch.empty((4, 3), device="cuda")


def timed_run(torch, fn, batch, iterations):
    """One run of a benchmark as ofl_bench_cuda's body does it: one untimed batch (kernels loaded,
    the caching allocator filled) and a synchronize, then the clocks around `iterations` batches,
    each followed by one synchronize. Returns (wall s, calling thread's CPU s)."""
    for _ in range(batch):
        fn()
    torch.cuda.synchronize()
    t0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(iterations):
        for _ in range(batch):
            fn()
        torch.cuda.synchronize()
    return time.perf_counter() - t0, time.thread_time() - c0


def run_benchmark(torch, fn, batch, min_time, iterations=None):
    """Google Benchmark's choice of the iteration count (benchmark_runner.cc): start at 1; while a
    run lasts less than min_time, the next has round(iterations * min_time * 1.4 / its time)
    iterations (* 10 when the run took under a tenth of min_time), at least one more; the first
    run that lasts min_time is reported. Later repetitions reuse the first one's count (pass it as
    `iterations`), as Google Benchmark does. Returns (iterations, wall s, CPU s)."""
    if iterations is not None:
        return (iterations,) + timed_run(torch, fn, batch, iterations)
    iterations = 1
    while True:
        wall, cpu = timed_run(torch, fn, batch, iterations)
        if wall >= min_time or iterations >= 10**9:
            return iterations, wall, cpu
        multiplier = min_time * 1.4 / max(wall, 1e-9) if wall / min_time > 0.1 else 10.0
        iterations = max(round(iterations * multiplier), iterations + 1)


def entry(name, rep, reps, iterations, wall_s, cpu_s, counters):
    """One repetition in Google Benchmark's JSON: iterations are batches, times per iteration."""
    b = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": reps,
         "repetition_index": rep, "threads": 1, "iterations": iterations,
         "real_time": wall_s / iterations * 1e6, "cpu_time": cpu_s / iterations * 1e6,
         "time_unit": "us"}
    b.update(counters)
    return b


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="torch_cuda_bench.json",
                        help="the JSON file to write (default %(default)s; '' for none)")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds per repetition of each benchmark (default %(default)s)")
    parser.add_argument("--filter", default="", help="run only benchmarks whose name contains it")
    args = parser.parse_args()
    context = {"executable": "tools/bench/torch_cuda_bench.py",
               "date": datetime.datetime.now().isoformat(timespec="seconds"),
               "num_cpus": os.cpu_count(), "load_avg": list(os.getloadavg()), "malloc": "n/a"}
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install failing on import
        return skip(args, f"torch not importable: {type(e).__name__}: {e}", context)
    context["libtorch"] = f"torch {torch.__version__} from Python (CUDA {torch.version.cuda})"
    if torch.version.cuda is None:
        return skip(args, f"no CUDA device: torch {torch.__version__} was built without CUDA",
                    context)
    try:
        torch.cuda.init()
        count = torch.cuda.device_count()
    except Exception as e:
        return skip(args, f"no CUDA device: {type(e).__name__}: {e}", context)
    if count == 0:
        return skip(args, "no CUDA device: torch.cuda.device_count() is 0", context)
    props = torch.cuda.get_device_properties(0)
    context["cuda_device"] = (f"{props.name}, sm_{props.major}{props.minor}, "
                              f"{props.multi_processor_count} SMs, {props.total_memory >> 20} MiB")
    torch.cuda.set_device(0)

    results = []  # (name, metric, [values])
    benchmarks = []
    reps = max(1, args.repetitions)
    for case in LARGE_CASES:
        for impl, (fn, effective) in large_ops(torch, case).items():
            name = f"{case[0]}/{impl}"
            if args.filter not in name:
                continue
            batch = batch_of(effective)
            values = []
            iterations = None
            for rep in range(reps):
                iterations, wall_s, cpu_s = run_benchmark(torch, fn, batch, args.min_time,
                                                          iterations)
                gbps = iterations * batch * effective / wall_s / 1e9
                values.append(gbps)
                benchmarks.append(entry(name, rep, reps, iterations, wall_s, cpu_s,
                                        {"GB/s": gbps, "batch": batch}))
            results.append((name, "GB/s", values))
        torch.cuda.empty_cache()
    for case in TINY_CASES:
        name = f"{case}/torch"
        if args.filter not in name:
            continue
        fn = tiny_op(torch, case)
        values = []
        iterations = None
        for rep in range(reps):
            iterations, wall_s, cpu_s = run_benchmark(torch, fn, TINY_OPS, args.min_time,
                                                      iterations)
            ops = iterations * TINY_OPS
            ns = wall_s / ops * 1e9
            values.append(ns)
            benchmarks.append(entry(name, rep, reps, iterations, wall_s, cpu_s, {
                "ns_per_op": ns, "caller_cpu_ns_per_op": cpu_s / ops * 1e9}))
        results.append((name, "ns/op", values))

    print(f"PyTorch {torch.__version__} on {context['cuda_device']}; "
          f"median of {reps} repetition(s)")
    print(f"{'case/impl':44s} {'median':>12s} {'best':>12s}")
    for name, unit, values in results:
        best = max(values) if unit == "GB/s" else min(values)
        print(f"{name:44s} {statistics.median(values):12.2f} {best:12.2f} {unit}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"context": context, "benchmarks": benchmarks}, f, indent=1)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
