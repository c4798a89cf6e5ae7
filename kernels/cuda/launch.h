// Launch configuration and the copy engine shared by the CUDA kernels (host side).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernels/index_util.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::cuda {

// Threads per block of the elementwise kernels.
constexpr int kThreads = 256;

// Blocks for `work` items handled one per thread in a grid-stride loop: enough to fill the device
// (a few waves of blocks per SM), never more than the work needs. The SM count is read once per
// device.
unsigned GridFor(int64_t work, int device_index);

// "<kernel> kernel on cuda:<index>" for launch errors (the VM adds the op and the stream).
std::string Where(const char* kernel, int device_index);

// Runs the simplified copy loop nest `d` (operand 0 the output, 1 the input; strides in elements)
// for elements of `element_size` bytes: cudaMemcpyAsync when both are one contiguous run, 16-byte
// vector loads and stores when the innermost output run is contiguous and aligned (the input
// contiguous too, or broadcast: then each vector is one value repeated), an element loop
// otherwise. 32-bit index math when the nest allows it.
void LaunchCopy(const LoopDims<2>& d, void* out, const void* in, int element_size,
                cudaStream_t stream, int device_index, const char* kernel);

}  // namespace ofl::kernels::cuda
