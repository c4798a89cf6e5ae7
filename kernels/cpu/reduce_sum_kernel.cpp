// The CPU "reduce_sum_to" kernel: sums an input over the dims where the output has size 1 (the
// backward of expand and repeat), deterministically.
//
// Determinism comes from never splitting one output element's sum: threads only divide the output
// elements between them, and each sum's order depends on nothing but the shapes and strides.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include <tbb/blocked_range.h>
#include <tbb/task_arena.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/index_util.h"
#include "kernels/parallel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {

namespace {

constexpr int64_t kParallelElems = 64 << 10;  // input elements below which threads cost more
constexpr int64_t kGrainElems = 32 << 10;     // input elements one task should at least sum
// Output elements summed side by side when the output's inner dim is not the input's fastest:
// one accumulator each, all fed from the same input row segment. Long segments stream well (a
// column sum of rows 4096 wide runs twice as fast in one 4096 block as in 512 blocks); shorter
// ones only serve to give every thread some blocks.
constexpr int64_t kMaxBlock = 4096;
constexpr int64_t kMinBlock = 64;

// Accumulator types: 16-bit floats and float32 in float, float64 in double, integers in 64 bits.
// Signed integers are summed as uint64_t, which wraps exactly like two's-complement int64 but
// without undefined behaviour on overflow; the cast back keeps the low bits like any int cast.
template <class T>
struct Acc {
  using type = std::conditional_t<std::is_integral_v<T>, uint64_t, float>;
};
template <>
struct Acc<double> {
  using type = double;
};

template <class T>
inline typename Acc<T>::type ToAcc(T x) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  } else {
    return static_cast<typename Acc<T>::type>(x);
  }
}

template <class T>
inline T FromAcc(typename Acc<T>::type a) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int64_t>(a));
  } else {
    return static_cast<T>(a);
  }
}

// A contiguous run's sum in eight interleaved partial sums (a fixed order, and one the compiler
// can vectorise), combined pairwise.
template <class T>
inline typename Acc<T>::type SumRun(const T* x, int64_t n) {
  using A = typename Acc<T>::type;
  A lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lane[l] += ToAcc(x[i + l]);
  }
  A tail = 0;
  for (; i < n; ++i) tail += ToAcc(x[i]);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) +
         tail;
}

struct ReducePlan {
  LoopDims<2> kept;     // operand 0: output, 1: input; at least one dim
  LoopDims<1> reduced;  // input strides
};

// The summed dims' innermost run is contiguous in the input while the kept dims' is not: each
// output element sums whole runs, [begin, end) being output elements in kept row-major order.
template <class T, class TOut>
void ReduceRuns(const ReducePlan& p, TOut* out, const T* in, int64_t begin, int64_t end) {
  using A = typename Acc<T>::type;
  const LoopDims<1>& red = p.reduced;
  const int ri = red.ndim - 1;
  const int64_t run = red.size[ri];
  int64_t outer_runs = 1;
  for (int i = 0; i < ri; ++i) outer_runs *= red.size[i];
  LoopCursor<2> kc;
  SeekCursor(p.kept, p.kept.ndim, begin, &kc);
  LoopCursor<1> rc;
  for (int64_t e = begin; e < end; ++e) {
    A acc = 0;
    ResetCursor(ri, &rc);
    const T* base = in + kc.offset[1];
    for (int64_t o = 0; o < outer_runs; ++o) {
      acc += SumRun(base + rc.offset[0], run);
      AdvanceCursor(red, ri, &rc);
    }
    out[kc.offset[0]] = FromAcc<TOut>(acc);
    AdvanceCursor(p.kept, p.kept.ndim, &kc);
  }
}

// Adds one input row segment into the accumulators, in chunks of a fixed 16 so that the compiler
// vectorises it even without a cost model that accepts runtime trip counts.
template <class T>
inline void AccumulateRow(typename Acc<T>::type* acc, const T* row, int64_t stride, int64_t cnt) {
  if (stride == 1) {
    int64_t j = 0;
    for (; j + 16 <= cnt; j += 16) {
      for (int l = 0; l < 16; ++l) acc[j + l] += ToAcc(row[j + l]);
    }
    for (; j < cnt; ++j) acc[j] += ToAcc(row[j]);
  } else {
    for (int64_t j = 0; j < cnt; ++j) acc[j] += ToAcc(row[j * stride]);
  }
}

// Every other layout: work items are blocks of block_len elements along the kept innermost dim
// (item = outer kept index * blocks + block); each block keeps its accumulators and walks the
// summed dims in row-major order, adding one input row segment at a time. An element's sum is the
// same for any block_len.
template <class T, class TOut>
void ReduceBlocks(const ReducePlan& p, int64_t block_len, TOut* out, const T* in, int64_t begin,
                  int64_t end) {
  using A = typename Acc<T>::type;
  const LoopDims<2>& kept = p.kept;
  const LoopDims<1>& red = p.reduced;
  const int ki = kept.ndim - 1;
  const int64_t nk = kept.size[ki];
  const int64_t out_stride = kept.stride[0][ki];
  const int64_t in_stride = kept.stride[1][ki];
  const int64_t blocks = (nk + block_len - 1) / block_len;
  // Summed dims: the innermost is a plain loop, the outer ones an odometer.
  const int ri = red.ndim - 1;
  const int64_t inner_n = red.size[ri];
  const int64_t inner_stride = red.stride[0][ri];
  int64_t outer_n = 1;
  for (int i = 0; i < ri; ++i) outer_n *= red.size[i];

  LoopCursor<2> kc;
  SeekCursor(kept, ki, begin / blocks, &kc);
  int64_t block = begin % blocks;
  LoopCursor<1> rc;
  A acc[kMaxBlock];
  for (int64_t item = begin; item < end; ++item) {
    const int64_t j0 = block * block_len;
    const int64_t cnt = std::min(block_len, nk - j0);
    std::fill_n(acc, cnt, A(0));
    const T* base = in + kc.offset[1] + j0 * in_stride;
    ResetCursor(ri, &rc);
    for (int64_t o = 0; o < outer_n; ++o) {
      const T* row = base + rc.offset[0];
      for (int64_t t = 0; t < inner_n; ++t, row += inner_stride) {
        AccumulateRow(acc, row, in_stride, cnt);
      }
      AdvanceCursor(red, ri, &rc);
    }
    TOut* dst = out + kc.offset[0] + j0 * out_stride;
    for (int64_t j = 0; j < cnt; ++j) dst[j * out_stride] = FromAcc<TOut>(acc[j]);
    if (++block == blocks) {
      block = 0;
      AdvanceCursor(kept, ki, &kc);
    }
  }
}

// TOut differs from T only between the 16-bit floats and float32, whose accumulators are all float.
template <class T, class TOut = T>
void ReduceTyped(const ReducePlan& p, void* out_data, const void* in_data) {
  static_assert(std::is_same_v<typename Acc<T>::type, typename Acc<TOut>::type>);
  TOut* out = static_cast<TOut*>(out_data);
  const T* in = static_cast<const T*>(in_data);
  const int64_t out_numel = NumElements(p.kept);
  const int64_t sum_len = NumElements(p.reduced);
  const int64_t work = out_numel * sum_len;
  const LoopDims<1>& red = p.reduced;
  const bool runs =
      red.ndim > 0 && red.stride[0][red.ndim - 1] == 1 && p.kept.stride[1][p.kept.ndim - 1] != 1;
  if (runs) {
    if (work <= kParallelElems || out_numel == 1) {
      ReduceRuns(p, out, in, 0, out_numel);
      return;
    }
    const int64_t grain = std::max<int64_t>(1, kGrainElems / std::max<int64_t>(1, sum_len));
    ParallelFor(
        tbb::blocked_range<int64_t>(0, out_numel, grain),
        [&](const tbb::blocked_range<int64_t>& r) { ReduceRuns(p, out, in, r.begin(), r.end()); });
    return;
  }
  const int64_t nk = p.kept.size[p.kept.ndim - 1];
  const int64_t rows = out_numel / nk;
  const bool parallel = work > kParallelElems;
  int64_t blocks = (nk + kMaxBlock - 1) / kMaxBlock;
  if (parallel) {  // an item for every thread, if the rows are wide enough
    const int64_t want = tbb::this_task_arena::max_concurrency();
    if (rows * blocks < want) {
      blocks =
          std::max(blocks, std::min((want + rows - 1) / rows, (nk + kMinBlock - 1) / kMinBlock));
    }
  }
  int64_t block_len = (nk + blocks - 1) / blocks;
  block_len = std::min(kMaxBlock, (block_len + 15) / 16 * 16);
  blocks = (nk + block_len - 1) / block_len;
  const int64_t items = rows * blocks;
  if (!parallel || items == 1) {
    ReduceBlocks(p, block_len, out, in, 0, items);
    return;
  }
  const int64_t grain =
      std::max<int64_t>(1, kGrainElems / std::max<int64_t>(1, block_len * sum_len));
  ParallelFor(tbb::blocked_range<int64_t>(0, items, grain),
              [&](const tbb::blocked_range<int64_t>& r) {
                ReduceBlocks(p, block_len, out, in, r.begin(), r.end());
              });
}

}  // namespace

void ReduceSumToKernel(const KernelContext& ctx) {
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  if (in.dtype == DType::kBool || out.dtype == DType::kBool) {
    throw InvalidArgument(
        "reduce_sum_to: dtype bool is not supported (cast the tensor to an integer dtype before "
        "summing it)");
  }
  // Mixed 16-bit float / float32 lets a sum done in several passes keep float partial results.
  auto is_half = [](DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; };
  const bool mixed = in.dtype != out.dtype;
  if (mixed && !((is_half(in.dtype) && out.dtype == DType::kFloat32) ||
                 (in.dtype == DType::kFloat32 && is_half(out.dtype)))) {
    throw InvalidArgument("reduce_sum_to: input dtype " + to_string(in.dtype) +
                          " differs from output dtype " + to_string(out.dtype) +
                          " (only float16/bfloat16 <-> float32 may differ)");
  }
  const int n = in.shape.ndim();
  if (out.shape.ndim() != n) {
    throw InvalidArgument("reduce_sum_to: output shape " + out.shape.str() +
                          " does not have the rank of input shape " + in.shape.str());
  }
  if (in.shape.numel() == 0) {  // every sum is over nothing: zeros (the contiguous output)
    if (out.shape.numel() > 0) {
      std::memset(out.data, 0, static_cast<size_t>(out.shape.numel()) * element_size(out.dtype));
    }
    return;
  }
  ReducePlan p;
  for (int i = 0; i < n; ++i) {
    const int64_t d = in.shape[i];
    if (out.shape[i] == d) {
      if (d == 0) return;  // empty output
      PushDim(&p.kept, d, {out.stride[i], in.stride[i]});
    } else if (out.shape[i] == 1) {
      PushDim(&p.reduced, d, {in.stride[i]});
    } else {
      throw InvalidArgument("reduce_sum_to: output shape " + out.shape.str() +
                            " cannot be summed from input shape " + in.shape.str() + ": dim " +
                            std::to_string(i) + " must be " + std::to_string(d) + " or 1");
    }
  }
  if (p.reduced.ndim == 0 && mixed) {
    PushDim(&p.reduced, 1, {0});     // nothing to sum, but the values still change type
  } else if (p.reduced.ndim == 0) {  // nothing to sum: a plain copy
    StridedCopy(out.data, out.stride.data(), in.data, in.stride.data(), in.shape.data(), n,
                element_size(in.dtype));
    return;
  }
  // Merging keeps every sum's row-major order, so it cannot change results; no sorting, which
  // would.
  CoalesceDims(&p.kept);
  CoalesceDims(&p.reduced);
  if (p.kept.ndim == 0) {  // a full reduction still has one output element to walk to
    p.kept.ndim = 1;
    p.kept.size[0] = 1;
    p.kept.stride[0][0] = 0;
    p.kept.stride[1][0] = 0;
  }

  if (mixed) {
    if (in.dtype == DType::kFloat16) return ReduceTyped<float16, float>(p, out.data, in.data);
    if (in.dtype == DType::kBFloat16) return ReduceTyped<bfloat16, float>(p, out.data, in.data);
    if (out.dtype == DType::kFloat16) return ReduceTyped<float, float16>(p, out.data, in.data);
    return ReduceTyped<float, bfloat16>(p, out.data, in.data);
  }
  switch (in.dtype) {
    case DType::kUInt8:
      return ReduceTyped<uint8_t>(p, out.data, in.data);
    case DType::kInt8:
      return ReduceTyped<int8_t>(p, out.data, in.data);
    case DType::kInt16:
      return ReduceTyped<int16_t>(p, out.data, in.data);
    case DType::kInt32:
      return ReduceTyped<int32_t>(p, out.data, in.data);
    case DType::kInt64:
      return ReduceTyped<int64_t>(p, out.data, in.data);
    case DType::kFloat16:
      return ReduceTyped<float16>(p, out.data, in.data);
    case DType::kBFloat16:
      return ReduceTyped<bfloat16>(p, out.data, in.data);
    case DType::kFloat32:
      return ReduceTyped<float>(p, out.data, in.data);
    case DType::kFloat64:
      return ReduceTyped<double>(p, out.data, in.data);
    case DType::kBool:
      break;
  }
}

}  // namespace ofl::kernels::cpu
