// The CUDA "copy" and "repeat" kernels and the copy engine they share (launch.h). Element types
// only matter through their size here, so each kernel is instantiated for 1, 2, 4 and 8 bytes.
#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
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

template <int kBytes>
struct Word;
template <>
struct Word<1> {
  using type = uint8_t;
};
template <>
struct Word<2> {
  using type = uint16_t;
};
template <>
struct Word<4> {
  using type = uint32_t;
};
template <>
struct Word<8> {
  using type = uint64_t;
};

// out[offset0(i)] = in[offset1(i)] for every i < n.
template <class T, class Index>
__global__ void CopyElements(T* __restrict__ out, const T* __restrict__ in, Index n,
                             OffsetCalc<2, Index> calc) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[2];
    calc.Get(i, off);
    out[off[0]] = in[off[1]];
  }
}

// Rows of `inner` elements whose output is contiguous (inner stride 1) and whose input is
// contiguous too or one value (kBroadcast: inner stride 0); `outer` locates each row's start in
// both operands. Each row is cut at the output's 16-byte boundaries, wherever the row starts: chunk
// 0 is the head before the first boundary, chunk c > 0 the kPer elements from boundary c - 1 (the
// last one maybe shorter: the tail), so every full chunk is one aligned 16-byte store. Its load is
// one 16-byte load when the input's chunk is aligned too, else kPer element loads. A thread takes
// one chunk; `per_row` chunks per row, some of them empty.
template <class T, class Index, bool kBroadcast>
__global__ void CopyRows(T* __restrict__ out, const T* __restrict__ in, Index chunks, Index inner,
                         DivmodT<Index> row_div, OffsetCalc<2, Index> outer) {
  constexpr int kPer = 16 / sizeof(T);
  for (Index k = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; k < chunks;
       k += static_cast<Index>(blockDim.x) * gridDim.x) {
    Index off[2], c, begin, end;
    if (!LocateRowChunk(k, row_div, outer, out, inner, off, &c, &begin, &end)) continue;
    T* o = out + off[0];
    const T* i = in + off[1];
    if (end - begin == kPer && c > 0) {
      Vec16 value;
      if constexpr (kBroadcast) {
        alignas(16) T lanes[kPer];  // read back as one 16-byte vector
        const T x = i[0];
#pragma unroll
        for (int l = 0; l < kPer; ++l) lanes[l] = x;
        value = *reinterpret_cast<const Vec16*>(lanes);
      } else if (reinterpret_cast<uintptr_t>(i + begin) % 16 == 0) {
        value = *reinterpret_cast<const Vec16*>(i + begin);
      } else {
        alignas(16) T lanes[kPer];
#pragma unroll
        for (int l = 0; l < kPer; ++l) lanes[l] = i[begin + l];
        value = *reinterpret_cast<const Vec16*>(lanes);
      }
      *reinterpret_cast<Vec16*>(o + begin) = value;
    } else {
      for (Index col = begin; col < end; ++col) o[col] = kBroadcast ? i[0] : i[col];
    }
  }
}

template <class T, class Index>
void Launch(const LoopDims<2>& d, void* out_ptr, const void* in_ptr, cudaStream_t stream,
            int device, const char* kernel) {
  T* out = static_cast<T*>(out_ptr);
  const T* in = static_cast<const T*>(in_ptr);
  const Index n = static_cast<Index>(NumElements(d));
  constexpr int kPer = 16 / sizeof(T);
  const int last = d.ndim - 1;
  const int64_t inner = d.size[last];
  const bool out_unit = d.stride[0][last] == 1;
  const int64_t in_inner = d.stride[1][last];
  // Rows long enough for a full 16-byte chunk, whatever their alignment (CopyRows).
  const bool vector = kPer > 1 && out_unit && (in_inner == 1 || in_inner == 0) && inner >= kPer;
  if (vector) {
    const Index per_row = static_cast<Index>(1 + (inner + kPer - 1) / kPer);
    const Index chunks = static_cast<Index>(n / inner) * per_row;
    const DivmodT<Index> row_div(per_row);
    const OffsetCalc<2, Index> outer(d, last);
    const unsigned grid = GridFor(chunks, device);
    if (in_inner == 0) {
      LaunchKernel(&CopyRows<T, Index, true>, grid, kThreads, 0, stream, out, in, chunks,
                   static_cast<Index>(inner), row_div, outer);
    } else {
      LaunchKernel(&CopyRows<T, Index, false>, grid, kThreads, 0, stream, out, in, chunks,
                   static_cast<Index>(inner), row_div, outer);
    }
  } else {
    LaunchKernel(&CopyElements<T, Index>, GridFor(n, device), kThreads, 0, stream, out, in, n,
                 OffsetCalc<2, Index>(d, d.ndim));
  }
  CheckLaunch(kernel, device);
}

template <class T>
void LaunchSized(const LoopDims<2>& d, void* out, const void* in, cudaStream_t stream, int device,
                 const char* kernel) {
  if (UseNarrowIndex(FitsIn32Bits(d))) {
    Launch<T, uint32_t>(d, out, in, stream, device, kernel);
  } else {
    Launch<T, uint64_t>(d, out, in, stream, device, kernel);
  }
}

}  // namespace

unsigned GridFor(int64_t work, int device_index) {
  static std::once_flag once;
  static std::vector<int> sms;
  std::call_once(once, [] {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      ClearLastErrorIf(err);
      n = 0;
    }
    sms.assign(static_cast<size_t>(n), 0);
    for (int i = 0; i < n; ++i) {
      const cudaError_t e = cudaDeviceGetAttribute(&sms[i], cudaDevAttrMultiProcessorCount, i);
      if (e != cudaSuccess) {
        ClearLastErrorIf(e);
        sms[i] = 0;
      }
    }
  });
  const int sm =
      device_index >= 0 && device_index < static_cast<int>(sms.size()) && sms[device_index] > 0
          ? sms[device_index]
          : 80;
  // 8 blocks of 256 threads per SM keep 2048 threads resident per SM (the H100's limit); more
  // blocks only add scheduling, so the grid-stride loop covers the rest.
  const int64_t cap = int64_t{sm} * 8;
  const int64_t need = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(need < 1 ? 1 : (need < cap ? need : cap));
}

std::string Where(const char* kernel, int device_index) {
  return std::string(kernel) + " kernel on cuda:" + std::to_string(device_index);
}

void CheckLaunch(const char* kernel, int device_index) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) ThrowCudaError(err, "kernel launch", Where(kernel, device_index));
}

void LaunchCopy(const LoopDims<2>& d, void* out, const void* in, int element_size,
                cudaStream_t stream, int device, const char* kernel) {
  const int64_t n = NumElements(d);
  if (n == 0) return;
  if (d.ndim == 0 || (d.ndim == 1 && d.stride[0][0] == 1 && d.stride[1][0] == 1)) {
    const cudaError_t err = cudaMemcpyAsync(out, in, static_cast<size_t>(n) * element_size,
                                            cudaMemcpyDeviceToDevice, stream);
    if (err != cudaSuccess) ThrowCudaError(err, "cudaMemcpyAsync", Where(kernel, device));
    return;
  }
  switch (element_size) {
    case 1:
      return LaunchSized<Word<1>::type>(d, out, in, stream, device, kernel);
    case 2:
      return LaunchSized<Word<2>::type>(d, out, in, stream, device, kernel);
    case 4:
      return LaunchSized<Word<4>::type>(d, out, in, stream, device, kernel);
    case 8:
      return LaunchSized<Word<8>::type>(d, out, in, stream, device, kernel);
    default:
      throw InvalidArgument(Where(kernel, device) + ": element size " +
                            std::to_string(element_size) + " is not supported");
  }
}

void CopyKernel(const KernelContext& ctx) {
  CheckCopyArgs(ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  LoopDims<2> d;
  CopyLoopDims(&d, out.shape.ndim(), out.shape.data(), out.stride.data(), in.stride.data());
  LaunchCopy(d, out.data, in.data, static_cast<int>(element_size(out.dtype)),
             static_cast<cudaStream_t>(ctx.stream), ctx.device_index, "copy");
}
OFL_REGISTER_CUDA_KERNEL("copy", CopyKernel);

void RepeatKernel(const KernelContext& ctx) {
  if (CheckRepeatArgs(ctx)) return;  // an empty output
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  LoopDims<2> d;
  if (!RepeatLoopDims(&d, in.shape.ndim(), in.shape.data(), in.stride.data(), out.shape.ndim(),
                      ctx.attributes.get_ints("repeats").data())) {
    throw InvalidArgument(Where("repeat", ctx.device_index) +
                          ": more than 12 dims both repeated and tiled at once are not supported "
                          "on CUDA; repeat in two steps");
  }
  LaunchCopy(d, out.data, in.data, static_cast<int>(element_size(out.dtype)),
             static_cast<cudaStream_t>(ctx.stream), ctx.device_index, "repeat");
}
OFL_REGISTER_CUDA_KERNEL("repeat", RepeatKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
