// The CPU pointwise kernels (kernels/pointwise_ops.h): comparisons and logical ops into bool,
// maximum/minimum, bitwise ops, clamp and where, over strided views of one shape (broadcast inputs
// have stride 0), by the loops of elementwise_map.h. Each op is one instantiation of the same
// adapters per dtype; the math of one element is pointwise_ops.h's, shared with the CUDA kernels.
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

#include "kernels/cpu/elem.h"
#include "kernels/cpu/elementwise_map.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel_checks.h"
#include "kernels/pointwise_ops.h"
#include "kernels/register_kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {
namespace {

template <PointwiseOp kOp, class T>
struct BinaryFn {
  using E = ValueElem<T>;
  using S = typename E::Storage;
  using Out = std::conditional_t<PointwiseGivesBool(kOp), bool, S>;
  using Ins = std::tuple<S, S>;
  using Params = PointwiseParams;
  static Out Apply(S a, S b, const PointwiseParams&) {
    const auto r = ApplyPointwise<kOp, typename E::Compute>(E::Load(a), E::Load(b));
    if constexpr (PointwiseGivesBool(kOp)) {
      return r;
    } else {
      return E::Store(r);
    }
  }
};

template <PointwiseOp kOp, class T>
struct UnaryFn {
  using E = ValueElem<T>;
  using In = typename E::Storage;
  using Out = std::conditional_t<PointwiseGivesBool(kOp), bool, In>;
  using Params = PointwiseParams;
  static Out Apply(In x, const PointwiseParams& p) {
    const auto r = ApplyPointwise<kOp, typename E::Compute>(E::Load(x), p);
    if constexpr (PointwiseGivesBool(kOp)) {
      return r;
    } else {
      return E::Store(r);
    }
  }
};

template <class T>
struct WhereFn {
  using S = typename ValueElem<T>::Storage;
  using Out = S;
  using Ins = std::tuple<bool, S, S>;
  using Params = PointwiseParams;
  static S Apply(bool c, S a, S b, const PointwiseParams&) { return c ? a : b; }
};

template <PointwiseOp kOp>
void PointwiseKernel(const KernelContext& ctx) {
  PointwiseParams p;
  CheckPointwiseArgs(kOp, ctx, &p);
  const TensorArg& out = ctx.outputs[0];
  const TensorArg* in = ctx.inputs.data();
  const DType dtype = in[kOp == PointwiseOp::kWhere ? 1 : 0].dtype;
  VisitDType<float16, bfloat16>(dtype, PointwiseOpName(kOp), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!PointwiseTakes<kOp, T>()) {
      throw InvalidArgument(std::string(PointwiseOpName(kOp)) + ": no CPU kernel for dtype " +
                            to_string(dtype));
    } else if constexpr (kOp == PointwiseOp::kWhere) {
      MapElementsN<WhereFn<T>>(out, p, in[0], in[1], in[2]);
    } else if constexpr (PointwiseArity(kOp) == 2) {
      MapElementsN<BinaryFn<kOp, T>>(out, p, in[0], in[1]);
    } else {
      MapElements<UnaryFn<kOp, T>>(out, in[0], p);
    }
  });
}

template <PointwiseOp kOp>
void CheckPointwise(const KernelContext& ctx) {
  PointwiseParams p;
  CheckPointwiseArgs(kOp, ctx, &p);
}

#define OFL_POINTWISE_KERNEL(name, op)                                                    \
  void op##Kernel(const KernelContext& ctx) { PointwiseKernel<PointwiseOp::k##op>(ctx); } \
  void op##Check(const KernelContext& ctx) { CheckPointwise<PointwiseOp::k##op>(ctx); }   \
  OFL_REGISTER_CPU_KERNEL(name, op##Kernel, op##Check)

OFL_POINTWISE_KERNEL("eq", Eq);
OFL_POINTWISE_KERNEL("ne", Ne);
OFL_POINTWISE_KERNEL("lt", Lt);
OFL_POINTWISE_KERNEL("le", Le);
OFL_POINTWISE_KERNEL("gt", Gt);
OFL_POINTWISE_KERNEL("ge", Ge);
OFL_POINTWISE_KERNEL("logical_and", LogicalAnd);
OFL_POINTWISE_KERNEL("logical_or", LogicalOr);
OFL_POINTWISE_KERNEL("logical_xor", LogicalXor);
OFL_POINTWISE_KERNEL("logical_not", LogicalNot);
OFL_POINTWISE_KERNEL("maximum", Maximum);
OFL_POINTWISE_KERNEL("minimum", Minimum);
OFL_POINTWISE_KERNEL("pow", Pow);
OFL_POINTWISE_KERNEL("bitwise_and", BitwiseAnd);
OFL_POINTWISE_KERNEL("bitwise_or", BitwiseOr);
OFL_POINTWISE_KERNEL("bitwise_xor", BitwiseXor);
OFL_POINTWISE_KERNEL("bitwise_not", BitwiseNot);
OFL_POINTWISE_KERNEL("clamp", Clamp);
OFL_POINTWISE_KERNEL("clamp_min", ClampMin);
OFL_POINTWISE_KERNEL("clamp_max", ClampMax);
OFL_POINTWISE_KERNEL("where", Where);

}  // namespace
}  // namespace ofl::kernels::cpu
