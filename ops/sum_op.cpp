// sum(x, dims, keepdim): attributes dims (int list) and keepdim (bool); the dims wrap when
// negative, a duplicate is an error, and no dims sums every element. An integer or bool x is
// summed in int64 (cast at the entry), as torch.sum. Computed by the
// "reduce_sum_to" kernel into the keepdim shape (the output viewed so), with its accuracy rules.
// Gradient: g seen with the summed dims as 1s and expanded back to x's shape (a view, no copy).
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {

OpSchema MakeSumOp() {
  OpSchema op;
  op.name = "sum";
  op.attrs = {{"dims", AttrType::kInts}, {"keepdim", AttrType::kBool}};
  op.infer1 = [](const TensorMeta& x, const Attrs& attrs) {
    CheckDType("sum", x.dtype);
    if (x.dtype == DType::kBool) {
      throw InvalidArgument("sum: dtype bool is not supported");
    }
    const std::vector<bool> summed = ReducedDims("sum", x.shape.ndim(), attrs.get_ints("dims"));
    return TensorMeta{
        attrs.get_bool("keepdim") ? KeepdimShape(x.shape, summed) : DroppedShape(x.shape, summed),
        x.dtype};
  };
  KernelForm kernel{"reduce_sum_to"};
  kernel.output_shape = [](const TensorMeta& x, const Attrs& attrs) {
    return KeepdimShape(x.shape, ReducedDims("sum", x.shape.ndim(), attrs.get_ints("dims")));
  };
  op.form = std::move(kernel);
  op.input_cast = InputCast::kIntToInt64;  // as torch.sum: integers and bool sum in int64
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Shape& in = ctx.input_info[0].shape;
    const Shape keep = KeepdimShape(in, ReducedDims("sum", in.ndim(), ctx.attrs.get_ints("dims")));
    return std::vector<Tensor>{g[0].reshape(keep.vec()).expand(in.vec())};
  };
  // Global: a split on a summed dim gives partial sums; partial_sum stays (sum is linear).
  op.sbp = [](const GlobalCall& c) {
    return InferReduceSbp(c.in_sbp,
                          ReducedDims("sum", c.logical_in.ndim(), c.attrs.get_ints("dims")),
                          c.attrs.get_bool("keepdim"), /*split_gives_partial=*/true,
                          /*partial_passes=*/true);
  };
  return op;
}
OFL_REGISTER_OP(MakeSumOp);

}  // namespace
}  // namespace ofl::ops
