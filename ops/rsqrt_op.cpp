// rsqrt(x) = 1 / sqrt(x). Gradient: -g * rsqrt(x)**3 / 2, from the saved output y:
// g * y * y * y * -0.5.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeRsqrtOp() {
  return MakeUnaryOp("rsqrt", UnaryDTypes::kFloat, 0, Bit(0),
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       const Tensor& y = ctx.outputs[0];
                       return OneGrad(g[0] * (y * y * y * -0.5));
                     });
}
OFL_REGISTER_OP(MakeRsqrtOp);
}  // namespace
}  // namespace ofl::ops
