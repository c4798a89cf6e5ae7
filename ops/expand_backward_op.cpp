// expand_backward(dy, input_shape): attribute input_shape (shape). dy summed over the dims that
// expanding input_shape broadcast (ops/array_ops.h InferExpandBackward): one OpCall of
// "reduce_sum_to", whose output is seen as dy's rank with 1s on the summed dims. Global:
// InferExpandBackwardSbp (a split on a summed dim becomes partial_sum); each rank reduces its shard
// to its shard of the result. Gradient: it is linear, the adjoint of expand: gg expanded to dy's
// shape.
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
Shape InputShape(const TensorMeta& dy, const Attrs& attrs) {
  CheckGradientDType("expand_backward", dy.dtype);
  Shape input_shape = attrs.get_shape("input_shape");
  CheckShape("expand_backward", "input_shape", input_shape, element_size(dy.dtype));
  return input_shape;
}

OpSchema MakeExpandBackwardOp() {
  OpSchema op;
  op.name = "expand_backward";
  op.attrs = {{"input_shape", AttrType::kShape}};
  op.infer1 = [](const TensorMeta& dy, const Attrs& attrs) {
    Shape input_shape = InputShape(dy, attrs);
    (void)InferExpandBackward(dy.shape, input_shape);
    return TensorMeta{std::move(input_shape), dy.dtype};
  };
  KernelForm kernel{"reduce_sum_to"};
  kernel.output_shape = [](const TensorMeta& x, const Attrs& attrs) {
    return InferExpandBackward(x.shape, attrs.get_shape("input_shape"));
  };
  op.form = std::move(kernel);
  op.sbp = [](const GlobalCall& c) {
    return std::optional<Sbp>(InferExpandBackwardSbp(c.in_sbp, c.logical_in, c.logical_out));
  };
  op.local_attrs = [](const GlobalCall& c, const Sbp&, const Shape&, const Shape& physical_out) {
    return Attrs(*c.attrs.schema(), physical_out);
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].expand(ctx.input_info[0].shape.vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeExpandBackwardOp);
}  // namespace
}  // namespace ofl::ops
