// mean(x, dims, keepdim): the sum over dims (none: every dim) divided by the count of summed
// elements (0 of them give NaN, as PyTorch's); floating dtypes only, as torch.mean (an integer
// input is refused: cast it first). Made of sum and a division. Gradient: g spread evenly over the
// summed elements, g / count seen with the summed dims as 1s and expanded back to x's shape.
#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
OpSchema MakeMeanOp() {
  OpSchema op;
  op.name = "mean";
  op.attrs = {{"dims", AttrType::kInts}, {"keepdim", AttrType::kBool}};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& x = in[0];
    CheckDType("mean", x.dtype);
    if (!is_floating_point(x.dtype)) {
      throw InvalidArgument("mean: dtype " + to_string(x.dtype) +
                            " is not supported (a float dtype is: cast the tensor first, e.g. "
                            ".float())");
    }
    const std::vector<bool> reduced = ReducedDims("mean", x.shape.ndim(), attrs.get_ints("dims"));
    return std::vector<TensorMeta>{TensorMeta{
        attrs.get_bool("keepdim") ? KeepdimShape(x.shape, reduced) : DroppedShape(x.shape, reduced),
        x.dtype}};
  };
  op.form = ComposeForm{[](const std::vector<Tensor>& in, const Attrs& attrs) {
    const std::vector<int64_t> dims = attrs.get_ints("dims").vec();
    const std::vector<bool> reduced = ReducedDims("mean", in[0].dim(), attrs.get_ints("dims"));
    const int64_t n = ReducedCount(in[0].shape(), reduced);
    return std::vector<Tensor>{in[0].sum(dims, attrs.get_bool("keepdim")) / static_cast<double>(n)};
  }};
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Shape& shape = ctx.input_info[0].shape;
    const std::vector<bool> reduced = ReducedDims("mean", shape.ndim(), ctx.attrs.get_ints("dims"));
    const int64_t n = ReducedCount(shape, reduced);
    return std::vector<Tensor>{(g[0] / static_cast<double>(n))
                                   .reshape(KeepdimShape(shape, reduced).vec())
                                   .expand(shape.vec())};
  };
  // Global: a split on a reduced dim is boxed to broadcast first; partial_sum stays (linear).
  op.sbp = [name = "mean"](const GlobalCall& c) {
    return InferReduceSbp(c.in_sbp,
                          ReducedDims(name, c.logical_in.ndim(), c.attrs.get_ints("dims")),
                          c.attrs.get_bool("keepdim"), /*split_gives_partial=*/false,
                          /*partial_passes=*/true);
  };
  return op;
}
OFL_REGISTER_OP(MakeMeanOp);
}  // namespace
}  // namespace ofl::ops
