#!/usr/bin/env python3
"""Tiny-op speed against libtorch over five consecutive runs: the median and the worst ratio.

One run of a shared 2-vCPU machine says little (the host may not give both vCPUs at once), so the
tiny-ops targets are judged over five back-to-back runs of ofl_bench_tiny_ops: in each run, the
speedup of oneflow_lite over libtorch (same run, medians of the run's repetitions); then the median
and the worst of the five speedups per case, against the targets.

  python3 tools/bench/five_runs.py [BUILD_DIR]          # default build-h1-bench; runs the bench
  python3 tools/bench/five_runs.py --json a.json b.json  # or reads runs saved before

BUILD_DIR needs -DOFL_BUILD_BENCH=ON -DOFL_BENCH_WITH_TORCH=ON. About 20 s per run. Exit status 0
when every speedup was measured (met or not), 1 when a case or libtorch is missing.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = {
    # case: (median target, worst target)
    "tiny_expand_contiguous": (3.0, 1.5),
    "tiny_repeat": (6.0, 3.0),
    "tiny_empty": (1.5, 1.0),
}
BASELINE = "torch/threads:1"
RUNS = 5


def run_bench(build):
    exe = os.path.join(build, "tools", "bench", "ofl_bench_tiny_ops")
    if not os.path.exists(exe):
        sys.exit(f"five_runs.py: {exe} not found (build the ofl_bench_tiny_ops target)")
    cases = "|".join(CASES)
    out = subprocess.run(
        [exe, f"--benchmark_filter=^({cases})/(ofl|torch)/", "--benchmark_min_time=0.2",
         "--benchmark_repetitions=3", "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ratios(doc):
    """{case: speedup of ofl over libtorch} from one run (medians of its repetitions)."""
    samples = {}
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate" or "ns_per_op" not in b:
            continue
        name = b.get("run_name", b["name"]).replace("/real_time", "")
        case, _, impl = name.partition("/")
        samples.setdefault((case, impl), []).append(b["ns_per_op"])
    out = {}
    for case in CASES:
        ofl, torch = samples.get((case, "ofl")), samples.get((case, BASELINE))
        if ofl and torch:
            out[case] = statistics.median(torch) / statistics.median(ofl)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", nargs="?", default="build-h1-bench")
    parser.add_argument("--json", nargs="+", help="saved runs instead of running the bench")
    args = parser.parse_args()
    if args.json:
        docs = []
        for path in args.json:
            with open(path) as f:
                docs.append(json.load(f))
    else:
        docs = []
        for i in range(RUNS):
            print(f"run {i + 1}/{RUNS} ...", file=sys.stderr, flush=True)
            docs.append(run_bench(args.build))
    per_run = [ratios(d) for d in docs]
    ok = True
    print(f"ofl speedup over libtorch ({BASELINE}), {len(docs)} runs")
    print(f"  {'case':24s} {'runs':40s} {'median':>7s} {'worst':>7s}  targets")
    for case, (want_median, want_worst) in CASES.items():
        values = [r[case] for r in per_run if case in r]
        if len(values) != len(docs):
            print(f"  {case:24s} missing in some runs (no libtorch in this build?)")
            ok = False
            continue
        med, worst = statistics.median(values), min(values)
        verdict = ("PASS" if med >= want_median else "MISS") + " / " + (
            "PASS" if worst >= want_worst else "MISS")
        runs = " ".join(f"{v:.2f}" for v in values)
        print(f"  {case:24s} {runs:40s} {med:6.2f}x {worst:6.2f}x  median >= {want_median}x, "
              f"worst >= {want_worst}x: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
