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

// How a cast stores and computes each type: float16 and bfloat16 as Elem does (their bits,
// computed in float), every other type as itself.
template <class T>
struct CastElem {
  using Storage = T;
  using Compute = T;
  static T Load(T x) { return x; }
  static T Store(T c) { return c; }
};
template <>
struct CastElem<float16> : Elem<float16> {};
template <>
struct CastElem<bfloat16> : Elem<bfloat16> {};

struct NoParams {};

template <class To, class From>
struct CastFn {
  using Out = typename CastElem<To>::Storage;
  using In = typename CastElem<From>::Storage;
  using Params = NoParams;
  static Out Apply(In x, const NoParams&) {
    using C = typename CastElem<To>::Compute;
    return CastElem<To>::Store(CastValue<C>(CastElem<From>::Load(x)));
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
