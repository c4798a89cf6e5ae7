// narrow(x, dim, start, length): attributes dim, start, length (ints; negative dim and start wrap).
// A view (ops/array_ops.h InferNarrow). Local tensors only. Gradient: zeros of x's shape with the
// narrowed slice filled from g.
#include <string>
#include <utility>
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
  op.attrs = {{"dim", AttrType::kInt}, {"start", AttrType::kInt}, {"length", AttrType::kInt}};
  ViewForm view;
  view.geometry = [](const Shape& shape, const Strides& stride, DType, const Attrs& attrs) {
    return std::optional<ViewGeometry>(InferNarrow(
        shape, stride, attrs.get_int("dim"), attrs.get_int("start"), attrs.get_int("length")));
  };
  op.form = std::move(view);
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const ArgInfo& x = ctx.input_info[0];
    Tensor dx = zeros(x.shape, x.dtype, x.device);
    dx.narrow(ctx.attrs.get_int("dim"), ctx.attrs.get_int("start"), ctx.attrs.get_int("length"))
        .copy_(g[0]);
    return std::vector<Tensor>{dx};
  };
  return op;
}
OFL_REGISTER_OP(MakeNarrowOp);
}  // namespace
}  // namespace ofl::ops
