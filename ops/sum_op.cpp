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

namespace ofl::ops {
namespace {

// Which dims of an ndim-dim input the call sums.
std::vector<bool> SummedDims(int ndim, const Attrs& attrs) {
  const IntList dims = attrs.get_ints("dims");
  std::vector<bool> summed(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    const int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
    if (d < lo || d > hi) {
      throw InvalidArgument("sum: dim " + std::to_string(d) + " is out of range for a " +
                            std::to_string(ndim) + "-dim tensor (expected " + std::to_string(lo) +
                            " to " + std::to_string(hi) + ")");
    }
    if (ndim == 0) continue;  // a 0-dim tensor's dim 0 / -1 is the tensor itself
    if (d < 0) d += ndim;
    if (summed[d]) {
      throw InvalidArgument("sum: dim " + std::to_string(d) + " appears more than once in dims");
    }
    summed[d] = true;
  }
  return summed;
}

Shape KeepdimShape(const Shape& in, const std::vector<bool>& summed) {
  std::vector<int64_t> out(in.begin(), in.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (summed[i]) out[i] = 1;
  }
  return Shape(out);
}

OpSchema MakeSumOp() {
  OpSchema op;
  op.name = "sum";
  op.attrs = {{"dims", AttrType::kInts}, {"keepdim", AttrType::kBool}};
  op.infer1 = [](const TensorMeta& x, const Attrs& attrs) {
    CheckDType("sum", x.dtype);
    if (x.dtype == DType::kBool) {
      throw InvalidArgument("sum: dtype bool is not supported");
    }
    const std::vector<bool> summed = SummedDims(x.shape.ndim(), attrs);
    if (attrs.get_bool("keepdim")) return TensorMeta{KeepdimShape(x.shape, summed), x.dtype};
    std::vector<int64_t> out;
    for (int i = 0; i < x.shape.ndim(); ++i) {
      if (!summed[i]) out.push_back(x.shape[i]);
    }
    return TensorMeta{Shape(out), x.dtype};
  };
  KernelForm kernel{"reduce_sum_to"};
  kernel.output_shape = [](const TensorMeta& x, const Attrs& attrs) {
    return KeepdimShape(x.shape, SummedDims(x.shape.ndim(), attrs));
  };
  op.form = std::move(kernel);
  op.input_cast = InputCast::kIntToInt64;  // as torch.sum: integers and bool sum in int64
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Shape& in = ctx.input_info[0].shape;
    const Shape keep = KeepdimShape(in, SummedDims(in.ndim(), ctx.attrs));
    return std::vector<Tensor>{g[0].reshape(keep.vec()).expand(in.vec())};
  };
  return op;
}
OFL_REGISTER_OP(MakeSumOp);

}  // namespace
}  // namespace ofl::ops
