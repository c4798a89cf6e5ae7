// The CUDA "reduce_sum_to" kernel (the backward of expand and repeat): deterministic, with no
// floating-point atomics. Every output element is summed by a fixed group of threads in a fixed
// order (a strided partial sum per thread, then a tree over the group in shared memory), so the
// result depends only on the shapes, strides and the launch configuration, which depends only on
// them and on the device's SM count. Accuracy follows the CPU kernel's rules: float types
// accumulate in double and 16-bit outputs are rounded once from it; each thread's partial sum goes
// through a cascade of accumulators (Cascade below: no level adds more than 64 sums, or about
// n^(1/4) of a thread's n terms), so a long float64 sum keeps the CPU's accuracy; integers sum
// exactly mod 2^64; a summed dim the input broadcasts is a multiplication, rounded once.
//
// Two layouts:
// - columns: the output's innermost dim is the input's fastest, so 32 consecutive outputs read 32
//   consecutive inputs (coalesced); 16 thread rows split the sum of each (expand_backward of
//   (1,N) -> (M,N));
// - rows: a summed dim is the fastest, so a group of 32 threads (256 when there are few outputs)
//   walks each output's terms side by side.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>
#include <type_traits>
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

template <class T>
struct Num {
  using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
  __device__ static Acc Load(T x) { return static_cast<Acc>(x); }
  __device__ static T Store(Acc a) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<int64_t>(a));  // keeps the low bits, like any int cast
    } else {
      return static_cast<T>(a);
    }
  }
};
template <>
struct Num<Half> {
  using Acc = double;
  __device__ static Acc Load(Half x) { return __half2float(__ushort_as_half(x.bits)); }
  __device__ static Half Store(Acc a) { return Half{__half_as_ushort(__double2half(a))}; }
};
template <>
struct Num<BHalf> {
  using Acc = double;
  __device__ static Acc Load(BHalf x) { return __bfloat162float(__ushort_as_bfloat16(x.bits)); }
  __device__ static BHalf Store(Acc a) { return BHalf{__bfloat16_as_ushort(__double2bfloat16(a))}; }
};

// One thread's partial sum of its terms, in their order: level 0 adds `step` terms, then goes
// into level 1; level k goes into level k + 1 after every step^k terms; the total adds the levels
// from the top down. `step` is a power of two, at least 64, with step^4 at least the thread's term
// count, so no level adds more than `step` values (the CPU kernel's scheme). Integers need none.
template <class Acc>
struct Cascade {
  static constexpr bool kUsed = !std::is_integral_v<Acc>;
  Acc level[4] = {0, 0, 0, 0};
  uint64_t count = 0;
  unsigned shift = 6;

  __device__ explicit Cascade(uint64_t terms) {
    if constexpr (kUsed) {
      while ((uint64_t{1} << (4 * shift)) < terms && shift < 15) ++shift;
    }
  }
  __device__ void Add(Acc x) {
    level[0] += x;
    if constexpr (kUsed) {
      ++count;
      const uint64_t mask = (uint64_t{1} << shift) - 1;
      if ((count & mask) != 0) return;
      level[1] += level[0];
      level[0] = 0;
      if (((count >> shift) & mask) != 0) return;
      level[2] += level[1];
      level[1] = 0;
      if (((count >> (2 * shift)) & mask) != 0) return;
      level[3] += level[2];
      level[2] = 0;
    }
  }
  __device__ Acc Total() const { return ((level[3] + level[2]) + level[1]) + level[0]; }
};

// The number of terms a thread takes when `lanes` threads share `terms` (the first ones).
template <class Index>
__device__ uint64_t TermsPerThread(Index terms, unsigned lanes) {
  return (static_cast<uint64_t>(terms) + lanes - 1) / lanes;
}

constexpr int kColLanes = 32;  // outputs per block (columns layout)
constexpr int kColRows = 16;   // threads splitting each output's sum
constexpr int kMaxGroup = 256;

template <class TIn, class TOut, class Index>
__global__ void ReduceColumns(TOut* __restrict__ out, const TIn* __restrict__ in, Index outputs,
                              Index terms, OffsetCalc<2, Index> kept, OffsetCalc<1, Index> summed,
                              typename Num<TIn>::Acc factor) {
  using Acc = typename Num<TIn>::Acc;
  __shared__ Acc partial[kColRows][kColLanes];
  const Index tiles = (outputs + kColLanes - 1) / kColLanes;
  for (Index tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const Index o = tile * kColLanes + threadIdx.x;
    Cascade<Acc> acc(TermsPerThread(terms, kColRows));
    Index off[2] = {0, 0};
    if (o < outputs) {
      kept.Get(o, off);
      for (Index j = threadIdx.y; j < terms; j += kColRows) {
        Index r[1];
        summed.Get(j, r);
        acc.Add(Num<TIn>::Load(in[off[1] + r[0]]));
      }
    }
    partial[threadIdx.y][threadIdx.x] = acc.Total();
    __syncthreads();
    for (int s = kColRows / 2; s > 0; s >>= 1) {
      if (threadIdx.y < s)
        partial[threadIdx.y][threadIdx.x] += partial[threadIdx.y + s][threadIdx.x];
      __syncthreads();
    }
    if (threadIdx.y == 0 && o < outputs) {
      out[off[0]] =
          Num<TOut>::Store(static_cast<typename Num<TOut>::Acc>(partial[0][threadIdx.x] * factor));
    }
    __syncthreads();
  }
}

// blockDim.x threads (a power of two, <= kMaxGroup) per output, blockDim.y outputs per block.
template <class TIn, class TOut, class Index>
__global__ void ReduceRows(TOut* __restrict__ out, const TIn* __restrict__ in, Index outputs,
                           Index terms, OffsetCalc<2, Index> kept, OffsetCalc<1, Index> summed,
                           typename Num<TIn>::Acc factor) {
  using Acc = typename Num<TIn>::Acc;
  __shared__ Acc partial[kMaxGroup];
  const unsigned lane = threadIdx.x;
  const unsigned slot = threadIdx.y * blockDim.x;
  const Index per_block = blockDim.y;
  const Index groups = (outputs + per_block - 1) / per_block;
  for (Index g = blockIdx.x; g < groups; g += gridDim.x) {
    const Index o = g * per_block + threadIdx.y;
    Cascade<Acc> acc(TermsPerThread(terms, blockDim.x));
    Index off[2] = {0, 0};
    if (o < outputs) {
      kept.Get(o, off);
      for (Index j = lane; j < terms; j += blockDim.x) {
        Index r[1];
        summed.Get(j, r);
        acc.Add(Num<TIn>::Load(in[off[1] + r[0]]));
      }
    }
    partial[slot + lane] = acc.Total();
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (lane < s) partial[slot + lane] += partial[slot + lane + s];
      __syncthreads();
    }
    if (lane == 0 && o < outputs) {
      out[off[0]] = Num<TOut>::Store(static_cast<typename Num<TOut>::Acc>(partial[slot] * factor));
    }
    __syncthreads();
  }
}

struct Plan {
  LoopDims<2> kept;    // operand 0 the output, 1 the input
  LoopDims<1> summed;  // the input's strides over the summed dims
  int64_t factor = 1;  // product of the summed dims the input broadcasts
  bool columns = false;
  bool fits32 = false;
};

template <class TIn, class TOut, class Index>
void LaunchTyped(const Plan& p, void* out, const void* in, cudaStream_t stream, int device) {
  using Acc = typename Num<TIn>::Acc;
  const Index outputs = static_cast<Index>(NumElements(p.kept));
  const Index terms = static_cast<Index>(NumElements(p.summed));
  const OffsetCalc<2, Index> kept(p.kept, p.kept.ndim);
  const OffsetCalc<1, Index> summed(p.summed, p.summed.ndim);
  const Acc factor = static_cast<Acc>(p.factor);
  auto* o = static_cast<TOut*>(out);
  const auto* i = static_cast<const TIn*>(in);
  if (p.columns) {
    const int64_t tiles = (static_cast<int64_t>(outputs) + kColLanes - 1) / kColLanes;
    const unsigned grid = GridFor(tiles * kThreads, device);
    LaunchKernel(&ReduceColumns<TIn, TOut, Index>, grid, dim3(kColLanes, kColRows), 0, stream, o, i,
                 outputs, terms, kept, summed, factor);
  } else {
    // Few outputs with long sums: a whole block of 256 threads per output; otherwise one group
    // of 32 per output, 8 outputs per block.
    const bool wide = static_cast<int64_t>(outputs) < 1024 && static_cast<int64_t>(terms) >= 4096;
    const dim3 block = wide ? dim3(kMaxGroup, 1) : dim3(32, 8);
    const int64_t groups = (static_cast<int64_t>(outputs) + block.y - 1) / block.y;
    const unsigned grid = GridFor(groups * kThreads, device);
    LaunchKernel(&ReduceRows<TIn, TOut, Index>, grid, block, 0, stream, o, i, outputs, terms, kept,
                 summed, factor);
  }
  CheckLaunch("reduce_sum_to", device);
}

template <class TIn, class TOut>
void LaunchIndex(const Plan& p, void* out, const void* in, cudaStream_t stream, int device) {
  if (UseNarrowIndex(p.fits32)) {
    LaunchTyped<TIn, TOut, uint32_t>(p, out, in, stream, device);
  } else {
    LaunchTyped<TIn, TOut, uint64_t>(p, out, in, stream, device);
  }
}

void Dispatch(const Plan& p, DType tin, DType tout, void* out, const void* in, cudaStream_t stream,
              int device) {
  if (tin == tout) {
    switch (tin) {
      case DType::kUInt8:
        return LaunchIndex<uint8_t, uint8_t>(p, out, in, stream, device);
      case DType::kInt8:
        return LaunchIndex<int8_t, int8_t>(p, out, in, stream, device);
      case DType::kInt16:
        return LaunchIndex<int16_t, int16_t>(p, out, in, stream, device);
      case DType::kInt32:
        return LaunchIndex<int32_t, int32_t>(p, out, in, stream, device);
      case DType::kInt64:
        return LaunchIndex<int64_t, int64_t>(p, out, in, stream, device);
      case DType::kFloat16:
        return LaunchIndex<Half, Half>(p, out, in, stream, device);
      case DType::kBFloat16:
        return LaunchIndex<BHalf, BHalf>(p, out, in, stream, device);
      case DType::kFloat32:
        return LaunchIndex<float, float>(p, out, in, stream, device);
      case DType::kFloat64:
        return LaunchIndex<double, double>(p, out, in, stream, device);
      default:
        break;
    }
  } else if (tout == DType::kFloat32) {
    if (tin == DType::kFloat16) return LaunchIndex<Half, float>(p, out, in, stream, device);
    if (tin == DType::kBFloat16) return LaunchIndex<BHalf, float>(p, out, in, stream, device);
  } else if (tin == DType::kFloat32) {
    if (tout == DType::kFloat16) return LaunchIndex<float, Half>(p, out, in, stream, device);
    if (tout == DType::kBFloat16) return LaunchIndex<float, BHalf>(p, out, in, stream, device);
  }
  // CheckReduceSumToArgs refused every other pair.
  throw InvalidArgument("reduce_sum_to: no CUDA kernel for input dtype " + to_string(tin) +
                        " and output dtype " + to_string(tout));
}

bool Fits32(const Plan& p) {
  constexpr uint64_t kLimit = uint64_t{1} << 31;
  uint64_t total = 1, last_in = 0, last_out = 0;
  for (int i = 0; i < p.kept.ndim; ++i) {
    total *= static_cast<uint64_t>(p.kept.size[i]);
    if (p.kept.stride[0][i] < 0 || p.kept.stride[1][i] < 0) return false;
    last_out += static_cast<uint64_t>(p.kept.size[i] - 1) * p.kept.stride[0][i];
    last_in += static_cast<uint64_t>(p.kept.size[i] - 1) * p.kept.stride[1][i];
  }
  for (int i = 0; i < p.summed.ndim; ++i) {
    total *= static_cast<uint64_t>(p.summed.size[i]);
    if (p.summed.stride[0][i] < 0) return false;
    last_in += static_cast<uint64_t>(p.summed.size[i] - 1) * p.summed.stride[0][i];
  }
  return total < kLimit && last_in < kLimit && last_out < kLimit;
}

}  // namespace

void ReduceSumToKernel(const KernelContext& ctx) {
  CheckReduceSumToArgs(ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int n = in.shape.ndim();
  if (out.shape.numel() == 0) return;
  if (in.shape.numel() == 0) {  // every sum is over nothing: zeros
    const cudaError_t err = cudaMemsetAsync(
        out.data, 0, static_cast<size_t>(out.shape.numel()) * element_size(out.dtype), stream);
    if (err != cudaSuccess) {
      ThrowCudaError(err, "cudaMemsetAsync", Where("reduce_sum_to", ctx.device_index));
    }
    return;
  }
  Plan p;
  for (int i = 0; i < n; ++i) {
    const int64_t d = in.shape[i];
    if (out.shape[i] == d) {
      PushDim(&p.kept, d, {out.stride[i], in.stride[i]});
    } else if (in.stride[i] == 0) {  // summed to 1 (kernel_checks.h)
      p.factor *= d;
    } else {
      PushDim(&p.summed, d, {in.stride[i]});
    }
  }
  if (p.summed.ndim == 0 && p.factor == 1 && in.dtype == out.dtype) {  // nothing to sum: a copy
    SortDimsByStride(&p.kept);
    CoalesceDims(&p.kept);
    LaunchCopy(p.kept, out.data, in.data, static_cast<int>(element_size(in.dtype)), stream,
               ctx.device_index, "reduce_sum_to");
    return;
  }
  // Merging keeps each sum's order; sorting the kept dims only changes which thread sums which
  // output. Neither changes a result.
  SortDimsByStride(&p.kept);
  CoalesceDims(&p.kept);
  CoalesceDims(&p.summed);
  const int inner = p.kept.ndim - 1;
  p.columns = inner >= 0 && p.kept.stride[1][inner] == 1;
  for (int i = 0; p.columns && i < p.summed.ndim; ++i) p.columns = p.summed.stride[0][i] > 1;
  p.fits32 = Fits32(p);
  Dispatch(p, in.dtype, out.dtype, out.data, in.data, stream, ctx.device_index);
}
OFL_REGISTER_CUDA_KERNEL("reduce_sum_to", ReduceSumToKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
