// The CPU "range" kernel (arange, linspace): element i of the 1-dim output is RangeValue(spec, i)
// (kernels/range.h), split over oneTBB for large outputs.
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/elem.h"
#include "kernels/dtype_visit.h"
#include "kernels/parallel.h"
#include "kernels/range.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cpu {
namespace {

constexpr int64_t kParallelElems = 64 << 10;

void RangeKernel(const KernelContext& ctx) {
  const RangeSpec spec = CheckRangeArgs(ctx);
  const TensorArg& out = ctx.outputs[0];
  if (spec.n == 0) return;
  const int64_t stride = out.stride[0];
  VisitDType<float16, bfloat16>(out.dtype, "range", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using E = ValueElem<T>;
    auto* o = static_cast<typename E::Storage*>(out.data);
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        o[i * stride] = E::Store(RangeValue<typename E::Compute>(spec, i));
      }
    };
    ParallelRange(spec.n, kParallelElems, kParallelElems / 4, body);
  });
}

void CheckRange(const KernelContext& ctx) { (void)CheckRangeArgs(ctx); }

}  // namespace

OFL_REGISTER_CPU_KERNEL("range", RangeKernel, CheckRange);

}  // namespace ofl::kernels::cpu
