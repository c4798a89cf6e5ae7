#!/usr/bin/env bash
# tools/gpu_check.sh: the whole GPU check of oneflow_lite. Every test suite (the functional, kernel
# and VM suites on cuda:0 too), compute-sanitizer (memcheck, racecheck, synccheck) over the CUDA
# suites, ofl_bench_cuda and its PyTorch counterpart, then a summary with the ratios.
#
# It is built on this project's machine (nvcc and the Debian packages, no GPU) and run on a GPU
# machine that has nvcc, CMake, ninja, compute-sanitizer and PyTorch but no package registry (so
# no oneTBB, spdlog, GoogleTest or Google Benchmark): `build-here` packs the binaries with the
# shared libraries they need into a small bundle, and `run` runs everything from the bundle.
#
#   bash tools/gpu_check.sh build-here build-gpu
#       here: configure and build build-gpu (Release, CUDA for sm_90, tests and benchmarks, no
#       MPI, no ofl_vm_trace), then pack build-gpu/gpu-bundle: the test and benchmark binaries,
#       liboneflow_lite, the shared libraries from /usr/lib and /lib that the GPU machine lacks
#       (shlibs/), and the test list (tests.list: CTest's tests with paths relative to the bundle).
#       OFL_GPU_CHECK_JOBS (default 1) sets the build's parallelism, OFL_GPU_CHECK_CMAKE_ARGS adds
#       configure arguments.
#
#   With the device tool: run(command="bash tools/gpu_check.sh run build-gpu",
#                             carry=["build-gpu/gpu-bundle"], timeout_s=600)
#       The tool copies the repo root to an unknown path there: nothing in the bundle depends on
#       the absolute path it was built at. Results (summary.txt, logs, the benchmarks' JSON) go
#       to $OFL_GPU_CHECK_OUT, else to $OUT (the tool's folder that comes back), else to
#       <bundle>/results. A call may run at most 10 minutes: name steps to split the check, e.g.
#         bash tools/gpu_check.sh run build-gpu tests
#         bash tools/gpu_check.sh run build-gpu sanitizer bench torch
#       (steps: tests sanitizer bench torch; the library check, nvidia-smi and the summary always
#       run).
#
#   bash tools/gpu_check.sh run build-gpu    (on a machine without a GPU)
#       runs the CPU part (every test that does not need a GPU, the benchmarks' skip paths),
#       prints "no GPU: <reason>" and exits 0 unless that part failed.
#
# Each step's failure is counted, never fatal; the exit status is 1 when any step failed.
# Knobs for `run`: OFL_GPU_CHECK_SANITIZER_TIMEOUT (seconds per sanitizer run, default 120),
# OFL_GPU_CHECK_MEMCHECK_FUNCTIONAL / _MEMCHECK_KERNELS / _RACE_FUNCTIONAL / _RACE_KERNELS
# (gtest filters), OFL_GPU_CHECK_BENCH_ARGS (default "--benchmark_min_time=0.2
# --benchmark_repetitions=3").
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUNDLE_NAME="gpu-bundle"

die() {
  echo "gpu_check: $*" >&2
  exit 2
}

# ---- build-here ---------------------------------------------------------------------------------

configure_and_build() {
  local dir=$1
  # MPI off: OpenMPI's libraries and mpiexec are not on the GPU machine. ofl_vm_trace off: its
  # CLI tests run through cmake -P, which the bundle does not carry.
  # shellcheck disable=SC2086  # OFL_GPU_CHECK_CMAKE_ARGS is a list of arguments
  cmake -S "$SRC" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOFL_WITH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DOFL_BUILD_TESTS=ON -DOFL_BUILD_BENCH=ON \
    -DOFL_BENCH_WITH_TORCH=OFF -DOFL_WITH_MPI=OFF -DOFL_BUILD_TOOLS=OFF \
    ${OFL_GPU_CHECK_CMAKE_ARGS:-} || return 1
  cmake --build "$dir" -j "${OFL_GPU_CHECK_JOBS:-1}"
}

# Writes <bundle>/tests.list from CTest's own list: one `run_test` line per test whose command is
# a binary of the build tree (GoogleTest cases that gtest_discover_tests split out are run as one
# run of their binary per environment), with paths as @B@/... (the bundle) and @S@/... (the
# source tree), plus the cuda:0 runs of the functional, kernel and VM suites. Prints the binaries
# to copy, relative to the build tree.
write_test_list() {
  local dir=$1 bundle=$2
  (cd "$dir" && ctest --show-only=json-v1) >"$bundle/ctest.json" || return 1
  python3 - "$dir" "$SRC" "$bundle/ctest.json" "$bundle/tests.list" <<'EOF' || return 1
import json, os, shlex, sys

build, src = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
with open(sys.argv[3]) as f:
    doc = json.load(f)
out_path = sys.argv[4]

def rel(s):
    s = str(s)
    for root, tag in ((build, "@B@"), (src, "@S@")):
        s = s.replace(root + "/", tag + "/")
        if s == root:
            s = tag
    return s

entries, skipped, groups, binaries = [], [], {}, set()
for t in doc.get("tests", []):
    name, cmd = t["name"], t.get("command") or []
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if props.get("DISABLED"):
        continue
    if not cmd or not os.path.realpath(cmd[0]).startswith(build + "/"):
        skipped.append(name)
        continue
    exe = os.path.relpath(os.path.realpath(cmd[0]), build)
    binaries.add(exe)
    env = [rel(e) for e in props.get("ENVIRONMENT", [])]
    workdir = rel(os.path.realpath(props.get("WORKING_DIRECTORY", build)))
    timeout = min(int(float(props.get("TIMEOUT", 600))), 600)
    args = [rel(a) for a in cmd[1:]]
    opts = []
    if props.get("PASS_REGULAR_EXPRESSION"):
        opts += ["--pass-regex", "|".join(props["PASS_REGULAR_EXPRESSION"])]
    if props.get("SKIP_REGULAR_EXPRESSION"):
        opts += ["--skip-regex", "|".join(props["SKIP_REGULAR_EXPRESSION"])]
    if props.get("WILL_FAIL"):
        opts.append("--will-fail")
    if any(a.startswith("--gtest_filter=") for a in args):
        # One run of the whole binary: its exit status covers every case, and gtest's own
        # "[  SKIPPED ]" (the skip regex gtest_discover_tests sets per case) must not turn the
        # run of all of them into a skip.
        rest = [a for a in args if not a.startswith("--gtest_filter=")
                and a != "--gtest_also_run_disabled_tests"]
        if "--skip-regex" in opts:
            i = opts.index("--skip-regex")
            del opts[i:i + 2]
        key = (exe, tuple(env), workdir, tuple(rest), tuple(opts))
        g = groups.setdefault(key, {"count": 0, "timeout": 0})
        g["count"] += 1
        g["timeout"] = max(g["timeout"], timeout)
        continue
    entries.append((name, timeout, workdir, opts, env, ["@B@/" + exe] + args))
for (exe, env, workdir, rest, opts), g in groups.items():
    suffix = "".join("." + e.replace("=", "_").replace(":", "") for e in env)
    name = f"{os.path.basename(exe)}{suffix} ({g['count']} discovered tests)"
    entries.insert(0, (name, g["timeout"], workdir, list(opts), list(env), ["@B@/" + exe] + list(rest)))
# The cuda:0 runs, unless CTest has them already (tests/CMakeLists.txt may add them itself).
for room, extra in (("functional", [[], ["OFL_VM_SYNC=1"]]), ("kernels", [[]]), ("vm", [[]])):
    exe = f"tests/ofl_test_{room}"
    if not os.path.exists(os.path.join(build, exe)):
        continue
    binaries.add(exe)
    for more in extra:
        env = ["OFL_TEST_DEVICE=cuda:0"] + more
        if any(e[5][0] == "@B@/" + exe and set(env) <= set(e[4]) for e in entries):
            continue
        name = f"{room}.on_cuda0" + ("_vm_sync" if more else "")
        entries.append((name, 600, "@B@/tests", [], env, ["@B@/" + exe]))
with open(out_path, "w") as f:
    f.write("# Generated by tools/gpu_check.sh build-here from `ctest --show-only=json-v1`;\n")
    f.write("# sourced by `gpu_check.sh run`. run_test NAME TIMEOUT WORKDIR [OPTIONS] [ENV=V...] -- CMD...\n")
    for name in skipped:
        f.write(f"# not carried (its command is not a binary of the build tree): {name}\n")
    for name, timeout, workdir, opts, env, cmd in entries:
        gpu = ["--gpu"] if any(e.startswith("OFL_TEST_DEVICE=cuda") for e in env) else []
        words = [name, str(timeout), workdir] + gpu + opts + env + ["--"] + cmd
        f.write("run_test " + " ".join(shlex.quote(w) for w in words) + "\n")
for exe in sorted(binaries):
    print(exe)
print(f"tests.list: {len(entries)} runs, {len(skipped)} CTest tests not carried", file=sys.stderr)
EOF
  rm -f "$bundle/ctest.json"
}

# The shared libraries of the bundle's binaries found under /usr/lib or /lib, less the C and C++
# runtimes (glibc's parts: a copy from another glibc would break the process; libstdc++ and
# libgcc_s: the GPU machine's own are as new) and CUDA's driver, runtime and NCCL (the GPU
# machine's match its driver; NCCL alone is far over the device tool's 64 MiB).
copy_shared_libraries() {
  local bundle=$1
  shift
  mkdir -p "$bundle/shlibs"
  local skip='^(libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|ld-linux[^ ]*|libstdc\+\+|libgcc_s|libcuda|libcudart|libnccl)\.so'
  local lib path
  while read -r lib path; do
    [[ $lib =~ $skip ]] && continue
    cp -L "$path" "$bundle/shlibs/$lib" || return 1
  done < <(LD_LIBRARY_PATH="$bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$@" |
    awk '$2 == "=>" && $3 ~ /^\/(usr\/)?lib/ { print $1, $3 }' | sort -u)
}

build_here() {
  local dir=$1
  command -v nvcc >/dev/null || die "build-here needs nvcc on PATH"
  configure_and_build "$dir" || die "the build of $dir failed"
  local bundle="$dir/$BUNDLE_NAME"
  rm -rf "$bundle"
  mkdir -p "$bundle"
  local binaries
  binaries=$(write_test_list "$dir" "$bundle") || die "could not turn CTest's list into tests.list"
  [[ -x $dir/tools/bench/ofl_bench_cuda ]] || die "$dir/tools/bench/ofl_bench_cuda was not built"
  binaries+=$'\n'tools/bench/ofl_bench_cuda
  local exe copied=()
  while read -r exe; do
    [[ -z $exe ]] && continue
    mkdir -p "$bundle/$(dirname "$exe")"
    cp -L "$dir/$exe" "$bundle/$exe" || die "cannot copy $exe"
    copied+=("$bundle/$exe")
  done <<<"$binaries"
  # liboneflow_lite under its SONAME, at the bundle's root (LD_LIBRARY_PATH there names it).
  local soname
  soname=$(objdump -p "$dir"/liboneflow_lite.so | awk '$1 == "SONAME" { print $2 }')
  cp -L "$dir/liboneflow_lite.so" "$bundle/$soname" || die "cannot copy liboneflow_lite"
  copied+=("$bundle/$soname")
  copy_shared_libraries "$bundle" "${copied[@]}" || die "cannot copy the shared libraries"
  echo "built at: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)$(git -C "$SRC" diff --quiet HEAD 2>/dev/null || echo ' + local changes')" \
    >"$bundle/BUILD_INFO"
  nvcc --version | tail -1 >>"$bundle/BUILD_INFO"

  echo "== $bundle"
  (cd "$bundle" && du -b shlibs/* | sort -rn | awk '{ printf "  %8.2f MiB  %s\n", $1 / 1048576, $2 }')
  local bundle_bytes tree_bytes
  bundle_bytes=$(du -sb "$bundle" | cut -f1)
  tree_bytes=$(cd "$SRC" && git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  awk -v b="$bundle_bytes" -v t="${tree_bytes:-0}" 'BEGIN {
    printf "bundle %.1f MiB + working tree %.1f MiB = %.1f MiB of the device tool'"'"'s 64 MiB\n",
      b / 1048576, t / 1048576, (b + t) / 1048576
    if (b + t > 60 * 1048576) print "WARNING: close to or over the 64 MiB the device tool carries"
  }'
  echo "next, with the device tool: carry [\"$bundle\"], command \"bash tools/gpu_check.sh run $dir\""
}

# ---- run ----------------------------------------------------------------------------------------

declare -a STEP_LINES=()
FAILED_STEPS=0
NO_GPU_REASON=""

# record STEP STATUS DETAIL: STATUS is PASS, FAIL or SKIP; FAIL counts towards the exit status.
record() {
  STEP_LINES+=("$(printf '%-4s  %-22s %s' "$2" "$1" "$3")")
  [[ $2 == FAIL ]] && FAILED_STEPS=$((FAILED_STEPS + 1))
  echo "== $1: $2 $3"
}

step_libraries() {
  local binaries=("$BUNDLE"/tests/ofl_test_* "$BUNDLE"/tools/bench/ofl_bench_cuda "$BUNDLE"/liboneflow_lite.so.*)
  local missing lib found
  missing=$(ldd "${binaries[@]}" 2>&1 | awk '/not found/ { print $1 }' | sort -u)
  # CUDA's runtime (and NCCL), when the loader does not know where the toolkit keeps them: by
  # exact SONAME (the version the bundle was built against) in the toolkit or PyTorch's wheels.
  while read -r lib; do
    [[ $lib == libcudart* || $lib == libnccl* ]] || continue
    found=$(find /usr/local/cuda/lib64/ /usr/local/cuda/targets/ /usr/local/ /opt/ /usr/lib/ \
      -name "$lib" 2>/dev/null | head -1)
    if [[ -n $found ]]; then
      found=$(dirname "$found")
      export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$found"
      echo "$lib from $found"
    fi
  done <<<"$missing"
  missing=$(ldd "${binaries[@]}" 2>&1 | awk '/not found/ { print $1 }' | sort -u)
  if [[ -n $missing ]]; then
    record libraries FAIL "not found: $(echo "$missing" | tr '\n' ' ')"
  else
    record libraries PASS "every shared library resolves"
  fi
}

detect_gpu() {
  local out
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    NO_GPU_REASON="nvidia-smi not found"
  elif ! out=$(nvidia-smi -L 2>&1); then
    NO_GPU_REASON="nvidia-smi -L failed: $(head -1 <<<"$out")"
  elif ! grep -q '^GPU ' <<<"$out"; then
    NO_GPU_REASON="nvidia-smi lists no GPU"
  fi
  if [[ -n $NO_GPU_REASON ]]; then
    echo "no GPU: $NO_GPU_REASON (the CPU part runs; the GPU part is skipped)"
  else
    nvidia-smi 2>&1 | tee "$RESULTS/nvidia-smi.txt"
  fi
}

# run_test NAME TIMEOUT WORKDIR [--gpu] [--pass-regex RE] [--skip-regex RE] [--will-fail]
#          [ENV=VALUE...] -- CMD...
# (the lines of tests.list). Paths in WORKDIR, ENV values and CMD are @B@/... (the bundle) or
# @S@/... (the source tree). --gpu: not run without a GPU. Output matching --skip-regex (CTest's
# SKIP_REGULAR_EXPRESSION: a suite that found no usable device) is a skip without a GPU and a
# failure with one: the suite would have tested nothing.
TESTS_RUN=0
TESTS_FAILED=0
declare -a TESTS_FAILED_NAMES=() TESTS_SKIPPED_NAMES=()
run_test() {
  local name=$1 timeout=$2 workdir=$3
  shift 3
  local gpu=0 will_fail=0 pass_re="" skip_re="" env_args=() cmd=() word
  while [[ $# -gt 0 && $1 != -- ]]; do
    case $1 in
      --gpu) gpu=1 ;;
      --will-fail) will_fail=1 ;;
      --pass-regex)
        pass_re=$2
        shift
        ;;
      --skip-regex)
        skip_re=$2
        shift
        ;;
      *) env_args+=("$(expand_paths "$1")") ;;
    esac
    shift
  done
  shift
  for word in "$@"; do cmd+=("$(expand_paths "$word")"); done
  workdir=$(expand_paths "$workdir")
  if ((gpu)) && [[ -n $NO_GPU_REASON ]]; then
    TESTS_SKIPPED_NAMES+=("$name")
    echo "SKIP  $name (no GPU)"
    return
  fi
  local log="$LOG_DIR/test.$((TESTS_RUN + 1)).log" start=$SECONDS rc ok=0
  mkdir -p "$workdir"
  (cd "$workdir" && env "${env_args[@]}" timeout -k 10 "$timeout" "${cmd[@]}") >"$log" 2>&1
  rc=$?
  TESTS_RUN=$((TESTS_RUN + 1))
  if [[ -n $pass_re ]]; then
    grep -Eq "$pass_re" "$log" && ok=1
  elif ((rc == 0)); then
    ok=1
  fi
  ((will_fail)) && ok=$((1 - ok))
  local why=""
  if [[ -n $skip_re ]] && grep -Eq "$skip_re" "$log"; then
    if [[ -n $NO_GPU_REASON ]]; then
      TESTS_SKIPPED_NAMES+=("$name")
      echo "SKIP  $name ($(grep -Em1 "$skip_re" "$log"))"
      return
    fi
    ok=0
    why="; it skipped on a GPU machine: $(grep -Em1 "$skip_re" "$log")"
  fi
  local skipped
  skipped=$(grep -Eo '\[  SKIPPED \] [0-9]+ tests?' "$log" | tail -1 | grep -Eo '[0-9]+')
  local what="${env_args[*]} ${cmd[*]#"$BUNDLE"/}"
  {
    echo "==== $name: rc=$rc, $((SECONDS - start)) s: $what"
    if ((ok)); then tail -5 "$log"; else tail -c 200000 "$log"; fi
  } >>"$RESULTS/tests.log"
  if ((ok)); then
    echo "PASS  $name ($((SECONDS - start)) s${skipped:+, $skipped gtest skipped})"
  else
    TESTS_FAILED=$((TESTS_FAILED + 1))
    TESTS_FAILED_NAMES+=("$name")
    echo "FAIL  $name (rc=$rc$([[ $rc == 124 ]] && echo ", timed out after $timeout s"), $((SECONDS - start)) s$why): $what"
    tail -40 "$log" | sed 's/^/      /'
  fi
}

expand_paths() {
  local s=${1//@B@/$BUNDLE}
  echo "${s//@S@/$SRC}"
}

step_tests() {
  [[ -f $BUNDLE/tests.list ]] || {
    record tests FAIL "no $BUNDLE/tests.list"
    return
  }
  : >"$RESULTS/tests.log"
  # shellcheck source=/dev/null  # generated by build-here
  source "$BUNDLE/tests.list"
  local detail="$TESTS_RUN runs, $TESTS_FAILED failed"
  ((${#TESTS_SKIPPED_NAMES[@]})) && detail+=", ${#TESTS_SKIPPED_NAMES[@]} skipped (no GPU)"
  ((TESTS_FAILED)) && detail+=": ${TESTS_FAILED_NAMES[*]}"
  if ((TESTS_FAILED)); then record tests FAIL "$detail"; else record tests PASS "$detail"; fi
}

# compute-sanitizer over a subset of the CUDA suites (the whole suites take too long under it;
# memcheck sees out-of-bounds accesses only past the ends of the VM pool's cudaMalloc blocks, not
# between tensors carved from one block).
step_sanitizer() {
  if [[ -n $NO_GPU_REASON ]]; then
    record sanitizer SKIP "no GPU"
    return
  fi
  local cs candidate
  cs=$(command -v compute-sanitizer)
  for candidate in /usr/local/cuda*/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer; do
    [[ -z $cs && -x $candidate ]] && cs=$candidate
  done
  if [[ -z $cs ]]; then
    record sanitizer FAIL "compute-sanitizer not found"
    return
  fi
  local t=${OFL_GPU_CHECK_SANITIZER_TIMEOUT:-120}
  local mem_fn=${OFL_GPU_CHECK_MEMCHECK_FUNCTIONAL:-'*Values*:*Repeat*:*Expand*:*Backward*:DeviceMemoryTest.*'}
  local mem_k=${OFL_GPU_CHECK_MEMCHECK_KERNELS:-'CopyKernelTest.*:RepeatKernelTest.*:ReduceSumToKernelTest.*'}
  local race_fn=${OFL_GPU_CHECK_RACE_FUNCTIONAL:-'*Backward*-*Large*'}
  local race_k=${OFL_GPU_CHECK_RACE_KERNELS:-'ReduceSumToKernelTest.*-*Large*'}
  local runs=(
    "memcheck functional $mem_fn" "memcheck kernels $mem_k"
    "racecheck functional $race_fn" "racecheck kernels $race_k"
    "synccheck functional $race_fn" "synccheck kernels $race_k"
  )
  local run tool room filter rc failed=() log="$RESULTS/sanitizer.log"
  : >"$log"
  for run in "${runs[@]}"; do
    read -r tool room filter <<<"$run"
    local start=$SECONDS
    echo "==== compute-sanitizer --tool $tool ofl_test_$room --gtest_filter=$filter" >>"$log"
    (cd "$BUNDLE/tests" && OFL_TEST_DEVICE=cuda:0 timeout -k 10 "$t" "$cs" --tool "$tool" \
      --error-exitcode 99 --print-limit 20 "$BUNDLE/tests/ofl_test_$room" \
      --gtest_filter="$filter" --gtest_brief=1) >>"$log" 2>&1
    rc=$?
    echo "  $tool $room: rc=$rc ($((SECONDS - start)) s)"
    ((rc != 0)) && failed+=("$tool/$room (rc=$rc$([[ $rc == 124 ]] && echo ', timed out'))")
  done
  if ((${#failed[@]})); then
    grep -E '^========= (ERROR|Invalid|Race|Barrier)|^\[  FAILED' "$log" | head -20
    record sanitizer FAIL "${failed[*]} (rc 99: the sanitizer found errors; see sanitizer.log)"
  else
    record sanitizer PASS "memcheck, racecheck, synccheck clean"
  fi
}

step_bench() {
  local json="$RESULTS/bench_cuda.json" err="$RESULTS/bench_cuda.stderr.txt" rc
  # shellcheck disable=SC2086  # a list of arguments
  "$BUNDLE/tools/bench/ofl_bench_cuda" ${OFL_GPU_CHECK_BENCH_ARGS:---benchmark_min_time=0.2 --benchmark_repetitions=3} \
    --benchmark_format=json >"$json" 2>"$err"
  rc=$?
  local verdict
  verdict=$(python3 - "$json" "$NO_GPU_REASON" <<'EOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"FAIL no JSON from ofl_bench_cuda: {e}")
    sys.exit()
bs = doc.get("benchmarks", [])
errors = [b for b in bs if b.get("error_occurred")]
if sys.argv[2]:  # no GPU: every case must be skipped with the reason
    ok = bs and all("no CUDA device" in b.get("error_message", "") for b in bs)
    print(("PASS" if ok else "FAIL") + f" {len(errors)} of {len(bs)} runs skipped without a GPU")
elif not bs or errors:
    msgs = sorted({b["name"] + ": " + b.get("error_message", "") for b in errors})
    print(f"FAIL {len(errors)} of {len(bs)} cases failed: " + "; ".join(msgs[:5]))
else:
    print(f"PASS {len(bs)} runs")
EOF
  )
  if ((rc != 0)); then
    record bench FAIL "ofl_bench_cuda exited $rc: $(tail -3 "$err" | tr '\n' ' ')"
  elif [[ $verdict =~ ^(PASS|FAIL)\ (.*)$ ]]; then
    record bench "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
  else
    record bench FAIL "could not read its JSON: $verdict"
  fi
}

step_torch() {
  local out rc
  out=$(cd "$SRC" && python3 tools/bench/torch_cuda_bench.py --out "$RESULTS/torch_cuda.json" 2>&1)
  rc=$?
  echo "$out"
  if ((rc != 0)); then
    record torch FAIL "torch_cuda_bench.py exited $rc: $(tail -1 <<<"$out")"
  elif grep -Eq '^(torch not importable|no CUDA device)' <<<"$out"; then
    record torch SKIP "$(head -1 <<<"$out")"
  else
    record torch PASS "$(grep -c '/torch' <<<"$out") benchmarks"
  fi
}

# One line per case: ofl's figure and how many times faster it is than every other impl
# (tools/bench/ratios.py's comparison, medians over the repetitions).
print_ratios() {
  local files=()
  [[ -s $RESULTS/bench_cuda.json ]] && files+=("$RESULTS/bench_cuda.json")
  [[ -s $RESULTS/torch_cuda.json ]] && files+=("$RESULTS/torch_cuda.json")
  ((${#files[@]})) || return 0
  (cd "$SRC/tools/bench" && python3 - "${files[@]}" <<'EOF'
import sys
import ratios

table = ratios.collect(ratios.load(sys.argv[1:]), "median")
cases = []
for case, _ in table:
    if case not in cases:
        cases.append(case)
if not table:
    sys.exit()
print("ofl vs the baselines (x = ofl's speedup, > 1: ofl faster; medians):")
for case in cases:
    subj = table.get((case, ratios.SUBJECT))
    if subj is None:
        continue
    unit = "GB/s" if subj["metric"] == "GB/s" else "ns/op"
    parts = [f"{impl} {v['value']:.1f} ({ratios.speedup(v['metric'], subj['value'], v['value']):.2f}x)"
             for (c, impl), v in table.items() if c == case and impl != ratios.SUBJECT]
    print(f"  {case:30s} ofl {subj['value']:9.1f} {unit:5s} | " + ", ".join(parts))
EOF
  )
}

run_checks() {
  local dir=$1
  shift
  if [[ -f $dir/$BUNDLE_NAME/tests.list ]]; then
    BUNDLE=$(cd "$dir/$BUNDLE_NAME" && pwd)
  elif [[ -f $dir/tests.list ]]; then
    BUNDLE=$(cd "$dir" && pwd)
  else
    die "no bundle at $dir/$BUNDLE_NAME (run build-here first and carry it)"
  fi
  local steps=("$@")
  ((${#steps[@]})) || steps=(tests sanitizer bench torch)
  RESULTS=${OFL_GPU_CHECK_OUT:-${OUT:-$BUNDLE/results}}
  mkdir -p "$RESULTS"
  LOG_DIR=$(mktemp -d)
  export LD_LIBRARY_PATH="$BUNDLE:$BUNDLE/shlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [[ -f $BUNDLE/BUILD_INFO ]] && sed 's/^/bundle /' "$BUNDLE/BUILD_INFO"

  step_libraries
  detect_gpu
  local step
  for step in "${steps[@]}"; do
    case $step in
      tests | sanitizer | bench | torch) "step_$step" ;;
      *) record "$step" FAIL "unknown step (steps: tests sanitizer bench torch)" ;;
    esac
  done

  {
    echo "== summary ($(date -u '+%Y-%m-%d %H:%M UTC'), results in $RESULTS)"
    printf '%s\n' "${STEP_LINES[@]}"
    print_ratios
    if [[ -n $NO_GPU_REASON ]]; then echo "no GPU: $NO_GPU_REASON"; fi
    echo "$FAILED_STEPS step(s) failed"
  } | tee "$RESULTS/summary.txt"
  rm -rf "$LOG_DIR"
  ((FAILED_STEPS == 0))
}

case ${1:-} in
  build-here)
    [[ $# -eq 2 ]] || die "usage: $0 build-here <dir>"
    build_here "$2"
    ;;
  run)
    [[ $# -ge 2 ]] || die "usage: $0 run <dir> [tests] [sanitizer] [bench] [torch]"
    dir=$2
    shift 2
    run_checks "$dir" "$@"
    ;;
  *)
    sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
esac
