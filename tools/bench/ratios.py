#!/usr/bin/env python3
"""Ratio tables for the ofl_bench_* programs.

Reads Google Benchmark JSON (--benchmark_format=json or --benchmark_out=FILE) from the files named
on the command line (or stdin), summarises each benchmark's counter over its repetitions
(ns_per_op: lower is better; GB/s: higher is better), and prints, per case, every implementation
with oneflow_lite's speed relative to it (> 1 means oneflow_lite is faster). Then it checks the
issue's targets and prints PASS / MISS for each.

Benchmark names are "<case>/<impl>[/threads:N]"; the implementation named "ofl" is the subject.

  mkdir -p build/bench-results   # not next to the binaries: tools/ofl.sh runs ofl_bench_*
  for b in build/tools/bench/ofl_bench_*; do   # ofl_bench_global: under mpiexec, see its file
    "$b" --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_format=json \
      > "build/bench-results/$(basename "$b").json"
  done
  python3 tools/bench/ratios.py build/bench-results/*.json              # medians
  python3 tools/bench/ratios.py --stat best build/bench-results/*.json  # best repetition
"""

import argparse
import json
import re
import statistics
import sys

SUBJECT = "ofl"
METRICS = {"ns_per_op": False, "GB/s": True}  # name -> higher is better
CPU_COUNTER = "caller_cpu_ns_per_op"

LARGE = r"expand_rows|expand_cols|repeat_2d|repeat_4d"
# (case regex, baseline impl regex (the strictest matching baseline is used), least speedup, text)
RELATIVE_TARGETS = [
    # One run's view; the tiny-ops targets are judged over five runs by five_runs.py.
    (r"tiny_expand_contiguous", r"torch/threads:1", 3.0, ">= 3x libtorch expand().contiguous()"),
    (r"tiny_repeat", r"torch/threads:1", 6.0, ">= 6x libtorch repeat"),
    (r"tiny_empty", r"torch/threads:1", 1.5, ">= 1.5x libtorch empty"),
    (LARGE, r"torch_op/threads:\d+", 5.0, ">= 5x libtorch's op (best thread count)"),
    (LARGE, r"torch_into/threads:\d+", 1.0, ">= libtorch's kernel into an allocated output"),
    (LARGE, r"memset", 1 / 1.2, "within 1.2x of memset of the output bytes"),
    # ofl_bench_autograd; over five runs (and mul_sum_bwd against its ops' sum) in
    # autograd_five_runs.py.
    (r"tiny_graph", r"torch/threads:1", 3.0, ">= 3x libtorch's autograd"),
    (r"large_add", r"torch_op/threads:\d+", 1.0, ">= libtorch's at::add (best thread count)"),
    (r"large_add", r"memcpy", 1 / 1.3, "within 1.3x of memcpy of the output bytes"),
    (r"sum_dim0", r"read", 1 / 1.2, "within 1.2x of a streaming read of the input"),
    (r"boxing_s0_to_b_64MiB", r"mpi_allgather", 1 / 1.15, "within 1.15x of MPI_Allgather"),
    (r"boxing_p_to_b_64MiB", r"mpi_allreduce", 1 / 1.15, "within 1.15x of MPI_Allreduce"),
]
# (case regex, most ns per op for the subject, text)
ABSOLUTE_TARGETS = [
    (r"pool_alloc_free_.*", 100.0, "cached alloc+free <= 100 ns"),
]


def load(paths):
    if not paths:
        return [json.load(sys.stdin)]
    docs = []
    for p in paths:
        with open(p) as f:
            docs.append(json.load(f))
    return docs


def summarise(values, metric, stat):
    if stat == "median":
        return statistics.median(values)
    return max(values) if METRICS[metric] else min(values)


def collect(docs, stat):
    """{(case, impl): {"metric", "value", "cpu", "reps"}} from the per-repetition runs."""
    samples = {}
    aggregated = {}
    for doc in docs:
        for b in doc.get("benchmarks", []):
            metric = next((m for m in METRICS if m in b), None)
            if metric is None or b.get("error_occurred"):
                continue
            # Google Benchmark appends the settings a benchmark fixes: "/iterations:N" (fixed
            # iteration counts, as under mpiexec), "/repeats:N", "/real_time".
            name = re.sub(r"/(?:iterations:\d+|repeats:\d+|real_time)(?=/|$)", "",
                          b.get("run_name", b["name"]))
            if b.get("run_type") == "aggregate":
                aggregated.setdefault(name, {})[b.get("aggregate_name")] = b
                continue
            entry = samples.setdefault(name, {"metric": metric, "values": [], "cpu": []})
            entry["values"].append(b[metric])
            if CPU_COUNTER in b:
                entry["cpu"].append(b[CPU_COUNTER])
    table = {}
    for name, e in samples.items():
        metric = e["metric"]
        table[name] = {
            "metric": metric,
            "value": summarise(e["values"], metric, stat),
            "cpu": summarise(e["cpu"], metric, stat) if e["cpu"] else None,
            "reps": len(e["values"]),
        }
    # Runs reported with --benchmark_report_aggregates_only carry no per-repetition entries.
    for name, aggs in aggregated.items():
        if name in table:
            continue
        any_b = next(iter(aggs.values()))
        metric = next(m for m in METRICS if m in any_b)
        key = "median" if stat == "median" else ("max" if METRICS[metric] else "min")
        if key in aggs:
            b = aggs[key]
            table[name] = {"metric": metric, "value": b[metric], "cpu": b.get(CPU_COUNTER),
                           "reps": b.get("repetitions", 0)}
    out = {}
    for name, v in table.items():
        case, _, impl = name.partition("/")
        out[(case, impl)] = v
    return out


def speedup(metric, subject, other):
    """How many times faster the subject is than `other` (> 1: the subject is faster)."""
    if METRICS[metric]:
        return subject / other if other else float("inf")
    return other / subject if subject else float("inf")


def fmt(metric, value):
    return f"{value:10.2f} GB/s" if metric == "GB/s" else f"{value:10.1f} ns/op"


def print_context(docs):
    for doc in docs:
        ctx = doc.get("context", {})
        load_avg = ", ".join(f"{x:.2f}" for x in ctx.get("load_avg", []))
        print(f"{ctx.get('executable', '?')}: {ctx.get('num_cpus', '?')} cpus, load average "
              f"[{load_avg}], malloc {ctx.get('malloc', '?')}, libtorch {ctx.get('libtorch', '?')}")


def print_tables(table, stat):
    cases = []
    for case, _ in table:
        if case not in cases:
            cases.append(case)
    for case in cases:
        rows = [(impl, v) for (c, impl), v in table.items() if c == case]
        subj = table.get((case, SUBJECT))
        print(f"\n{case}")
        print(f"  {'impl':34s} {stat:>16s}  {'caller cpu':>10s}  {'reps':>4s}  ofl speedup vs it")
        for impl, v in rows:
            ratio = ""
            if subj and impl != SUBJECT:
                ratio = f"{speedup(v['metric'], subj['value'], v['value']):8.2f}x"
            cpu = f"{v['cpu']:10.1f}" if v["cpu"] is not None else f"{'':10s}"
            print(f"  {impl:34s} {fmt(v['metric'], v['value'])}  {cpu}  {v['reps']:4d}  {ratio}")


def check_targets(table):
    print("\nTargets")
    results = []
    cases = sorted({c for c, _ in table})
    for case_re, base_re, least, text in RELATIVE_TARGETS:
        for case in cases:
            if not re.fullmatch(case_re, case) or (case, SUBJECT) not in table:
                continue
            subj = table[(case, SUBJECT)]
            metric = subj["metric"]
            bases = [(impl, v["value"]) for (c, impl), v in table.items()
                     if c == case and re.fullmatch(base_re, impl)]
            if not bases:
                continue
            # The strictest baseline: the fastest of the matching ones.
            impl, base = min(bases, key=lambda iv: speedup(metric, subj["value"], iv[1]))
            got = speedup(metric, subj["value"], base)
            results.append((got >= least, f"{case}: {text}: {got:.2f}x vs {impl} "
                                          f"(need {least:.2f}x)"))
    for case_re, most, text in ABSOLUTE_TARGETS:
        for case in cases:
            if re.fullmatch(case_re, case) and (case, SUBJECT) in table:
                value = table[(case, SUBJECT)]["value"]
                results.append((value <= most, f"{case}: {text}: {value:.1f} ns"))
    for ok, line in results:
        print(f"  {'PASS' if ok else 'MISS'}  {line}")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="JSON outputs (stdin when none)")
    parser.add_argument("--stat", choices=["median", "best"], default="median",
                        help="summary over repetitions: the median, or the best repetition "
                             "(least ns/op, most GB/s)")
    args = parser.parse_args()
    docs = load(args.files)
    print_context(docs)
    table = collect(docs, args.stat)
    if not table:
        sys.exit("no benchmark with a ns_per_op or GB/s counter in the input")
    print_tables(table, args.stat)
    check_targets(table)


if __name__ == "__main__":
    main()
