// sub(a, b) = a - b, with broadcasting. Gradients: g and -g summed to the operands' shapes.
#include "ops/broadcast.h"
#include "ops/grad_util.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeSubOp() {
  OpSchema op;
  op.name = "sub";
  op.num_inputs = 2;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    return InferBinary("sub", in, /*allow_integer=*/true);
  };
  op.form = KernelForm{/*kernel=*/"", /*broadcast_inputs=*/true};
  op.input_cast = InputCast::kResultType;
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> dx(2);
    if (ctx.needs(0)) dx[0] = SumTo(g[0], ctx.input_info[0].shape);
    if (ctx.needs(1)) dx[1] = SumTo(-g[0], ctx.input_info[1].shape);
    return dx;
  };
  op.sbp_signature = [](const GlobalInputs& c) {
    return ElementwiseSignature(c, PartialInputs::kAll);
  };
  return op;
}
OFL_REGISTER_OP(MakeSubOp);
}  // namespace
}  // namespace ofl::ops
