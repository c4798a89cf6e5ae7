// The CPU "random" kernel: element i of the contiguous output is RandomReal or RandomInteger of
// (seed, offset, i) (kernels/random.h), converted by the cast rules, split over oneTBB for large
// outputs (each element is its own Philox block, so the split changes no value).
#include <cstdint>

#include "kernels/cast_value.h"
#include "kernels/cpu/elem.h"
#include "kernels/dtype_visit.h"
#include "kernels/parallel.h"
#include "kernels/random.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cpu {
namespace {

constexpr int64_t kParallelElems = 16 << 10;

void RandomKernel(const KernelContext& ctx) {
  const RandomSpec spec = CheckRandomArgs(ctx);
  const TensorArg& out = ctx.outputs[0];
  const int64_t n = out.shape.numel();
  if (n == 0) return;
  VisitDType<float16, bfloat16>(out.dtype, "random", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using E = ValueElem<T>;
    using C = typename E::Compute;
    auto* o = static_cast<typename E::Storage*>(out.data);
    auto body = [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const uint64_t k = static_cast<uint64_t>(i);
        o[i] = spec.dist == RandomDist::kIntegers ? E::Store(CastValue<C>(RandomInteger(spec, k)))
                                                  : E::Store(CastValue<C>(RandomReal(spec, k)));
      }
    };
    ParallelRange(n, kParallelElems, kParallelElems / 4, body);
  });
}

void CheckRandom(const KernelContext& ctx) { (void)CheckRandomArgs(ctx); }

}  // namespace

OFL_REGISTER_CPU_KERNEL("random", RandomKernel, CheckRandom);

}  // namespace ofl::kernels::cpu
