#!/usr/bin/env bash
# Resident memory of many live tiny tensors: N (default 100,000) (4,3) float32 tensors on cpu, kept
# in a std::vector, then ofl::sync(); the growth of the process's resident set size
# (/proc/self/statm) over a baseline taken after a warm-up that makes and frees a few tensors, so
# the runtime's threads, pools and first-use allocations are in the baseline. Two ways to make
# them: empty({4,3}) (ofl::empty, torch::empty: the data is never written, so untouched pool pages
# do not count) and from 12 host floats (ofl::tensor, torch::from_blob(...).clone(): the data is
# written). RSS does not shrink reliably, so every (case, impl) runs in a fresh process
# (ofl_icount_driver <rss|rss_tensor> <impl> N), three times; the table shows the median run.
#
#   bash tools/bench/live_rss.sh [build-dir] [N]   # default build-h1-bench, 100000
#
# The build dir must be configured with -DOFL_BUILD_BENCH=ON (and -DOFL_BENCH_WITH_TORCH=ON for the
# libtorch rows); the script builds ofl_icount_driver there (a no-op when it is up to date). Target
# (the tiny-ops issue): oneflow_lite's growth <= 30 MB (10^6 bytes) for 100,000 empty({4,3})
# tensors, the case the issue's starting figure (about 110 MB) measured. The row made from host
# floats also holds the data: 64 bytes written per tensor (its pool slot), 6.4 MB in all. libtorch
# allocates through the process's malloc (glibc's here); oneflow_lite its small objects through
# its private mimalloc and tensor data from its caching pool (below 512 bytes: 64-byte classes,
# slots of slabs).
# Exits 0 when every figure was taken (whether or not the target is met), 1 on an error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build-h1-bench}
[[ $build == /* ]] || build=$root/$build
n=${2:-100000}
target_mb=30
runs=3

die() {
  echo "live_rss.sh: $*" >&2
  exit 1
}

[[ -f $build/CMakeCache.txt ]] || die "$build is not a CMake build dir"
grep -q '^OFL_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt" ||
  die "$build is not configured with -DOFL_BUILD_BENCH=ON"
[[ $n =~ ^[0-9]+$ && $n -gt 0 ]] || die "N must be a positive integer"
cmake --build "$build" -j2 --target ofl_icount_driver >/dev/null ||
  die "building ofl_icount_driver in $build failed"
driver=$build/tools/bench/ofl_icount_driver

impls=ofl
if "$driver" empty torch 0 >/dev/null 2>&1; then
  impls="ofl torch"
else
  echo "live_rss.sh: no libtorch in this build (-DOFL_BENCH_WITH_TORCH=ON adds it)" >&2
fi

# field <line> <key>: the value of key=value in a driver's output line.
field() {
  local kv
  for kv in $1; do
    [[ $kv == "$2="* ]] && {
      echo "${kv#*=}"
      return
    }
  done
  echo "-"
}

declare -A made_by=(
  [rss.ofl]="ofl::empty({4,3})"
  [rss.torch]="torch::empty({4,3})"
  [rss_tensor.ofl]="ofl::tensor(12 floats, {4,3})"
  [rss_tensor.torch]="torch::from_blob(12 floats, {4,3}).clone()"
)

echo "| made by | tensors | RSS growth | bytes / tensor | baseline RSS | other | target | result |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for c in rss rss_tensor; do
  for impl in $impls; do
    lines=()
    for ((r = 0; r < runs; ++r)); do
      line=$("$driver" "$c" "$impl" "$n") || die "'$driver $c $impl $n' failed"
      echo "live_rss.sh: $line" >&2
      lines+=("$line")
    done
    # The median run by growth.
    line=$(printf '%s\n' "${lines[@]}" |
      awk '{ for (i = 1; i <= NF; ++i) if ($i ~ /^growth_bytes=/) { split($i, kv, "="); print kv[2], $0 } }' |
      sort -n | sed -n "$(((runs + 1) / 2))p" | cut -d' ' -f2-)
    growth=$(field "$line" growth_bytes)
    growth_mb=$(field "$line" growth_mb)
    per=$(field "$line" bytes_per_tensor)
    base_mb=$(awk -v b="$(field "$line" baseline_bytes)" 'BEGIN { printf "%.1f MB", b / 1e6 }')
    other="handle $(field "$line" sizeof_handle) B"
    result=-
    tgt=-
    if [[ $impl == ofl ]]; then
      other+="; pool allocated $(field "$line" pool_allocated_bytes) B, reserved $(field "$line" pool_reserved_bytes) B"
    fi
    if [[ $impl == ofl && $c == rss ]]; then
      result=FAIL
      ((growth <= target_mb * 1000000)) && result=PASS
      tgt="<= $target_mb MB"
    fi
    echo "| ${made_by[$c.$impl]} | $n | $growth_mb MB | $per | $base_mb | $other | $tgt | $result |"
  done
done
