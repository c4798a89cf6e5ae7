#!/usr/bin/env bash
# tools/gpu_check.sh: the whole GPU check of oneflow_lite. Every test suite (the functional, kernel
# and VM suites on cuda:0 too), the global suite under mpiexec with NCCL on cuda placements,
# compute-sanitizer (memcheck, racecheck, synccheck) over the CUDA suites, ofl_bench_cuda and its
# PyTorch counterpart, each step with its own summary (and the ratios of the benchmarks).
#
# It is built on this project's machine (nvcc, NCCL and the Debian packages, no GPU) and run on a
# GPU machine that has nvcc, CMake, ninja, compute-sanitizer and PyTorch but no package registry
# (so no oneTBB, spdlog, GoogleTest, Google Benchmark or OpenMPI): `build-here` packs the binaries
# with the shared libraries and the OpenMPI runtime they need into a bundle, and `run` runs the
# steps from the bundle.
#
#   bash tools/gpu_check.sh build-here build-gpu
#       here: configure and build build-gpu (Release, CUDA for sm_90, MPI and NCCL, tests and
#       benchmarks, no ofl_vm_trace), then pack build-gpu/gpu-bundle: the test and benchmark
#       binaries, liboneflow_lite, the shared libraries from /usr/lib and /lib that the GPU machine
#       lacks (shlibs/), OpenMPI's runtime (openmpi/: mpiexec, orted, the MCA components it
#       dlopens, its help texts and settings, and PMIx's plugins; `run` points OpenMPI at it with
#       OPAL_* and PMIX_* variables, so it works from wherever the bundle lies), and the test list
#       (tests.list: CTest's tests with paths relative to the bundle). OFL_GPU_CHECK_JOBS (default:
#       nproc) sets the build's parallelism, OFL_GPU_CHECK_CMAKE_ARGS adds configure arguments.
#
#   bash tools/gpu_check.sh run build-gpu STEP...
#       runs the named steps from the bundle, then prints a summary of what this call ran. Steps:
#         tests      every CTest test of the bundle (those that need mpiexec excepted: see global),
#                    the cuda:0 runs of the functional, kernel and VM suites included
#         global     ofl_test_global under the bundle's `mpiexec -n 1`: the cpu part of the global
#                    suite, and its CudaPlacementTest cases on NCCL (one rank only: NCCL refuses two
#                    ranks on one GPU); with a GPU a skipped CudaPlacementTest case is a failure
#         memcheck   compute-sanitizer --tool memcheck over ofl_test_functional and ofl_test_kernels
#         racecheck  the same with racecheck       (each: 2 runs, a gtest filter and a time limit
#         synccheck  the same with synccheck        each; no GPU: skipped)
#         bench      ofl_bench_cuda (no GPU: every case skipped with the reason)
#         torch      tools/bench/torch_cuda_bench.py, PyTorch timed as ofl_bench_cuda times itself
#       No step named: every step in that order (a machine of your own; over 10 minutes on a GPU).
#       The library check (ldd) and nvidia-smi always run first.
#
#   With the device tool (one command at most 10 minutes; a session may have as little as 15
#   minutes of device time, the machine's start included), two calls, one right after the other,
#   each with carry=["build-gpu/gpu-bundle"]:
#       run(command="bash tools/gpu_check.sh run build-gpu tests global bench torch", timeout_s=580)
#       run(command="bash tools/gpu_check.sh run build-gpu memcheck racecheck synccheck",
#           timeout_s=300)
#   Seen on an H200 (2026-11-26): the first took 269 s (the machine's start not counted: 296 s of
#   device time), the three sanitizer steps under a minute together once death tests were left out of
#   their filters. The budget below bounds every call. The tool copies
#   the repo root to an unknown path there: nothing in the bundle depends on the absolute path it
#   was built at. Results (summary.txt, logs, the benchmarks' JSON) go to $OFL_GPU_CHECK_OUT, else
#   to $OUT (the tool's folder that comes back), else to <bundle>/results.
#
#   bash tools/gpu_check.sh run build-gpu [STEP...]    (on a machine without a GPU)
#       runs the CPU part (every test that does not need a GPU, the global suite's cpu part under
#       the bundle's mpiexec, the benchmarks' skip paths), prints "no GPU: <reason>" and exits 0
#       unless that part failed.
#
# Outcomes. A step is PASS, FAIL, SKIP (no GPU) or INCOMPLETE; each is counted, none is fatal.
# A test run that times out is a FAIL, as under CTest (a hang is a finding). A compute-sanitizer run
# that times out is not: it is reported as "timed out after N s" and makes its step INCOMPLETE
# (nothing checked past that point; narrow its filter or raise the limit), unless the sanitizer had
# already reported errors, which make it a FAIL. Every run's limit is also capped by the call's
# budget (OFL_GPU_CHECK_BUDGET, default 560 s, under the device tool's 600 s), so that the summary
# is always printed: a run cut short by the budget, or not started because it was spent, makes its
# step INCOMPLETE too. Exit status: 1 when a step failed, else 3 when a step is INCOMPLETE, else 0
# (2: bad usage or no bundle).
#
# Knobs for `run`: OFL_GPU_CHECK_SANITIZER_TIMEOUT (seconds per compute-sanitizer run, default
# 140), OFL_GPU_CHECK_{MEMCHECK,RACECHECK,SYNCCHECK}_{FUNCTIONAL,KERNELS} (the runs' gtest filters),
# OFL_GPU_CHECK_GLOBAL_TIMEOUT (default 300; each benchmark has 300 s), OFL_GPU_CHECK_BENCH_ARGS
# (default "--benchmark_min_time=0.2 --benchmark_repetitions=3"), OFL_GPU_CHECK_TORCH_ARGS (default
# "--min-time 0.2 --repetitions 3": the same settings), OFL_GPU_CHECK_BUDGET.
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
  # MPI and NCCL on: the bundle carries OpenMPI's runtime (pack_openmpi), so the global suite runs
  # NCCL on the GPU machine. ofl_vm_trace off: its CLI tests run through cmake -P, which the
  # bundle does not carry.
  # shellcheck disable=SC2086  # OFL_GPU_CHECK_CMAKE_ARGS is a list of arguments
  cmake -S "$SRC" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOFL_WITH_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DOFL_BUILD_TESTS=ON -DOFL_BUILD_BENCH=ON \
    -DOFL_BENCH_WITH_TORCH=OFF -DOFL_WITH_MPI=ON -DOFL_WITH_NCCL=ON -DOFL_BUILD_TOOLS=OFF \
    ${OFL_GPU_CHECK_CMAKE_ARGS:-} || return 1
  cmake --build "$dir" -j "${OFL_GPU_CHECK_JOBS:-$(nproc)}"
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
        gpu = ["--gpu"] if any(e.startswith("OFL_TEST_DEVICE=cuda:") for e in env) else []
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

# OpenMPI's runtime (OpenMPI 4: orterun, orted), for `mpiexec -n 1` and for the singleton
# MPI_Init of a test binary started without mpiexec (it starts orted), laid out as a prefix of its
# own under <bundle>/openmpi with fixed names, so that `run` can point OpenMPI and PMIx at it
# (openmpi_env):
#   bin/        mpiexec (a copy of orterun), orterun, orted
#   lib/mca/    the MCA components OpenMPI dlopens (its pkglibdir), less those for fabrics a one-node
#               run does not use (UCX, libfabric, verbs, PSM) and OpenSHMEM's, whose libraries
#               would only add size
#   share/openmpi/  its help texts (pkgdatadir); etc/: its settings (sysconfdir)
#   pmix/lib/pmix/, pmix/share/pmix/   the plugins and help texts of the PMIx it uses, if external
# The libraries all of them link (libmpi, libopen-pal, libopen-rte, libpmix, libhwloc, libevent,
# ...) go to shlibs/ with the rest. Prints the files to hand to copy_shared_libraries.
pack_openmpi() {
  local bundle=$1 mpi=$1/openmpi
  command -v ompi_info >/dev/null ||
    { echo "ompi_info not found: the bundle needs OpenMPI (openmpi-bin)" >&2 && return 1; }
  local -A mpidir=()
  local key value
  while IFS=: read -r _ key value; do
    mpidir[$key]=$value
  done < <(ompi_info --path all --parsable | grep '^path:')
  local version
  version=$(ompi_info --parsable | awk -F: '$1 == "ompi" && $2 == "version" && $3 == "full" { print $4 }')
  [[ -x ${mpidir[bindir]:-}/orterun && -x ${mpidir[bindir]}/orted && -d ${mpidir[pkglibdir]:-} ]] || {
    echo "OpenMPI $version: no orterun and orted in '${mpidir[bindir]:-}' or no components in" \
      "'${mpidir[pkglibdir]:-}' (the bundle packs OpenMPI 4's runtime)" >&2
    return 1
  }
  mkdir -p "$mpi/bin" "$mpi/lib/mca" "$mpi/share" "$mpi/etc" || return 1
  cp -L "${mpidir[bindir]}/orterun" "${mpidir[bindir]}/orted" "$mpi/bin/" || return 1
  cp -L "${mpidir[bindir]}/orterun" "$mpi/bin/mpiexec" || return 1
  cp -rL "${mpidir[pkgdatadir]}" "$mpi/share/openmpi" || return 1
  local f
  for f in openmpi-mca-params.conf openmpi-default-hostfile; do
    [[ -f ${mpidir[sysconfdir]}/$f ]] && { cp -L "${mpidir[sysconfdir]}/$f" "$mpi/etc/" || return 1; }
  done
  # Components whose libraries are for fabrics (or OpenSHMEM) stay behind.
  local unused='^lib(ucp|uct|ucs|ucm|psm|psm2|psm_infinipath|infinipath|ibverbs|rdmacm|fabric|efa|nl-[a-z-]*3|oshmem|mca_common_(ucx|ofi|verbs))\.so'
  local comp lib left=0
  for comp in "${mpidir[pkglibdir]}"/*.so; do
    if ldd "$comp" | awk '{ print $1 }' | grep -Eq "$unused"; then
      left=$((left + 1))
      continue
    fi
    cp -L "$comp" "$mpi/lib/mca/" || return 1
  done
  echo "openmpi $version: $(find "$mpi/lib/mca" -name '*.so' | wc -l) components carried, $left for fabrics or OpenSHMEM left" >&2
  # PMIx, when OpenMPI uses an external one: its plugins next to libpmix (<libdir>/pmix) and its
  # help texts (<prefix>/share/pmix).
  local pmix
  pmix=$(ldd "$mpi"/lib/mca/*.so 2>/dev/null | awk '$1 ~ /^libpmix\.so/ && $3 ~ /^\// { print $3; exit }')
  if [[ -n $pmix ]]; then
    local pmix_lib
    pmix_lib=$(dirname "$(readlink -f "$pmix")")
    mkdir -p "$mpi/pmix/lib" "$mpi/pmix/share" || return 1
    [[ -d $pmix_lib/pmix ]] && { cp -rL "$pmix_lib/pmix" "$mpi/pmix/lib/pmix" || return 1; }
    [[ -d $pmix_lib/../share/pmix ]] && { cp -rL "$pmix_lib/../share/pmix" "$mpi/pmix/share/pmix" || return 1; }
  fi
  find "$mpi/bin" "$mpi/lib" "$mpi/pmix" -type f \( -perm -u+x -o -name '*.so' \) 2>/dev/null
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
  local mpi_files
  mpi_files=$(pack_openmpi "$bundle") || die "cannot pack OpenMPI's runtime"
  while read -r exe; do
    [[ -n $exe ]] && copied+=("$exe")
  done <<<"$mpi_files"
  copy_shared_libraries "$bundle" "${copied[@]}" || die "cannot copy the shared libraries"
  # Libraries over 8 MiB travel gzipped (OpenBLAS alone is 35 MiB, a third of it after gzip);
  # `run` unpacks them into a temporary folder on its library path.
  local big
  while read -r big; do
    [[ -n $big ]] && gzip -9 "$big"
  done < <(find "$bundle/shlibs" -name '*.so*' ! -name '*.gz' -size +8M)
  echo "built at: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null)$(git -C "$SRC" diff --quiet HEAD 2>/dev/null || echo ' + local changes')" \
    >"$bundle/BUILD_INFO"
  nvcc --version | tail -1 >>"$bundle/BUILD_INFO"

  echo "== $bundle"
  (cd "$bundle" && du -b shlibs/* | sort -rn | awk '{ printf "  %8.2f MiB  %s\n", $1 / 1048576, $2 }')
  (cd "$bundle" && du -sb openmpi tests tools ./*.so.* | awk '{ printf "  %8.2f MiB  %s\n", $1 / 1048576, $2 }')
  local bundle_bytes tree_bytes
  bundle_bytes=$(du -sb "$bundle" | cut -f1)
  tree_bytes=$(cd "$SRC" && git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
  awk -v b="$bundle_bytes" -v t="${tree_bytes:-0}" 'BEGIN {
    printf "bundle %.1f MiB + working tree %.1f MiB = %.1f MiB of the device tool'"'"'s 64 MiB\n",
      b / 1048576, t / 1048576, (b + t) / 1048576
    if (b + t > 60 * 1048576) print "WARNING: close to or over the 64 MiB the device tool carries"
  }'
  echo "next, with the device tool: carry [\"$bundle\"], the commands in this script's header"
}

# ---- run ----------------------------------------------------------------------------------------

declare -a STEP_LINES=()
FAILED_STEPS=0
INCOMPLETE_STEPS=0
NO_GPU_REASON=""
BUDGET=${OFL_GPU_CHECK_BUDGET:-560}

# record STEP STATUS DETAIL: STATUS is PASS, FAIL, SKIP or INCOMPLETE; FAIL and INCOMPLETE count
# towards the exit status.
record() {
  STEP_LINES+=("$(printf '%-10s  %-10s %s' "$2" "$1" "$3")")
  [[ $2 == FAIL ]] && FAILED_STEPS=$((FAILED_STEPS + 1))
  [[ $2 == INCOMPLETE ]] && INCOMPLETE_STEPS=$((INCOMPLETE_STEPS + 1))
  echo "== $1: $2 $3"
}

# The seconds a run may take: its own limit WANT, capped by what is left of the call's budget less
# 20 s for stopping it (timeout -k 10) and the summary; 0 when less than 10 s would be left.
run_limit() {
  local want=$1 left=$((BUDGET - SECONDS - 20))
  if ((left < 10)); then
    echo 0
  elif ((want < left)); then
    echo "$want"
  else
    echo "$left"
  fi
}

# The bundle's OpenMPI (pack_openmpi), wherever the bundle lies: OpenMPI's and PMIx's install
# directories by environment (what OPAL_PREFIX would set, spelt out: the Debian layout puts the
# components and settings outside the prefix), mpiexec and orted first on PATH (a singleton
# MPI_Init starts orted from OPAL_BINDIR), and root allowed (the GPU machine runs as root).
openmpi_env() {
  local m=$BUNDLE/openmpi
  [[ -x $m/bin/mpiexec ]] || return 0
  export PATH="$m/bin:$PATH"
  export OPAL_PREFIX=$m OPAL_EXEC_PREFIX=$m OPAL_BINDIR=$m/bin OPAL_SBINDIR=$m/bin \
    OPAL_LIBDIR=$m/lib OPAL_PKGLIBDIR=$m/lib/mca OPAL_DATAROOTDIR=$m/share \
    OPAL_DATADIR=$m/share OPAL_PKGDATADIR=$m/share/openmpi OPAL_SYSCONFDIR=$m/etc
  export PMIX_PREFIX=$m/pmix PMIX_EXEC_PREFIX=$m/pmix PMIX_LIBDIR=$m/pmix/lib \
    PMIX_PKGLIBDIR=$m/pmix/lib/pmix PMIX_DATAROOTDIR=$m/pmix/share PMIX_DATADIR=$m/pmix/share \
    PMIX_PKGDATADIR=$m/pmix/share/pmix PMIX_SYSCONFDIR=$m/pmix/etc \
    PMIX_MCA_mca_base_component_path=$m/pmix/lib/pmix
  export OMPI_MCA_mca_base_component_path=$m/lib/mca
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

step_libraries() {
  local binaries=("$BUNDLE"/tests/ofl_test_* "$BUNDLE"/tools/bench/ofl_bench_cuda "$BUNDLE"/liboneflow_lite.so.*)
  local extra
  for extra in "$BUNDLE"/openmpi/bin/* "$BUNDLE"/openmpi/lib/mca/*.so "$BUNDLE"/openmpi/pmix/lib/pmix/*.so; do
    [[ -f $extra ]] && binaries+=("$extra")
  done
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
    record libraries PASS "every shared library of ${#binaries[@]} binaries and components resolves"
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
declare -a TESTS_FAILED_NAMES=() TESTS_SKIPPED_NAMES=() TESTS_NOT_RUN_NAMES=()
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
  local limit
  limit=$(run_limit "$timeout")
  if ((limit == 0)); then
    TESTS_NOT_RUN_NAMES+=("$name")
    echo "NOT RUN  $name (the call's budget of $BUDGET s is spent)"
    return
  fi
  local log="$LOG_DIR/test.$((TESTS_RUN + 1)).log" start=$SECONDS rc ok=0
  mkdir -p "$workdir"
  (cd "$workdir" && env "${env_args[@]}" timeout -k 10 "$limit" "${cmd[@]}") >"$log" 2>&1
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
  elif [[ $rc == 124 || $rc == 137 ]] && ((limit < timeout)); then
    # Stopped by the call's budget before its own limit: not a finding.
    TESTS_NOT_RUN_NAMES+=("$name")
    echo "NOT RUN  $name (stopped after $limit s: the call's budget of $BUDGET s is spent)"
  else
    TESTS_FAILED=$((TESTS_FAILED + 1))
    TESTS_FAILED_NAMES+=("$name")
    echo "FAIL  $name (rc=$rc$([[ $rc == 124 || $rc == 137 ]] && echo ", timed out after $limit s"), $((SECONDS - start)) s$why): $what"
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
  local detail="$TESTS_RUN runs, $((TESTS_RUN - TESTS_FAILED)) passed, $TESTS_FAILED failed"
  ((${#TESTS_SKIPPED_NAMES[@]})) && detail+=", ${#TESTS_SKIPPED_NAMES[@]} skipped (no GPU)"
  ((${#TESTS_NOT_RUN_NAMES[@]})) && detail+=", ${#TESTS_NOT_RUN_NAMES[@]} not run (budget): ${TESTS_NOT_RUN_NAMES[*]}"
  ((TESTS_FAILED)) && detail+="; failed: ${TESTS_FAILED_NAMES[*]}"
  if ((TESTS_FAILED)); then
    record tests FAIL "$detail"
  elif ((${#TESTS_NOT_RUN_NAMES[@]})); then
    record tests INCOMPLETE "$detail"
  else
    record tests PASS "$detail"
  fi
}

# The global suite under the bundle's mpiexec with one rank: every test that needs one rank (those
# that need more skip themselves), and the CudaPlacementTest cases, which run NCCL on cuda:0 when
# there is a GPU. One rank only: two ranks on one GPU would make NCCL refuse the communicator
# (duplicate GPU). gtest's JSON says which cases ran; the log (full output, no colours: mpiexec
# gives the rank a terminal) says why one skipped.
step_global() {
  local exe=$BUNDLE/tests/ofl_test_global mpiexec=$BUNDLE/openmpi/bin/mpiexec
  if [[ ! -x $exe ]]; then
    record global FAIL "no tests/ofl_test_global in the bundle"
    return
  fi
  if [[ ! -x $mpiexec ]]; then
    record global FAIL "no openmpi/bin/mpiexec in the bundle (built without MPI?)"
    return
  fi
  local want=${OFL_GPU_CHECK_GLOBAL_TIMEOUT:-300} limit
  limit=$(run_limit "$want")
  if ((limit == 0)); then
    record global INCOMPLETE "not run: the call's budget of $BUDGET s is spent"
    return
  fi
  local json="$RESULTS/global_n1.json" log="$RESULTS/global_n1.log" start=$SECONDS rc
  rm -f "$json"
  echo "mpiexec: $mpiexec ($("$mpiexec" --version 2>&1 | head -1))" | tee "$log"
  (cd "$BUNDLE/tests" && timeout -k 10 "$limit" "$mpiexec" -n 1 --allow-run-as-root \
    --oversubscribe "$exe" --gtest_color=no --gtest_output=json:"$json") >>"$log" 2>&1
  rc=$?
  local verdict
  verdict=$(python3 - "$json" "$log" "$NO_GPU_REASON" <<'EOF'
import json, re, sys

path, log_path, no_gpu = sys.argv[1:4]
try:
    doc = json.load(open(path))
except Exception as e:
    print(f"FAIL no gtest JSON from ofl_test_global: {e}")
    sys.exit()
log = open(log_path, errors="replace").read()
cases = [(s["name"], t) for s in doc.get("testsuites", []) for t in s.get("testsuite", [])]
failed = [f"{s}.{t['name']}" for s, t in cases if t.get("failures")]
skipped = [(s, t) for s, t in cases if t.get("result") == "SKIPPED"]
detail = f"{len(cases)} tests, {len(cases) - len(failed) - len(skipped)} passed, {len(failed)} failed, {len(skipped)} skipped"

def skip_reason(name):
    m = re.search(r"\[ RUN      \] " + re.escape(name) + r"\n(.*?)\[  SKIPPED \] " + re.escape(name), log, re.S)
    lines = [l for l in (m.group(1).splitlines() if m else []) if l.strip() and not l.endswith(": Skipped")]
    return lines[0].strip() if lines else "no reason printed"

nccl = [(s, t) for s, t in cases if s == "CudaPlacementTest"]
needs_gpu = [(s, t) for s, t in nccl if not t["name"].startswith("WithoutAGpu")]
ran = [t["name"] for s, t in needs_gpu if t.get("result") != "SKIPPED"]
status = "FAIL" if failed else "PASS"
if not needs_gpu:
    status, detail = "FAIL", detail + "; no CudaPlacementTest case in the suite"
elif no_gpu:
    first = next((t["name"] for s, t in needs_gpu if t.get("result") == "SKIPPED"), None)
    detail += (f"; CudaPlacementTest on NCCL: {len(needs_gpu) - len(ran)} of {len(needs_gpu)} skipped"
               + (f" ({skip_reason('CudaPlacementTest.' + first)})" if first else ""))
elif len(ran) == len(needs_gpu):
    detail += f"; CudaPlacementTest on NCCL: {len(ran)} of {len(needs_gpu)} ran"
else:
    status = "FAIL"
    not_ran = [t["name"] for s, t in needs_gpu if t.get("result") == "SKIPPED"]
    detail += (f"; CudaPlacementTest skipped on a GPU machine: {', '.join(not_ran)} "
               f"({skip_reason('CudaPlacementTest.' + not_ran[0])})")
if failed:
    detail += "; failed: " + " ".join(failed[:10])
print(f"{status} {detail}")
EOF
  )
  local took=$((SECONDS - start))
  grep -E '^\[  FAILED  \]|^\[rank [0-9]+\]|Failure$' "$log" | head -20
  if [[ $rc == 124 || $rc == 137 ]]; then
    if ((limit < want)); then
      record global INCOMPLETE "mpiexec -n 1: stopped after $limit s by the call's budget of $BUDGET s"
    else
      record global FAIL "mpiexec -n 1: timed out after $limit s (see global_n1.log)"
    fi
  elif [[ $verdict =~ ^(PASS|FAIL)\ (.*)$ ]]; then
    local status=${BASH_REMATCH[1]} detail=${BASH_REMATCH[2]}
    ((rc != 0)) && status=FAIL && detail="mpiexec exited $rc; $detail"
    record global "$status" "mpiexec -n 1, $took s: $detail"
  else
    record global FAIL "mpiexec -n 1 exited $rc: $verdict; $(tail -3 "$log" | tr '\n' ' ')"
  fi
}

# compute-sanitizer --tool TOOL over a subset of ofl_test_functional and ofl_test_kernels on cuda:0
# (the whole suites take too long under it; memcheck sees out-of-bounds accesses only past the ends
# of the VM pool's cudaMalloc blocks, not between tensors carved from one block). Two runs, each
# with its gtest filter and a limit of OFL_GPU_CHECK_SANITIZER_TIMEOUT seconds.
sanitizer_filter() {
  local tool=$1 room=$2 var
  var="OFL_GPU_CHECK_${tool^^}_${room^^}"
  if [[ -n ${!var:-} ]]; then
    echo "${!var}"
    return
  fi
  # The large functional cases go through the same kernels as the kernel suite's large cases. Death
  # tests are left out: their child process never finishes under compute-sanitizer (seen on an H200
  # on 2026-11-26: ExpandSettingDeathTest.* ran into the limit on its own, every other case of the
  # memcheck filter ran in 2 s).
  case $tool/$room in
    memcheck/functional) echo '*Values*:*Repeat*:*Expand*:*Backward*:DeviceMemoryTest.*-*Large*:*DeathTest*' ;;
    memcheck/kernels) echo 'CopyKernelTest.*:RepeatKernelTest.*:ReduceSumToKernelTest.*:BinaryKernelTest.*:FillKernelTest.*-*DeathTest*' ;;
    */functional) echo '*Backward*-*Large*:*DeathTest*' ;;
    */kernels) echo 'ReduceSumToKernelTest.*-*Large*:*DeathTest*' ;;
  esac
}

step_sanitizer() {
  local tool=$1
  if [[ -n $NO_GPU_REASON ]]; then
    record "$tool" SKIP "no GPU"
    return
  fi
  local cs candidate
  cs=$(command -v compute-sanitizer)
  for candidate in /usr/local/cuda*/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer; do
    [[ -z $cs && -x $candidate ]] && cs=$candidate
  done
  if [[ -z $cs ]]; then
    record "$tool" FAIL "compute-sanitizer not found"
    return
  fi
  local want=${OFL_GPU_CHECK_SANITIZER_TIMEOUT:-140}
  local room filter limit rc start part errors passed tests_failed found=0 incomplete=0 failed=0
  local parts=() log="$RESULTS/$tool.log" run_log="$LOG_DIR/$tool.run.log"
  : >"$log"
  for room in functional kernels; do
    filter=$(sanitizer_filter "$tool" "$room")
    limit=$(run_limit "$want")
    if ((limit == 0)); then
      parts+=("$room: not run (the call's budget of $BUDGET s is spent)")
      incomplete=1
      continue
    fi
    start=$SECONDS
    echo "==== compute-sanitizer --tool $tool ofl_test_$room --gtest_filter=$filter (limit $limit s)" | tee -a "$log"
    (cd "$BUNDLE/tests" && OFL_TEST_DEVICE=cuda:0 timeout -k 10 "$limit" "$cs" --tool "$tool" \
      --error-exitcode 99 --print-limit 20 "$BUNDLE/tests/ofl_test_$room" \
      --gtest_filter="$filter" --gtest_brief=1 --gtest_color=no) >"$run_log" 2>&1
    rc=$?
    cat "$run_log" >>"$log"
    # The sanitizer's own count when it finished; the reports printed so far when it was stopped.
    errors=$(grep -Eo '^========= ERROR SUMMARY: [0-9]+' "$run_log" | grep -Eo '[0-9]+$' | tail -1)
    [[ -z $errors ]] && errors=$(grep -Ec '^========= (Invalid|Race|Barrier|Uninitialized|Program hit|Error|Warning: Race|Leaked)' "$run_log")
    passed=$(grep -Eo '\[  PASSED  \].* [0-9]+ tests?' "$run_log" | grep -Eo '[0-9]+' | tail -1)
    tests_failed=$(grep -Eo '\[  FAILED  \].* [0-9]+ tests?, listed below' "$run_log" | grep -Eo '[0-9]+' | head -1)
    part="$room: ${passed:-0} tests passed${tests_failed:+, $tests_failed failed}, sanitizer errors: $errors, $((SECONDS - start)) s"
    if [[ $rc == 124 || $rc == 137 ]]; then
      # gtest prints its counts at the end: a stopped run has none.
      part="$room: sanitizer errors so far: $errors"
      if ((errors > 0)); then
        part+=", timed out after $limit s having reported them"
        failed=1
      elif ((limit < want)); then
        part+=", stopped after $limit s by the call's budget of $BUDGET s (incomplete)"
        incomplete=1
      else
        part+=", timed out after $limit s (incomplete, not a finding)"
        incomplete=1
      fi
    elif grep -q 'OFL_TEST_DEVICE=cuda:0 is not available here' "$run_log"; then
      part+=", the suite found no usable cuda:0 under compute-sanitizer"
      failed=1
    elif ((rc != 0)); then
      part+=" (rc=$rc$([[ $rc == 99 ]] && echo ': the sanitizer found errors'))"
      failed=1
    fi
    ((errors > 0)) && found=1
    echo "  $part"
    parts+=("$part")
  done
  ((found)) && grep -E '^========= (Invalid|Race|Barrier|Uninitialized|Program hit|Error)|^\[  FAILED' "$log" | head -20
  local detail
  detail=$(IFS=';' && echo "${parts[*]}")
  detail=${detail//;/; }
  if ((failed)); then
    record "$tool" FAIL "$detail (see $tool.log)"
  elif ((incomplete)); then
    record "$tool" INCOMPLETE "$detail"
  else
    record "$tool" PASS "$detail"
  fi
}

# stopped_run RC LIMIT WANT: the status and detail of a benchmark run that `timeout` stopped (its
# own limit WANT, 300 s, several times what either benchmark takes, or LIMIT < WANT, the call's
# budget), or nothing when it was not stopped.
stopped_run() {
  local rc=$1 limit=$2 want=$3
  [[ $rc == 124 || $rc == 137 ]] || return 0
  if ((limit < want)); then
    echo "INCOMPLETE stopped after $limit s by the call's budget of $BUDGET s"
  else
    echo "FAIL timed out after $limit s"
  fi
}

step_bench() {
  local json="$RESULTS/bench_cuda.json" err="$RESULTS/bench_cuda.stderr.txt" rc limit stopped
  limit=$(run_limit 300)
  if ((limit == 0)); then
    record bench INCOMPLETE "not run: the call's budget of $BUDGET s is spent"
    return
  fi
  # shellcheck disable=SC2086  # a list of arguments
  timeout -k 10 "$limit" "$BUNDLE/tools/bench/ofl_bench_cuda" \
    ${OFL_GPU_CHECK_BENCH_ARGS:---benchmark_min_time=0.2 --benchmark_repetitions=3} \
    --benchmark_format=json >"$json" 2>"$err"
  rc=$?
  stopped=$(stopped_run "$rc" "$limit" 300)
  if [[ -n $stopped ]]; then
    record bench "${stopped%% *}" "ofl_bench_cuda ${stopped#* }"
    return
  fi
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
  local out rc limit stopped
  limit=$(run_limit 300)
  if ((limit == 0)); then
    record torch INCOMPLETE "not run: the call's budget of $BUDGET s is spent"
    return
  fi
  # shellcheck disable=SC2086  # a list of arguments
  out=$(cd "$SRC" && timeout -k 10 "$limit" python3 tools/bench/torch_cuda_bench.py \
    --out "$RESULTS/torch_cuda.json" ${OFL_GPU_CHECK_TORCH_ARGS:---min-time 0.2 --repetitions 3} 2>&1)
  rc=$?
  echo "$out"
  stopped=$(stopped_run "$rc" "$limit" 300)
  if [[ -n $stopped ]]; then
    record torch "${stopped%% *}" "torch_cuda_bench.py ${stopped#* }"
  elif ((rc != 0)); then
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

STEPS="tests global memcheck racecheck synccheck bench torch"

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
  local steps=("$@") step
  # shellcheck disable=SC2206  # a list of words
  ((${#steps[@]})) || steps=($STEPS)
  for step in "${steps[@]}"; do
    [[ " $STEPS " == *" $step "* ]] || die "unknown step '$step' (steps: $STEPS; one device call each for memcheck, racecheck and synccheck)"
  done
  RESULTS=${OFL_GPU_CHECK_OUT:-${OUT:-$BUNDLE/results}}
  mkdir -p "$RESULTS"
  LOG_DIR=$(mktemp -d)
  local unpacked gz
  unpacked=$(mktemp -d)
  for gz in "$BUNDLE"/shlibs/*.gz; do
    [[ -f $gz ]] || continue
    gzip -dc "$gz" >"$unpacked/$(basename "${gz%.gz}")" || die "cannot unpack $gz"
  done
  export LD_LIBRARY_PATH="$BUNDLE:$BUNDLE/shlibs:$unpacked${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  openmpi_env
  [[ -f $BUNDLE/BUILD_INFO ]] && sed 's/^/bundle /' "$BUNDLE/BUILD_INFO"
  echo "steps: ${steps[*]} (budget $BUDGET s)"

  step_libraries
  detect_gpu
  for step in "${steps[@]}"; do
    case $step in
      memcheck | racecheck | synccheck) step_sanitizer "$step" ;;
      *) "step_$step" ;;
    esac
  done

  local count status
  {
    echo "== summary of this call: ${steps[*]} ($(date -u '+%Y-%m-%d %H:%M UTC'), $SECONDS s, results in $RESULTS)"
    printf '%s\n' "${STEP_LINES[@]}"
    [[ " ${steps[*]} " == *" bench "* || " ${steps[*]} " == *" torch "* ]] && print_ratios
    if [[ -n $NO_GPU_REASON ]]; then echo "no GPU: $NO_GPU_REASON"; fi
    count=""
    for status in PASS FAIL INCOMPLETE SKIP; do
      count+="$(printf '%s\n' "${STEP_LINES[@]}" | grep -c "^$status ") $status, "
    done
    echo "${#STEP_LINES[@]} step(s): ${count%, }"
  } | tee "$RESULTS/summary.txt"
  rm -rf "$LOG_DIR"
  if ((FAILED_STEPS)); then
    return 1
  elif ((INCOMPLETE_STEPS)); then
    return 3
  fi
  return 0
}

case ${1:-} in
  build-here)
    [[ $# -eq 2 ]] || die "usage: $0 build-here <dir>"
    build_here "$2"
    ;;
  run)
    [[ $# -ge 2 ]] || die "usage: $0 run <dir> [STEP...] (steps: $STEPS)"
    dir=$2
    shift 2
    run_checks "$dir" "$@"
    ;;
  *)
    sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 2
    ;;
esac
