// The autograd nodes of the conversions between local and global tensors and of boxing. A boxing
// is the identity on the logical tensor, so its gradient is the output's gradient boxed back to
// the input's placement and SBP (a partial_sum input's gradient is broadcast: every shard of a sum
// gets the whole gradient). to_global of local tensors hands each rank its shard of the gradient
// (its tensor's part of the logical one: the balanced split, or the whole for broadcast and
// partial_sum); to_local's gradient is the local gradients taken as the shards of the input's SBP.
// These nodes are no ops of the registry (no call runs them): only their backward is used.
#include <vector>

#include "oneflow_lite/autograd/graph.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/global_util.h"
#include "ops/op_schema.h"

namespace ofl::functional {
namespace {

Sbp GradSbp(const Sbp& sbp) { return sbp.is_partial_sum() ? Sbp::broadcast() : sbp; }

const ops::OpSchema& ToGlobalNode() {
  static const ops::OpSchema op = [] {
    ops::OpSchema s;
    s.name = "to_global";
    s.backward_name = "ToGlobalBackward";
    s.backward = [](const ops::GradContext& ctx, const std::vector<Tensor>& g) {
      const ops::ArgInfo& in = ctx.input_info[0];
      if (in.placement) return std::vector<Tensor>{g[0].to_global(*in.placement, GradSbp(in.sbp))};
      // A local input: this rank's part of the gradient (none outside the placement).
      const ops::ArgInfo& out = ctx.output_info[0];
      if (!out.placement->contains(ofl::rank())) return std::vector<Tensor>{Tensor()};
      return std::vector<Tensor>{g[0].to_global(*out.placement, GradSbp(out.sbp)).to_local()};
    };
    return s;
  }();
  return op;
}

const ops::OpSchema& ToLocalNode() {
  static const ops::OpSchema op = [] {
    ops::OpSchema s;
    s.name = "to_local";
    s.backward_name = "ToLocalBackward";
    s.backward = [](const ops::GradContext& ctx, const std::vector<Tensor>& g) {
      const ops::ArgInfo& in = ctx.input_info[0];
      return std::vector<Tensor>{g[0].to_global(*in.placement, GradSbp(in.sbp))};
    };
    return s;
  }();
  return op;
}

}  // namespace

void RecordToGlobal(const Tensor& in, const Tensor& out) {
  autograd::Record(ToGlobalNode(), in, out, Attrs());
}

void RecordToLocal(const Tensor& in, const Tensor& out) {
  autograd::Record(ToLocalNode(), in, out, Attrs());
}

}  // namespace ofl::functional
