// exp(x) = e**x. Gradient: g * exp(x), the saved output.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeExpOp() {
  return MakeUnaryOp("exp", UnaryDTypes::kFloat, 0, Bit(0),
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       return OneGrad(g[0] * ctx.outputs[0]);
                     });
}
OFL_REGISTER_OP(MakeExpOp);
}  // namespace
}  // namespace ofl::ops
