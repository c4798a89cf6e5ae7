// scatter_add(self, dim, index, src): self with each src element added into the element its index
// value picks along dim, as Tensor.scatter_add (kernels/gather.h; the sums in a fixed order on
// every device). The index is int64 with self's number of dims, each dim but `dim` at most
// self's, and at most src's in every dim. Gradients: g for self; g gathered at the index for src
// (whose shape must then be the index's, as PyTorch's gradient needs too).
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {
OpSchema MakeScatterAddOp() {
  OpSchema op;
  op.name = "scatter_add";
  op.num_inputs = 3;
  op.attrs = {{"dim", AttrType::kInt}};
  op.form = KernelForm{};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs& attrs) {
    const TensorMeta& self = in[0];
    const TensorMeta& index = in[1];
    const TensorMeta& src = in[2];
    const int dim = WrapDim("scatter_add", attrs.get_int("dim"), self.shape.ndim());
    if (index.dtype != DType::kInt64) {
      throw InvalidArgument("scatter_add: index dtype " + to_string(index.dtype) + " is not int64");
    }
    if (src.dtype != self.dtype) {
      throw InvalidArgument("scatter_add: src dtype " + to_string(src.dtype) +
                            " differs from self's " + to_string(self.dtype));
    }
    if (self.dtype == DType::kBool) {
      throw InvalidArgument(
          "scatter_add: dtype bool is not supported (an integer or float dtype is)");
    }
    if (index.shape.ndim() != self.shape.ndim() || src.shape.ndim() != self.shape.ndim()) {
      throw InvalidArgument("scatter_add: self " + self.shape.str() + ", index " +
                            index.shape.str() + " and src " + src.shape.str() +
                            " must have the same number of dims");
    }
    for (int d = 0; d < self.shape.ndim(); ++d) {
      if ((d != dim && index.shape[d] > self.shape[d]) || index.shape[d] > src.shape[d]) {
        throw InvalidArgument("scatter_add: index " + index.shape.str() + " is larger than " +
                              (index.shape[d] > src.shape[d] ? "src " + src.shape.str()
                                                             : "self " + self.shape.str()) +
                              " in dim " + std::to_string(d));
      }
    }
    return std::vector<TensorMeta>{self};
  };
  op.save_inputs = Bit(1);
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> dx(3);
    if (ctx.needs(0)) dx[0] = g[0];
    if (ctx.needs(2)) {
      if (ctx.input_info[2].shape != ctx.input_info[1].shape) {
        throw InvalidArgument("scatter_add: the gradient of src needs src's shape " +
                              ctx.input_info[2].shape.str() + " to equal the index's " +
                              ctx.input_info[1].shape.str());
      }
      dx[2] = gather(g[0], ctx.attrs.get_int("dim"), ctx.inputs[1]);
    }
    return dx;
  };
  // Global: a split on a dim but `dim` where self, index and src are of one size there passes;
  // self and src partial_sum with the index broadcast (scatter_add is linear in both together);
  // else broadcast.
  op.sbp_signature = [](const GlobalInputs& c) {
    const int ndim = c.logical_in[0].ndim();
    const int dim = WrapDim("scatter_add", c.attrs.get_int("dim"), ndim);
    const Sbp kB = Sbp::broadcast(), kP = Sbp::partial_sum();
    std::vector<SbpSignature> candidates;
    for (int d = 0; d < ndim; ++d) {
      if (d != dim && c.logical_in[0][d] == c.logical_in[1][d] &&
          c.logical_in[1][d] == c.logical_in[2][d]) {
        const Sbp s = Sbp::split(d);
        candidates.push_back({{s, s, s}, s});
      }
    }
    candidates.push_back({{kP, kB, kP}, kP});
    candidates.push_back({{kB, kB, kB}, kB});
    return CheapestSignature(c, std::move(candidates));
  };
  return op;
}
OFL_REGISTER_OP(MakeScatterAddOp);
}  // namespace
}  // namespace ofl::ops
