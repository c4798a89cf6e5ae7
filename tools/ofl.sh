#!/usr/bin/env bash
# One entry point for setting up, building and running oneflow_lite on a fresh Debian machine.
#   bash tools/ofl.sh demo    install what is missing, build, run the VM trace tool's demo
#   bash tools/ofl.sh test    install what is missing, build, run every test through CTest
#   bash tools/ofl.sh bench   install what is missing (plus libtorch-dev), build and run benchmarks
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:-demo}"
build_dir="${OFL_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"

# Debian packages: compiler and build tools, then the libraries the project links against.
packages=(g++ cmake ninja-build ccache pkg-config libtbb-dev libspdlog-dev libfmt-dev libmimalloc-dev nlohmann-json3-dev libcli11-dev libgtest-dev)
case "$cmd" in
  bench) packages+=(libbenchmark-dev libtorch-dev) ;;
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

configure() {
  local extra=("$@")
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}"
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >/dev/null
}

case "$cmd" in
  demo)
    install_missing "${packages[@]}"
    configure -DOFL_BUILD_TESTS=OFF
    cmake --build "$build_dir" --target ofl_vm_trace -j "$jobs"
    "$build_dir/tools/vm_trace/ofl_vm_trace"
    ;;
  test)
    install_missing "${packages[@]}"
    configure -DOFL_BUILD_TESTS=ON
    cmake --build "$build_dir" -j "$jobs"
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 600
    ;;
  bench)
    install_missing "${packages[@]}"
    configure -DOFL_BUILD_TESTS=OFF -DOFL_BUILD_BENCH=ON -DOFL_BENCH_WITH_TORCH=ON
    cmake --build "$build_dir" -j "$jobs"
    for b in "$build_dir"/tools/bench/ofl_bench_*; do "$b" "${@:2}"; done
    ;;
  *)
    echo "usage: bash tools/ofl.sh demo|test|bench" >&2
    exit 2
    ;;
esac
