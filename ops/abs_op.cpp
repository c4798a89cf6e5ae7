// abs(x) = |x| (the most negative integer is itself, as PyTorch's). Gradient: g * sign(x)
// (0 at x = 0).
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeAbsOp() {
  return MakeUnaryOp("abs", UnaryDTypes::kNumeric, Bit(0), 0,
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       return OneGrad(g[0] * sign(ctx.inputs[0]));
                     });
}
OFL_REGISTER_OP(MakeAbsOp);
}  // namespace
}  // namespace ofl::ops
