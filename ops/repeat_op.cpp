// repeat(x, repeats): attrs are the repeats (ops/array_ops.h InferRepeat). Gradient: the sum of g's
// tiles (repeat_backward).
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeRepeatOp() {
  OpSchema op;
  op.name = "repeat";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{repeat_backward(g[0], ctx.input_info[0].shape, ctx.attrs)};
  };
  return op;
}
OFL_REGISTER_OP(MakeRepeatOp);
}  // namespace
}  // namespace ofl::ops
