// The tool's built-in workloads: small programs that exercise one side of the VM each, so that
// their traces show it (views and pool reuse, tensors dying in a chain, cross-stream fan-out with
// ReleaseTensor, the per-op overhead of many tiny ops, collectives between the ranks of a global
// program).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"

namespace ofl::vm_trace {

struct WorkloadInfo {
  std::string name;
  std::string help;  // one line
  int64_t default_iters;
  std::string iters_meaning;  // what --iters counts
};

const std::vector<WorkloadInfo>& Workloads();
const WorkloadInfo* FindWorkload(const std::string& name);

struct WorkloadOptions {
  Device device = Device("cpu");
  int64_t iters = 0;        // 0: the workload's default
  std::FILE* out = stdout;  // where results are printed; nullptr prints nothing
  // Called now and then with (iterations done, iterations in all); may be empty.
  std::function<void(int64_t, int64_t)> progress;
};

// Runs a workload to completion (it ends with a sync). Throws InvalidArgument for an unknown name
// or a negative iteration count, DeviceError for a device the build cannot use, and re-throws any
// error raised inside the VM.
void RunWorkload(const std::string& name, const WorkloadOptions& options);

}  // namespace ofl::vm_trace
