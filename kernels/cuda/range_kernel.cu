// The CUDA "range" kernel (arange, linspace): element i of the 1-dim output is RangeValue(spec, i)
// (kernels/range.h, the CPU kernel's rule, so every device writes the same bits), one element per
// thread in a grid-stride loop.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/range.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

template <class T, class Index>
__global__ void RangeElements(T* out, Index n, int64_t stride, RangeSpec spec) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    out[static_cast<int64_t>(i) * stride] = ValueElem<T>::Store(
        RangeValue<typename ValueElem<T>::Compute>(spec, static_cast<int64_t>(i)));
  }
}

void RangeKernel(const KernelContext& ctx) {
  const RangeSpec spec = CheckRangeArgs(ctx);
  const TensorArg& out = ctx.outputs[0];
  if (spec.n == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  const int64_t stride = out.stride[0];
  VisitDType<Half, BHalf>(out.dtype, "range", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out.data);
    if (UseNarrowIndex(spec.n <= std::numeric_limits<uint32_t>::max() / 2)) {
      LaunchKernel(&RangeElements<T, uint32_t>, GridFor(spec.n, device), kThreads, 0, stream, o,
                   static_cast<uint32_t>(spec.n), stride, spec);
    } else {
      LaunchKernel(&RangeElements<T, uint64_t>, GridFor(spec.n, device), kThreads, 0, stream, o,
                   static_cast<uint64_t>(spec.n), stride, spec);
    }
  });
  CheckLaunch("range", device);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL("range", RangeKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
