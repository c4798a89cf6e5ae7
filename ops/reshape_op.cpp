// reshape(x, shape): a view where the strides allow, else a copy (ops/array_ops.h InferReshape).
// Gradient: g reshaped to x's shape.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeReshapeOp() {
  OpSchema op;
  op.name = "reshape";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].reshape(ctx.input_info[0].shape.vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeReshapeOp);
}  // namespace
}  // namespace ofl::ops
