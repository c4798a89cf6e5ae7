// The CUDA "fill" kernel. The value is converted to the dtype once on the host
// (kernels/fill_value.h), so every device writes the same bits; the kernel then only stores
// elements of 1, 2, 4 or 8 bytes. An output that is one contiguous run of one repeated byte (zeros,
// most of all) is a cudaMemsetAsync; rows whose output is contiguous and holds a whole 16-byte
// vector are cut at its 16-byte boundaries (as the copy kernel's rows: kernels/cuda/copy_kernel.cu)
// and stored a vector at a time; any other layout is one element per thread.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/fill_value.h"
#include "kernels/kernel.h"
#include "kernels/kernel_checks.h"
#include "kernels/offset_calc.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

// out[offset(i)] = value for every i < n.
template <class T, class Index>
__global__ void FillElements(T* out, T value, Index n, OffsetCalc<1, Index> calc) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[1];
    calc.Get(i, off);
    out[off[0]] = value;
  }
}

// Contiguous rows of `inner` elements, `outer` locating each row's start: chunk 0 of a row is the
// head before its first 16-byte boundary, chunk c > 0 the kPer elements from boundary c - 1 (the
// last one maybe shorter), so every full chunk is one aligned 16-byte store. One chunk per thread.
template <class T, class Index>
__global__ void FillRows(T* out, T value, Index chunks, Index inner, DivmodT<Index> row_div,
                         OffsetCalc<1, Index> outer) {
  constexpr int kPer = 16 / sizeof(T);
  alignas(16) T lanes[kPer];
#pragma unroll
  for (int l = 0; l < kPer; ++l) lanes[l] = value;
  const Vec16 vector = *reinterpret_cast<const Vec16*>(lanes);
  for (Index k = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; k < chunks;
       k += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[1], c, begin, end;
    if (!LocateRowChunk(k, row_div, outer, out, inner, off, &c, &begin, &end)) continue;
    T* o = out + off[0];
    if (end - begin == kPer && c > 0) {
      *reinterpret_cast<Vec16*>(o + begin) = vector;
    } else {
      for (Index col = begin; col < end; ++col) o[col] = value;
    }
  }
}

template <class T, class Index>
void Launch(const LoopDims<1>& d, void* out_ptr, const unsigned char* element, cudaStream_t stream,
            int device) {
  T* out = static_cast<T*>(out_ptr);
  T value;
  std::memcpy(&value, element, sizeof(T));
  const Index n = static_cast<Index>(NumElements(d));
  constexpr int kPer = 16 / sizeof(T);
  const int last = d.ndim - 1;
  if (d.ndim > 0 && d.stride[0][last] == 1 && d.size[last] >= kPer) {
    const int64_t inner = d.size[last];
    const Index per_row = static_cast<Index>(1 + (inner + kPer - 1) / kPer);
    const Index chunks = static_cast<Index>(n / inner) * per_row;
    LaunchKernel(&FillRows<T, Index>, GridFor(chunks, device), kThreads, 0, stream, out, value,
                 chunks, static_cast<Index>(inner), DivmodT<Index>(per_row),
                 OffsetCalc<1, Index>(d, last));
  } else {
    LaunchKernel(&FillElements<T, Index>, GridFor(n, device), kThreads, 0, stream, out, value, n,
                 OffsetCalc<1, Index>(d, d.ndim));
  }
  CheckLaunch("fill", device);
}

template <class T>
void LaunchIndex(const LoopDims<1>& d, void* out, const unsigned char* element, cudaStream_t stream,
                 int device) {
  if (UseNarrowIndex(FitsIn32Bits(d))) {
    Launch<T, uint32_t>(d, out, element, stream, device);
  } else {
    Launch<T, uint64_t>(d, out, element, stream, device);
  }
}

void FillKernel(const KernelContext& ctx) {
  CheckFillArgs(ctx);
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  const size_t es = element_size(out.dtype);
  unsigned char element[8] = {};
  FillValueToElement(FillValueOf(ctx.attributes.get_scalar("value")), out.dtype, element);
  LoopDims<1> d;
  const int64_t* const strides[1] = {out.stride.data()};
  InitLoopDims<1>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  bool same_bytes = true;
  for (size_t i = 1; i < es; ++i) same_bytes = same_bytes && element[i] == element[0];
  if (same_bytes && (d.ndim == 0 || (d.ndim == 1 && d.stride[0][0] == 1))) {
    const cudaError_t err =
        cudaMemsetAsync(out.data, element[0], static_cast<size_t>(out.shape.numel()) * es, stream);
    if (err != cudaSuccess) ThrowCudaError(err, "cudaMemsetAsync", Where("fill", device));
    return;
  }
  switch (es) {
    case 1:
      return LaunchIndex<uint8_t>(d, out.data, element, stream, device);
    case 2:
      return LaunchIndex<uint16_t>(d, out.data, element, stream, device);
    case 4:
      return LaunchIndex<uint32_t>(d, out.data, element, stream, device);
    default:
      return LaunchIndex<uint64_t>(d, out.data, element, stream, device);
  }
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL("fill", FillKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
