// erf(x), the error function. Gradient: g * 2 / sqrt(pi) * e**(-x**2).
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeErfOp() {
  return MakeUnaryOp("erf", UnaryDTypes::kFloat, Bit(0), 0,
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       const Tensor& x = ctx.inputs[0];
                       return OneGrad(g[0] * (exp(x * x * -1.0) * 1.1283791670955125739));
                     });
}
OFL_REGISTER_OP(MakeErfOp);
}  // namespace
}  // namespace ofl::ops
