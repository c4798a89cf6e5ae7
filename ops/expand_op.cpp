// expand(x, sizes): attribute sizes (int list; -1 keeps a dim). A view: broadcast and new dims get
// stride 0 (ops/array_ops.h InferExpand); OFL_DISABLE_VIEW=1 makes it a copy. Global: a split on a
// kept dim moves with it, broadcast and partial_sum pass (expand is linear); each rank expands its
// shard to the sizes with the split dim at the shard's size. Gradient: one reduce of g over the
// broadcast dims (expand_backward), never a materialised copy.
#include <utility>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
OpSchema MakeExpandOp() {
  OpSchema op;
  op.name = "expand";
  op.attrs = {{"sizes", AttrType::kInts}};
  ViewForm view;
  view.geometry = [](const Shape& shape, const Strides& stride, DType dtype, const Attrs& attrs) {
    return std::optional<ViewGeometry>(
        InferExpand(shape, stride, attrs.get_ints("sizes"), element_size(dtype)));
  };
  view.copy_when_views_disabled = true;
  op.form = std::move(view);
  op.sbp = [](const GlobalCall& c) {
    return std::optional<Sbp>(InferExpandSbp(c.logical_in, c.in_sbp, c.logical_out));
  };
  op.local_attrs = [](const GlobalCall& c, const Sbp&, const Shape& physical_in, const Shape&) {
    return Attrs(*c.attrs.schema(),
                 PhysicalExpandSizes(c.logical_in, c.in_sbp, c.logical_out, physical_in));
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{expand_backward(g[0], ctx.input_info[0].shape)};
  };
  return op;
}
OFL_REGISTER_OP(MakeExpandOp);
}  // namespace
}  // namespace ofl::ops
