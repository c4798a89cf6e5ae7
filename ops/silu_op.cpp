// silu(x) = x * sigmoid(x). Gradient: g * s * (1 + x * (1 - s)), s = sigmoid(x).
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeSiluOp() {
  return MakeUnaryOp("silu", UnaryDTypes::kFloat, Bit(0), 0,
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       const Tensor& x = ctx.inputs[0];
                       const Tensor s = sigmoid(x);
                       return OneGrad(g[0] * (s * (x * (1.0 - s) + 1.0)));
                     });
}
OFL_REGISTER_OP(MakeSiluOp);
}  // namespace
}  // namespace ofl::ops
