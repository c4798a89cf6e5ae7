// clone(x): a new row-major tensor with x's values, always a copy (also when x is contiguous,
// unlike contiguous), through the "copy" kernel. Global: every SBP passes; each rank copies its
// shard. Gradient: g.
#include <vector>

#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeCloneOp() {
  OpSchema op;
  op.name = "clone";
  op.form = KernelForm{"copy"};
  op.infer1 = [](const TensorMeta& x, const Attrs&) { return x; };
  op.sbp = [](const GlobalCall& c) { return std::optional<Sbp>(c.in_sbp); };
  op.backward = [](const GradContext&, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0]};
  };
  return op;
}
OFL_REGISTER_OP(MakeCloneOp);
}  // namespace
}  // namespace ofl::ops
