// repeat_backward(dy, input_shape, repeats): attrs are the repeats. It is linear, and the adjoint
// of repeat: its gradient is gg repeated.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeRepeatBackwardOp() {
  OpSchema op;
  op.name = "repeat_backward";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].repeat(ctx.attrs)};
  };
  return op;
}
OFL_REGISTER_OP(MakeRepeatBackwardOp);
}  // namespace
}  // namespace ofl::ops
