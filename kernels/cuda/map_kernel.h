// out[idx] = F(in[idx]) over strided views of one shape on a CUDA stream: the one-input loop of the
// elementwise kernels (unary_kernel.cu, cast_kernel.cu), on the copy engine's index math. The
// loop nest is simplified (size-1 dims dropped, dims in the output's memory order, mergeable dims
// merged); when both operands are then one contiguous run, thread i computes element i; otherwise
// each thread finds its operands' offsets from its linear index (OffsetCalc). 32-bit index math
// when every index and offset fits. Included by .cu files only (nvcc, or the host grid's CPU
// build of them).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/cuda_namespace.h"
#include "kernels/cuda/launch.h"
#include "kernels/kernel.h"
#include "kernels/offset_calc.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace map_detail {

// F: a type with Out and In (the stored types), Params, and
// `__device__ static Out Apply(In, const Params&)`.
template <class F, class Index>
__global__ void MapContiguous(typename F::Out* out, const typename F::In* in, Index n,
                              typename F::Params p) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    out[i] = F::Apply(in[i], p);
  }
}

template <class F, class Index>
__global__ void MapStrided(typename F::Out* out, const typename F::In* in, Index n,
                           OffsetCalc<2, Index> calc, typename F::Params p) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[2];
    calc.Get(i, off);
    out[off[0]] = F::Apply(in[off[1]], p);
  }
}

template <class F, class Index>
void Launch(const LoopDims<2>& d, void* out_ptr, const void* in_ptr, const typename F::Params& p,
            cudaStream_t stream, int device) {
  auto* out = static_cast<typename F::Out*>(out_ptr);
  const auto* in = static_cast<const typename F::In*>(in_ptr);
  const Index n = static_cast<Index>(NumElements(d));
  const bool contiguous =
      d.ndim == 0 || (d.ndim == 1 && d.stride[0][0] == 1 && d.stride[1][0] == 1);
  if (contiguous) {
    LaunchKernel(&MapContiguous<F, Index>, GridFor(n, device), kThreads, 0, stream, out, in, n, p);
  } else {
    LaunchKernel(&MapStrided<F, Index>, GridFor(n, device), kThreads, 0, stream, out, in, n,
                 OffsetCalc<2, Index>(d, d.ndim), p);
  }
}

}  // namespace map_detail

// out = F(in) elementwise on `stream`; out and in have one shape (any strides), out's dtype
// F::Out's, in's F::In's (the caller checked both). `kernel` names the launch in errors.
template <class F>
void LaunchMap(const TensorArg& out, const TensorArg& in, const typename F::Params& p,
               cudaStream_t stream, int device, const char* kernel) {
  if (out.shape.numel() == 0) return;
  LoopDims<2> d;
  const int64_t* const strides[2] = {out.stride.data(), in.stride.data()};
  InitLoopDims<2>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  if (UseNarrowIndex(FitsIn32Bits(d))) {
    map_detail::Launch<F, uint32_t>(d, out.data, in.data, p, stream, device);
  } else {
    map_detail::Launch<F, uint64_t>(d, out.data, in.data, p, stream, device);
  }
  CheckLaunch(kernel, device);
}

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
