#!/usr/bin/env bash
# Runs the VM, pool (caching allocator) and API suites (and the sim suites) of a sanitizer build with the options CI
# uses: any report fails the run. Called by `bash tools/ofl.sh test`; by hand:
#   bash tests/sanitizers/run_suites.sh asan|tsan BUILD_DIR [gtest args...]
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kind="${1:?usage: run_suites.sh asan|tsan BUILD_DIR [gtest args...]}"
dir="${2:?usage: run_suites.sh asan|tsan BUILD_DIR [gtest args...]}"
shift 2

case "$kind" in
  asan)
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:suppressions=$here/asan.supp"
    export LSAN_OPTIONS="suppressions=$here/lsan.supp"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$here/ubsan.supp"
    ;;
  tsan)
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tsan.supp"
    ;;
  *)
    echo "run_suites.sh: unknown kind '$kind' (asan or tsan)" >&2
    exit 2
    ;;
esac

# Each suite as CTest runs it, then again with each op waiting at the call (OFL_VM_SYNC=1), the
# VM's other scheduling mode.
failed=0
for suite in vm functional; do
  bin="$dir/tests/ofl_test_$suite"
  for mode in async sync; do
    start=$SECONDS
    rc=0
    if [ "$mode" = sync ]; then
      OFL_VM_SYNC=1 "$bin" --gtest_brief=1 "$@" || rc=$?
    else
      "$bin" --gtest_brief=1 "$@" || rc=$?
    fi
    echo "-- $kind ofl_test_$suite ($mode): $((SECONDS - start))s, exit $rc"
    [ $rc -eq 0 ] || failed=$((failed + 1))
  done
done
# The simulated asynchronous accelerator: its own suite, and the API and VM suites run on sim:0
# (every tensor on a device the host cannot touch, streams finishing late and out of order); under
# ASan also the kernel suite on sim:0 (under TSan it adds minutes and no thread the suites above
# do not already run).
run_one() {
  local label="$1"
  shift
  local start=$SECONDS rc=0
  "$@" || rc=$?
  echo "-- $kind $label: $((SECONDS - start))s, exit $rc"
  [ $rc -eq 0 ] || failed=$((failed + 1))
}
run_one "ofl_test_kernels (sim backend)" "$dir/tests/ofl_test_kernels" --gtest_brief=1 \
  --gtest_filter='Sim*' "$@"
run_one "ofl_test_functional (sim:0)" env OFL_TEST_DEVICE=sim:0 "$dir/tests/ofl_test_functional" \
  --gtest_brief=1 "$@"
run_one "ofl_test_vm (sim:0)" env OFL_TEST_DEVICE=sim:0 "$dir/tests/ofl_test_vm" --gtest_brief=1 "$@"
if [ "$kind" = asan ]; then
  run_one "ofl_test_kernels (sim:0)" env OFL_TEST_DEVICE=sim:0 "$dir/tests/ofl_test_kernels" \
    --gtest_brief=1 "$@"
  # The CUDA kernels' own source on the host grid (tests/cuda_host/host_grid.h): its own tests and
  # planted defects, then the kernel value suites on its 1-SM device with 32-bit indices, and (less
  # the accuracy suite, whose sums only check values) on its 132-SM device with the 64-bit index
  # path forced: each grid shape and each index path runs under ASan once (CTest checks the values
  # on both devices and with the 64-bit path forced, docs/checks.md).
  run_one "ofl_test_cuda_host" "$dir/tests/ofl_test_cuda_host" --gtest_brief=1 "$@"
  suites='CopyKernelTest.*:RepeatKernelTest.*:ReduceSumToKernelTest.*:ReduceSumDeterminismTest.*:BinaryKernelTest.*:FillKernelTest.*'
  for run in "0 0 :ReduceSumAccuracyTest.*" "1 1 "; do
    read -r index wide extra <<<"$run"
    run_one "ofl_test_kernels (cudahost:$index, 64-bit indices forced: $wide)" env \
      OFL_TEST_DEVICE="cudahost:$index" OFL_CUDA_HOST_SMS=1,132 OFL_CUDA_HOST_WIDE_INDEX="$wide" \
      "$dir/tests/ofl_test_kernels" --gtest_brief=1 --gtest_filter="$suites$extra"
  done
fi
exit $((failed > 0))
