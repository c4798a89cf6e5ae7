// The CPU elementwise-unary kernels (kernels/unary_ops.h): out[idx] = f(in[idx]) over strided
// views of one shape, by the one-input loop of elementwise_map.h. Each op is one instantiation
// of the same template per dtype; the math of one element is unary_ops.h's, shared with the CUDA
// kernels.
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/cpu/elem.h"
#include "kernels/cpu/elementwise_map.h"
#include "kernels/kernel_checks.h"
#include "kernels/register_kernel.h"
#include "kernels/unary_ops.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {
namespace {

template <UnaryOp kOp, class T>
struct FloatFn {
  using E = Elem<T>;
  using Out = typename E::Storage;
  using In = typename E::Storage;
  using Params = UnaryParams;
  static Out Apply(In x, const UnaryParams& p) {
    return E::Store(ApplyFloat<kOp, typename E::Compute>(E::Load(x), p));
  }
};

template <UnaryOp kOp, class T>
struct IntegerFn {
  using Out = T;
  using In = T;
  using Params = UnaryParams;
  static T Apply(T x, const UnaryParams&) {
    return ApplyInteger<kOp, T, typename Elem<T>::Compute>(x);
  }
};

template <UnaryOp kOp>
void Compute(const TensorArg& out, const TensorArg& in, const UnaryParams& p) {
  switch (in.dtype) {
    case DType::kFloat32:
      return MapElements<FloatFn<kOp, float>>(out, in, p);
    case DType::kFloat64:
      return MapElements<FloatFn<kOp, double>>(out, in, p);
    case DType::kFloat16:
      return MapElements<FloatFn<kOp, float16>>(out, in, p);
    case DType::kBFloat16:
      return MapElements<FloatFn<kOp, bfloat16>>(out, in, p);
    case DType::kUInt8:
      if constexpr (UnaryTakesIntegers(kOp))
        return MapElements<IntegerFn<kOp, uint8_t>>(out, in, p);
      break;
    case DType::kInt8:
      if constexpr (UnaryTakesIntegers(kOp)) return MapElements<IntegerFn<kOp, int8_t>>(out, in, p);
      break;
    case DType::kInt16:
      if constexpr (UnaryTakesIntegers(kOp))
        return MapElements<IntegerFn<kOp, int16_t>>(out, in, p);
      break;
    case DType::kInt32:
      if constexpr (UnaryTakesIntegers(kOp))
        return MapElements<IntegerFn<kOp, int32_t>>(out, in, p);
      break;
    case DType::kInt64:
      if constexpr (UnaryTakesIntegers(kOp))
        return MapElements<IntegerFn<kOp, int64_t>>(out, in, p);
      break;
    case DType::kBool:
      break;
  }
  // CheckUnaryArgs refused every other dtype.
  throw InvalidArgument(std::string(UnaryOpName(kOp)) + ": no CPU kernel for dtype " +
                        to_string(in.dtype));
}

template <UnaryOp kOp>
void UnaryKernel(const KernelContext& ctx) {
  UnaryParams p;
  const UnaryOp op = CheckUnaryArgs(kOp, ctx, &p);
  if constexpr (kOp == UnaryOp::kGelu) {
    if (op == UnaryOp::kGeluTanh)
      return Compute<UnaryOp::kGeluTanh>(ctx.outputs[0], ctx.inputs[0], p);
  }
  Compute<kOp>(ctx.outputs[0], ctx.inputs[0], p);
}

template <UnaryOp kOp>
void CheckUnary(const KernelContext& ctx) {
  UnaryParams p;
  CheckUnaryArgs(kOp, ctx, &p);
}

#define OFL_UNARY_KERNEL(name, op)                                                \
  void op##Kernel(const KernelContext& ctx) { UnaryKernel<UnaryOp::k##op>(ctx); } \
  void op##Check(const KernelContext& ctx) { CheckUnary<UnaryOp::k##op>(ctx); }   \
  OFL_REGISTER_CPU_KERNEL(name, op##Kernel, op##Check)

OFL_UNARY_KERNEL("neg", Neg);
OFL_UNARY_KERNEL("abs", Abs);
OFL_UNARY_KERNEL("sign", Sign);
OFL_UNARY_KERNEL("relu", Relu);
OFL_UNARY_KERNEL("exp", Exp);
OFL_UNARY_KERNEL("log", Log);
OFL_UNARY_KERNEL("sqrt", Sqrt);
OFL_UNARY_KERNEL("rsqrt", Rsqrt);
OFL_UNARY_KERNEL("sin", Sin);
OFL_UNARY_KERNEL("cos", Cos);
OFL_UNARY_KERNEL("tanh", Tanh);
OFL_UNARY_KERNEL("sigmoid", Sigmoid);
OFL_UNARY_KERNEL("erf", Erf);
OFL_UNARY_KERNEL("silu", Silu);
OFL_UNARY_KERNEL("gelu", Gelu);
OFL_UNARY_KERNEL("pow_scalar", Pow);

}  // namespace
}  // namespace ofl::kernels::cpu
