// narrow(x, dim, start, length): attrs {dim, start, length} (negative dim and start wrap). A view
// (ops/array_ops.h InferNarrow). Local tensors only. Gradient: zeros of x's shape with the narrowed
// slice filled from g.
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeNarrowOp() {
  OpSchema op;
  op.name = "narrow";
  op.view = [](const Shape& shape, const Strides& stride, DType,
               const std::vector<int64_t>& attrs) {
    if (attrs.size() != 3) {
      throw InvalidArgument("narrow: attrs must be {dim, start, length}; got " +
                            std::to_string(attrs.size()) + " attrs");
    }
    return std::optional<ViewGeometry>(InferNarrow(shape, stride, attrs[0], attrs[1], attrs[2]));
  };
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
