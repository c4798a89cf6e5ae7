// gather(x, dim, index): out[p] = x[p with its dim coordinate replaced by index[p]], as
// torch.gather (kernels/gather.h). The index is int64 with x's number of dims, each dim but `dim`
// at most x's; the output has the index's shape. Gradient: zeros of x's shape with g added at the
// gathered places (scatter_add), so an element gathered twice gets both; the index gets none.
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/grad_util.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
OpSchema MakeGatherOp() {
  OpSchema op;
  op.name = "gather";
  op.num_inputs = 2;
  op.attrs = {{"dim", AttrType::kInt}};
  op.form = KernelForm{};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& x = in[0];
    const TensorMeta& index = in[1];
    const int dim = WrapDim("gather", attrs.get_int("dim"), x.shape.ndim());
    if (index.dtype != DType::kInt64) {
      throw InvalidArgument("gather: index dtype " + to_string(index.dtype) + " is not int64");
    }
    if (index.shape.ndim() != x.shape.ndim()) {
      throw InvalidArgument("gather: index " + index.shape.str() + " and input " + x.shape.str() +
                            " must have the same number of dims");
    }
    for (int d = 0; d < x.shape.ndim(); ++d) {
      if (d != dim && index.shape[d] > x.shape[d]) {
        throw InvalidArgument("gather: index " + index.shape.str() + " is larger than input " +
                              x.shape.str() + " in dim " + std::to_string(d) + " (only dim " +
                              std::to_string(dim) + " may be)");
      }
    }
    return std::vector<TensorMeta>{TensorMeta{index.shape, x.dtype}};
  };
  op.save_inputs = Bit(1);
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const int64_t dim = ctx.attrs.get_int("dim");
    return std::vector<Tensor>{
        scatter_add(ZerosOfInput(ctx, 0, g[0].dtype()), dim, ctx.inputs[1], g[0]), Tensor()};
  };
  // Global: a split on a dim but `dim` where the input and index are of one size there passes;
  // the index split on any dim with the input broadcast (each rank holds what it gathers from).
  op.sbp_signature = [](const GlobalInputs& c) {
    const int ndim = c.logical_in[0].ndim();
    const int dim = WrapDim("gather", c.attrs.get_int("dim"), ndim);
    std::vector<SbpSignature> candidates;
    for (int d = 0; d < ndim; ++d) {
      if (d != dim && c.logical_in[0][d] == c.logical_in[1][d]) {
        candidates.push_back({{Sbp::split(d), Sbp::split(d)}, Sbp::split(d)});
      }
    }
    for (int d = 0; d < ndim; ++d) {
      candidates.push_back({{Sbp::broadcast(), Sbp::split(d)}, Sbp::split(d)});
    }
    candidates.push_back({{Sbp::broadcast(), Sbp::broadcast()}, Sbp::broadcast()});
    return CheapestSignature(c, std::move(candidates));
  };
  return op;
}
OFL_REGISTER_OP(MakeGatherOp);
}  // namespace
}  // namespace ofl::ops
