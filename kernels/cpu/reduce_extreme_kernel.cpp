// The CPU "max_dim" and "min_dim" kernels: along one dim of the input, the largest (smallest)
// element and its int64 index, for every position of the other dims (kernels/reduce_extreme.h's
// rules: a NaN wins, ties give the first index). Each output position scans its row in order, so
// the result depends on nothing but the values; positions are split over oneTBB for large inputs.
#include <algorithm>
#include <cstdint>
#include <string>

#include <tbb/blocked_range.h>

#include "kernels/cpu/elem.h"
#include "kernels/dtype_visit.h"
#include "kernels/index_util.h"
#include "kernels/kernel_checks.h"
#include "kernels/parallel.h"
#include "kernels/reduce_extreme.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cpu {
namespace {

constexpr int64_t kParallelElems = 64 << 10;  // input elements below which threads cost more
constexpr int64_t kGrainElems = 32 << 10;     // input elements one task should at least scan

// Operand 0 the values, 1 the indices, 2 the input, over the output's positions (the reduced dim,
// of size 1 there, dropped).
using Dims = LoopDims<3>;

template <bool kMax, class T>
void ScanRange(const Dims& d, void* vals, void* idx, const void* in, int64_t n, int64_t step,
               int64_t begin, int64_t end) {
  using E = ValueElem<T>;
  using S = typename E::Storage;
  using C = typename E::Compute;
  S* v = static_cast<S*>(vals);
  int64_t* ix = static_cast<int64_t*>(idx);
  const S* x = static_cast<const S*>(in);
  LoopCursor<3> c;
  SeekCursor(d, d.ndim, begin, &c);
  for (int64_t pos = begin; pos < end; ++pos) {
    const S* row = x + c.offset[2];
    S best = row[0];
    C best_c = E::Load(best);
    int64_t at = 0;
    for (int64_t k = 1; k < n; ++k) {
      const S s = row[k * step];
      const C value = E::Load(s);
      if (ExtremeReplaces<kMax>(value, best_c)) {
        best = s;
        best_c = value;
        at = k;
      }
    }
    v[c.offset[0]] = best;
    ix[c.offset[1]] = at;
    AdvanceCursor(d, d.ndim, &c);
  }
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
  Dims d;
  const int64_t* const strides[3] = {vals.stride.data(), idx.stride.data(), x.stride.data()};
  InitLoopDims<3>(&d, vals.shape.ndim(), vals.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const int64_t positions = NumElements(d);
  VisitDType<float16, bfloat16>(x.dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto range = [&](int64_t begin, int64_t end) {
      ScanRange<kMax, T>(d, vals.data, idx.data, x.data, n, step, begin, end);
    };
    if (positions * n <= kParallelElems || positions == 1) {
      range(0, positions);
      return;
    }
    ParallelFor(tbb::blocked_range<int64_t>(0, positions, std::max<int64_t>(1, kGrainElems / n)),
                [&](const tbb::blocked_range<int64_t>& r) { range(r.begin(), r.end()); });
  });
}

void MaxDimKernel(const KernelContext& ctx) { ReduceExtremeKernel<true>(ctx); }
void MinDimKernel(const KernelContext& ctx) { ReduceExtremeKernel<false>(ctx); }
void MaxDimCheck(const KernelContext& ctx) { CheckReduceExtremeArgs("max_dim", ctx); }
void MinDimCheck(const KernelContext& ctx) { CheckReduceExtremeArgs("min_dim", ctx); }
OFL_REGISTER_CPU_KERNEL("max_dim", MaxDimKernel, MaxDimCheck);
OFL_REGISTER_CPU_KERNEL("min_dim", MinDimKernel, MinDimCheck);

}  // namespace
}  // namespace ofl::kernels::cpu
