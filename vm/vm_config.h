// VmConfig: the VM's settings from the environment (OFL_VM_*, OFL_TRACE*), read once when the VM
// starts through the table of settings (oneflow_lite/settings.h, docs/settings.md), which holds
// their ranges and defaults. A value that is not a number, or is out of its range, is reported
// once (a warning naming the variable, the value and the range) and the default is used instead:
// a typo in a debugging switch must neither stop every op nor be silently ignored.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ofl::vm {

// The defaults below are the table's (tests/vm/vm_config_test.cpp checks that they agree).
struct VmConfig {
  bool sync_mode = false;        // OFL_VM_SYNC: 0 or 1
  int64_t spin_us = 50;          // OFL_VM_SPIN_US: 0 .. 1000000
  int64_t high_water = 16384;    // OFL_VM_HIGH_WATER_MARK: 2 .. kMaxHighWater
  int64_t low_water = 8192;      // OFL_VM_LOW_WATER_MARK: 1 .. high - 1 (default high / 2)
  double wait_timeout_s = 300;   // OFL_VM_TIMEOUT_SECONDS: a finite number; <= 0 waits forever
  bool fold_releases = true;     // OFL_VM_FOLD_RELEASE: 0 or 1
  bool trace_vm = false;         // OFL_TRACE_VM: 0 or 1
  std::string trace_path;        // OFL_TRACE: a file path (any string)
  int64_t exit_stall_ms = 2000;  // OFL_VM_EXIT_STALL_MS: 1 .. 3600000
  // OFL_VM_INLINE_BYTES: 0 .. 2^40. An op call touching at most this many bytes, issued to an idle
  // synchronous stream with its inputs complete, runs on the issuing thread (0: never).
  int64_t inline_bytes = 32768;
};

// The largest high-water mark (half a stream's ring, Stream::kRingCapacity / 2).
inline constexpr int64_t kMaxHighWater = int64_t{1} << 16;

// `lookup(name)` returns the variable's value or nullptr when it is unset. Each problem adds one
// line to *warnings (the VM logs them).
VmConfig ReadVmConfig(const std::function<const char*(const char*)>& lookup,
                      std::vector<std::string>* warnings);

}  // namespace ofl::vm
