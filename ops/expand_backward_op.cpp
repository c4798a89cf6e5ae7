// expand_backward(dy, input_shape): attrs are input_shape. It is linear, and the adjoint of expand:
// its gradient is gg expanded to dy's shape.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeExpandBackwardOp() {
  OpSchema op;
  op.name = "expand_backward";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].expand(ctx.input_info[0].shape.vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeExpandBackwardOp);
}  // namespace
}  // namespace ofl::ops
