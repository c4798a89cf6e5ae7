// repeat(x, repeats): attribute repeats (int list) (ops/array_ops.h InferRepeat); one OpCall of the
// "repeat" kernel. Global: broadcast and partial_sum pass (repeat is linear), a split passes on a
// dim whose repeat is 1, else x is boxed to broadcast first (InferRepeatSbp); every rank repeats
// its shard by the same repeats. Gradient: the sum of g's tiles (repeat_backward).
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
OpSchema MakeRepeatOp() {
  OpSchema op;
  op.name = "repeat";
  op.attrs = {{"repeats", AttrType::kInts}};
  op.infer1 = [](const TensorMeta& x, const Attrs& attrs) {
    return TensorMeta{InferRepeat(x.shape, attrs.get_ints("repeats"), element_size(x.dtype)),
                      x.dtype};
  };
  op.sbp = [](const GlobalCall& c) {
    return InferRepeatSbp(c.logical_in, c.in_sbp, c.attrs.get_ints("repeats"));
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{
        repeat_backward(g[0], ctx.input_info[0].shape, ctx.attrs.get_ints("repeats").vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeRepeatOp);
}  // namespace
}  // namespace ofl::ops
