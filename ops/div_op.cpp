// div(a, b) = a / b, with broadcasting; floating dtypes only (no promotion of integers).
// Gradients: g / b and -g * (a / b) / b, summed to the operands' shapes; saves b, and a only when
// b wants a gradient.
#include "ops/broadcast.h"
#include "ops/grad_util.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeDivOp() {
  OpSchema op;
  op.name = "div";
  op.num_inputs = 2;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    return InferBinary("div", in, /*allow_integer=*/false);
  };
  op.form = KernelForm{/*kernel=*/"", /*broadcast_inputs=*/true};
  op.input_cast = InputCast::kResultTypeFloat;
  op.save_inputs = Bit(0) | Bit(1);
  op.save_inputs_for = [](uint64_t needs) -> uint64_t {
    return Bit(1) | ((needs & Bit(1)) ? Bit(0) : 0);
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Tensor& a = ctx.inputs[0];
    const Tensor& b = ctx.inputs[1];
    std::vector<Tensor> dx(2);
    if (ctx.needs(0)) dx[0] = SumTo(g[0] / b, ctx.input_info[0].shape);
    if (ctx.needs(1)) dx[1] = SumTo(-g[0] * (a / b) / b, ctx.input_info[1].shape);
    return dx;
  };
  op.sbp_signature = [](const GlobalInputs& c) {
    return ElementwiseSignature(c, PartialInputs::kFirst);
  };
  return op;
}
OFL_REGISTER_OP(MakeDivOp);
}  // namespace
}  // namespace ofl::ops
