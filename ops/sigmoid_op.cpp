// sigmoid(x) = 1 / (1 + e**-x). Gradient: g * s * (1 - s), s the saved output.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeSigmoidOp() {
  return MakeUnaryOp("sigmoid", UnaryDTypes::kFloat, 0, Bit(0),
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       const Tensor& s = ctx.outputs[0];
                       return OneGrad(g[0] * (s * (1.0 - s)));
                     });
}
OFL_REGISTER_OP(MakeSigmoidOp);
}  // namespace
}  // namespace ofl::ops
