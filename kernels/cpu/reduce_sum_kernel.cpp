// The CPU "reduce_sum_to" kernel: sums an input over the dims where the output has size 1 (the
// backward of expand and repeat), deterministically and at least as accurately as PyTorch's sum.
//
// Determinism comes from never splitting one output element's sum: threads only divide the output
// elements between them, and each sum's order depends on nothing but the shapes and strides.
// Accuracy, at least PyTorch's: every float dtype accumulates in double (float16, bfloat16 and
// float32 terms lose nothing on the way in), and every sum goes through a cascade of accumulators
// in a fixed order (PyTorch's scheme: up to four levels, each adding at most 2^shift sums of the
// level below, 2^shift being 64 or about n^(1/4) for longer sums), which is what float64 needs.
// A summed dim that the input broadcasts (stride 0) is a multiplication, rounded once, not a sum.
// 16-bit outputs are rounded once from the double sum. Integer sums are exact (mod 2^64).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include <tbb/blocked_range.h>
#include <tbb/task_arena.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/half_cast.h"
#include "kernels/index_util.h"
#include "kernels/kernel_checks.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"
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
constexpr int kLanes = 8;  // interleaved partial sums of a contiguous run

// Accumulator types: every float dtype in double, integers in 64 bits. Signed integers are summed
// as uint64_t, which wraps exactly like two's-complement int64 but without undefined behaviour on
// overflow; the cast back keeps the low bits like any int cast.
template <class T>
struct Acc {
  using type = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
};

template <class T>
inline typename Acc<T>::type ToAcc(T x) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  } else if constexpr (std::is_same_v<T, float16>) {
    return HalfToFloat(x);
  } else {
    return static_cast<double>(
        static_cast<std::conditional_t<std::is_same_v<T, bfloat16>, float, T>>(x));
  }
}

template <class T>
inline T FromAcc(typename Acc<T>::type a) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int64_t>(a));
  } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(RoundToOddFloat(a));
  } else {
    return static_cast<T>(a);
  }
}

// The accumulator cascade every output element's sum goes through. Level 0 takes `step` terms per
// accumulator (runs: kLanes * step terms over its lanes), then is added into level 1 and cleared;
// level k (0 < k < levels - 1) is added into level k + 1 after every 2^(shift * k) level-0 blocks.
// The top level takes at most 2^shift sums. `shift` grows with the sum's length so that four
// levels always suffice; short sums (up to 64 terms per accumulator) use level 0 alone. It depends
// on the number of terms only, never on threads.
constexpr int kMaxLevels = 4;
constexpr int kMinShift = 6;
struct Cascade {
  int levels = 1;
  int shift = kMinShift;
  int64_t step = std::numeric_limits<int64_t>::max();  // level-0 terms per accumulator
};

inline Cascade PlanCascade(int64_t terms_per_acc) {
  int lg = 0;  // ceil(log2(terms_per_acc))
  while (lg < 62 && (int64_t{1} << lg) < terms_per_acc) ++lg;
  Cascade c;
  c.shift = std::max(kMinShift, (lg + kMaxLevels - 1) / kMaxLevels);
  c.levels = std::max(1, (lg + c.shift - 1) / c.shift);
  if (c.levels > 1) c.step = int64_t{1} << c.shift;
  return c;
}

// After the `blocks`-th level-0 block: level 0 into level 1, and up the levels whose count is due.
// level[k] points at `width` accumulators of level k.
template <class A>
inline void Carry(A* const* level, int64_t width, int64_t blocks, const Cascade& c) {
  for (int k = 0; k + 1 < c.levels; ++k) {
    if (k > 0 && (blocks & ((int64_t{1} << (c.shift * k)) - 1)) != 0) return;
    A* __restrict from = level[k];
    A* __restrict to = level[k + 1];
    for (int64_t j = 0; j < width; ++j) {
      to[j] += from[j];
      from[j] = A(0);
    }
  }
}

// Adds n terms, `stride` apart, into kLanes interleaved partial sums (term i into lane i mod
// kLanes, counted from x; a fixed order, and for stride 1 one the compiler vectorises).
template <class T, class A>
inline void AddToLanes(A (&l)[kLanes], const T* x, int64_t n, int64_t stride) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + kLanes <= n; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) l[k] += ToAcc(x[i + k]);
    }
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) l[k] += ToAcc(x[(i + k) * stride]);
    }
  }
  // Fixed lane indices, so that the lanes can stay in registers.
  for (int k = 0; k < kLanes - 1; ++k) {
    if (i + k < n) l[k] += ToAcc(x[(i + k) * stride]);
  }
}

struct ReducePlan {
  LoopDims<2> kept;     // operand 0: output, 1: input; at least one dim
  LoopDims<1> reduced;  // input strides; no stride-0 dims
  int64_t repeat = 1;   // product of the summed dims the input broadcasts: each sum is multiplied
};

// The summed dims' innermost run is contiguous in the input while the kept dims' is not, or there
// is one output element: each output element sums whole runs of the innermost summed dim (strided
// only in the second case), [begin, end) being output elements in kept row-major order.
template <class T, class TOut>
void ReduceRuns(const ReducePlan& p, TOut* out, const T* in, int64_t begin, int64_t end) {
  using A = typename Acc<T>::type;
  static_assert(kMaxLevels == 4);
  const LoopDims<1>& red = p.reduced;
  const int ri = red.ndim - 1;
  const int64_t run = red.size[ri];
  const int64_t run_stride = red.stride[0][ri];
  int64_t outer_runs = 1;
  for (int i = 0; i < ri; ++i) outer_runs *= red.size[i];
  const Cascade c = PlanCascade((NumElements(red) + kLanes - 1) / kLanes);
  const int64_t step = c.levels > 1 ? c.step * kLanes : c.step;  // terms per level-0 block
  const int64_t due1 = (int64_t{1} << c.shift) - 1;  // level 1 into 2 when (blocks & due1) == 0
  const int64_t due2 = (int64_t{1} << (2 * c.shift)) - 1;
  const A repeat = static_cast<A>(p.repeat);
  LoopCursor<2> kc;
  SeekCursor(p.kept, p.kept.ndim, begin, &kc);
  LoopCursor<1> rc;
  for (int64_t e = begin; e < end; ++e) {
    // Levels 0 and 1 stay in registers (a level-0 block is only 64 terms per lane); 2 and 3 are
    // touched once per 2^shift blocks.
    A l0[kLanes] = {};
    A l1[kLanes] = {};
    A l2[kLanes] = {};
    A l3[kLanes] = {};
    ResetCursor(ri, &rc);
    const T* base = in + kc.offset[1];
    int64_t filled = 0;  // terms in the level-0 block
    int64_t blocks = 0;
    for (int64_t o = 0; o < outer_runs; ++o) {
      const T* x = base + rc.offset[0];
      for (int64_t left = run; left > 0;) {
        const int64_t take = std::min(left, step - filled);
        AddToLanes(l0, x, take, run_stride);
        x += take * run_stride;
        left -= take;
        filled += take;
        if (filled < step) continue;
        filled = 0;
        ++blocks;
        for (int k = 0; k < kLanes; ++k) {
          l1[k] += l0[k];
          l0[k] = A(0);
        }
        if (c.levels < 3 || (blocks & due1) != 0) continue;
        for (int k = 0; k < kLanes; ++k) {
          l2[k] += l1[k];
          l1[k] = A(0);
        }
        if (c.levels < 4 || (blocks & due2) != 0) continue;
        for (int k = 0; k < kLanes; ++k) {
          l3[k] += l2[k];
          l2[k] = A(0);
        }
      }
      AdvanceCursor(red, ri, &rc);
    }
    A lane[kLanes];
    for (int k = 0; k < kLanes; ++k) lane[k] = ((l0[k] + l1[k]) + l2[k]) + l3[k];
    const A sum =
        ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    out[kc.offset[0]] = FromAcc<TOut>(sum * repeat);
    AdvanceCursor(p.kept, p.kept.ndim, &kc);
  }
}

// Adds one input row segment into the accumulators, in chunks of a fixed 16 so that the compiler
// vectorises it even without a cost model that accepts runtime trip counts.
template <class T, class A>
inline void AccumulateRow(A* __restrict acc, const T* row, int64_t stride, int64_t cnt) {
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

// Adds four input row segments into the accumulators as (r0 + r1) + (r2 + r3): a quarter of the
// accumulator loads and stores of four AccumulateRow calls.
template <class T, class A>
inline void AccumulateFourRows(A* __restrict acc, const T* const* rows, int64_t stride,
                               int64_t cnt) {
  const T* r0 = rows[0];
  const T* r1 = rows[1];
  const T* r2 = rows[2];
  const T* r3 = rows[3];
  if (stride == 1) {
    int64_t j = 0;
    for (; j + 16 <= cnt; j += 16) {
      for (int l = 0; l < 16; ++l) {
        acc[j + l] += (ToAcc(r0[j + l]) + ToAcc(r1[j + l])) + (ToAcc(r2[j + l]) + ToAcc(r3[j + l]));
      }
    }
    for (; j < cnt; ++j) acc[j] += (ToAcc(r0[j]) + ToAcc(r1[j])) + (ToAcc(r2[j]) + ToAcc(r3[j]));
  } else {
    for (int64_t j = 0; j < cnt; ++j) {
      const int64_t o = j * stride;
      acc[j] += (ToAcc(r0[o]) + ToAcc(r1[o])) + (ToAcc(r2[o]) + ToAcc(r3[o]));
    }
  }
}

// Every other layout: work items are blocks of block_len elements along the kept innermost dim
// (item = outer kept index * blocks + block); each block keeps its accumulators (a cascade each)
// and walks the summed dims in row-major order, adding the input row segments four at a time
// (the last n mod 4 one at a time). An element's sum is the same for any block_len.
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
  const Cascade c = PlanCascade(NumElements(red));
  const A repeat = static_cast<A>(p.repeat);

  LoopCursor<2> kc;
  SeekCursor(kept, ki, begin / blocks, &kc);
  int64_t block = begin % blocks;
  LoopCursor<1> rc;
  A acc[kMaxBlock];
  std::unique_ptr<A[]> upper;  // levels 1.. of the cascade, only for long sums
  if (c.levels > 1) upper.reset(new A[static_cast<size_t>((c.levels - 1) * block_len)]);
  A* level[kMaxLevels] = {acc};
  for (int64_t item = begin; item < end; ++item) {
    const int64_t j0 = block * block_len;
    const int64_t cnt = std::min(block_len, nk - j0);
    std::fill_n(acc, cnt, A(0));
    for (int k = 1; k < c.levels; ++k) {
      level[k] = upper.get() + (k - 1) * cnt;
      std::fill_n(level[k], cnt, A(0));
    }
    const T* base = in + kc.offset[1] + j0 * in_stride;
    const T* group[4];  // the rows 4k .. 4k + 3 of the sum, added together
    int grouped = 0;
    int64_t filled = 0;  // rows in the level-0 block (step is a multiple of 4)
    int64_t done = 0;    // level-0 blocks
    ResetCursor(ri, &rc);
    for (int64_t o = 0; o < outer_n; ++o) {
      const T* row = base + rc.offset[0];
      for (int64_t t = 0; t < inner_n; ++t, row += inner_stride) {
        group[grouped++] = row;
        if (grouped < 4) continue;
        AccumulateFourRows(acc, group, in_stride, cnt);
        grouped = 0;
        filled += 4;
        if (filled == c.step) {
          filled = 0;
          Carry(level, cnt, ++done, c);
        }
      }
      AdvanceCursor(red, ri, &rc);
    }
    for (int g = 0; g < grouped; ++g) AccumulateRow(acc, group[g], in_stride, cnt);
    for (int k = 1; k < c.levels; ++k) {
      for (int64_t j = 0; j < cnt; ++j) acc[j] += level[k][j];
    }
    TOut* dst = out + kc.offset[0] + j0 * out_stride;
    for (int64_t j = 0; j < cnt; ++j) dst[j * out_stride] = FromAcc<TOut>(acc[j] * repeat);
    if (++block == blocks) {
      block = 0;
      AdvanceCursor(kept, ki, &kc);
    }
  }
}

// TOut differs from T only between the 16-bit floats and float32, whose accumulators are all
// double.
template <class T, class TOut = T>
void ReduceTyped(const ReducePlan& p, void* out_data, const void* in_data) {
  static_assert(std::is_same_v<typename Acc<T>::type, typename Acc<TOut>::type>);
  TOut* out = static_cast<TOut*>(out_data);
  const T* in = static_cast<const T*>(in_data);
  const int64_t out_numel = NumElements(p.kept);
  const int64_t sum_len = NumElements(p.reduced);
  const int64_t work = out_numel * sum_len;
  const LoopDims<1>& red = p.reduced;
  // One output element is summed in runs whatever its layout: a block of one accumulator would
  // pay a call per term.
  const bool runs = out_numel == 1 ||
                    (red.stride[0][red.ndim - 1] == 1 && p.kept.stride[1][p.kept.ndim - 1] != 1);
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
  CheckReduceSumToArgs(ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  const bool mixed = in.dtype != out.dtype;
  const int n = in.shape.ndim();
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
    } else if (in.stride[i] == 0) {  // summed to 1 (kernel_checks.h)
      p.repeat *= d;                 // d copies of the same terms: their sum times d, rounded once
    } else {
      PushDim(&p.reduced, d, {in.stride[i]});
    }
  }
  if (p.reduced.ndim == 0 && p.repeat == 1 && !mixed) {  // nothing to sum: a plain copy
    StridedCopy(out.data, out.stride.data(), in.data, in.stride.data(), in.shape.data(), n,
                element_size(in.dtype));
    return;
  }
  if (p.reduced.ndim == 0) {  // one term per sum, still to be multiplied or converted
    p.reduced.ndim = 1;
    p.reduced.size[0] = 1;
    p.reduced.stride[0][0] = 0;
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
OFL_REGISTER_CPU_KERNEL("reduce_sum_to", ReduceSumToKernel, CheckReduceSumToArgs);

}  // namespace ofl::kernels::cpu
