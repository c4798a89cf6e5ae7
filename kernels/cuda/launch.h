// Launch configuration, the launch itself and the copy engine shared by the CUDA kernels (host
// side).
#pragma once

#include <cuda_runtime_api.h>
#if defined(OFL_CUDA_HOST_GRID)
#include <cuda_runtime.h>  // the host grid's Launch (tests/cuda_host/shim)
#endif

#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_namespace.h"
#include "kernels/index_util.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {

// Threads per block of the elementwise kernels.
constexpr int kThreads = 256;

// The elementwise kernels cut each output row of `inner` elements starting at `o` at o's 16-byte
// boundaries: chunk 0 is the head before the first boundary, chunk c > 0 the c-th 16-byte piece
// after it (the last may be short), so that every full chunk is one aligned 16-byte store. Sets
// [begin, end) to chunk c's elements; false when chunk c lies past the row's end.
template <class T, class Index>
OFL_HOST_DEVICE inline bool RowChunk(const T* o, Index inner, Index c, Index* begin, Index* end) {
  constexpr Index kPer = 16 / sizeof(T);
  const Index head =
      static_cast<Index>((kPer - (reinterpret_cast<uintptr_t>(o) / sizeof(T)) % kPer) % kPer);
  *begin = 0;
  *end = head < inner ? head : inner;
  if (c > 0) {
    *begin = head + (c - 1) * kPer;
    if (*begin >= inner) return false;
    *end = inner - *begin < kPer ? inner : *begin + kPer;
  }
  return true;
}

#if defined(__CUDACC__) || defined(OFL_CUDA_HOST_GRID)
// Every kernel launch goes through here: `kernel<<<grid, block, shared_bytes, stream>>>(args...)`
// under nvcc; on the CPU, under the host grid (tests/cuda_host/host_grid.h), the same kernel runs
// on an emulated grid, which has no `<<<>>>`. The caller checks the launch with CheckLaunch.
template <class... Params, class... Args>
void LaunchKernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes,
                  cudaStream_t stream, Args... args) {
#if defined(OFL_CUDA_HOST_GRID)
  ::ofl::cuda_host::Launch(kernel, grid, block, shared_bytes, stream, args...);
#else
  // clang-format off
  kernel<<<grid, block, shared_bytes, stream>>>(args...);
  // clang-format on
#endif
}
#endif

// Whether a launch takes its 32-bit index path: when every index and offset `fits` in 32 bits.
// The host grid can force the 64-bit path, so that small tensors exercise it too.
inline bool UseNarrowIndex(bool fits) {
#if defined(OFL_CUDA_HOST_GRID)
  const bool narrow = fits && !::ofl::cuda_host::WideIndex();
  ::ofl::cuda_host::CountIndexPath(narrow);
  return narrow;
#else
  return fits;
#endif
}

// Blocks for `work` items handled one per thread in a grid-stride loop: enough to fill the device
// (a few waves of blocks per SM), never more than the work needs. The SM count is read once per
// device.
unsigned GridFor(int64_t work, int device_index);

// "<kernel> kernel on cuda:<index>" for launch errors (the VM adds the op and the stream).
std::string Where(const char* kernel, int device_index);

// After a launch: throws for a bad launch configuration or a sticky error from earlier work,
// naming `kernel` and the device (the name is built on that path only).
void CheckLaunch(const char* kernel, int device_index);

// Runs the simplified copy loop nest `d` (operand 0 the output, 1 the input; strides in elements)
// for elements of `element_size` bytes: cudaMemcpyAsync when both are one contiguous run; when the
// innermost output run is contiguous (the input's contiguous too, or broadcast) and at least 16
// bytes, aligned 16-byte stores over each row with its unaligned head and tail element by element,
// loading 16 bytes at once where the input is aligned alike (a broadcast vector is one value
// repeated); an element loop otherwise. 32-bit index math when the nest allows it.
void LaunchCopy(const LoopDims<2>& d, void* out, const void* in, int element_size,
                cudaStream_t stream, int device_index, const char* kernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
