#!/usr/bin/env bash
# One entry point for setting up, building and running oneflow_lite on a fresh Debian machine.
#   bash tools/ofl.sh demo    install what is missing, build, run the VM trace tool's demo
#   bash tools/ofl.sh test    install what is missing, build, run every test through CTest, then the
#                             Python package's pytest suite in a virtual environment (pip install .),
#                             then the VM, pool and API suites under ASan+UBSan and under TSan, then
#                             the short fuzz runs (OFL_QUICK=1: only the normal build and CTest)
#   bash tools/ofl.sh bench   install what is missing (plus libtorch-dev), build and run benchmarks
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:-demo}"
build_dir="${OFL_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"
quick="${OFL_QUICK:-0}"
# Seconds each fuzzer runs in the test command's fuzz stage.
fuzz_seconds="${OFL_FUZZ_SECONDS:-40}"

# Debian packages: compiler and build tools, then the libraries the project links against.
packages=(g++ cmake ninja-build ccache pkg-config python3 libtbb-dev libspdlog-dev libfmt-dev libmimalloc-dev nlohmann-json3-dev libcli11-dev libgtest-dev openmpi-bin libopenmpi-dev libopenblas-dev)
case "$cmd" in
  bench) packages+=(libbenchmark-dev libtorch-dev) ;;
  # The Python package's virtual environment and headers; clang and its runtime libraries
  # (libFuzzer) for the fuzz stage.
  # Google Benchmark: the test command compiles the benchmarks (it does not run them), so that a
  # change that breaks one is seen in CI.
  test)
    packages+=(python3-venv python3-dev libbenchmark-dev)
    [ "$quick" = 1 ] || packages+=(clang libclang-rt-14-dev)
    ;;
esac

install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
# A fresh clone (CI) lives in a new directory: hash paths relative to the checkout and leave the
# working directory out of the hash, so the -g sanitizer and fuzz builds hit the cache too.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"

configure() {
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
}

# ---- test: stages, each timed; a failed stage does not stop the later ones ----------------------
passed=0
failed=0
failed_names=()
timings=()

# stage NAME COMMAND...: runs COMMAND, prints its time, counts it as passed or failed.
stage() {
  local name="$1"
  shift
  echo "== stage $name"
  local start=$SECONDS rc=0
  "$@" || rc=$?
  local took=$((SECONDS - start))
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    timings+=("$(printf '%-10s %5ds  passed' "$name" "$took")")
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    timings+=("$(printf '%-10s %5ds  FAILED (exit %d)' "$name" "$took" "$rc")")
  fi
  echo "== stage $name: ${took}s, $([ $rc -eq 0 ] && echo passed || echo "FAILED (exit $rc)")"
}

# (set -e does not apply inside a function run as `f || ...`: every step returns on failure.)
normal_stage() {
  configure -DOFL_BUILD_TESTS=ON -DOFL_BUILD_BENCH=ON -DOFL_BENCH_WITH_TORCH=OFF -DOFL_WITH_CUDA=AUTO || return
  cmake --build "$build_dir" -j "$jobs" || return
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 600
}

# The Python package: a virtual environment of its own, `pip install .[test]` (the build tools at
# the versions pyproject.toml pins, the library and extension built by CMake into build-python/),
# then the pytest suite, then its global tests under mpiexec with 2 and 4 ranks.
python_stage() {
  local venv="$build_dir-venv" python="${OFL_PYTHON:-python3}"
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv" || return
  # The build tools at pyproject.toml's pins go into the venv itself and the build runs without
  # isolation: nanobind's sources then sit at a fixed path under the checkout, so ccache serves
  # them on the next run (an isolated build unpacks them under a new /tmp/pip-build-env-* path
  # each time, which ccache cannot match).
  local requires
  if requires="$("$venv/bin/python" -c 'import sys, tomllib
print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["build-system"]["requires"]))' \
    "$root/pyproject.toml" 2>/dev/null)"; then
    # shellcheck disable=SC2086
    "$venv/bin/python" -m pip install -q --disable-pip-version-check $requires || return
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
      "$root[test]" || return
  else
    # A Python before 3.11 has no tomllib to read the pins with: pip's isolated build, which
    # installs them itself (nanobind is then compiled afresh each run).
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$root[test]" || return
  fi
  # From the tests' folder, so `import oneflow_lite` is the installed package, not the source.
  (cd "$root/tests/python" && "$venv/bin/python" -m pytest -q -p no:cacheprovider) || return
  local n
  for n in 2 4; do
    echo "== pytest tests/python/global under mpiexec -n $n"
    (cd "$root/tests/python" && timeout 600 mpiexec --allow-run-as-root --oversubscribe -n "$n" \
      "$venv/bin/python" -m pytest -q -p no:cacheprovider --color=no global_tensors) || return
  done
}

# The VM, pool (caching allocator) and API suites under sanitizers: KIND is asan (ASan+UBSan) or
# tsan. Optimised -O1 with line tables only (-g1: the file:line of every frame of a report, at a
# fraction of full debug info's compile time), asserts on, no tools. The asan build is clang's and
# also holds the fuzzers (tests/fuzz, libFuzzer): one sanitizer build serves the asan and fuzz
# stages. The tsan build holds only the suites it runs (the VM, API and kernel suites).
sanitizer_stage() {
  local kind="$1" dir="$build_dir-$1" san compilers=() extra=()
  local targets=(ofl_test_vm ofl_test_functional ofl_test_kernels)
  case "$kind" in
    asan)
      san="address;undefined"
      compilers=(CC=clang CXX=clang++)
      extra=(-DOFL_BUILD_FUZZERS=ON)
      targets+=(ofl_test_cuda_host shape_fuzz program_fuzz autograd_fuzz)
      ;;
    tsan) san="thread" ;;
  esac
  env "${compilers[@]}" cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DOFL_SANITIZE=$san" -DOFL_WITH_MPI=OFF -DOFL_WITH_CUDA=OFF \
    -DOFL_BUILD_TESTS=ON -DOFL_BUILD_TOOLS=OFF "${extra[@]}" >/dev/null || return
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}" || return
  bash "$root/tests/sanitizers/run_suites.sh" "$kind" "$dir"
}

# The fuzzers (tests/fuzz) of the asan stage's build (clang, ASan and UBSan) for a short run each.
fuzz_stage() {
  local dir="$build_dir-asan"
  # A fixed seed makes the CI run explore the same inputs every time (a new finding reproduces, and
  # a run that passed here passes in CI); long runs with fresh seeds are for tests/fuzz/README.md.
  OFL_FUZZ_FLAGS="${OFL_FUZZ_FLAGS:--seed=20261121}" bash "$root/tests/fuzz/run.sh" "$dir" "$fuzz_seconds"
}

case "$cmd" in
  demo)
    install_missing "${packages[@]}"
    # The demo runs on the CPU: the CUDA kernels (an nvcc pass each) are built only where a GPU is
    # there to run them (the test command builds them wherever nvcc is found).
    demo_cuda=OFF
    nvidia-smi -L >/dev/null 2>&1 && demo_cuda=AUTO
    configure -DOFL_BUILD_TESTS=OFF -DOFL_BUILD_BENCH=OFF -DOFL_WITH_CUDA="$demo_cuda"
    cmake --build "$build_dir" --target ofl_vm_trace -j "$jobs"
    "$build_dir/tools/vm_trace/ofl_vm_trace"
    ;;
  test)
    install_missing "${packages[@]}"
    total_start=$SECONDS
    stage build+ctest normal_stage
    stage python python_stage
    if [ "$quick" != 1 ]; then
      stage asan sanitizer_stage asan
      stage tsan sanitizer_stage tsan
      if [ -f "$root/tests/fuzz/run.sh" ]; then
        stage fuzz fuzz_stage
      else
        echo "== stage fuzz: skipped (no tests/fuzz/run.sh)"
      fi
    fi
    echo "== stage timings (total $((SECONDS - total_start))s)"
    printf '   %s\n' "${timings[@]}"
    [ $failed -eq 0 ] || echo "failed stages: ${failed_names[*]}"
    echo "checks: $passed passed, $failed failed"
    [ $failed -eq 0 ]
    ;;
  bench)
    install_missing "${packages[@]}"
    configure -DOFL_BUILD_TESTS=OFF -DOFL_BUILD_BENCH=ON -DOFL_BENCH_WITH_TORCH=ON -DOFL_WITH_CUDA=AUTO
    cmake --build "$build_dir" -j "$jobs"
    for b in "$build_dir"/tools/bench/ofl_bench_*; do
      case "$(basename "$b")" in
        # Global tensors: one process per rank (4 ranks oversubscribe a 2-core machine).
        ofl_bench_global)
          for n in 2 4; do
            echo "== ofl_bench_global: mpiexec -n $n" >&2
            mpiexec --allow-run-as-root --oversubscribe -n "$n" "$b" "${@:2}"
          done
          ;;
        *) "$b" "${@:2}" ;;
      esac
    done
    ;;
  *)
    echo "usage: bash tools/ofl.sh demo|test|bench" >&2
    exit 2
    ;;
esac
