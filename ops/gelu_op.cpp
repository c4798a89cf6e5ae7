// gelu(x, approximate): x * Phi(x), Phi the standard normal CDF (approximate="none"), or
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x**3))) (approximate="tanh"), as PyTorch's.
// Gradient: g * (Phi(x) + x phi(x)), phi the normal density; for "tanh", the derivative of the
// tanh form. Written with public ops, the backward runs on every device and is itself
// differentiable.
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kCubic = 0.044715;

// "none" or "tanh"; InvalidArgument naming the value otherwise.
bool TanhForm(const Attrs& attrs) {
  const std::string a = attrs.get_string("approximate");
  if (a != "none" && a != "tanh") {
    throw InvalidArgument("gelu: approximate is \"" + a + "\"; expected \"none\" or \"tanh\"");
  }
  return a == "tanh";
}

Tensor GeluGrad(const Tensor& g, const Tensor& x, bool tanh_form) {
  if (!tanh_form) {
    const Tensor cdf = (erf(x * kSqrtHalf) + 1.0) * 0.5;
    const Tensor pdf = exp(x * x * -0.5) * kInvSqrt2Pi;
    return g * (cdf + x * pdf);
  }
  const Tensor x2 = x * x;
  const Tensor t = tanh((x + x2 * x * kCubic) * kSqrt2OverPi);
  // d/dx 0.5 x (1 + t) = 0.5 (1 + t) + 0.5 x (1 - t**2) sqrt(2 / pi) (1 + 3 * 0.044715 x**2)
  const Tensor inner = (x2 * (3 * kCubic) + 1.0) * kSqrt2OverPi;
  return g * ((t + 1.0) * 0.5 + x * (1.0 - t * t) * inner * 0.5);
}

OpSchema MakeGeluOp() {
  OpSchema op = MakeUnaryOp("gelu", UnaryDTypes::kFloat, Bit(0), 0,
                            [](const GradContext& ctx, const std::vector<Tensor>& g) {
                              return OneGrad(GeluGrad(g[0], ctx.inputs[0], TanhForm(ctx.attrs)));
                            });
  op.attrs = {{"approximate", AttrType::kString}};
  const auto infer = op.infer1;
  op.infer1 = [infer](const TensorMeta& x, const Attrs& attrs) {
    TanhForm(attrs);
    return infer(x, attrs);
  };
  return op;
}
OFL_REGISTER_OP(MakeGeluOp);

}  // namespace
}  // namespace ofl::ops
