// tanh(x). Gradient: g * (1 - tanh(x)**2), from the saved output.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeTanhOp() {
  return MakeUnaryOp("tanh", UnaryDTypes::kFloat, 0, Bit(0),
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       const Tensor& y = ctx.outputs[0];
                       return OneGrad(g[0] * (1.0 - y * y));
                     });
}
OFL_REGISTER_OP(MakeTanhOp);
}  // namespace
}  // namespace ofl::ops
