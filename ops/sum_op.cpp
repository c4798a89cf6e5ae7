// sum(x, dims, keepdim): attrs = {keepdim, dims...}; the dims wrap when negative, a duplicate is an
// error, and no dims (attrs = {keepdim}) sums every element. Computed by the "reduce_sum_to"
// kernel into the keepdim shape (the output viewed so), with its accuracy rules. Gradient: g seen
// with the summed dims as 1s and expanded back to x's shape (a view, no copy).
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {

// Which dims of an ndim-dim input the attrs sum.
std::vector<bool> SummedDims(int ndim, const std::vector<int64_t>& attrs) {
  if (attrs.empty() || (attrs[0] != 0 && attrs[0] != 1)) {
    throw InvalidArgument("sum: attrs must start with keepdim (0 or 1), then the dims; got " +
                          std::to_string(attrs.size()) + " attrs" +
                          (attrs.empty() ? "" : ", keepdim " + std::to_string(attrs[0])));
  }
  std::vector<bool> summed(static_cast<size_t>(ndim), attrs.size() == 1);
  if (attrs.size() == 1) return summed;
  for (size_t i = 1; i < attrs.size(); ++i) {
    int64_t d = attrs[i];
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
  op.kernel = "reduce_sum_to";
  op.infer1 = [](const TensorMeta& x, const std::vector<int64_t>& attrs) {
    CheckDType("sum", x.dtype);
    if (x.dtype == DType::kBool) {
      throw InvalidArgument("sum: dtype bool is not supported");
    }
    const std::vector<bool> summed = SummedDims(x.shape.ndim(), attrs);
    if (attrs[0] == 1) return TensorMeta{KeepdimShape(x.shape, summed), x.dtype};
    std::vector<int64_t> out;
    for (int i = 0; i < x.shape.ndim(); ++i) {
      if (!summed[i]) out.push_back(x.shape[i]);
    }
    return TensorMeta{Shape(out), x.dtype};
  };
  op.kernel_output_shape = [](const TensorMeta& x, const std::vector<int64_t>& attrs) {
    return KeepdimShape(x.shape, SummedDims(x.shape.ndim(), attrs));
  };
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
