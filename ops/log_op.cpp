// log(x), the natural logarithm (-inf at 0, NaN below). Gradient: g / x.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeLogOp() {
  return MakeUnaryOp("log", UnaryDTypes::kFloat, Bit(0), 0,
                     [](const GradContext& ctx, const std::vector<Tensor>& g) {
                       return OneGrad(g[0] / ctx.inputs[0]);
                     });
}
OFL_REGISTER_OP(MakeLogOp);
}  // namespace
}  // namespace ofl::ops
