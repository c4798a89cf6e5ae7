// reshape(x, shape): attribute shape (int list, one -1 allowed; ops/array_ops.h InferReshape). A
// view where x's strides allow one, else a view of a contiguous copy. Global: broadcast and
// partial_sum pass, a split passes to the output dim that keeps its size and the product before it
// (InferReshapeSbp), else x is boxed to broadcast first; each rank reshapes its shard to its
// shard's shape. Gradient: g reshaped to x's shape.
#include <utility>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
OpSchema MakeReshapeOp() {
  OpSchema op;
  op.name = "reshape";
  op.attrs = {{"shape", AttrType::kInts}};
  ViewForm view;
  view.geometry = [](const Shape& shape, const Strides& stride, DType,
                     const Attrs& attrs) -> std::optional<ViewGeometry> {
    Shape out = InferReshape(shape, attrs.get_ints("shape"));
    std::optional<Strides> s = ReshapeStrides(shape, stride, out);
    if (!s) return std::nullopt;
    return ViewGeometry{std::move(out), std::move(*s), 0};
  };
  op.form = std::move(view);
  op.sbp = [](const GlobalCall& c) {
    return InferReshapeSbp(c.logical_in, c.in_sbp, c.logical_out);
  };
  op.local_attrs = [](const GlobalCall& c, const Sbp&, const Shape&, const Shape& physical_out) {
    return Attrs(*c.attrs.schema(), IntList(physical_out));
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].reshape(ctx.input_info[0].shape.vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeReshapeOp);
}  // namespace
}  // namespace ofl::ops
