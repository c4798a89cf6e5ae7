// to(x, device): x copied to another device (x itself on its own device, recording nothing).
// Attributes: the device's type and index. Gradient: g copied back to the source device.
#include <string>
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeToOp() {
  OpSchema op;
  op.name = "to";
  op.device_copy = true;
  op.infer1 = [](const TensorMeta& x, const std::vector<int64_t>& attrs) {
    if (attrs.size() != 2 || attrs[0] < 0 || attrs[0] >= kMaxDeviceTypes || attrs[1] < 0) {
      std::string got;
      for (int64_t a : attrs) got += (got.empty() ? "" : ", ") + std::to_string(a);
      throw InvalidArgument("to: takes the device as two attrs {device type, index}, got {" + got +
                            "}");
    }
    return x;
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    return std::vector<Tensor>{g[0].to(ctx.input_info[0].device)};
  };
  return op;
}
OFL_REGISTER_OP(MakeToOp);
}  // namespace
}  // namespace ofl::ops
