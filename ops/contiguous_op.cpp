// contiguous(x): a copy into row-major order (x itself when it is already so, which records
// nothing). Gradient: g.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeContiguousOp() {
  OpSchema op;
  op.name = "contiguous";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0]};
  };
  return op;
}
OFL_REGISTER_OP(MakeContiguousOp);
}  // namespace
}  // namespace ofl::ops
