#!/usr/bin/env bash
# Runs each libFuzzer target for SECONDS from a copy of its seed corpus and prints its execution
# count. Exits non-zero when any fuzzer finds a failure; the failing input is saved under
# BUILD_DIR/fuzz-crashes/<fuzzer>/ (copy it into tests/fuzz/regressions/<fuzzer>/ to keep it).
#   usage: tests/fuzz/run.sh BUILD_DIR SECONDS [FUZZER...]
# Extra libFuzzer flags can be passed in OFL_FUZZ_FLAGS (e.g. "-jobs=2 -workers=2").
set -u
if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS [FUZZER...]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
seconds=$2
shift 2
fuzzers=("$@")
[[ ${#fuzzers[@]} -eq 0 ]] && fuzzers=(shape_fuzz program_fuzz autograd_fuzz)
src_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
for f in "${fuzzers[@]}"; do
  bin="$build_dir/tests/fuzz/$f"
  if [[ ! -x "$bin" ]]; then
    echo "$f: $bin not built (configure with -DOFL_BUILD_FUZZERS=ON)" >&2
    status=1
    continue
  fi
  mkdir -p "$work/$f" "$build_dir/fuzz-crashes/$f"
  cp "$src_dir/corpus/$f/"* "$work/$f/"
  log="$build_dir/fuzz-crashes/$f.log"
  # shellcheck disable=SC2086
  "$bin" "$work/$f" -max_total_time="$seconds" -timeout=60 -print_final_stats=1 \
    -artifact_prefix="$build_dir/fuzz-crashes/$f/" ${OFL_FUZZ_FLAGS:-} >"$log" 2>&1
  rc=$?
  execs=$(grep -m1 '^stat::number_of_executed_units:' "$log" | awk '{print $2}')
  rate=$(grep -m1 '^stat::average_exec_per_sec:' "$log" | awk '{print $2}')
  if [[ $rc -ne 0 ]]; then
    status=1
    echo "$f: FAILED (exit $rc) after ${execs:-?} executions; log $log; input saved under" \
      "$build_dir/fuzz-crashes/$f/"
    grep -m5 -E 'runtime error|ERROR: |FUZZ CHECK FAILED|Test unit written' "$log"
  else
    echo "$f: ok, ${execs:-?} executions in ${seconds}s (${rate:-?} exec/s)"
  fi
done
exit $status
