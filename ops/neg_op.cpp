// neg(x) = -x (integers wrap as two's complement). Gradient: -g.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeNegOp() {
  OpSchema op = MakeUnaryOp(
      "neg", UnaryDTypes::kNumeric, 0, 0,
      [](const GradContext&, const std::vector<Tensor>& g) { return OneGrad(neg(g[0])); });
  // Linear: -P is P.
  op.sbp = [](const GlobalCall& c) { return ElementwiseUnarySbp(c.in_sbp, PartialInputs::kAll); };
  return op;
}
OFL_REGISTER_OP(MakeNegOp);
}  // namespace
}  // namespace ofl::ops
