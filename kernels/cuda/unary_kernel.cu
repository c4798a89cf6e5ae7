// The CUDA elementwise-unary kernels (kernels/unary_ops.h): out[idx] = f(in[idx]) over strided
// views of one shape, by the one-input loop of map_kernel.h, with the math of one element shared
// with the CPU kernels. Floats compute in their own type, float16 and bfloat16 in float (rounded
// once to the output); integers (neg, abs, sign, relu) in their own type, wrapping as two's
// complement.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/map_kernel.h"
#include "kernels/kernel.h"
#include "kernels/kernel_checks.h"
#include "kernels/unary_ops.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

template <UnaryOp kOp, class T>
struct FloatFn {
  using Out = T;
  using In = T;
  using Params = UnaryParams;
  __device__ static T Apply(T x, const UnaryParams& p) {
    using N = Elem<T>;
    return N::Store(ApplyFloat<kOp, typename N::Compute>(N::Load(x), p));
  }
};

template <UnaryOp kOp, class T>
struct IntegerFn {
  using Out = T;
  using In = T;
  using Params = UnaryParams;
  __device__ static T Apply(T x, const UnaryParams&) {
    return ApplyInteger<kOp, T, typename Elem<T>::Compute>(x);
  }
};

template <UnaryOp kOp>
void Compute(const KernelContext& ctx, const UnaryParams& p) {
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  const char* name = UnaryOpName(kOp);
  switch (in.dtype) {
    case DType::kFloat32:
      return LaunchMap<FloatFn<kOp, float>>(out, in, p, stream, device, name);
    case DType::kFloat64:
      return LaunchMap<FloatFn<kOp, double>>(out, in, p, stream, device, name);
    case DType::kFloat16:
      return LaunchMap<FloatFn<kOp, Half>>(out, in, p, stream, device, name);
    case DType::kBFloat16:
      return LaunchMap<FloatFn<kOp, BHalf>>(out, in, p, stream, device, name);
    case DType::kUInt8:
      if constexpr (UnaryTakesIntegers(kOp)) {
        return LaunchMap<IntegerFn<kOp, uint8_t>>(out, in, p, stream, device, name);
      }
      break;
    case DType::kInt8:
      if constexpr (UnaryTakesIntegers(kOp)) {
        return LaunchMap<IntegerFn<kOp, int8_t>>(out, in, p, stream, device, name);
      }
      break;
    case DType::kInt16:
      if constexpr (UnaryTakesIntegers(kOp)) {
        return LaunchMap<IntegerFn<kOp, int16_t>>(out, in, p, stream, device, name);
      }
      break;
    case DType::kInt32:
      if constexpr (UnaryTakesIntegers(kOp)) {
        return LaunchMap<IntegerFn<kOp, int32_t>>(out, in, p, stream, device, name);
      }
      break;
    case DType::kInt64:
      if constexpr (UnaryTakesIntegers(kOp)) {
        return LaunchMap<IntegerFn<kOp, int64_t>>(out, in, p, stream, device, name);
      }
      break;
    case DType::kBool:
      break;
  }
  // CheckUnaryArgs refused every other dtype.
  throw InvalidArgument(Where(name, device) + ": no kernel for dtype " + to_string(in.dtype));
}

template <UnaryOp kOp>
void UnaryKernel(const KernelContext& ctx) {
  UnaryParams p;
  const UnaryOp op = CheckUnaryArgs(kOp, ctx, &p);
  if constexpr (kOp == UnaryOp::kGelu) {
    if (op == UnaryOp::kGeluTanh) return Compute<UnaryOp::kGeluTanh>(ctx, p);
  }
  Compute<kOp>(ctx, p);
}

#define OFL_CUDA_UNARY_KERNEL(name, op)                                           \
  void op##Kernel(const KernelContext& ctx) { UnaryKernel<UnaryOp::k##op>(ctx); } \
  OFL_REGISTER_CUDA_KERNEL(name, op##Kernel)

OFL_CUDA_UNARY_KERNEL("neg", Neg);
OFL_CUDA_UNARY_KERNEL("abs", Abs);
OFL_CUDA_UNARY_KERNEL("sign", Sign);
OFL_CUDA_UNARY_KERNEL("relu", Relu);
OFL_CUDA_UNARY_KERNEL("exp", Exp);
OFL_CUDA_UNARY_KERNEL("log", Log);
OFL_CUDA_UNARY_KERNEL("sqrt", Sqrt);
OFL_CUDA_UNARY_KERNEL("rsqrt", Rsqrt);
OFL_CUDA_UNARY_KERNEL("sin", Sin);
OFL_CUDA_UNARY_KERNEL("cos", Cos);
OFL_CUDA_UNARY_KERNEL("tanh", Tanh);
OFL_CUDA_UNARY_KERNEL("sigmoid", Sigmoid);
OFL_CUDA_UNARY_KERNEL("erf", Erf);
OFL_CUDA_UNARY_KERNEL("silu", Silu);
OFL_CUDA_UNARY_KERNEL("gelu", Gelu);
OFL_CUDA_UNARY_KERNEL("pow_scalar", Pow);

}  // namespace
}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
