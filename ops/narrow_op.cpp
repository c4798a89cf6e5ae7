// narrow(x, dim, start, length): attrs {dim, start, length}; a view. Gradient: zeros of x's shape
// with the narrowed slice filled from g.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeNarrowOp() {
  OpSchema op;
  op.name = "narrow";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const ArgInfo& x = ctx.input_info[0];
    Tensor dx = zeros(x.shape, x.dtype, x.device);
    dx.narrow(ctx.attrs[0], ctx.attrs[1], ctx.attrs[2]).copy_(g[0]);
    return std::vector<Tensor>{dx};
  };
  return op;
}
OFL_REGISTER_OP(MakeNarrowOp);
}  // namespace
}  // namespace ofl::ops
