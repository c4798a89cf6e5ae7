// expand(x, sizes): a view (ops/array_ops.h InferExpand; functional.h). Gradient: one reduce of g
// over the broadcast dims (expand_backward), never a materialised copy.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeExpandOp() {
  OpSchema op;
  op.name = "expand";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{expand_backward(g[0], ctx.input_info[0].shape)};
  };
  return op;
}
OFL_REGISTER_OP(MakeExpandOp);
}  // namespace
}  // namespace ofl::ops
