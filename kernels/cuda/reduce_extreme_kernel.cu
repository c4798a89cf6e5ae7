// The CUDA "max_dim" and "min_dim" kernels: along one dim of the input, the largest (smallest)
// element and its int64 index, for every position of the other dims (kernels/reduce_extreme.h's
// rules, shared with the CPU kernel: a NaN wins, ties give the first index). One thread scans one
// row in order, so the result is the CPU kernel's bit for bit. 32-bit index math when every index
// and offset fits.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/kernel_checks.h"
#include "kernels/offset_calc.h"
#include "kernels/reduce_extreme.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

// Operand 0 the values, 1 the indices, 2 the input, over the output's positions.
template <bool kMax, class T, class Index>
__global__ void ScanRows(T* vals, int64_t* idx, const T* in, Index positions, Index n, Index step,
                         OffsetCalc<3, Index> calc) {
  using E = ValueElem<T>;
  using C = typename E::Compute;
  for (Index p = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; p < positions;
       p += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[3];
    calc.Get(p, off);
    const T* row = in + off[2];
    T best = row[0];
    C best_c = E::Load(best);
    Index at = 0;
    for (Index k = 1; k < n; ++k) {
      const T s = row[k * step];
      const C value = E::Load(s);
      if (ExtremeReplaces<kMax>(value, best_c)) {
        best = s;
        best_c = value;
        at = k;
      }
    }
    vals[off[0]] = best;
    idx[off[1]] = static_cast<int64_t>(at);
  }
}

template <bool kMax, class T, class Index>
void Launch(const LoopDims<3>& d, const KernelContext& ctx, int64_t n, int64_t step) {
  const int device = ctx.device_index;
  const Index positions = static_cast<Index>(NumElements(d));
  LaunchKernel(&ScanRows<kMax, T, Index>, GridFor(static_cast<int64_t>(positions), device),
               kThreads, 0, static_cast<cudaStream_t>(ctx.stream),
               static_cast<T*>(ctx.outputs[0].data), static_cast<int64_t*>(ctx.outputs[1].data),
               static_cast<const T*>(ctx.inputs[0].data), positions, static_cast<Index>(n),
               static_cast<Index>(step), OffsetCalc<3, Index>(d, d.ndim));
}

template <bool kMax>
void ReduceExtremeKernel(const KernelContext& ctx) {
  const char* name = kMax ? "max_dim" : "min_dim";
  const int dim = CheckReduceExtremeArgs(name, ctx);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& vals = ctx.outputs[0];
  const TensorArg& idx = ctx.outputs[1];
  if (vals.shape.numel() == 0) return;
  const bool scalar = x.shape.ndim() == 0;
  const int64_t n = scalar ? 1 : x.shape[dim];
  const int64_t step = scalar ? 0 : x.stride[dim];
  LoopDims<3> d;
  const int64_t* const strides[3] = {vals.stride.data(), idx.stride.data(), x.stride.data()};
  InitLoopDims<3>(&d, vals.shape.ndim(), vals.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  // The 32-bit path also needs the row's last offset to fit.
  const bool narrow = FitsIn32Bits(d) && step >= 0 &&
                      static_cast<uint64_t>(x.shape.numel()) < (uint64_t{1} << 31) &&
                      static_cast<uint64_t>((n - 1) * step) < (uint64_t{1} << 30);
  VisitDType<Half, BHalf>(x.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (UseNarrowIndex(narrow)) {
      Launch<kMax, T, uint32_t>(d, ctx, n, step);
    } else {
      Launch<kMax, T, uint64_t>(d, ctx, n, step);
    }
  });
  CheckLaunch(name, ctx.device_index);
}

void MaxDimKernel(const KernelContext& ctx) { ReduceExtremeKernel<true>(ctx); }
void MinDimKernel(const KernelContext& ctx) { ReduceExtremeKernel<false>(ctx); }
OFL_REGISTER_CUDA_KERNEL("max_dim", MaxDimKernel);
OFL_REGISTER_CUDA_KERNEL("min_dim", MinDimKernel);

}  // namespace
}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
