#include "ops/softmax_family.h"

#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/reduce_dims.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {

OpSchema SoftmaxOp(const char* name, bool is_log) {
  OpSchema op;
  op.name = name;
  op.attrs = {{"dim", AttrType::kInt}};
  op.form = KernelForm{};
  op.infer = [name](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& x = in[0];
    if (!is_floating_point(x.dtype)) {
      throw InvalidArgument(std::string(name) + ": dtype " + to_string(x.dtype) +
                            " is not supported (a float dtype is: cast the tensor first, e.g. "
                            ".float())");
    }
    WrapDim(name, attrs.get_int("dim"), x.shape.ndim());
    return std::vector<TensorMeta>{x};
  };
  op.save_outputs = Bit(0);
  op.backward = [name, is_log](const GradContext& ctx, const std::vector<Tensor>& g) {
    const int ndim = ctx.output_info[0].shape.ndim();
    // Along dim; a 0-dim tensor's one element is its whole row.
    const std::vector<int64_t> dims =
        ndim == 0 ? std::vector<int64_t>{}
                  : std::vector<int64_t>{WrapDim(name, ctx.attrs.get_int("dim"), ndim)};
    const Tensor& y = ctx.outputs[0];
    if (is_log) return std::vector<Tensor>{g[0] - y.exp() * g[0].sum(dims, /*keepdim=*/true)};
    return std::vector<Tensor>{y * (g[0] - (g[0] * y).sum(dims, /*keepdim=*/true))};
  };
  // Global: a split on any dim but the rows' passes; a split on it, or partial_sum, is boxed to
  // broadcast first.
  op.sbp = [name](const GlobalCall& c) {
    const int ndim = c.logical_in.ndim();
    std::vector<bool> row(static_cast<size_t>(ndim), false);
    if (ndim > 0) row[static_cast<size_t>(WrapDim(name, c.attrs.get_int("dim"), ndim))] = true;
    return InferReduceSbp(c.in_sbp, row, /*keepdim=*/true, /*split_gives_partial=*/false,
                          /*partial_passes=*/false);
  };
  return op;
}

}  // namespace ofl::ops
