// relu(x) = max(x, 0) (NaN stays NaN). Gradient: g where the output is positive, else 0:
// g * sign(relu(x)), from the saved output.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeReluOp() {
  return MakeUnaryOp("relu", UnaryDTypes::kNumeric, 0, Bit(0),
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       return OneGrad(g[0] * sign(ctx.outputs[0]));
                     });
}
OFL_REGISTER_OP(MakeReluOp);
}  // namespace
}  // namespace ofl::ops
