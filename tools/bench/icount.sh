#!/usr/bin/env bash
# Instructions per tiny op, on every thread of the process together, counted by callgrind, for
# oneflow_lite and libtorch, against the tiny-ops issue's targets.
#
#   bash tools/bench/icount.sh [build-dir]      # default build-h1-bench, relative to the repo root
#
# The build dir must be configured with -DOFL_BUILD_BENCH=ON (and -DOFL_BENCH_WITH_TORCH=ON for the
# libtorch column); the script builds ofl_icount_driver there (a no-op when it is up to date).
# Method: each (case, impl) runs twice under `valgrind --tool=callgrind`, with N1 and N2 ops after
# a warm-up; instr/op = (Ir(N2) - Ir(N1)) / (N2 - N1), Ir summed over all threads, so start-up,
# warm-up and the final ofl::sync() cancel. The "issuing thread" figure is the same difference
# for the main thread alone (callgrind --separate-threads=yes writes one file per thread; their
# sum is the process total). The driver turns instrumentation on in main() and the runs use
# --instr-atstart=no, so libtorch's start-up (two billion instructions) runs uninstrumented
# (otherwise over a minute per run). The callgrind files stay in <build-dir>/icount-results for
# callgrind_annotate.
#
# The "autograd" case's op is a whole tiny autograd graph (forward, backward() and the grads
# cleared), so its figures are instructions per graph.
#
# Environment: OFL_ICOUNT_N1 / OFL_ICOUNT_N2 (default 2000 / 4000); OFL_ICOUNT_CASES (default
# "expand repeat unary empty roundtrip autograd"). Runs two callgrinds at a time; about 2 minutes on the
# project's 2-vCPU machine without the autograd case, which adds about a minute. The counts hardly
# depend on the machine's load: callgrind runs one thread at a time, so the VM worker finds a
# batch of work whenever it runs and seldom spins. Exits 0 when every count was taken (whether or
# not the targets are met), 1 on an error.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build-h1-bench}
[[ $build == /* ]] || build=$root/$build
n1=${OFL_ICOUNT_N1:-2000}
n2=${OFL_ICOUNT_N2:-4000}
cases=${OFL_ICOUNT_CASES:-expand repeat unary empty roundtrip autograd}

die() {
  echo "icount.sh: $*" >&2
  exit 1
}

command -v valgrind >/dev/null || die "valgrind not found (apt-get install -y valgrind)"
[[ -f $build/CMakeCache.txt ]] || die "$build is not a CMake build dir"
grep -q '^OFL_BUILD_BENCH:BOOL=ON' "$build/CMakeCache.txt" ||
  die "$build is not configured with -DOFL_BUILD_BENCH=ON"
[[ $n1 =~ ^[0-9]+$ && $n2 =~ ^[0-9]+$ && $n2 -gt $n1 ]] || die "need integers N2 > N1"
cmake --build "$build" -j2 --target ofl_icount_driver >/dev/null ||
  die "building ofl_icount_driver in $build failed"
driver=$build/tools/bench/ofl_icount_driver

impls=ofl
if "$driver" empty torch 0 >/dev/null 2>&1; then
  impls="ofl torch"
else
  echo "icount.sh: no libtorch in this build (-DOFL_BENCH_WITH_TORCH=ON adds it)" >&2
fi

out=$build/icount-results
mkdir -p "$out"
instr_opt=--instr-atstart=no

# run <case> <impl> <n>: one callgrind run, its files under $out/callgrind.<case>.<impl>.<n>*.
run() {
  local prefix=$out/callgrind.$1.$2.$3
  rm -f "$prefix" "$prefix"-*
  # shellcheck disable=SC2086  # $instr_opt is one option or empty
  if ! valgrind --tool=callgrind $instr_opt --separate-threads=yes --callgrind-out-file="$prefix" \
    "$driver" "$1" "$2" "$3" >"$prefix.log" 2>&1; then
    echo "icount.sh: callgrind run '$1 $2 $3' failed; see $prefix.log" >&2
    return 1
  fi
}

# pair <case> <impl>: the N1 and N2 runs side by side (callgrind runs a process's threads one at a
# time, so each run needs one core; the counts do not depend on the timing).
pair() {
  local p1 p2
  run "$1" "$2" "$n1" &
  p1=$!
  run "$1" "$2" "$n2" &
  p2=$!
  wait "$p1" || die "see above"
  wait "$p2" || die "see above"
}

# ir <case> <impl> <n>: sets ir_all and ir_main (Ir of all threads, of the main thread) of a run.
ir() {
  local prefix=$out/callgrind.$1.$2.$3
  compgen -G "$prefix-*" >/dev/null || die "no callgrind output for '$1 $2 $3' in $out"
  # One file per thread (suffix -01 = the main thread); "summary:" is each file's total.
  read -r ir_all ir_main < <(awk '/^summary:/ { all += $2; if (FILENAME ~ /-01$/) main += $2 }
                                  END { printf "%d %d\n", all, main }' "$prefix"-*)
}

ir_all=0 ir_main=0
declare -A per_op main_per_op
for c in $cases; do
  for impl in $impls; do
    pair "$c" "$impl"
    ir "$c" "$impl" "$n1"
    if [[ $ir_all == 0 && -n $instr_opt ]]; then
      # A driver built without valgrind/callgrind.h never starts instrumentation: count it all.
      echo "icount.sh: the driver has no callgrind requests; counting whole runs (slower)" >&2
      instr_opt=
      pair "$c" "$impl"
      ir "$c" "$impl" "$n1"
    fi
    all1=$ir_all main1=$ir_main
    ir "$c" "$impl" "$n2"
    all2=$ir_all main2=$ir_main
    per_op[$c.$impl]=$(((all2 - all1) / (n2 - n1)))
    main_per_op[$c.$impl]=$(((main2 - main1) / (n2 - n1)))
    echo "icount.sh: $c $impl: Ir $all1 (N=$n1), $all2 (N=$n2) -> ${per_op[$c.$impl]}/op" >&2
  done
done

declare -A label=(
  [expand]="expand({4,5,3}).contiguous() of (4,1,3)"
  [repeat]="repeat({2,1,2}) of (4,1,3)"
  [unary]="exp() of (4,1,3)"
  [empty]="empty({4,3})"
  [roundtrip]="expand({4,2,3}).contiguous().to_vector() of (4,1,3)"
  [autograd]="one graph: (x.expand({2,4,5,3}) * w).sum().backward(), x (4,1,3), grads cleared"
)
# The round trip and the autograd graph have no instruction target: they are shown next to
# libtorch's.
declare -A target=([expand]=3500 [repeat]=3500 [empty]=1500)
# A tiny unary op costs no more than expand().contiguous() measured in the same run (the training
# issue's target).
[[ -n ${per_op[expand.ofl]:-} ]] && target[unary]=${per_op[expand.ofl]}

echo
echo "Instructions per op, all threads (callgrind; N = $n2 - $n1 ops; $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo
echo "| case | oneflow_lite instr/op (issuing thread) | libtorch instr/op | ofl / libtorch | target | result |"
echo "| --- | --- | --- | --- | --- | --- |"
for c in $cases; do
  ofl=${per_op[$c.ofl]}
  torch=-
  ratio=-
  if [[ -n ${per_op[$c.torch]:-} ]]; then
    torch=${per_op[$c.torch]}
    ratio=$(awk -v a="$ofl" -v b="$torch" 'BEGIN { printf (b > 0 ? "%.2fx" : "-"), a / b }')
  fi
  if [[ -n ${target[$c]:-} ]]; then
    result=FAIL
    ((ofl <= ${target[$c]})) && result=PASS
    echo "| ${label[$c]} | $ofl (${main_per_op[$c.ofl]}) | $torch | $ratio | <= ${target[$c]} | $result |"
  else
    echo "| ${label[$c]} | $ofl (${main_per_op[$c.ofl]}) | $torch | $ratio | - | - |"
  fi
done
