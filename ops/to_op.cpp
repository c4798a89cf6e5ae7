// Tensor::to(device): a copy on another device. Gradient: g copied back to the source device.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeToOp() {
  OpSchema op;
  op.name = "to";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].to(ctx.input_info[0].device)};
  };
  return op;
}
OFL_REGISTER_OP(MakeToOp);
}  // namespace
}  // namespace ofl::ops
