// out[idx] = F(in[idx]) over strided views of one shape on a CUDA stream: the one-input loop of the
// elementwise kernels (unary_kernel.cu, cast_kernel.cu, pointwise_kernel.cu), and LaunchMapN, its
// form with several inputs (pointwise_kernel.cu), on the copy engine's index math. The
// loop nest is simplified (size-1 dims dropped, dims in the output's memory order, mergeable dims
// merged); when both operands are then one contiguous run, thread i computes element i; otherwise
// each thread finds its operands' offsets from its linear index (OffsetCalc). 32-bit index math
// when every index and offset fits. Included by .cu files only (nvcc, or the host grid's CPU
// build of them).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <tuple>
#include <utility>

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

namespace map_detail {

// The input pointers of a several-input map, passed by value.
template <int kN>
struct InPtrs {
  const void* p[kN];
};

// F: Out, Ins (a std::tuple of the inputs' stored types), Params, and
// `__device__ static Out Apply(In0, In1, ..., const Params&)`.
template <class F, class Index, size_t... I>
__global__ void MapContiguousN(typename F::Out* out, InPtrs<sizeof...(I)> in, Index n,
                               typename F::Params p) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    out[i] =
        F::Apply(static_cast<const std::tuple_element_t<I, typename F::Ins>*>(in.p[I])[i]..., p);
  }
}

template <class F, class Index, size_t... I>
__global__ void MapStridedN(typename F::Out* out, InPtrs<sizeof...(I)> in, Index n,
                            OffsetCalc<sizeof...(I) + 1, Index> calc, typename F::Params p) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[sizeof...(I) + 1];
    calc.Get(i, off);
    out[off[0]] = F::Apply(
        static_cast<const std::tuple_element_t<I, typename F::Ins>*>(in.p[I])[off[I + 1]]..., p);
  }
}

template <class F, class Index, size_t... I>
void LaunchN(const LoopDims<sizeof...(I) + 1>& d, void* out_ptr, InPtrs<sizeof...(I)> in,
             const typename F::Params& p, cudaStream_t stream, int device,
             std::index_sequence<I...>) {
  constexpr int kN = sizeof...(I) + 1;
  auto* out = static_cast<typename F::Out*>(out_ptr);
  const Index n = static_cast<Index>(NumElements(d));
  bool contiguous = d.ndim <= 1;
  for (int k = 0; contiguous && d.ndim == 1 && k < kN; ++k) contiguous = d.stride[k][0] == 1;
  if (contiguous) {
    LaunchKernel(&MapContiguousN<F, Index, I...>, GridFor(n, device), kThreads, 0, stream, out, in,
                 n, p);
  } else {
    LaunchKernel(&MapStridedN<F, Index, I...>, GridFor(n, device), kThreads, 0, stream, out, in, n,
                 OffsetCalc<kN, Index>(d, d.ndim), p);
  }
}

}  // namespace map_detail

// out = F(ins...) elementwise on `stream` over several inputs of out's shape (any strides;
// broadcast inputs have stride 0); the caller checked the dtypes. `kernel` names the launch in
// errors.
template <class F, class... Args>
void LaunchMapN(const TensorArg& out, const typename F::Params& p, cudaStream_t stream, int device,
                const char* kernel, const Args&... ins) {
  constexpr int kIn = static_cast<int>(sizeof...(Args));
  static_assert(kIn == static_cast<int>(std::tuple_size_v<typename F::Ins>),
                "one TensorArg per input");
  if (out.shape.numel() == 0) return;
  LoopDims<kIn + 1> d;
  const int64_t* const strides[kIn + 1] = {out.stride.data(), ins.stride.data()...};
  InitLoopDims<kIn + 1>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const map_detail::InPtrs<kIn> in{{ins.data...}};
  if (UseNarrowIndex(FitsIn32Bits(d))) {
    map_detail::LaunchN<F, uint32_t>(d, out.data, in, p, stream, device,
                                     std::make_index_sequence<kIn>());
  } else {
    map_detail::LaunchN<F, uint64_t>(d, out.data, in, p, stream, device,
                                     std::make_index_sequence<kIn>());
  }
  CheckLaunch(kernel, device);
}

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
