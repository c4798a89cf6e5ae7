// to(x, device): x copied to another device (x itself on its own device, recording nothing).
// Attribute device (string: "cuda:1"). Gradient: g copied back to the source device.
#include <string>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeToOp() {
  OpSchema op;
  op.name = "to";
  op.attrs = {{"device", AttrType::kString}};
  op.form = DeviceCopyForm{};
  op.infer1 = [](const TensorMeta& x, const Attrs&) { return x; };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].to(ctx.input_info[0].device)};
  };
  return op;
}
OFL_REGISTER_OP(MakeToOp);
}  // namespace
}  // namespace ofl::ops
