// The CUDA "random" kernel: element i of the contiguous output is RandomReal or RandomInteger of
// (seed, offset, i) (kernels/random.h, the CPU kernel's rule, so the numbers do not depend on the
// device or the launch shape), one element per thread in a grid-stride loop.
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "kernels/cast_value.h"
#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/random.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

template <class T, class Index>
__global__ void RandomElements(T* out, Index n, RandomSpec spec) {
  using C = typename ValueElem<T>::Compute;
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    const uint64_t k = static_cast<uint64_t>(i);
    out[i] = spec.dist == RandomDist::kIntegers
                 ? ValueElem<T>::Store(CastValue<C>(RandomInteger(spec, k)))
                 : ValueElem<T>::Store(CastValue<C>(RandomReal(spec, k)));
  }
}

void RandomKernel(const KernelContext& ctx) {
  const RandomSpec spec = CheckRandomArgs(ctx);
  const TensorArg& out = ctx.outputs[0];
  const int64_t n = out.shape.numel();
  if (n == 0) return;
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  VisitDType<Half, BHalf>(out.dtype, "random", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out.data);
    if (UseNarrowIndex(n <= std::numeric_limits<uint32_t>::max() / 2)) {
      LaunchKernel(&RandomElements<T, uint32_t>, GridFor(n, device), kThreads, 0, stream, o,
                   static_cast<uint32_t>(n), spec);
    } else {
      LaunchKernel(&RandomElements<T, uint64_t>, GridFor(n, device), kThreads, 0, stream, o,
                   static_cast<uint64_t>(n), spec);
    }
  });
  CheckLaunch("random", device);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL("random", RandomKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
