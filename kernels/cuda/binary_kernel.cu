// The CUDA elementwise-binary kernels, "add", "sub", "mul" and "div", on the copy engine's index
// math (kernels/offset_calc.h): the loop nest of the output and both inputs is simplified (size-1
// dims dropped, dims in the output's memory order, mergeable dims merged); then either
// - rows: the output's innermost dim is contiguous and each input's is contiguous or broadcast
//   (stride 0), and rows hold at least one 16-byte vector: each row is cut at the output's
//   16-byte boundaries as the copy kernel cuts it (kernels/cuda/copy_kernel.cu, CopyRows), a
//   thread computes one chunk and stores a whole chunk as one aligned 16-byte vector, loading an
//   input's chunk as one vector too where it is aligned alike;
// - elements: one element per thread, each operand's offset from the linear index.
// 32-bit index math when every index and offset fits. Floats compute in their own type, float16
// and bfloat16 in float (rounded once to the output, to nearest even), integers in an unsigned
// type of at least 32 bits (two's-complement wrap-around). No pointer is __restrict__: the output
// may be an input's view (an in-place op), which every thread reads before it writes.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/kernel.h"
#include "kernels/kernel_checks.h"
#include "kernels/offset_calc.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

template <BinaryOp kOp, class T>
__device__ inline T Apply(T a, T b) {
  using N = Elem<T>;
  const typename N::Compute x = N::Load(a);
  const typename N::Compute y = N::Load(b);
  if constexpr (kOp == BinaryOp::kAdd) {
    return N::Store(x + y);
  } else if constexpr (kOp == BinaryOp::kSub) {
    return N::Store(x - y);
  } else if constexpr (kOp == BinaryOp::kMul) {
    return N::Store(x * y);
  } else {
    return N::Store(x / y);
  }
}

// out[offset0(i)] = a[offset1(i)] op b[offset2(i)] for every i < n.
template <BinaryOp kOp, class T, class Index>
__global__ void BinaryElements(T* out, const T* a, const T* b, Index n, OffsetCalc<3, Index> calc) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[3];
    calc.Get(i, off);
    out[off[0]] = Apply<kOp>(a[off[1]], b[off[2]]);
  }
}

// The kPer elements of an input chunk from `p` (its first element): one value repeated (step 0),
// one 16-byte load where the chunk is aligned, else element loads.
template <class T>
__device__ inline void LoadChunk(const T* p, int step, T (&lanes)[16 / sizeof(T)]) {
  constexpr int kPer = 16 / sizeof(T);
  if (step == 0) {
    const T x = p[0];
#pragma unroll
    for (int l = 0; l < kPer; ++l) lanes[l] = x;
  } else if (reinterpret_cast<uintptr_t>(p) % 16 == 0) {
    *reinterpret_cast<Vec16*>(lanes) = *reinterpret_cast<const Vec16*>(p);
  } else {
#pragma unroll
    for (int l = 0; l < kPer; ++l) lanes[l] = p[l];
  }
}

// Rows of `inner` elements whose output is contiguous; each input's innermost step is 1
// (contiguous) or 0 (broadcast); `outer` locates each row's start in the three operands. Chunk 0
// of a row is the head before the output's first 16-byte boundary, chunk c > 0 the kPer elements
// from boundary c - 1 (the last one maybe shorter: the tail), so every full chunk is one aligned
// 16-byte store. A thread takes one chunk; `per_row` chunks per row, some of them empty.
template <BinaryOp kOp, class T, class Index>
__global__ void BinaryRows(T* out, const T* a, const T* b, Index chunks, Index inner,
                           DivmodT<Index> row_div, OffsetCalc<3, Index> outer, int a_step,
                           int b_step) {
  constexpr int kPer = 16 / sizeof(T);
  for (Index k = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; k < chunks;
       k += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[3], c, begin, end;
    if (!LocateRowChunk(k, row_div, outer, out, inner, off, &c, &begin, &end)) continue;
    T* o = out + off[0];
    const T* x = a + off[1];
    const T* y = b + off[2];
    if (end - begin == kPer && c > 0) {
      alignas(16) T la[kPer];
      alignas(16) T lb[kPer];
      LoadChunk(x + begin * a_step, a_step, la);
      LoadChunk(y + begin * b_step, b_step, lb);
      alignas(16) T lo[kPer];
#pragma unroll
      for (int l = 0; l < kPer; ++l) lo[l] = Apply<kOp>(la[l], lb[l]);
      *reinterpret_cast<Vec16*>(o + begin) = *reinterpret_cast<const Vec16*>(lo);
    } else {
      for (Index col = begin; col < end; ++col) {
        o[col] = Apply<kOp>(x[col * a_step], y[col * b_step]);
      }
    }
  }
}

template <BinaryOp kOp, class T, class Index>
void Launch(const LoopDims<3>& d, void* out_ptr, const void* a_ptr, const void* b_ptr,
            cudaStream_t stream, int device) {
  T* out = static_cast<T*>(out_ptr);
  const T* a = static_cast<const T*>(a_ptr);
  const T* b = static_cast<const T*>(b_ptr);
  const Index n = static_cast<Index>(NumElements(d));
  constexpr int kPer = 16 / sizeof(T);
  const int last = d.ndim - 1;
  // Rows long enough for a full 16-byte chunk, whatever their alignment (BinaryRows).
  bool rows = kPer > 1 && d.ndim > 0 && d.stride[0][last] == 1 && d.size[last] >= kPer;
  for (int op = 1; rows && op < 3; ++op) rows = d.stride[op][last] == 0 || d.stride[op][last] == 1;
  if (rows) {
    const int64_t inner = d.size[last];
    const Index per_row = static_cast<Index>(1 + (inner + kPer - 1) / kPer);
    const Index chunks = static_cast<Index>(n / inner) * per_row;
    LaunchKernel(&BinaryRows<kOp, T, Index>, GridFor(chunks, device), kThreads, 0, stream, out, a,
                 b, chunks, static_cast<Index>(inner), DivmodT<Index>(per_row),
                 OffsetCalc<3, Index>(d, last), static_cast<int>(d.stride[1][last]),
                 static_cast<int>(d.stride[2][last]));
  } else {
    LaunchKernel(&BinaryElements<kOp, T, Index>, GridFor(n, device), kThreads, 0, stream, out, a, b,
                 n, OffsetCalc<3, Index>(d, d.ndim));
  }
  CheckLaunch(BinaryOpName(kOp), device);
}

template <BinaryOp kOp, class T>
void LaunchIndex(const LoopDims<3>& d, void* out, const void* a, const void* b, cudaStream_t stream,
                 int device) {
  if (UseNarrowIndex(FitsIn32Bits(d))) {
    Launch<kOp, T, uint32_t>(d, out, a, b, stream, device);
  } else {
    Launch<kOp, T, uint64_t>(d, out, a, b, stream, device);
  }
}

template <BinaryOp kOp>
void BinaryKernel(const KernelContext& ctx) {
  CheckBinaryArgs(kOp, ctx);
  const TensorArg& a = ctx.inputs[0];
  const TensorArg& b = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  LoopDims<3> d;
  const int64_t* const strides[3] = {out.stride.data(), a.stride.data(), b.stride.data()};
  InitLoopDims<3>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  switch (out.dtype) {
    case DType::kUInt8:
      if constexpr (kOp != BinaryOp::kDiv) {
        return LaunchIndex<kOp, uint8_t>(d, out.data, a.data, b.data, stream, device);
      }
      break;
    case DType::kInt8:
      if constexpr (kOp != BinaryOp::kDiv) {
        return LaunchIndex<kOp, int8_t>(d, out.data, a.data, b.data, stream, device);
      }
      break;
    case DType::kInt16:
      if constexpr (kOp != BinaryOp::kDiv) {
        return LaunchIndex<kOp, int16_t>(d, out.data, a.data, b.data, stream, device);
      }
      break;
    case DType::kInt32:
      if constexpr (kOp != BinaryOp::kDiv) {
        return LaunchIndex<kOp, int32_t>(d, out.data, a.data, b.data, stream, device);
      }
      break;
    case DType::kInt64:
      if constexpr (kOp != BinaryOp::kDiv) {
        return LaunchIndex<kOp, int64_t>(d, out.data, a.data, b.data, stream, device);
      }
      break;
    case DType::kFloat16:
      return LaunchIndex<kOp, Half>(d, out.data, a.data, b.data, stream, device);
    case DType::kBFloat16:
      return LaunchIndex<kOp, BHalf>(d, out.data, a.data, b.data, stream, device);
    case DType::kFloat32:
      return LaunchIndex<kOp, float>(d, out.data, a.data, b.data, stream, device);
    case DType::kFloat64:
      return LaunchIndex<kOp, double>(d, out.data, a.data, b.data, stream, device);
    case DType::kBool:
      break;
  }
  // CheckBinaryArgs refused every other dtype.
  throw InvalidArgument(Where(BinaryOpName(kOp), device) + ": no kernel for dtype " +
                        to_string(out.dtype));
}

void AddKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kAdd>(ctx); }
void SubKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kSub>(ctx); }
void MulKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kMul>(ctx); }
void DivKernel(const KernelContext& ctx) { BinaryKernel<BinaryOp::kDiv>(ctx); }

}  // namespace

OFL_REGISTER_CUDA_KERNEL("add", AddKernel);
OFL_REGISTER_CUDA_KERNEL("sub", SubKernel);
OFL_REGISTER_CUDA_KERNEL("mul", MulKernel);
OFL_REGISTER_CUDA_KERNEL("div", DivKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
