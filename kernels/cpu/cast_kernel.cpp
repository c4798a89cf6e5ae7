// The CPU "cast" kernel: out[idx] = in[idx] converted to out's dtype (kernels/cast_value.h's
// rules), over strided views of one shape, by the one-input loop of elementwise_map.h; every pair
// of the ten dtypes.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/cast_value.h"
#include "kernels/cpu/elem.h"
#include "kernels/cpu/elementwise_map.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel_checks.h"
#include "kernels/register_kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {
namespace {

struct NoParams {};

template <class To, class From>
struct CastFn {
  using Out = typename ValueElem<To>::Storage;
  using In = typename ValueElem<From>::Storage;
  using Params = NoParams;
  static Out Apply(In x, const NoParams&) {
    using C = typename ValueElem<To>::Compute;
    return ValueElem<To>::Store(CastValue<C>(ValueElem<From>::Load(x)));
  }
};

}  // namespace

void CastKernel(const KernelContext& ctx) {
  CheckCastArgs(ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  VisitDType<float16, bfloat16>(in.dtype, "cast", [&](auto from) {
    VisitDType<float16, bfloat16>(out.dtype, "cast", [&](auto to) {
      using From = typename decltype(from)::type;
      using To = typename decltype(to)::type;
      MapElements<CastFn<To, From>>(out, in, NoParams{});
    });
  });
}
OFL_REGISTER_CPU_KERNEL("cast", CastKernel, CheckCastArgs);

}  // namespace ofl::kernels::cpu
