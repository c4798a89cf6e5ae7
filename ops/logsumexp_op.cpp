// logsumexp(x, dims, keepdim) = log(sum(exp(x))) over dims (none: every dim), computed stably:
// m + log(sum(exp(x - m))) with m the max over the dims (0 where that is infinite, so all -inf
// gives -inf and a +inf gives +inf, as PyTorch's). An integer input is cast to float32 first.
// Made of amax, exp, sum and log. Gradient: g * exp(x - logsumexp(x)), the softmax of x.
#include <cmath>
#include <limits>
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
OpSchema MakeLogsumexpOp() {
  OpSchema op;
  op.name = "logsumexp";
  op.attrs = {{"dims", AttrType::kInts}, {"keepdim", AttrType::kBool}};
  op.input_cast = InputCast::kIntToFloat;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& x = in[0];
    CheckDType("logsumexp", x.dtype);
    if (!is_floating_point(x.dtype)) {
      throw InvalidArgument("logsumexp: dtype " + to_string(x.dtype) +
                            " is not supported (a float dtype is)");
    }
    const std::vector<bool> reduced =
        ReducedDims("logsumexp", x.shape.ndim(), attrs.get_ints("dims"));
    return std::vector<TensorMeta>{TensorMeta{
        attrs.get_bool("keepdim") ? KeepdimShape(x.shape, reduced) : DroppedShape(x.shape, reduced),
        x.dtype}};
  };
  op.form = ComposeForm{[](const std::vector<Tensor>& in, const Attrs& attrs) {
    const Tensor& x = in[0];
    const std::vector<int64_t> dims = attrs.get_ints("dims").vec();
    const std::vector<bool> reduced = ReducedDims("logsumexp", x.dim(), attrs.get_ints("dims"));
    Tensor y;
    if (x.numel() == 0) {  // log(0): -inf, as PyTorch's
      y = log(x.sum(dims, /*keepdim=*/true));
    } else {
      Tensor m = amax(x, dims, /*keepdim=*/true);
      m = where(abs(m) == std::numeric_limits<double>::infinity(),
                zeros(Shape(std::vector<int64_t>{}), m.dtype(), m.device()), m);
      y = log(exp(x - m).sum(dims, /*keepdim=*/true)) + m;
    }
    if (!attrs.get_bool("keepdim")) y = y.reshape(DroppedShape(x.shape(), reduced).vec());
    return std::vector<Tensor>{y};
  }};
  op.save_inputs = Bit(0);
  op.save_outputs = Bit(0);
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Shape& shape = ctx.input_info[0].shape;
    const std::vector<bool> reduced =
        ReducedDims("logsumexp", shape.ndim(), ctx.attrs.get_ints("dims"));
    const std::vector<int64_t> keep = KeepdimShape(shape, reduced).vec();
    return std::vector<Tensor>{g[0].reshape(keep) *
                               exp(ctx.inputs[0] - ctx.outputs[0].reshape(keep))};
  };
  // Global: a split on a reduced dim is boxed to broadcast first; partial_sum is reduced first.
  op.sbp = [name = "logsumexp"](const GlobalCall& c) {
    return InferReduceSbp(c.in_sbp,
                          ReducedDims(name, c.logical_in.ndim(), c.attrs.get_ints("dims")),
                          c.attrs.get_bool("keepdim"), /*split_gives_partial=*/false,
                          /*partial_passes=*/false);
  };
  return op;
}
OFL_REGISTER_OP(MakeLogsumexpOp);
}  // namespace
}  // namespace ofl::ops
