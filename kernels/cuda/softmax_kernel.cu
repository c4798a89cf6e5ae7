// The CUDA "softmax" and "log_softmax" kernels: one thread per row scans it once for the max and
// the sum, then writes it (kernels/softmax.h's rule, shared with the CPU kernel, so every device
// computes the same operations in the same order). 32-bit index math when every index and offset
// fits. (A block per row, for few long rows, is the follow-up a GPU can measure.)
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <string>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/offset_calc.h"
#include "kernels/softmax.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

// Operand 0 the output, 1 the input, over the row positions.
template <bool kLog, class T, class Index>
__global__ void Rows(T* out, const T* in, Index positions, Index n, Index out_step, Index in_step,
                     OffsetCalc<2, Index> calc) {
  using E = ValueElem<T>;
  using C = typename E::Compute;
  for (Index p = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; p < positions;
       p += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[2];
    calc.Get(p, off);
    const T* row = in + off[1];
    T* dst = out + off[0];
    C m = -std::numeric_limits<C>::infinity(), s = 0;
    for (Index k = 0; k < n; ++k) SoftmaxPush<C>(E::Load(row[k * in_step]), &m, &s);
    const C norm = SoftmaxNorm<kLog, C>(m, s);
    for (Index k = 0; k < n; ++k) {
      dst[k * out_step] = E::Store(SoftmaxValue<kLog, C>(E::Load(row[k * in_step]), m, norm));
    }
  }
}

template <bool kLog, class T, class Index>
void Launch(const LoopDims<2>& d, const KernelContext& ctx, int64_t n, int64_t out_step,
            int64_t in_step) {
  const Index positions = static_cast<Index>(NumElements(d));
  LaunchKernel(&Rows<kLog, T, Index>, GridFor(static_cast<int64_t>(positions), ctx.device_index),
               kThreads, 0, static_cast<cudaStream_t>(ctx.stream),
               static_cast<T*>(ctx.outputs[0].data), static_cast<const T*>(ctx.inputs[0].data),
               positions, static_cast<Index>(n), static_cast<Index>(out_step),
               static_cast<Index>(in_step), OffsetCalc<2, Index>(d, d.ndim));
}

template <bool kLog>
void SoftmaxKernel(const KernelContext& ctx) {
  const char* name = kLog ? "log_softmax" : "softmax";
  const int dim = CheckSoftmaxArgs(name, ctx);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (x.shape.numel() == 0) return;
  const bool scalar = x.shape.ndim() == 0;
  const int64_t n = scalar ? 1 : x.shape[dim];
  const int64_t in_step = scalar ? 0 : x.stride[dim];
  const int64_t out_step = scalar ? 0 : out.stride[dim];
  Shape rows = x.shape;
  if (!scalar) rows[dim] = 1;
  LoopDims<2> d;
  const int64_t* const strides[2] = {out.stride.data(), x.stride.data()};
  InitLoopDims<2>(&d, rows.ndim(), rows.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  // The 32-bit path also needs each row's last offsets to fit.
  const bool narrow = FitsIn32Bits(d) &&
                      static_cast<uint64_t>(x.shape.numel()) < (uint64_t{1} << 31) &&
                      static_cast<uint64_t>((n - 1) * in_step) < (uint64_t{1} << 30) &&
                      static_cast<uint64_t>((n - 1) * out_step) < (uint64_t{1} << 30);
  VisitDType<Half, BHalf>(x.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<typename ValueElem<T>::Compute>) {
      if (UseNarrowIndex(narrow)) {
        Launch<kLog, T, uint32_t>(d, ctx, n, out_step, in_step);
      } else {
        Launch<kLog, T, uint64_t>(d, ctx, n, out_step, in_step);
      }
    }
  });
  CheckLaunch(name, ctx.device_index);
}

void SoftmaxFn(const KernelContext& ctx) { SoftmaxKernel<false>(ctx); }
void LogSoftmaxFn(const KernelContext& ctx) { SoftmaxKernel<true>(ctx); }
OFL_REGISTER_CUDA_KERNEL("softmax", SoftmaxFn);
OFL_REGISTER_CUDA_KERNEL("log_softmax", LogSoftmaxFn);

}  // namespace
}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
