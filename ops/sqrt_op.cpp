// sqrt(x). Gradient: g / (2 sqrt(x)), from the saved output.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeSqrtOp() {
  return MakeUnaryOp("sqrt", UnaryDTypes::kFloat, 0, Bit(0),
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       return OneGrad(g[0] / (ctx.outputs[0] * 2.0));
                     });
}
OFL_REGISTER_OP(MakeSqrtOp);
}  // namespace
}  // namespace ofl::ops
