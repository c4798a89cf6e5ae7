// sign(x): -1, 0 or 1 by x's sign (NaN stays NaN). Gradient: zeros.
// One of the elementwise-unary ops (ops/unary_op.h); written with public ops, the backward runs on
// every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakeSignOp() {
  return MakeUnaryOp(
      "sign", UnaryDTypes::kNumeric, 0, 0,
      [](const GradContext&, const std::vector<Tensor>& g) { return OneGrad(zeros_like(g[0])); });
}
OFL_REGISTER_OP(MakeSignOp);
}  // namespace
}  // namespace ofl::ops
